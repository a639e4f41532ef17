"""The peers of `jobsight features` in benches/features.rs: the same per job x node x metric
statistics on the same Parquet warehouse, computed the way a user of each tool would.

- duckdb: the reference SQL of jobsight (pipeline/features/src/reference.rs), one statement per
  day, with DuckDB's spelling of two casts (epoch_us for a timestamp's microseconds, UBIGINT);
- polars: a lazy query (scan, join with the jobs' kept windows, group by, aggregate), run by the
  streaming engine;
- pandas: read the tables, merge, group by, aggregate (Taxonomist's way of computing its statistics);
- read: only read every column of the telemetry files (pyarrow, batch by batch): the floor.

Every statistic follows jobsight's definitions: trim 60 s at each end of jobs longer than 120 s,
finite samples only (NaN and infinities counted apart), population std, biased skewness and
excess kurtosis, percentiles by linear interpolation.

Usage:
  features_peers.py ENGINE DATA OUT.parquet [SQL_FILE...]   prints {"seconds", "rows", "peak_mib"}
  features_peers.py compare DATA OUT.parquet                 compares OUT with jobsight's `features`
  features_peers.py measure -- COMMAND...                    runs COMMAND, prints its peak memory
"""
import json
import resource
import subprocess
import sys
import time

KEYS = ["job_id", "node", "metric"]
STATS = ["n", "n_nonfinite", "min", "max", "mean", "std", "skewness", "kurtosis",
         "p05", "p25", "p50", "p75", "p95"]
QUANTILES = [("p05", 0.05), ("p25", 0.25), ("p50", 0.50), ("p75", 0.75), ("p95", 0.95)]
TRIM_US = 60 * 1_000_000


def peak_mib(who=resource.RUSAGE_SELF):
    return resource.getrusage(who).ru_maxrss / 1024


def duckdb_engine(data, out, sql_files):
    import duckdb
    con = duckdb.connect()
    for table in ("jobs", "telemetry"):
        con.execute(
            f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{data}/{table}/*/*.parquet', "
            "hive_partitioning = true, hive_types = {'day': VARCHAR})")
    parts = []
    for path in sql_files:
        sql = open(path).read()
        sql = sql.replace('CAST("end" AS BIGINT) - CAST(start AS BIGINT)', 'epoch_us("end") - epoch_us(start)')
        sql = sql.replace("BIGINT UNSIGNED", "UBIGINT")
        parts.append(f"({sql})")
    con.execute(f"COPY ({' UNION ALL '.join(parts)}) TO '{out}' (FORMAT parquet)")
    return con.execute(f"SELECT count(*) FROM '{out}'").fetchone()[0]


def polars_engine(data, out):
    import polars as pl
    jobs = (
        pl.scan_parquet(f"{data}/jobs/*/*.parquet", hive_partitioning=True)
        .filter(pl.col("start").is_not_null())
        .group_by("job_id").agg(pl.col("start").min(), pl.col("end").max())
        .with_columns(
            trimmed=(pl.col("end") - pl.col("start")) > pl.duration(microseconds=2 * TRIM_US))
        .select("job_id", "trimmed",
                keep_from=pl.col("start") + pl.duration(microseconds=TRIM_US),
                keep_to=pl.col("end") - pl.duration(microseconds=TRIM_US))
    )
    telemetry = pl.scan_parquet(f"{data}/telemetry/*/*.parquet", hive_partitioning=True).select(
        *[pl.col(k).cast(pl.String) for k in KEYS], "ts", "value")
    kept = telemetry.join(jobs, on="job_id").filter(
        ~pl.col("trimmed") | pl.col("ts").is_between(pl.col("keep_from"), pl.col("keep_to")))
    finite = pl.col("value").is_finite()
    v = pl.col("value").filter(finite)
    stats = kept.group_by(KEYS).agg(
        n=finite.sum().cast(pl.UInt64),
        n_nonfinite=(~finite).sum().cast(pl.UInt64),
        min=v.min(), max=v.max(), mean=v.mean(), std=v.std(ddof=0),
        # Same definition as jobsight: no shape for a constant series (polars gives NaN).
        skewness=pl.when(v.min() < v.max()).then(v.skew(bias=True)),
        kurtosis=pl.when(v.min() < v.max()).then(v.kurtosis(fisher=True, bias=True)),
        **{name: v.quantile(q, interpolation="linear") for name, q in QUANTILES},
    )
    stats.sink_parquet(out, engine="streaming")
    return pl.scan_parquet(out).select(pl.len()).collect().item()


def pandas_engine(data, out):
    import numpy as np
    import pandas as pd
    jobs = pd.read_parquet(f"{data}/jobs", columns=["job_id", "start", "end"]).dropna(subset=["start"])
    jobs = jobs.groupby("job_id", as_index=False).agg(start=("start", "min"), end=("end", "max"))
    trim = pd.Timedelta(microseconds=TRIM_US)
    jobs["trimmed"] = (jobs["end"] - jobs["start"]) > 2 * trim
    jobs["keep_from"] = jobs["start"] + trim
    jobs["keep_to"] = jobs["end"] - trim
    tel = pd.read_parquet(f"{data}/telemetry", columns=KEYS + ["ts", "value"])
    for k in KEYS:
        tel[k] = tel[k].astype(str).astype("category")
    jobs["job_id"] = jobs["job_id"].astype(tel["job_id"].dtype)
    df = tel.merge(jobs[["job_id", "trimmed", "keep_from", "keep_to"]], on="job_id")
    del tel
    df = df[~df["trimmed"] | ((df["ts"] >= df["keep_from"]) & (df["ts"] <= df["keep_to"]))]
    finite = np.isfinite(df["value"].to_numpy())
    bad = df[~finite].groupby(KEYS, observed=True).size().rename("n_nonfinite")
    f = df[finite][KEYS + ["value"]]
    del df
    g = f.groupby(KEYS, observed=True)["value"]
    stats = g.agg(n="count", min="min", max="max", mean="mean")
    dev = f["value"] - g.transform("mean")
    moments = pd.DataFrame({"d2": dev ** 2, "d3": dev ** 3, "d4": dev ** 4})
    for k in KEYS:
        moments[k] = f[k]
    m = moments.groupby(KEYS, observed=True)[["d2", "d3", "d4"]].mean()
    stats["std"] = np.sqrt(m["d2"])
    varies = (m["d2"] > 0) & (stats["min"] < stats["max"])
    stats["skewness"] = (m["d3"] / m["d2"] ** 1.5).where(varies)
    stats["kurtosis"] = (m["d4"] / m["d2"] ** 2 - 3).where(varies)
    q = g.quantile([q for _, q in QUANTILES]).unstack()
    q.columns = [name for name, _ in QUANTILES]
    stats = stats.join(q).join(bad, how="outer")
    stats["n"] = stats["n"].fillna(0).astype("uint64")
    stats["n_nonfinite"] = stats["n_nonfinite"].fillna(0).astype("uint64")
    stats.reset_index().to_parquet(out)
    return len(stats)


def read_engine(data, out):
    import pyarrow.dataset as ds
    rows = 0
    for batch in ds.dataset(f"{data}/telemetry", format="parquet", partitioning="hive").to_batches():
        rows += batch.num_rows
    return rows


def compare(data, out):
    """How far the peer's statistics are from jobsight's `features`, per column."""
    import duckdb
    con = duckdb.connect()
    ours = f"read_parquet('{data}/features/*/*.parquet')"
    theirs = f"read_parquet('{out}')"
    counts = con.execute(f"""
        SELECT (SELECT count(*) FROM {ours}), (SELECT count(*) FROM {theirs}),
               (SELECT count(*) FROM {ours} o JOIN {theirs} t USING (job_id, node, metric))
    """).fetchone()
    worst = {}
    for column in STATS:
        # Largest difference relative to the series' range (percentiles, min, max, mean) or the
        # value (moments); a NULL on one side only counts as a mismatch.
        # The mean's magnitude joins the scale so that a constant series' std of 0 against a
        # rounding residue of 1e-17 is not an "infinite" relative difference.
        scale = "greatest(abs(o.max - o.min), abs(o.{c}), abs(o.mean) * 1e-9, 1e-300)".format(c=column)
        if column in ("n", "n_nonfinite"):
            expr = f"max(abs(CAST(o.{column} AS DOUBLE) - CAST(t.{column} AS DOUBLE)))"
        else:
            expr = f"max(abs(o.{column} - t.{column}) / {scale})"
        diff, nulls = con.execute(f"""
            SELECT {expr}, count(*) FILTER ((o.{column} IS NULL) <> (t.{column} IS NULL))
            FROM {ours} o JOIN {theirs} t USING (job_id, node, metric)
        """).fetchone()
        worst[column] = {"max_rel_diff": diff, "null_mismatches": nulls}
    print(json.dumps({"jobsight_rows": counts[0], "peer_rows": counts[1], "matched": counts[2],
                      "columns": worst}))


def main():
    if sys.argv[1] == "measure":
        started = time.perf_counter()
        result = subprocess.run(sys.argv[3:], stdout=subprocess.PIPE)
        print(json.dumps({"seconds": time.perf_counter() - started,
                          "status": result.returncode,
                          "peak_mib": peak_mib(resource.RUSAGE_CHILDREN)}))
        sys.stdout.flush()
        sys.stdout.buffer.write(result.stdout)
        return
    engine, data, out = sys.argv[1:4]
    if engine == "compare":
        compare(data, out)
        return
    started = time.perf_counter()
    if engine == "duckdb":
        rows = duckdb_engine(data, out, sys.argv[4:])
    elif engine == "polars":
        rows = polars_engine(data, out)
    elif engine == "pandas":
        rows = pandas_engine(data, out)
    elif engine == "read":
        rows = read_engine(data, out)
    else:
        raise SystemExit(f"unknown engine {engine}")
    print(json.dumps({"seconds": time.perf_counter() - started, "rows": rows,
                      "peak_mib": peak_mib()}))


if __name__ == "__main__":
    main()
