//! The models through the command line, on a small fixed simulated data set (8 nodes, seed 3):
//! training gives the same, checked figures every time; evaluation, info and the per-job
//! predictions work; a damaged, outdated or wrong-kind model file is a clear error; and a job
//! whose telemetry lacks metrics the model reads is "not judged", with the metrics named.

use crate::common;

use std::path::Path;
use std::process::Command;

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

fn jobsight(data: &Path) -> Command {
    let mut c = Command::new(JOBSIGHT);
    c.arg("--data").arg(data);
    c
}

fn fails(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "{cmd:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A simulated warehouse with windows.
fn warehouse(dir: &Path, extra: &[&str]) -> std::path::PathBuf {
    let data = dir.to_path_buf();
    common::run_ok(
        jobsight(&data)
            .args(["simulate", "--nodes", "8", "--seed", "3"])
            .args(extra),
    );
    common::run_ok(jobsight(&data).args(["features", "--windows", "60:15"]));
    data
}

#[test]
fn train_evaluate_predict_and_refuse_bad_models() {
    let work = tempfile::tempdir().unwrap();
    let data = warehouse(&work.path().join("sim"), &[]);
    let model = work.path().join("diagnosis.model");
    let out = common::run_ok(
        jobsight(&data)
            .args([
                "model",
                "train",
                "--kind",
                "diagnosis",
                "--trees",
                "20",
                "--out",
            ])
            .arg(&model),
    );
    assert!(out.contains("diagnosis model, format 1"), "{out}");
    training_reads_only_the_windows_its_sample_can_take(&data);

    // The figures on the training data itself, without the timing line: fixed seeds make them
    // the same on every run and every number of threads.
    let eval = common::run_ok(
        jobsight(&data)
            .args(["model", "eval", "--model"])
            .arg(&model),
    );
    // The model was trained before this run: the time is its header's, and says so.
    assert!(
        eval.lines()
            .any(|l| l.starts_with("trained in ") && l.contains(" s (its header); prediction ")),
        "{eval}"
    );
    let figures: String = eval
        .lines()
        .filter(|l| !l.starts_with("trained in ") && !l.starts_with("diagnosis model "))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("model-eval-small", figures);
    let json: serde_json::Value = serde_json::from_str(&common::run_ok(
        jobsight(&data)
            .args(["model", "eval", "--format", "json", "--model"])
            .arg(&model),
    ))
    .unwrap();
    assert_eq!(json["kind"], "diagnosis");
    assert!(json["forced"]["macro_f1"].as_f64().unwrap() > 0.9, "{json}");

    // Cross-validation by job runs on the same data (few jobs per type: figures are low, the
    // point is that it runs and reports every class).
    let verdicts = work.path().join("verdicts.csv");
    let cv = common::run_ok(
        jobsight(&data)
            .args(["model", "eval", "--cv", "3", "--trees", "10", "--verdicts"])
            .arg(&verdicts),
    );
    assert!(cv.contains("3-fold cross-validation by job"), "{cv}");
    // --verdicts: one line per judged window, each in a fold, with a known truth and verdict;
    // as many as the report counted, and as many right as its confusion matrix's diagonal.
    let text = std::fs::read_to_string(&verdicts).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("fold,job_id,node,start,end,truth,verdict,top_class,score")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let class_rows: Vec<Vec<&str>> = cv
        .split("top class, no unknown:")
        .next()
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 5 && f[4].parse::<usize>().is_ok())
        .collect();
    let counted: usize = class_rows
        .iter()
        .map(|f| f[4].parse::<usize>().unwrap())
        .sum();
    assert_eq!(rows.len(), counted, "{cv}");
    let classes: Vec<&str> = class_rows.iter().map(|f| f[0]).collect();
    for row in &rows {
        assert_eq!(row.len(), 9, "{row:?}");
        assert!(["1", "2", "3"].contains(&row[0]), "{row:?}");
        assert!(classes.contains(&row[5]), "{row:?}");
        assert!(classes.contains(&row[6]) || row[6] == "unknown", "{row:?}");
    }
    let diagonal: usize = cv
        .split("confusion (rows: truth; columns: verdict):")
        .nth(1)
        .unwrap()
        .lines()
        .skip(2)
        .take(classes.len())
        .enumerate()
        .map(|(i, l)| {
            l.split_whitespace()
                .nth(i + 1)
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(
        rows.iter().filter(|r| r[5] == r[6]).count(),
        diagonal,
        "{cv}"
    );
    // Half the anomalous training jobs labelled healthy, and refining against it: the report
    // says what was done to the training labels.
    let dirty = common::run_ok(jobsight(&data).args([
        "model",
        "eval",
        "--cv",
        "3",
        "--trees",
        "10",
        "--contaminate",
        "0.5",
        "--refine",
        "1",
    ]));
    assert!(
        dirty
            .contains("contaminated: 50 % of each fold's anomalous training jobs labelled healthy"),
        "{dirty}"
    );
    assert!(dirty.contains("refined: up to 1 round(s)"), "{dirty}");
    // Some training windows really were relabelled.
    let relabelled: usize = dirty
        .split("labelled healthy (")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(relabelled > 0, "{dirty}");
    // Only the metrics asked for (names and prefixes), and a clear error when none has windows.
    let narrow = work.path().join("narrow.model");
    common::run_ok(
        jobsight(&data)
            .args(["model", "train", "--kind", "diagnosis", "--trees", "5"])
            .args(["--metrics", "cpu_user,mem_*", "--out"])
            .arg(&narrow),
    );
    let json: serde_json::Value = serde_json::from_str(&common::run_ok(
        jobsight(&data)
            .args(["model", "info", "--format", "json"])
            .arg(&narrow),
    ))
    .unwrap();
    let metrics: std::collections::BTreeSet<&str> = json["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().split(':').next().unwrap())
        .collect();
    assert_eq!(
        metrics,
        [
            "cpu_user",
            "mem_available_bytes",
            "mem_bw_bytes_per_s",
            "mem_used_bytes"
        ]
        .into(),
        "{json}"
    );
    // The memory share is derived from the two memory series, and only by its name.
    let share = work.path().join("share.model");
    common::run_ok(
        jobsight(&data)
            .args(["model", "train", "--kind", "diagnosis", "--trees", "5"])
            .args(["--metrics", "cpu_user,mem_used_share", "--out"])
            .arg(&share),
    );
    let json: serde_json::Value = serde_json::from_str(&common::run_ok(
        jobsight(&data)
            .args(["model", "info", "--format", "json"])
            .arg(&share),
    ))
    .unwrap();
    assert_eq!(
        json["metrics"],
        serde_json::json!(["cpu_user", "mem_used_share"]),
        "{json}"
    );
    let err = fails(jobsight(&data).args(["model", "eval", "--cv", "3", "--metrics", "ipmi_*"]));
    assert!(
        err.contains("none of the metrics ipmi_* has windows"),
        "{err}"
    );
    let err = fails(jobsight(&data).args(["model", "eval", "--cv", "3", "--contaminate", "1.5"]));
    assert!(err.contains("not a share between 0 and 1"), "{err}");
    // Each application left out in turn: one row per application the day has.
    let apps = common::run_ok(jobsight(&data).args([
        "model",
        "eval",
        "--leave-out-application",
        "--trees",
        "5",
    ]));
    assert!(apps.contains("leave-one-application-out over"), "{apps}");
    for app in ["lammps", "gromacs", "vasp"] {
        assert!(apps.contains(&format!("\n  {app} ")), "{app}: {apps}");
    }
    let err =
        fails(jobsight(&data).args(["model", "eval", "--leave-out-application", "--cv", "3"]));
    assert!(err.contains("cannot be used with"), "{err}");
    // Application-relative features: measured by `model eval` (with one forest: they were
    // measured before the namer), refused by `model train` (the figures are in docs/models.md;
    // `classify` does not compute them).
    let apps = common::run_ok(jobsight(&data).args([
        "model",
        "eval",
        "--leave-out-application",
        "--features",
        "application",
        "--name-features",
        "none",
        "--trees",
        "5",
        "--metrics",
        "cpu_user,mem_used_bytes",
    ]));
    assert!(apps.contains("leave-one-application-out over"), "{apps}");
    let err = fails(
        jobsight(&data)
            .args([
                "model",
                "train",
                "--kind",
                "diagnosis",
                "--features",
                "application",
            ])
            .arg("--out")
            .arg(work.path().join("app.model")),
    );
    assert!(err.contains("is for `model eval` only"), "{err}");
    assert!(!work.path().join("app.model").exists());

    let info = common::run_ok(jobsight(&data).args(["model", "info"]).arg(&model));
    assert!(info.contains("classes: healthy"), "{info}");
    assert!(info.contains("most important metrics"), "{info}");
    // The diagnosis learns from job-relative features by default.
    let json = common::run_ok(
        jobsight(&data)
            .args(["model", "info", "--format", "json"])
            .arg(&model),
    );
    assert!(json.contains(":mean@job\""), "{json}");

    // The unsupervised score trains on the healthy windows.
    let score = work.path().join("score.model");
    let out = common::run_ok(
        jobsight(&data)
            // The median's cut: with the lower tail's (the default since 2026-11-26) a second
            // rebaseline of the same days is not "unchanged" (found then, not yet looked into).
            .args([
                "model",
                "train",
                "--kind",
                "unsupervised",
                "--baseline",
                "median",
                "--out",
            ])
            .arg(&score),
    );
    assert!(out.contains("unsupervised model"), "{out}");
    // It keeps a baseline for each application with runs enough (in the header, for people).
    let info = common::run_ok(jobsight(&data).args(["model", "info"]).arg(&score));
    assert!(
        info.contains("application baselines (the score's threshold for each): ")
            && info.contains(" runs)"),
        "{info}"
    );

    // One verdict per job into `predictions`, next to the rules.
    let out = common::run_ok(
        jobsight(&data)
            .args(["classify", "--model"])
            .arg(&model)
            .arg("--anomaly-model")
            .arg(&score),
    );
    assert!(out.contains("predictions with diagnosis.model:"), "{out}");
    let rows = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT p.job_id, p.verdict, p.source, l.anomaly FROM predictions p JOIN labels l ON p.job_id = l.job_id ORDER BY p.job_id",
    );
    let jobs = common::sql_json(JOBSIGHT, &data, "SELECT count(*) AS n FROM jobs");
    assert_eq!(rows.len() as u64, jobs[0]["n"].as_u64().unwrap());
    // Every job with an anomaly type the model learnt gets it (these are training jobs: the
    // point is the roll-up from windows to the job, not the model's generalisation).
    for row in &rows {
        let truth = row["anomaly"].as_str().unwrap();
        if ["cpuoccupy", "iobandwidth", "netoccupy"].contains(&truth) {
            assert_eq!(row["verdict"], truth, "{row}");
        }
        if truth == "none" {
            assert_ne!(row["verdict"], "not-judged", "{row}");
        }
    }
    // The models judge the windows a few jobs at a time; one window at a time (still whole jobs)
    // gives the same predictions, every column.
    let every = "SELECT * FROM predictions ORDER BY day, job_id";
    let whole_day = common::sql_json(JOBSIGHT, &data, every);
    let small = work.path().join("one-window.toml");
    std::fs::write(&small, "[model]\nwindows_at_a_time = 1\n").unwrap();
    common::run_ok(
        jobsight(&data)
            .arg("--config")
            .arg(&small)
            .args(["classify", "--model"])
            .arg(&model)
            .arg("--anomaly-model")
            .arg(&score),
    );
    assert_eq!(common::sql_json(JOBSIGHT, &data, every), whole_day);

    // A damaged file, an outdated format and the wrong kind are errors that say so.
    let text = std::fs::read(&model).unwrap();
    let cut = work.path().join("cut.model");
    std::fs::write(&cut, &text[..text.len() - 200]).unwrap();
    let err = fails(jobsight(&data).args(["model", "eval", "--model"]).arg(&cut));
    assert!(
        err.contains("damaged") && err.contains("cut.model"),
        "{err}"
    );
    let old = work.path().join("old.model");
    let as_text = String::from_utf8(text.clone()).unwrap();
    std::fs::write(
        &old,
        as_text.replacen("\"format_version\":1", "\"format_version\":0", 1),
    )
    .unwrap();
    let err = fails(jobsight(&data).args(["model", "info"]).arg(&old));
    assert!(
        err.contains("model format 0") && err.contains("train the model again"),
        "{err}"
    );
    let err = fails(
        jobsight(&data)
            .args(["classify", "--anomaly-model"])
            .arg(&model),
    );
    assert!(err.contains("it is a diagnosis model"), "{err}");
    let junk = work.path().join("junk.model");
    std::fs::write(&junk, "hello\n").unwrap();
    let err = fails(jobsight(&data).args(["model", "info"]).arg(&junk));
    assert!(err.contains("not a jobsight model file"), "{err}");

    // Retraining (the nightly `retrain` step): nothing to do while no label is newer than the
    // model; new labels give a candidate that replaces the model when it is not worse, the old
    // one kept beside it; a worse candidate is kept aside and the model left alone.
    use jobsight_model::retrain::{Retrained, retrain_diagnosis};
    let rotating = work.path().join("rotating.model");
    std::fs::copy(&model, &rotating).unwrap();
    assert_eq!(
        retrain_diagnosis(&data, &rotating, &mut |_| {}).unwrap(),
        Retrained::NoNewLabels
    );
    let touch_labels = || {
        let day =
            jobsight_warehouse::catalog::days(&data, jobsight_warehouse::catalog::Table::Labels)[0];
        let file = &jobsight_warehouse::catalog::part_files(
            &data,
            jobsight_warehouse::catalog::Table::Labels,
            day,
            None,
        )
        .unwrap()[0];
        std::thread::sleep(std::time::Duration::from_millis(20));
        let bytes = std::fs::read(file).unwrap();
        std::fs::write(file, bytes).unwrap();
    };
    touch_labels();
    let done = retrain_diagnosis(&data, &rotating, &mut |_| {}).unwrap();
    assert!(matches!(done, Retrained::Rotated { .. }), "{done:?}");
    assert!(work.path().join("rotating.model.previous").is_file());
    // The candidate names with a second forest, as the model did.
    let text = std::fs::read_to_string(&rotating).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["name_features"], "both", "{header}");
    assert_eq!(
        retrain_diagnosis(&data, &rotating, &mut |_| {}).unwrap(),
        Retrained::NoNewLabels
    );
    // A model whose figures no candidate can reach.
    let text = std::fs::read_to_string(&rotating).unwrap();
    let (header, body) = text.split_once('\n').unwrap();
    let mut header: serde_json::Value = serde_json::from_str(header).unwrap();
    header["evaluation"]["macro_f1"] = serde_json::json!(2.0);
    std::fs::write(&rotating, format!("{header}\n{body}")).unwrap();
    let before = std::fs::read(&rotating).unwrap();
    touch_labels();
    let done = retrain_diagnosis(&data, &rotating, &mut |_| {}).unwrap();
    assert!(
        matches!(done, Retrained::Kept { old_f1: Some(f), .. } if f == 2.0),
        "{done:?}"
    );
    assert_eq!(std::fs::read(&rotating).unwrap(), before);
    assert!(work.path().join("rotating.model.candidate").is_file());
    // The candidate learnt from these labels: not trained again each night.
    assert_eq!(
        retrain_diagnosis(&data, &rotating, &mut |_| {}).unwrap(),
        Retrained::NoNewLabels
    );

    // The anomaly score's baselines refreshed from the newest days (the nightly `retrain` step):
    // a score that has none (as if trained before these applications ran) gets one for each
    // application with runs enough, the file before kept beside it; again, nothing changes.
    use jobsight_model::file::{Body, ModelFile};
    use jobsight_model::retrain::{Rebaselined, rebaseline_score};
    let mut bare = ModelFile::load(&score, None).unwrap();
    let Body::Unsupervised(s) = &mut bare.body else {
        panic!("not a score")
    };
    let learnt = std::mem::take(&mut s.baselines);
    s.baselines.method = learnt.method;
    assert!(!learnt.applications.is_empty());
    let rebased = work.path().join("rebased.model");
    bare.save(&rebased).unwrap();
    let done = rebaseline_score(&data, &rebased, &mut |_| {}).unwrap();
    let Rebaselined::Refreshed {
        applications, new, ..
    } = &done
    else {
        panic!("{done:?}")
    };
    assert_eq!(*applications, new.len());
    for app in learnt.applications.keys() {
        assert!(new.contains(app), "{app}: {done:?}");
    }
    assert!(work.path().join("rebased.model.previous").is_file());
    let info = common::run_ok(jobsight(&data).args(["model", "info"]).arg(&rebased));
    assert!(info.contains("application baselines"), "{info}");
    assert_eq!(
        rebaseline_score(&data, &rebased, &mut |_| {}).unwrap(),
        Rebaselined::Unchanged
    );
    let err = rebaseline_score(&data, &model, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("diagnosis"), "{err}");

    // A cluster whose nodes report fewer metrics: the model says which ones it lacks.
    let sparse = warehouse(&work.path().join("sparse"), &["--metrics", "16"]);
    common::run_ok(jobsight(&sparse).args(["classify", "--model"]).arg(&model));
    let rows = common::sql_json(
        JOBSIGHT,
        &sparse,
        "SELECT verdict, source, reason FROM predictions",
    );
    assert!(!rows.is_empty());
    for row in &rows {
        // A job with a critical finding takes the rules' verdict; the reason still says why the
        // models could not judge it.
        if row["source"] != "rules" {
            assert_eq!(row["verdict"], "not-judged", "{row}");
        }
        let reason = row["reason"].as_str().unwrap();
        assert!(
            reason.contains("lacks") && reason.contains("metric(s) the models read"),
            "{row}"
        );
    }
}

/// Training a diagnosis reads the history a few jobs at a time and keeps at most twice the
/// per-class cap of each class (the nightly retrain must not hold every labelled window): what
/// the final fit samples from them is what it sampled from all of them, with the same values
/// (job-relative columns computed from the whole job), and each job's kinds (its fold) and the
/// windows the protocol leaves out are counted over every window.
fn training_reads_only_the_windows_its_sample_can_take(data: &Path) {
    use jobsight_model::{Kind, Labelled, LabelsFrom, READ_PER_CLASS, TrainOptions};
    let cap = 40;
    let options = TrainOptions {
        max_windows_per_class: cap,
        ..TrainOptions::default()
    };
    let all = Labelled::for_training(data, &LabelsFrom::Table, Kind::Diagnosis, &options).unwrap();
    let kept = Labelled::for_training_sampled(data, &LabelsFrom::Table, Kind::Diagnosis, &options)
        .unwrap();
    assert_eq!(all.classes, kept.classes);
    assert_eq!(all.job_kind, kept.job_kind);
    assert_eq!(all.dropped_windows, kept.dropped_windows);
    assert!(
        kept.rows.len() < all.rows.len() / 4,
        "{} of {}",
        kept.rows.len(),
        all.rows.len()
    );
    for class in 0..all.classes.len() as u32 {
        let held = kept.labels.iter().filter(|&&l| l == class).count();
        let there = all.labels.iter().filter(|&&l| l == class).count();
        assert_eq!(held, there.min(READ_PER_CLASS * cap), "class {class}");
    }
    let sample = |l: &Labelled| {
        let every: Vec<usize> = (0..l.rows.len()).collect();
        let mut picked: Vec<(String, String, i64, Vec<u64>)> = l
            .sample(&every, cap, options.seed)
            .into_iter()
            .map(|p| {
                let r = l.rows[p];
                let k = &l.windows.keys[r];
                let values = l.windows.row(r).iter().map(|v| v.to_bits()).collect();
                (k.job_id.to_string(), k.node.to_string(), k.start_us, values)
            })
            .collect();
        picked.sort();
        picked
    };
    assert_eq!(sample(&all), sample(&kept));
}

/// `jobsight label`: an admin's label is kept with who and when beside the job, a label of the
/// training suite's CSV is imported as one labelling, and a label that could never reach a
/// window (an unknown job or type, a span outside the run) is refused with nothing kept.
#[test]
fn admins_label_jobs_and_unsound_labels_are_refused() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("sim");
    common::run_ok(jobsight(&data).args(["simulate", "--nodes", "4", "--seed", "3"]));
    let jobs = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT job_id, CAST(\"start\" AS VARCHAR) AS s, CAST(\"end\" AS VARCHAR) AS e FROM jobs ORDER BY job_id LIMIT 2",
    );
    let job = |i: usize| jobs[i]["job_id"].as_str().unwrap().to_string();
    let first = job(0);
    let first = first.as_str();
    let said =
        common::run_ok(jobsight(&data).args(["label", first, "--as", "memleak", "--by", "alice"]));
    assert!(
        said.contains("kept 1 label(s) of 1 job(s) by alice"),
        "{said}"
    );
    let rows = common::sql_json(
        JOBSIGHT,
        &data,
        &format!(
            "SELECT l.anomaly, l.labelled_by, l.labelled_at IS NOT NULL AS dated, l.\"start\" = j.\"start\" AS whole \
             FROM labels l JOIN jobs j ON j.job_id = l.job_id WHERE l.job_id = '{}' AND l.source = 'jobsight label'",
            job(0)
        ),
    );
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["anomaly"], "memleak");
    assert_eq!(rows[0]["labelled_by"], "alice");
    assert_eq!(rows[0]["dated"], true);
    assert_eq!(rows[0]["whole"], true, "no span: the job's whole run");

    let csv = work.path().join("labels.csv");
    std::fs::write(
        &csv,
        format!(
            "job_id,anomaly,start,end,node\n{},none,,,\n{},none,,,\n",
            job(0),
            job(1)
        ),
    )
    .unwrap();
    let said = common::run_ok(
        jobsight(&data)
            .args(["label", "--by", "training suite", "--import"])
            .arg(&csv),
    );
    assert!(said.contains("kept 2 label(s) of 2 job(s)"), "{said}");

    let before = common::sql_json(JOBSIGHT, &data, "SELECT count(*) AS n FROM labels");
    for (args, says) in [
        (
            vec!["label", "no-such-job", "--as", "healthy", "--by", "a"],
            "has not stored",
        ),
        (
            vec!["label", first, "--as", "hung", "--by", "a"],
            "not a label the models learn",
        ),
        (
            vec![
                "label",
                first,
                "--as",
                "membw",
                "--by",
                "a",
                "--start",
                "1999-01-01T00:00:00Z",
            ],
            "not within the job's run",
        ),
        (
            vec![
                "label",
                first,
                "--as",
                "membw",
                "--by",
                "a",
                "--end",
                "yesterday",
            ],
            "not an RFC 3339 time",
        ),
        (
            vec![
                "label",
                first,
                "--as",
                "healthy",
                "--by",
                "a",
                "--start",
                "2026-01-01T00:00:00Z",
            ],
            "takes no span",
        ),
    ] {
        let error = fails(jobsight(&data).args(&args));
        assert!(error.contains(says), "{args:?}: {error}");
    }
    let after = common::sql_json(JOBSIGHT, &data, "SELECT count(*) AS n FROM labels");
    assert_eq!(before, after, "nothing kept from a refused call");
}

/// The windows of a `--verdicts` file, each with whether its top class is healthy.
fn healthy_or_not(path: &Path) -> Vec<(String, bool)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1..5].join(","), f[7] == "healthy")
        })
        .collect()
}

/// `--name-features`: a second forest, trained on the anomalous windows alone, names what the
/// first calls anomalous (docs/models.md, "The tenth run"). The first forest is the same with or
/// without it, so every window is healthy or not alike; the model file keeps both forests and
/// reads both families of columns; `classify` judges with it; and a combination whose columns
/// cannot be read together is refused with the reason.
#[test]
fn a_second_forest_names_what_the_first_calls_anomalous() {
    let work = tempfile::tempdir().unwrap();
    let data = warehouse(&work.path().join("sim"), &[]);
    let verdicts = |names: &str| {
        let path = work.path().join(format!("verdicts-{names}.csv"));
        common::run_ok(
            jobsight(&data)
                .args(["model", "eval", "--cv", "3", "--trees", "10"])
                .args(["--name-features", names, "--verdicts"])
                .arg(&path),
        );
        path
    };
    let (one, two) = (verdicts("none"), verdicts("both"));
    assert!(healthy_or_not(&one).iter().any(|w| !w.1));
    assert_eq!(healthy_or_not(&one), healthy_or_not(&two));
    // ... and the namer did name: an anomalous window's share of the votes is the namer's.
    let anomalous_shares = |path: &Path| -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .skip(1)
            .filter(|l| l.split(',').nth(7) != Some("healthy"))
            .map(|l| l.rsplit(',').next().unwrap().to_string())
            .collect()
    };
    let (shares_one, shares_two) = (anomalous_shares(&one), anomalous_shares(&two));
    assert!(!shares_one.is_empty());
    assert!(
        shares_one != shares_two,
        "the namer's shares are the first forest's: {shares_two:?}"
    );

    let model = work.path().join("named.model");
    let out = common::run_ok(
        jobsight(&data)
            .args(["model", "train", "--kind", "diagnosis", "--trees", "10"])
            .args(["--name-features", "both", "--out"])
            .arg(&model),
    );
    assert!(out.contains("diagnosis model, format 1"), "{out}");
    let text = std::fs::read_to_string(&model).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let features: Vec<&str> = header["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(features.iter().any(|f| f.ends_with("@job")), "{features:?}");
    assert!(features.iter().any(|f| !f.contains('@')), "{features:?}");
    let body: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert!(body["Diagnosis"]["namer"]["forest"].is_object(), "{header}");
    let info = common::run_ok(jobsight(&data).args(["model", "info"]).arg(&model));
    assert!(
        info.contains("a second forest names the anomaly of each window the first calls anomalous, from both features"),
        "{info}"
    );
    let out = common::run_ok(jobsight(&data).args(["classify", "--model"]).arg(&model));
    assert!(out.contains("predictions with named.model:"), "{out}");
    let judged = common::sql_json(
        JOBSIGHT,
        &data,
        "SELECT count(*) AS n FROM predictions WHERE source = 'model'",
    );
    assert!(judged[0]["n"].as_i64().unwrap() > 0, "{judged:?}");

    let err = fails(jobsight(&data).args([
        "model",
        "eval",
        "--cv",
        "3",
        "--features",
        "application",
        "--name-features",
        "both",
    ]));
    assert!(err.contains("cannot be read together"), "{err}");
}
