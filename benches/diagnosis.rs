//! The diagnosis model's quality, speed and size, side by side with scikit-learn's
//! RandomForestClassifier trained and tested on exactly the same feature rows in the same run.
//!
//! Data sets (each warehouse built with the `jobsight` binary, then evaluated through the
//! library):
//! 1. The real HPAS LDMS runs (`../shared/data/hpas-ldms-examinimd.tar.xz` and its labels, 56 runs
//!    of ExaMiniMD with cpuoccupy, cachecopy and memleak injected), when present.
//! 2. A simulated labelled day: BENCH_NODES nodes (default 32), four jobs per node, every anomaly
//!    type the simulator injects.
//!
//! For each: a 5-fold by-job cross-validation (`jobsight model eval --cv 5` with `--export`),
//! then sklearn on each fold's exported rows (benches/diagnosis_peers.py). Printed: per-class F1
//! of both (top class, no "unknown", since sklearn has none) and jobsight's at its unknown
//! threshold, training time of both and the ratio, then a model trained on all windows: training
//! and prediction throughput (windows per second) and the model file's size.
//! Run: `cargo bench -p jobsight --bench diagnosis` (`BENCH_SKIP_REAL=1`: the simulated day only).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use jobsight_model::{CrossValidation, Kind, LabelsFrom, TrainOptions};

#[path = "bench_support.rs"]
mod support;
use support::{bench_python, repo_dir};

const JOBSIGHT: &str = env!("CARGO_BIN_EXE_jobsight");

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("run jobsight");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn jobsight(data: &Path) -> Command {
    let mut c = Command::new(JOBSIGHT);
    c.arg("--data").arg(data);
    c
}

fn compare(name: &str, data: &Path, python: Option<&Path>) {
    let options = TrainOptions::default();
    let export = tempfile::tempdir().expect("tempdir");
    let cv = CrossValidation {
        folds: 5,
        hold_out: None,
        leave_out_each: false,
        export: Some(export.path().to_path_buf()),
        verdicts: None,
        contaminate: 0.0,
        active: 0,
        active_batch: 0,
        no_history: false,
        with_score: false,
    };
    let report = jobsight_model::cross_validate(
        data,
        Kind::Diagnosis,
        &LabelsFrom::Table,
        &options,
        &cv,
        &mut |_| {},
    )
    .expect("cross-validation");
    println!(
        "\n## {name}: 5-fold cross-validation by job, {} labelled windows of {} jobs",
        report.scores.windows, report.jobs
    );
    let peer = python.map(|py| {
        let out = Command::new(py)
            .arg(repo_dir().join("benches/diagnosis_peers.py"))
            .arg(export.path())
            .arg(options.forest.trees.to_string())
            .arg(options.seed.to_string())
            .output()
            .expect("run diagnosis_peers.py");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("peer JSON")
    });
    let forced = report.forced.as_ref().expect("diagnosis figures");
    println!(
        "| class | windows | jobsight F1 (top class) | scikit-learn F1 | jobsight F1 (unknown below {:.2}) |",
        options.unknown_below
    );
    println!("|---|---|---|---|---|");
    for (i, c) in forced.per_class.iter().enumerate() {
        if c.support == 0 {
            continue;
        }
        let theirs = peer
            .as_ref()
            .and_then(|p| {
                let classes = p["classes"].as_array()?;
                let at = classes.iter().position(|x| x.as_u64() == Some(i as u64))?;
                p["f1"][at].as_f64()
            })
            .map_or("-".to_string(), |f| format!("{f:.3}"));
        println!(
            "| {} | {} | {:.3} | {} | {:.3} |",
            c.class, c.support, c.f1, theirs, report.scores.per_class[i].f1
        );
    }
    let peer_macro = peer
        .as_ref()
        .and_then(|p| p["macro_f1"].as_f64())
        .map_or("-".into(), |f| format!("{f:.3}"));
    println!(
        "| macro | | {:.3} | {peer_macro} | {:.3} |",
        forced.macro_f1, report.scores.macro_f1
    );
    println!(
        "jobsight: miss rate {:.3}, false alarms {:.3}; at the threshold: unknown rate {:.3}",
        forced.miss_rate, forced.false_alarm_rate, report.scores.unknown_rate
    );
    if let Some(p) = &peer {
        let theirs = p["train_seconds"].as_f64().unwrap_or(f64::NAN);
        println!(
            "training, 5 folds: jobsight {:.2} s, scikit-learn {:.2} s: jobsight takes {:.2}x sklearn's time (feature choice included in jobsight's)",
            report.train_seconds,
            theirs,
            report.train_seconds / theirs
        );
        let their_predict = p["predict_seconds"].as_f64().unwrap_or(f64::NAN);
        println!(
            "prediction: jobsight {:.3} s, scikit-learn {:.3} s ({:.2}x)",
            report.predict_seconds,
            their_predict,
            report.predict_seconds / their_predict
        );
    }
    // One model on everything: throughput and size.
    let out = tempfile::tempdir().expect("tempdir");
    let path = out.path().join("diagnosis.model");
    let started = Instant::now();
    let file = jobsight_model::train(
        data,
        Kind::Diagnosis,
        &LabelsFrom::Table,
        &options,
        &path,
        &mut |_| {},
    )
    .expect("train");
    let train_s = started.elapsed().as_secs_f64();
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let eval = jobsight_model::evaluate_model(data, &path, &LabelsFrom::Table).expect("evaluate");
    println!(
        "model on all {} windows: `model train` {:.1} s in all (held-out fit, importance, final fit), {:.0} windows/s through the final fit; prediction {:.0} windows/s; file {:.2} MiB, {} features",
        file.header.training.windows,
        train_s,
        file.header.training.windows as f64 / file.header.training.seconds.max(1e-9),
        eval.windows_per_second,
        size as f64 / 1048576.0,
        file.header.features.len()
    );
}

fn main() {
    let python = bench_python("sklearn, numpy");
    if python.is_none() {
        println!("scikit-learn is not installable here: jobsight's figures only");
    }
    let shared = repo_dir().join("../shared/data");
    let archive = shared.join("hpas-ldms-examinimd.tar.xz");
    let labels = shared.join("hpas-ldms-examinimd.labels.csv");
    let skip_real = std::env::var("BENCH_SKIP_REAL").is_ok_and(|v| v == "1");
    if skip_real {
        println!("BENCH_SKIP_REAL=1: the real-data comparison is skipped");
    } else if archive.exists() && labels.exists() {
        let work = tempfile::tempdir().expect("tempdir");
        run(Command::new("tar")
            .arg("xJf")
            .arg(&archive)
            .arg("-C")
            .arg(work.path()));
        let data = work.path().join("warehouse");
        run(jobsight(&data)
            .args(["import", "ldms-runs", "--labels"])
            .arg(&labels)
            .arg(work.path()));
        run(jobsight(&data).args(["features", "--windows", "60:15"]));
        compare("HPAS LDMS runs (real)", &data, python.as_deref());
    } else {
        println!(
            "{} not present: the real-data comparison is skipped",
            archive.display()
        );
    }
    let nodes: u64 = std::env::var("BENCH_NODES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(32);
    let work = tempfile::tempdir().expect("tempdir");
    let data = work.path().join("warehouse");
    run(jobsight(&data).args([
        "simulate",
        "--nodes",
        &nodes.to_string(),
        "--step",
        "10",
        "--anomaly-share",
        "0.5",
    ]));
    run(jobsight(&data).args(["features", "--windows", "60:15"]));
    compare(
        &format!("simulated day, {nodes} nodes"),
        &data,
        python.as_deref(),
    );
}
