#!/usr/bin/env python3
"""The anomaly score's verdicts of a cross-validation, broken down the ways issue 70 asks about.

`jobsight model eval --kind unsupervised --leave-out-application --verdicts V.csv` pools every
application's figures; this reads V.csv with the suite's labels and prints, for the applications
asked for (default: all):
  - per application: healthy windows flagged, anomalous windows flagged, each type's share;
  - per anomaly type, pooled over them;
  - anomalous runs whose anomaly started with the job (no healthy prefix) against the others;
  - the first judged window of each healthy run (the issue saw most of them flagged).

  score-breakdown.py V.csv LABELS.csv JOBS.txt STARTS.csv [--apps "numpy bwa"]

LABELS.csv is the suite's `job_id,anomaly,start,end,node` (a fixture's labels.csv), JOBS.txt its
`job_id app anomaly` lines (a fixture's jobs.txt), STARTS.csv `job_id,start` of every job
(`jobsight sql "SELECT job_id, start FROM jobs" --format csv`); several files of each may be
given joined by commas. An anomaly "began with the job" when its generator started within 5 s of
the job (the others start at least a fifth of the run, 12 s, in).
"""
import argparse
import csv
from collections import defaultdict
from datetime import datetime, timezone


def when(text):
    """An RFC 3339 or SQL timestamp, in UTC when it names no zone."""
    if not text:
        return None
    t = datetime.fromisoformat(text.strip().replace(" ", "T").replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("verdicts")
    parser.add_argument("labels", help="labels.csv files, comma-separated")
    parser.add_argument("jobs", help="jobs.txt files, comma-separated")
    parser.add_argument("starts", help="job_id,start CSV files, comma-separated")
    parser.add_argument("--apps", default="", help="applications to count (default: all)")
    args = parser.parse_args()

    app_of, starts = {}, {}
    for path in args.jobs.split(","):
        for line in open(path):
            parts = line.split()
            if len(parts) >= 2:
                app_of[parts[0]] = parts[1]
    for path in args.labels.split(","):
        for row in csv.DictReader(open(path)):
            if row["anomaly"] != "none":
                starts[row["job_id"]] = when(row["start"])
    job_start = {}
    for path in args.starts.split(","):
        for row in csv.DictReader(open(path)):
            if row.get("start"):
                job_start[row["job_id"]] = when(row["start"])
    wanted = set(args.apps.split()) or set(app_of.values())

    rows = [r for r in csv.DictReader(open(args.verdicts)) if app_of.get(r["job_id"]) in wanted]
    if not rows:
        raise SystemExit(f"no judged window of {sorted(wanted)} in {args.verdicts}")
    first_start = {}
    for r in rows:
        t = when(r["start"])
        first_start[r["job_id"]] = min(first_start.get(r["job_id"], t), t)

    def share(pairs):
        pairs = list(pairs)
        return f"{sum(pairs) / len(pairs):.3f} ({sum(pairs)}/{len(pairs)})" if pairs else "-"

    flagged = lambda r: r["verdict"] == "anomalous"
    by_app = defaultdict(list)
    for r in rows:
        by_app[app_of[r["job_id"]]].append(r)
    print("application: healthy flagged | anomalous flagged | by type")
    for app in sorted(by_app):
        rs = by_app[app]
        types = sorted({r["truth"] for r in rs} - {"healthy"})
        per_type = ", ".join(
            f"{t} {share(flagged(r) for r in rs if r['truth'] == t)}" for t in types
        )
        print(
            f"  {app}: {share(flagged(r) for r in rs if r['truth'] == 'healthy')} | "
            f"{share(flagged(r) for r in rs if r['truth'] != 'healthy')} | {per_type}"
        )
    print("pooled over those applications:")
    print(f"  healthy flagged {share(flagged(r) for r in rows if r['truth'] == 'healthy')}")
    print(f"  anomalous flagged {share(flagged(r) for r in rows if r['truth'] != 'healthy')}")
    for t in sorted({r["truth"] for r in rows} - {"healthy"}):
        print(f"  {t} {share(flagged(r) for r in rows if r['truth'] == t)}")
    def from_start(r):
        job = r["job_id"]
        if job not in starts or job not in job_start:
            return False
        return (starts[job] - job_start[job]).total_seconds() < 5
    anomalous = [r for r in rows if r["truth"] != "healthy"]
    print("anomalous windows flagged, by where the anomaly began:")
    print(f"  with the job (no healthy prefix): {share(flagged(r) for r in anomalous if from_start(r))}")
    print(f"  later in the run: {share(flagged(r) for r in anomalous if not from_start(r))}")
    healthy_runs = {r["job_id"] for r in rows if r["job_id"] not in starts}
    firsts = [r for r in rows if r["job_id"] in healthy_runs and when(r["start"]) == first_start[r["job_id"]]]
    later = [r for r in rows if r["job_id"] in healthy_runs and when(r["start"]) != first_start[r["job_id"]]]
    print("healthy runs' windows flagged:")
    print(f"  first judged window: {share(flagged(r) for r in firsts)}")
    print(f"  the others: {share(flagged(r) for r in later)}")


if __name__ == "__main__":
    main()
