"""The peer of benches/workflows.rs: the same two steps with pandas, on the same files.

1. import: every trace CSV below DIR read with pandas, the run id and label added, written as one
   Parquet file (pyarrow), as `jobsight import pegasus` turns the same files into Parquet;
2. score: the tasks read back, each task's slack (1 - cpu time / runtime) as a robust z-score
   against its kind (median and 1.4826 x MAD), the median over the tasks of its host in its run,
   written as Parquet: what `jobsight workflow score` computes (its other four z-scores too).

Prints one JSON line: the seconds of each step and a checksum of the scores (their sum), which the
benchmark compares with jobsight's so that both do the same work.

usage: workflows_peers.py DIR OUT
"""

import json
import os
import sys
import time

import numpy as np
import pandas as pd


def robust_z(values, kinds):
    median = values.groupby(kinds).transform("median")
    mad = (values - median).abs().groupby(kinds).transform("median") * 1.4826
    z = (values - median) / mad.where(mad > 0)
    return z.fillna(0.0).clip(-20.0, 20.0)


def main():
    root, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)

    started = time.perf_counter()
    frames = []
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if not name.endswith(".csv"):
                continue
            frame = pd.read_csv(os.path.join(folder, name))
            frame.insert(0, "workflow_id", name[: -len(".csv")])
            frame.insert(1, "run_label", os.path.basename(folder))
            frames.append(frame)
    tasks = pd.concat(frames, ignore_index=True)
    tasks = tasks.rename(columns={tasks.columns[2]: "task_id"})
    tasks.to_parquet(os.path.join(out, "workflow_tasks.parquet"), index=False)
    import_seconds = time.perf_counter() - started

    started = time.perf_counter()
    t = pd.read_parquet(os.path.join(out, "workflow_tasks.parquet"))
    kind = t.task_id.str.replace(r"_ID\d+$", "", regex=True)
    runtime = t.runtime.where(t.runtime >= 0)
    cpu = t.kickstart_executables_cpu_time
    slack = (1.0 - cpu / runtime).where((runtime > 0) & (cpu >= 0))
    log = lambda c: np.log1p(t[c].where(t[c] >= 0))
    z = pd.DataFrame(
        {
            "slack_z": robust_z(slack, kind),
            "runtime_z": robust_z(log("runtime"), kind),
            "stage_in_z": robust_z(log("stage_in_delay"), kind),
            "stage_out_z": robust_z(log("stage_out_delay"), kind),
            "stime_z": robust_z(log("kickstart_online_stime"), kind),
        }
    )
    # Without CPU time the runtime's z-score stands in for the slack's (as jobsight does).
    z["slack_z"] = z.slack_z.where(slack.notna(), z.runtime_z)
    score = z.slack_z.groupby([t.workflow_id, t.kickstart_hostname]).transform("median")
    result = pd.DataFrame(
        {"workflow_id": t.workflow_id, "task_id": t.task_id, "score": score.fillna(z.slack_z)}
    ).join(z)
    result["flagged"] = result.score > 2.0
    result.to_parquet(os.path.join(out, "workflow_scores.parquet"), index=False)
    score_seconds = time.perf_counter() - started

    print(
        json.dumps(
            {
                "tasks": int(len(t)),
                "import_seconds": import_seconds,
                "score_seconds": score_seconds,
                "score_sum": float(result.score.sum()),
                "flagged": int(result.flagged.sum()),
            }
        )
    )


if __name__ == "__main__":
    main()
