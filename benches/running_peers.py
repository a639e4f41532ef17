"""The pandas peer of benches/running.rs: the running jobs' window statistics from the same
samples, in memory (reading the CSV is not timed).

Per job, node and metric: mean, max, standard deviation and 95th percentile over the run so far
(at most a day), the last hour and the last half hour: the windows of the built-in running rules.
Prints `seconds S` and the number of groups.
"""
import sys
import time

import pandas as pd

path, now_us = sys.argv[1], int(sys.argv[2])
samples = pd.read_csv(path, dtype={"job_id": "string", "node": "category", "metric": "category"})
started = time.perf_counter()
groups = 0
for window_s in (86_400, 3_600, 1_800):
    recent = samples[samples["ts"] >= now_us - window_s * 1_000_000]
    grouped = recent.groupby(["job_id", "node", "metric"], observed=True)["value"]
    stats = grouped.agg(["mean", "max", "std"])
    stats["p95"] = grouped.quantile(0.95)
    groups += len(stats)
elapsed = time.perf_counter() - started
print(f"seconds {elapsed:.3f}")
print(f"groups {groups}")
