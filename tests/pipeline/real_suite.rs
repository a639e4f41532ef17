//! The models on the real training-suite runs kept in tests/fixtures (five real applications
//! under the real Slurm, each beside HPAS-style anomaly generators; docs/models.md, "Models for a
//! site's own applications"): each application left out in turn, the figures docs/models.md
//! reports hold. Each later run was planned before its data was seen and judges what the
//! earlier ones chose.

use crate::common;

use std::path::Path;
use std::process::Command;

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

fn jobsight(data: &Path) -> Command {
    let mut c = Command::new(JOBSIGHT);
    c.arg("--data").arg(data);
    c
}

/// The real training-suite runs kept as fixtures: the second (another seed) was made after the
/// methods were chosen.
const REAL_SUITE_RUNS: [&str; 2] = ["training-suite", "training-suite-2"];

/// `model eval --kind KIND --leave-out-application [EXTRA]` on a real suite run: the report and
/// the JSON it was read from (for failure messages).
fn leave_each_application_out(
    fixture: &str,
    kind: &str,
    extra: &[&str],
) -> (serde_json::Value, String) {
    leave_each_application_out_of(&fixture_dir(fixture), kind, extra)
}

/// A real suite run kept in tests/fixtures.
fn fixture_dir(fixture: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(fixture)
}

/// [`leave_each_application_out`] on the warehouse at `data`.
fn leave_each_application_out_of(
    data: &Path,
    kind: &str,
    extra: &[&str],
) -> (serde_json::Value, String) {
    let out = common::run_ok(
        jobsight(data)
            .args([
                "model",
                "eval",
                "--kind",
                kind,
                "--leave-out-application",
                "--format",
                "json",
            ])
            .args(extra),
    );
    (serde_json::from_str(&out).unwrap(), out)
}

/// The real data sets of the training suite (tests/fixtures/training-suite and -2: five real
/// applications under the real Slurm, docs/models.md, "Models for a site's own applications"):
/// with each application left out in turn, the diagnosis with its unknown verdict on raises no
/// more false alarms than the goal allows (0.02; measured 0.000 on both) and still names
/// anomalies (its top class's macro F1 was 0.793 and 0.735). Guards the figures docs/models.md reports.
#[test]
fn on_real_applications_it_never_saw_the_diagnosis_abstains_rather_than_false_alarms() {
    for fixture in REAL_SUITE_RUNS {
        let (report, out) = leave_each_application_out(fixture, "diagnosis", &[]);
        let figure = |path: &[&str]| {
            path.iter()
                .fold(&report, |v, k| &v[*k])
                .as_f64()
                .unwrap_or_else(|| panic!("{fixture}: {path:?} in {out}"))
        };
        assert_eq!(report["per_application"].as_array().unwrap().len(), 5);
        assert!(
            figure(&["scores", "false_alarm_rate"]) <= 0.02,
            "{fixture}: {out}"
        );
        assert!(figure(&["forced", "macro_f1"]) >= 0.7, "{fixture}: {out}");
    }
}

/// The anomaly score on the same real runs (both suite runs), each application left out: the
/// application has no baseline in the model, so its cut comes from its other runs' windows, every
/// one of them (labelled or not, as a day's are judged). Before, only the labelled windows were
/// counted, too few for a cut, and the score called 0.729 of the first run's healthy windows
/// anomalous; with the cut, 0.000 on both runs, while it still flags some anomalies (memeater's
/// memory, measured 0.818 and 0.846 of its windows).
#[test]
fn an_application_left_out_is_judged_against_the_cut_of_its_other_runs() {
    for fixture in REAL_SUITE_RUNS {
        // The figures above were measured with the median's cut, the default then.
        let (report, out) =
            leave_each_application_out(fixture, "unsupervised", &["--baseline", "median"]);
        let false_alarms = report["scores"]["false_alarm_rate"].as_f64().unwrap();
        assert!(false_alarms <= 0.05, "{fixture}: {out}");
        assert!(
            flagged_share(&report, "memeater") >= 0.8,
            "{fixture}: {out}"
        );
    }
}

/// The third real suite run (tests/fixtures/training-suite-3), the first with the node's pressure
/// stall series (`cpu_pressure`, `mem_pressure`, `io_pressure`), made after they and the lower
/// tail's cut were chosen: each application left out, the anomaly score with `--baseline
/// lower-tail` flags at least 0.8 of the anomalous windows at no more than 0.05 false alarms
/// (measured 0.840 and 0.000), cachecopy and cpuoccupy among them, which no series before showed
/// (0.000 in the first two runs); and the diagnosis still raises no false alarm.
#[test]
fn with_pressure_stall_series_the_lower_tail_flags_what_the_other_series_hid() {
    let fixture = "training-suite-3";
    let (report, out) =
        leave_each_application_out(fixture, "unsupervised", &["--baseline", "lower-tail"]);
    let false_alarms = report["scores"]["false_alarm_rate"].as_f64().unwrap();
    let missed = report["scores"]["miss_rate"].as_f64().unwrap();
    assert!(false_alarms <= 0.05, "{out}");
    assert!(1.0 - missed >= 0.8, "{out}");
    assert!(flagged_share(&report, "cachecopy") >= 0.5, "{out}");
    assert!(flagged_share(&report, "cpuoccupy") >= 0.5, "{out}");
    let (report, out) = leave_each_application_out(fixture, "diagnosis", &[]);
    assert!(
        report["scores"]["false_alarm_rate"].as_f64().unwrap() <= 0.02,
        "{out}"
    );
}

/// The fourth real suite run (tests/fixtures/training-suite-4, seed 4, job ids from 3001), made
/// to judge what the first three chose, with its plan written before any of its data was seen:
/// with windows of 10 s every 5 s (a copy of its warehouse, `features --windows 10:5`) and the
/// default cut, now the lower tail's, each application left out, the anomaly score flags at
/// least 0.8 of the anomalous windows at no more than 0.05 false alarms (measured 0.928 and
/// 0.020); the diagnosis raises no false alarm (0.000), and with 20 labels of the new
/// application asked for one at a time its macro F1 with the unknown verdict on reaches 0.85
/// (measured 0.976).
#[test]
fn a_fourth_real_run_judges_the_lower_tail_and_twenty_labels() {
    let dir = tempfile::tempdir().unwrap();
    let data = with_ten_second_windows(dir.path(), "training-suite-4", &["2026-11-26"]);
    let (report, out) = leave_each_application_out_of(&data, "unsupervised", &[]);
    let false_alarms = report["scores"]["false_alarm_rate"].as_f64().unwrap();
    let missed = report["scores"]["miss_rate"].as_f64().unwrap();
    assert!(false_alarms <= 0.05, "{out}");
    assert!(1.0 - missed >= 0.8, "{out}");
    let (report, out) = leave_each_application_out_of(
        &data,
        "diagnosis",
        &["--active", "20", "--active-batch", "1"],
    );
    assert_the_labelled_goal_is_met(&report, &out);
}

/// The share of an anomaly's windows a report flagged (`flagged_share`, by true class).
fn flagged_share(report: &serde_json::Value, anomaly: &str) -> f64 {
    report["flagged_share"]
        .as_array()
        .unwrap()
        .iter()
        .find(|pair| pair[0] == anomaly)
        .and_then(|pair| pair[1].as_f64())
        .unwrap_or_else(|| panic!("no {anomaly} in {report}"))
}

/// The goal with labels of the new application: no more than 0.02 false alarms, macro F1 with
/// the unknown verdict on at least 0.85.
fn assert_the_labelled_goal_is_met(report: &serde_json::Value, out: &str) {
    let figure = |name: &str| report["scores"][name].as_f64().unwrap();
    assert!(figure("false_alarm_rate") <= 0.02, "{out}");
    assert!(figure("macro_f1") >= 0.85, "{out}");
}

/// A copy of a real suite run with its windows made again at 10 s every 5 s, in `dir`.
fn with_ten_second_windows(dir: &Path, fixture: &str, days: &[&str]) -> std::path::PathBuf {
    let data = dir.join("warehouse");
    common::run_ok(
        Command::new("cp")
            .arg("-r")
            .arg(fixture_dir(fixture))
            .arg(&data),
    );
    std::fs::remove_dir_all(data.join("windows")).unwrap();
    for day in days {
        common::run_ok(jobsight(&data).args(["features", "--day", day, "--windows", "10:5"]));
    }
    data
}

/// The fifth real suite run (tests/fixtures/training-suite-5, seed 5, job ids from 4001), made to
/// judge the run queue and context switches per CPU (`procs_running_per_cpu`,
/// `context_switches_per_cpu_per_s`), with its plan and keep rule written before its data was
/// seen: they stay among the node exporter's defaults unless they lower the anomaly score's
/// flagged share by more than 0.03 or raise its false alarms above 0.05. Each application left
/// out at 10:5: without them the score flags 0.977 at 0.029 false alarms, cachecopy and
/// cpuoccupy 1.000 each; with them 0.919 at 0.022, cachecopy 0.765 and cpuoccupy 0.806: the rule
/// took them out of the defaults. Without them the diagnosis raises no false alarm (0.000) and 20
/// labels asked one at a time reach macro F1 1.000.
#[test]
fn a_fifth_real_run_judges_the_run_queue_and_context_switches() {
    let dir = tempfile::tempdir().unwrap();
    let data = with_ten_second_windows(
        dir.path(),
        "training-suite-5",
        &["2026-11-26", "2026-11-27"],
    );
    let new = ["procs_running_per_cpu", "context_switches_per_cpu_per_s"];
    let metrics = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT DISTINCT metric FROM telemetry ORDER BY metric",
    );
    let defaults: Vec<&str> = metrics
        .iter()
        .map(|row| row["metric"].as_str().unwrap())
        .filter(|m| !new.contains(m))
        .collect();
    assert_eq!(defaults.len(), 20, "{metrics:?}");
    let defaults = defaults.join(",");
    let (without, out) =
        leave_each_application_out_of(&data, "unsupervised", &["--metrics", &defaults]);
    assert!(
        without["scores"]["false_alarm_rate"].as_f64().unwrap() <= 0.05,
        "{out}"
    );
    assert!(
        1.0 - without["scores"]["miss_rate"].as_f64().unwrap() >= 0.9,
        "{out}"
    );
    let (with, out_with) = leave_each_application_out_of(&data, "unsupervised", &[]);
    let lower = |report: &serde_json::Value| 1.0 - report["scores"]["miss_rate"].as_f64().unwrap();
    assert!(lower(&without) - lower(&with) > 0.03, "{out}\n{out_with}");
    for anomaly in ["cachecopy", "cpuoccupy"] {
        assert!(
            flagged_share(&with, anomaly) < flagged_share(&without, anomaly),
            "{out}\n{out_with}"
        );
    }
    let (report, out) = leave_each_application_out_of(
        &data,
        "diagnosis",
        &[
            "--metrics",
            &defaults,
            "--active",
            "20",
            "--active-batch",
            "1",
        ],
    );
    assert_the_labelled_goal_is_met(&report, &out);
}

/// A figure of a `model eval --format json` report, by its path of keys.
fn figure(report: &serde_json::Value, path: &[&str]) -> f64 {
    path.iter()
        .fold(report, |v, k| &v[*k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path:?} in {report}"))
}

/// The sixth real suite run (tests/fixtures/training-suite-6, seed 6, job ids from 5001): five
/// applications of shapes the suite lacked (NumPy analysis, BWA alignment, POV-Ray rendering, an
/// I/O-heavy sort/tar/zstd tool, a serial sweep), three healthy runs each, jobs of 60-90 s, some
/// anomalies from the job's first second; its plan was written before its data was seen
/// (docs/models.md, "A suite that looks like production"). It judged the defaults as they were,
/// each application left out, and these are the figures docs/models.md reports:
/// - the diagnosis raises no false alarm (0.000), and its top class's macro F1 is short of the
///   goal of 0.8 (0.671); 20 labels asked one at a time lift its macro F1 with the unknown
///   verdict on to 0.729 (goal 0.9), still without a false alarm;
/// - the anomaly score keeps its false alarms low (0.006) but flags 0.420 of the anomalous
///   windows (goal 0.8) and none of the I/O-heavy tool's or the serial sweep's;
/// - judged as an application's first runs (`--no-history`), it flags 0.595 of the healthy
///   windows: the cut from an application's own runs is what holds false alarms down.
#[test]
fn a_sixth_run_of_other_shapes_judges_the_defaults() {
    let run = judged_by_the_defaults("training-suite-6", 5);
    let out = &run.out;
    assert!(run.diagnosis_false_alarms <= 0.02, "{out}");
    assert!((0.6..0.8).contains(&run.top_class), "{out}");
    assert!(run.active_false_alarms <= 0.02, "{out}");
    assert!((0.7..0.9).contains(&run.active_macro_f1), "{out}");
    assert!(run.score_false_alarms <= 0.02, "{out}");
    assert!((0.35..0.5).contains(&run.score_flagged), "{out}");
    for name in ["archive", "sweep"] {
        assert_eq!(run.missed_by_score(name), 1.0, "{name}: {out}");
    }
    assert!(run.no_history_false_alarms > 0.5, "{out}");
    // Runs 3-7 chose the eighth run's candidate (the score or the top class, 0.928 at 0.032),
    // and the top class alone meets the goal too (0.901 at 0.029).
    run.assert_both_flaggings_meet_the_goal();
}

/// What the defaults give on a run of other shapes (runs 6 to 9), each of its applications
/// left out: the diagnosis as it is, with the anomaly score as a job's verdict takes them, and
/// with 20 labels asked one at a time; the anomaly score alone; each with and without a history
/// of the application; `out` holds every report, for the messages. The diagnosis names with its
/// first forest, as it did when these runs were reported (before the tenth run made a second
/// forest the namer): whether a window is healthy is the same either way.
struct JudgedByTheDefaults {
    /// The diagnosis's top class asked only whether a window is healthy (it needs no history).
    top_class_flags: Flagging,
    /// The eighth run's candidate: the score's flag or the top class (`--with-score`).
    either_flags: Flagging,
    diagnosis_false_alarms: f64,
    top_class: f64,
    active_false_alarms: f64,
    active_macro_f1: f64,
    score_false_alarms: f64,
    score_flagged: f64,
    no_history_false_alarms: f64,
    score: serde_json::Value,
    out: String,
}

/// A way of flagging windows, as a diagnosis report's `detection` or `together` has it:
/// anomalous windows flagged, healthy ones flagged, and the lowest share flagged of any anomaly
/// type.
#[derive(Debug)]
struct Flagging {
    flagged: f64,
    false_alarms: f64,
    lowest_type: f64,
}

impl Flagging {
    fn of(report: &serde_json::Value, key: &str) -> Flagging {
        let together = &report[key];
        let lowest_type = together["flagged_share"]
            .as_array()
            .unwrap_or_else(|| panic!("no {key} in {report}"))
            .iter()
            .filter(|pair| pair[0] != "healthy")
            .map(|pair| pair[1].as_f64().unwrap())
            .fold(f64::INFINITY, f64::min);
        Flagging {
            flagged: 1.0 - figure(together, &["scores", "miss_rate"]),
            false_alarms: figure(together, &["scores", "false_alarm_rate"]),
            lowest_type,
        }
    }

    /// Issue 70's goal: at least 0.8 of the anomalous windows flagged at no more than 0.05 false
    /// alarms, every anomaly type at least half.
    fn meets_the_goal(&self) -> bool {
        self.flagged >= 0.8 && self.false_alarms <= 0.05 && self.lowest_type >= 0.5
    }
}

impl JudgedByTheDefaults {
    /// The eighth run's candidate (the score or the top class) and the top class alone both meet
    /// issue 70's goal.
    fn assert_both_flaggings_meet_the_goal(&self) {
        for flags in [&self.either_flags, &self.top_class_flags] {
            assert!(flags.meets_the_goal(), "{flags:?}\n{}", self.out);
        }
    }

    /// The share of `application`'s anomalous windows the score missed.
    fn missed_by_score(&self, application: &str) -> f64 {
        self.score["per_application"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["application"] == application)
            .unwrap_or_else(|| panic!("no {application} in {}", self.out))["scores"]["miss_rate"]
            .as_f64()
            .unwrap()
    }
}

fn judged_by_the_defaults(fixture: &str, applications: usize) -> JudgedByTheDefaults {
    let one_forest = ["--name-features", "none"];
    let (diagnosis, out_diagnosis) = leave_each_application_out(
        fixture,
        "diagnosis",
        &["--with-score", one_forest[0], one_forest[1]],
    );
    assert_eq!(
        diagnosis["per_application"].as_array().unwrap().len(),
        applications,
        "{out_diagnosis}"
    );
    let (active, out_active) = leave_each_application_out(
        fixture,
        "diagnosis",
        &[
            "--active",
            "20",
            "--active-batch",
            "1",
            one_forest[0],
            one_forest[1],
        ],
    );
    let (score, out_score) = leave_each_application_out(fixture, "unsupervised", &[]);
    let (alone, out_alone) = leave_each_application_out(fixture, "unsupervised", &["--no-history"]);
    let out = [out_diagnosis, out_active, out_score, out_alone].join("\n");
    assert_eq!(alone["no_history"], true, "{out}");
    JudgedByTheDefaults {
        top_class_flags: Flagging::of(&diagnosis, "detection"),
        either_flags: Flagging::of(&diagnosis, "together"),
        diagnosis_false_alarms: figure(&diagnosis, &["scores", "false_alarm_rate"]),
        top_class: figure(&diagnosis, &["forced", "macro_f1"]),
        active_false_alarms: figure(&active, &["scores", "false_alarm_rate"]),
        active_macro_f1: figure(&active, &["scores", "macro_f1"]),
        score_false_alarms: figure(&score, &["scores", "false_alarm_rate"]),
        score_flagged: 1.0 - figure(&score, &["scores", "miss_rate"]),
        no_history_false_alarms: figure(&alone, &["scores", "false_alarm_rate"]),
        score,
        out,
    }
}

/// The seventh real suite run (tests/fixtures/training-suite-7, seed 7, job ids from 6001): two
/// applications no run had before (FFmpeg transcoding, a make/gcc build) and the three shapes the
/// sixth run found the score failing on (NumPy, the I/O-heavy tool, the serial sweep), two healthy
/// runs each, jobs of 60-80 s; its plan was written before its data, and the method it was to
/// judge was chosen (and found wanting) on runs 3-6 before its data was opened (docs/models.md,
/// "The seventh run"). The defaults, each application left out, as docs/models.md reports them:
/// - the diagnosis raises no false alarm (0.000), its top class's macro F1 is 0.797 (goal 0.8),
///   and 20 labels asked one at a time reach 0.910 with the unknown verdict on (goal 0.9);
/// - the anomaly score flags 0.237 of the anomalous windows at 0.029 false alarms, none of the
///   serial sweep's;
/// - with no history of the application it flags 0.806 of the healthy windows.
#[test]
fn a_seventh_run_of_new_shapes_judges_the_defaults_again() {
    let run = judged_by_the_defaults("training-suite-7", 5);
    let out = &run.out;
    assert!(run.diagnosis_false_alarms <= 0.02, "{out}");
    assert!((0.7..0.9).contains(&run.top_class), "{out}");
    assert!(run.active_false_alarms <= 0.02, "{out}");
    assert!(run.active_macro_f1 >= 0.85, "{out}");
    assert!(run.score_false_alarms <= 0.05, "{out}");
    assert!((0.15..0.35).contains(&run.score_flagged), "{out}");
    assert_eq!(run.missed_by_score("sweep"), 1.0, "{out}");
    assert!(run.no_history_false_alarms > 0.5, "{out}");
    // Runs 3-7 chose the eighth run's candidate on this run too (0.923 at 0.032; the top class
    // alone 0.893 at 0.004).
    run.assert_both_flaggings_meet_the_goal();
}

/// The eighth real suite run (tests/fixtures/training-suite-8, seed 8, job ids from 7001): two
/// applications no run had before (Stockfish's search, an SQLite database) and BWA and POV-Ray
/// again, two healthy runs each, jobs of 60-80 s. Its plan chose, on runs 3-7 before its data,
/// a window anomalous when the score flags it or the diagnosis's top class is an anomaly
/// (docs/models.md, "The eighth run"). As docs/models.md reports, each application left out:
/// - that candidate flags 0.937 of the anomalous windows but 0.098 of the healthy ones (chess's
///   above the score's cut from its other runs), so by its keep rule it is not kept;
/// - the top class alone flags 0.841 at no false alarm, every type at least half;
/// - the score alone flags 0.579 at 0.098, and 0.640 of the healthy windows with no history;
/// - the diagnosis raises no false alarm, its top class's macro F1 is 0.789 (goal 0.8), and 20
///   labels asked one at a time reach 0.94 (goal 0.9).
#[test]
fn an_eighth_run_judges_the_score_and_the_diagnosis_together() {
    let run = judged_by_the_defaults("training-suite-8", 4);
    let out = &run.out;
    let either = &run.either_flags;
    assert!(
        either.flagged >= 0.9 && either.false_alarms > 0.05,
        "{either:?}\n{out}"
    );
    assert!(!either.meets_the_goal(), "{either:?}\n{out}");
    assert!(
        run.top_class_flags.meets_the_goal(),
        "{:?}\n{out}",
        run.top_class_flags
    );
    assert!((0.5..0.65).contains(&run.score_flagged), "{out}");
    assert!(run.score_false_alarms > 0.05, "{out}");
    assert!(run.no_history_false_alarms > 0.5, "{out}");
    assert!(run.diagnosis_false_alarms <= 0.02, "{out}");
    assert!((0.7..0.8).contains(&run.top_class), "{out}");
    assert!(run.active_false_alarms <= 0.02, "{out}");
    assert!(run.active_macro_f1 >= 0.9, "{out}");
}

/// The ninth real suite run (tests/fixtures/training-suite-9, seed 9, job ids from 8001): two
/// applications no run had before (xz compression, OpenSSL's speed benchmark) and NumPy again,
/// two healthy runs each, jobs of 60-80 s. Its plan chose, on runs 3-8 before its data, the
/// diagnosis's top class alone (docs/models.md, "The ninth run"). As docs/models.md reports, each
/// application left out:
/// - the top class flags 0.901 of the anomalous windows at 0.006 false alarms, every type at
///   least half, with no history of the application: kept, the default beside a diagnosis;
/// - the score alone flags 0.451 at 0.070, and 0.620 of the healthy windows with no history;
///   with the top class, 0.956 at 0.076;
/// - the diagnosis raises no false alarm; naming the anomaly does not transfer: its top class's
///   macro F1 is 0.728 (goal 0.8), and 20 labels one at a time reach 0.626 (goal 0.9).
#[test]
fn a_ninth_run_judges_the_top_class_alone() {
    let run = judged_by_the_defaults("training-suite-9", 3);
    let out = &run.out;
    let top = &run.top_class_flags;
    assert!(top.meets_the_goal(), "{top:?}\n{out}");
    assert!(
        top.flagged >= 0.85 && top.false_alarms <= 0.02,
        "{top:?}\n{out}"
    );
    assert!(
        !run.either_flags.meets_the_goal(),
        "{:?}\n{out}",
        run.either_flags
    );
    assert!((0.35..0.55).contains(&run.score_flagged), "{out}");
    assert!(run.score_false_alarms > 0.05, "{out}");
    assert!(run.no_history_false_alarms > 0.5, "{out}");
    assert!(run.diagnosis_false_alarms <= 0.02, "{out}");
    assert!((0.65..0.8).contains(&run.top_class), "{out}");
    assert!(run.active_false_alarms <= 0.02, "{out}");
    assert!((0.5..0.75).contains(&run.active_macro_f1), "{out}");
}

/// The tenth real suite run (tests/fixtures/training-suite-10, seed 10, job ids from 9001): three
/// applications no run had before (ImageMagick, a GNU Octave script, R's bootstrap), two healthy
/// runs each, jobs of 60-80 s. Its plan chose, on runs 3-8 before its data, a second forest that
/// names what the first calls anomalous, from the measured and the job-relative statistics
/// (docs/models.md, "The tenth run"). Its keep rule was judged on runs 3-10 with each new
/// application held out (0.890 -> 0.903 top class, 0.481 -> 0.795 with the unknown verdict,
/// 0.938 -> 1.000 after 20 labels), and it is the default. On the run alone, as docs/models.md
/// reports: whether a window is anomalous is the first forest's either way (0.854 flagged at no
/// false alarm), and the namer names better, top class 0.755 -> 0.849, with the unknown verdict
/// 0.210 -> 0.591, after 20 labels one at a time 0.895 -> 0.989.
#[test]
fn a_tenth_run_judges_a_second_forest_that_names() {
    let fixture = "training-suite-10";
    let judge = |extra: &[&str]| leave_each_application_out(fixture, "diagnosis", extra);
    let (named, out_named) = judge(&[]);
    let (one, out_one) = judge(&["--name-features", "none"]);
    let out = format!("{out_named}\n{out_one}");
    assert_eq!(
        named["per_application"].as_array().unwrap().len(),
        3,
        "{out}"
    );
    let (named_flags, one_flags) = (
        Flagging::of(&named, "detection"),
        Flagging::of(&one, "detection"),
    );
    assert_eq!(named_flags.flagged, one_flags.flagged, "{out}");
    assert_eq!(named_flags.false_alarms, one_flags.false_alarms, "{out}");
    assert!(named_flags.meets_the_goal(), "{named_flags:?}\n{out}");
    let top = |r: &serde_json::Value| figure(r, &["forced", "macro_f1"]);
    let with_unknown = |r: &serde_json::Value| figure(r, &["scores", "macro_f1"]);
    assert!((0.8..0.9).contains(&top(&named)), "{out}");
    assert!(top(&named) > top(&one) + 0.05, "{out}");
    assert!(with_unknown(&named) > with_unknown(&one) + 0.2, "{out}");
    assert!(
        figure(&named, &["scores", "false_alarm_rate"]) <= 0.02,
        "{out}"
    );

    let active = ["--active", "20", "--active-batch", "1"];
    let (named, out_named) = judge(&active);
    let (one, out_one) = judge(&[&active[..], &["--name-features", "none"]].concat());
    let out = format!("{out_named}\n{out_one}");
    assert!(with_unknown(&named) >= 0.95, "{out}");
    assert!(with_unknown(&named) > with_unknown(&one), "{out}");
    assert!(
        figure(&named, &["scores", "false_alarm_rate"]) <= 0.02,
        "{out}"
    );
}
