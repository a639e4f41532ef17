#!/usr/bin/env python3
"""Arranges a Flow-Bench workflow whose zip is flat (one CSV per run) as the three in
../shared/data are: a folder per run named by the anomaly its tasks are labelled with (`normal`
when none), so that `jobsight import pegasus` gives each run its label.

  arrange-runs.py FLAT_DIR OUT_DIR

Used for the five workflows of Flow-Bench's repository (github.com/PoSeiDon-Workflows/FlowBench,
data/{eht_difmap,eht_imaging,eht_smili,pycbc_inference,somospie}.zip) that judge the task score
(docs/workflows.md).
"""
import csv, os, shutil, sys
from collections import Counter
src, dst = sys.argv[1], sys.argv[2]
counts = Counter()
for name in sorted(os.listdir(src)):
    if not name.endswith(".csv"):
        continue
    with open(os.path.join(src, name)) as f:
        labels = {r["anomaly_type"] for r in csv.DictReader(f)} - {"None", ""}
    if len(labels) > 1:
        raise SystemExit(f"{name}: several anomalies {labels}")
    folder = labels.pop() if labels else "normal"
    counts[folder] += 1
    os.makedirs(os.path.join(dst, folder), exist_ok=True)
    shutil.copy(os.path.join(src, name), os.path.join(dst, folder, name))
print(dst, dict(counts))
