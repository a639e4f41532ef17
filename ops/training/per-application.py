#!/usr/bin/env python3
"""Each application's macro F1 and false alarms from a diagnosis's window verdicts (issue 70).

Usage: per-application.py VERDICTS.csv NAMES.csv [COLUMN]

VERDICTS.csv is what `jobsight model eval --kind diagnosis --verdicts F` writes; NAMES.csv is
`jobsight sql "SELECT job_id, name FROM jobs" --format csv` of the same warehouse, or some of its
lines (windows of jobs it does not list are left out, and counted). COLUMN is the
verdict column judged: `top_class` (default: the class with most votes) or `verdict` (with the
unknown verdict). An application is a job name without its run number (`numpy-3`: numpy). Its
macro F1 is over the classes its windows truly have; false alarms are its healthy windows given
any other verdict. The last line pools every window, and gives the mean, the lowest and how many
applications reach 0.8 and 0.9.
"""
import collections
import csv
import re
import sys


def macro_f1(pairs):
    """Macro F1 over the true classes of (truth, verdict) pairs."""
    f1s = []
    for c in sorted({t for t, _ in pairs}):
        tp = sum(1 for t, p in pairs if t == c and p == c)
        fp = sum(1 for t, p in pairs if t != c and p == c)
        fn = sum(1 for t, p in pairs if t == c and p != c)
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return sum(f1s) / len(f1s)


def false_alarms(pairs):
    healthy = [p for t, p in pairs if t == "healthy"]
    return sum(1 for p in healthy if p != "healthy") / max(1, len(healthy))


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    verdicts, names = sys.argv[1], sys.argv[2]
    column = sys.argv[3] if len(sys.argv) == 4 else "top_class"
    app = {r["job_id"]: re.sub(r"[-_]\d+$", "", r["name"]) for r in csv.DictReader(open(names))}
    rows = collections.defaultdict(list)
    left_out = 0
    for r in csv.DictReader(open(verdicts)):
        if r["job_id"] not in app:
            left_out += 1
            continue
        rows[app[r["job_id"]]].append((r["truth"], r[column]))
    if not rows:
        sys.exit(f"per-application.py: no window of {verdicts} is of a job {names} lists")
    if left_out:
        print(f"({left_out} windows of jobs {names} does not list left out)")
    pooled, figures = [], []
    print(f"{'application':12s} {'windows':>7s} {'macro F1':>8s} {'false alarms':>12s}")
    for a in sorted(rows):
        pooled += rows[a]
        figures.append(macro_f1(rows[a]))
        print(f"{a:12s} {len(rows[a]):7d} {figures[-1]:8.3f} {false_alarms(rows[a]):12.3f}")
    print(
        f"pooled {len(pooled)} windows: macro F1 {macro_f1(pooled):.3f}, false alarms "
        f"{false_alarms(pooled):.3f}; per application mean {sum(figures) / len(figures):.3f}, "
        f"lowest {min(figures):.3f}, >= 0.8: {sum(f >= 0.8 for f in figures)} of {len(figures)}, "
        f">= 0.9: {sum(f >= 0.9 for f in figures)} of {len(figures)}"
    )


if __name__ == "__main__":
    main()
