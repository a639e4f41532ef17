"""The peer of benches/workflows.rs: the same two steps with pandas, on the same files.

1. import: every trace CSV below DIR read with pandas, the run id and label added, written as one
   Parquet file (pyarrow), as `jobsight import pegasus` turns the same files into Parquet;
2. score: the tasks read back, and what `jobsight workflow score` computes
   (pipeline/workflow/src/detect/task_score.rs): each task's 15 signals as robust z-scores against
   its kind (median and 1.4826 x MAD, with the same floors), each kind's signal weights (how much
   a signal follows the host), the host medians per kind and signal, the run's peers' level (the
   lower third of the host medians), each host's score (against history) and flag (slower than
   history and than the run's other hosts), written as Parquet.

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


SIGNALS = [
    "runtime", "exec", "stage_in", "stage_out", "stage_in_rate", "stage_out_rate", "queue",
    "wms", "post", "cpu_rate", "utime_rate", "stime_rate", "iowait", "read_rate", "write_rate",
]
TIMES = {"runtime", "exec", "stage_in", "stage_out", "queue", "wms", "post", "iowait"}


def signals(t):
    """The signals of jobsight's detect::signals: times as ln(1 + s), rates as -ln(1 + per s)."""

    def ok(column):
        v = t[column].astype(float)
        return v.where(np.isfinite(v) & (v >= 0))

    runtime, stage_in, stage_out = ok("runtime"), ok("stage_in_delay"), ok("stage_out_delay")
    execution = (runtime - stage_in.fillna(0.0) - stage_out.fillna(0.0)).clip(lower=0.0)

    def rate(v, over):
        return -np.log1p(v / over.where(over > 0))

    return pd.DataFrame(
        {
            "runtime": np.log1p(runtime),
            "exec": np.log1p(execution),
            "stage_in": np.log1p(stage_in),
            "stage_out": np.log1p(stage_out),
            "stage_in_rate": rate(ok("stage_in_bytes"), stage_in),
            "stage_out_rate": rate(ok("stage_out_bytes"), stage_out),
            "queue": np.log1p(ok("queue_delay")),
            "wms": np.log1p(ok("wms_delay")),
            "post": np.log1p(ok("post_script_delay")),
            "cpu_rate": rate(ok("kickstart_executables_cpu_time"), execution),
            "utime_rate": rate(ok("kickstart_online_utime"), execution),
            "stime_rate": rate(ok("kickstart_online_stime"), execution),
            "iowait": np.log1p(ok("kickstart_online_iowait")),
            "read_rate": rate(ok("kickstart_online_bytes_read"), execution),
            "write_rate": rate(ok("kickstart_online_bytes_written"), execution),
        }
    )


def score(t):
    """Each task's z-scores, its host's score and its host against the run, as detect::score."""
    kind = t.task_id.str.replace(r"(?<=.)_ID\d+$", "", regex=True)
    host = t.kickstart_hostname.fillna("")
    x = signals(t)
    median = x.groupby(kind).transform("median")
    mad = (x - median).abs().groupby(kind).transform("median") * 1.4826
    floor = pd.DataFrame(0.05, index=x.index, columns=x.columns)
    for s in TIMES:
        floor[s] = np.maximum(0.05, np.log1p(np.exp(-median[s])))
    present = x.notna().groupby(kind).transform("mean") >= 0.5
    z = ((x - median) / np.maximum(mad, floor)).where(present).clip(-50.0, 50.0)
    # Each kind's weights: 1 - within-host spread / within-run spread, over the tasks sharing
    # their host and run with another of their kind.
    by_host = [t.workflow_id, host, kind]
    host_mean = z.groupby(by_host).transform("mean")
    host_count = z.groupby(by_host).transform("count")
    run_mean = z.groupby([t.workflow_id, kind]).transform("mean")
    shared = z.notna() & (host_count >= 2)
    within = ((z - host_mean) ** 2).where(shared).groupby(kind).sum()
    total = ((z - run_mean) ** 2).where(shared).groupby(kind).sum()
    n = shared.groupby(kind).sum()
    weight = (1.0 - within / total).clip(lower=0.0)
    weight = weight.where(n >= 30, 0.0).where(total > 1e-9 * n, 0.0).fillna(0.0)
    # A kind with no signal shared often enough weighs its run time and execution alone, and
    # counts only for a host without evidence of learnt weight.
    learnt = (n >= 30).any(axis=1)
    unlearnt = pd.DataFrame(0.0, index=weight.index, columns=weight.columns)
    unlearnt[["runtime", "exec"]] = 1.0
    weight = weight.where(learnt, unlearnt, axis=0)
    # The host medians per kind and signal, and the run's peers' level.
    medians = z.groupby(by_host).median()
    peers = medians.groupby(level=[0, 2])
    level = peers.quantile(1.0 / 3.0).where(peers.count() >= 3, 0.0)
    level = level.reindex(medians.index.droplevel(1)).set_axis(medians.index)
    kinds = medians.index.get_level_values(2)
    w2 = (weight**2).reindex(kinds).set_axis(medians.index)
    present = medians.notna()
    per_group = pd.DataFrame(
        {
            "h": (w2 * medians.clip(0.0, 50.0)).where(present).sum(axis=1),
            "r": (w2 * (medians - level).clip(0.0, 50.0)).where(present).sum(axis=1),
            "w": w2.where(present).sum(axis=1),
            "learnt": learnt.reindex(kinds).to_numpy(),
        }
    )
    per_host = per_group.groupby([per_group.index.get_level_values(0),
                                  per_group.index.get_level_values(1), "learnt"]).sum()
    per_host = per_host.unstack("learnt", fill_value=0.0)
    for part in ["h", "r", "w"]:
        if (part, True) not in per_host.columns:
            per_host[(part, True)] = 0.0
        if (part, False) not in per_host.columns:
            per_host[(part, False)] = 0.0
    use_learnt = per_host[("w", True)] > 0
    chosen = {
        part: per_host[(part, True)].where(use_learnt, per_host[(part, False)])
        for part in ["h", "r", "w"]
    }
    vs_history = (chosen["h"] / chosen["w"]).where(chosen["w"] > 0, 0.0)
    # The score is against history alone; against the run's other hosts is what the flag also
    # needs (and jobsight's task classifier reads).
    vs_run = (chosen["r"] / chosen["w"]).where(chosen["w"] > 0, 0.0)
    keys = pd.MultiIndex.from_arrays([t.workflow_id, host])
    return z.fillna(0.0), vs_history.reindex(keys).to_numpy(), vs_run.reindex(keys).to_numpy()


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
    z, host_score, vs_run = score(t)
    result = pd.DataFrame(
        {"workflow_id": t.workflow_id, "task_id": t.task_id, "score": host_score}
    ).join(z.add_suffix("_z"))
    # Flagged: more than 2 spreads slower than history and than the run's other hosts.
    result["flagged"] = (result.score > 2.0) & (vs_run > 2.0)
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
