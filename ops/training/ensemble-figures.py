#!/usr/bin/env python3
"""The anomaly score and the diagnosis judged together, window by window (issue 70).

Usage: ensemble-figures.py SCORE_VERDICTS DIAGNOSIS_VERDICTS JOBS.txt[,JOBS.txt...]

SCORE_VERDICTS and DIAGNOSIS_VERDICTS are the `--verdicts` files of `jobsight model eval --kind
unsupervised` and `--kind diagnosis` on the same data, both with --leave-out-application; the
jobs files are the suite's `job_id app anomaly` lines. For each way of calling a window
anomalous it prints the share of anomalous windows flagged, the share of healthy windows flagged
(false alarms), the share flagged per anomaly type, and per application (flagged / false alarms).
"""
import collections
import csv
import sys


def read(path):
    with open(path, newline="") as f:
        return {(r["job_id"], r["start"]): r for r in csv.DictReader(f)}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    score, diagnosis = read(sys.argv[1]), read(sys.argv[2])
    application = {}
    for path in sys.argv[3].split(","):
        for line in open(path):
            fields = line.split()
            if len(fields) >= 2:
                application[fields[0]] = fields[1]
    keys = sorted(set(score) & set(diagnosis))
    if len(keys) != len(score) or len(keys) != len(diagnosis):
        sys.exit(f"the files judge different windows: {len(score)} and {len(diagnosis)}, {len(keys)} shared")
    flags = lambda s: s["verdict"] != "healthy"  # noqa: E731
    top = lambda d: d["top_class"] != "healthy"  # noqa: E731
    variants = {
        "the score": lambda s, d: flags(s),
        "the diagnosis's top class": lambda s, d: top(d),
        "either": lambda s, d: flags(s) or top(d),
        "healthy votes below half": lambda s, d: top(d) or float(d["score"]) < 0.5,
        "not confidently healthy": lambda s, d: flags(s) or d["verdict"] != "healthy",
    }
    print(f"{len(keys)} windows")
    for name, anomalous in variants.items():
        n, k = collections.Counter(), collections.Counter()
        for key in keys:
            s, d = score[key], diagnosis[key]
            truth = s["truth"]
            group = (application.get(key[0], "?"), "healthy" if truth == "healthy" else "anomalous")
            hit = anomalous(s, d)
            for counter_key in (truth, group):
                n[counter_key] += 1
                k[counter_key] += hit
        types = sorted(t for t in n if isinstance(t, str) and t != "healthy")
        flagged = sum(k[t] for t in types) / max(sum(n[t] for t in types), 1)
        false_alarms = k["healthy"] / max(n["healthy"], 1)
        per_type = " ".join(f"{t} {k[t] / n[t]:.2f}" for t in types)
        apps = sorted({g[0] for g in n if isinstance(g, tuple)})
        share = lambda g: k[g] / n[g] if n[g] else float("nan")  # noqa: E731
        per_app = " ".join(f"{a} {share((a, 'anomalous')):.2f}/{share((a, 'healthy')):.3f}" for a in apps)
        print(f"{name}: flagged {flagged:.3f}, false alarms {false_alarms:.3f}\n  types: {per_type}\n  applications: {per_app}")


if __name__ == "__main__":
    main()
