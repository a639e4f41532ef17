"""The peer of `jobsight import ldms-store` in benches/ingest.rs: DuckDB attributes the same LDMS
CSV store file to the same job windows with the SQL a user would write (unpivot to long format,
interval join on node and time) and writes zstd Parquet, as jobsight does.

Usage: ldms_store_duckdb.py STORE_CSV WINDOWS_CSV OUT_PARQUET
Prints one JSON line: {"seconds": ..., "rows": ..., "peak_mib": ...}.
"""
import json
import resource
import sys
import time

import duckdb

store, windows, out = sys.argv[1:4]
started = time.perf_counter()
con = duckdb.connect()
con.execute(
    f"""
    COPY (
      SELECT w.job_id, u.ProducerName AS node, 'meminfo.' || u.metric AS metric, u.ts, u.value
      FROM (
        UNPIVOT (
          SELECT CAST(floor("#Time") AS BIGINT) * 1000000 + Time_usec AS ts, ProducerName,
                 COLUMNS('^c[0-9]+$')
          FROM read_csv('{store}', header = true)
        ) ON COLUMNS('^c[0-9]+$') INTO NAME metric VALUE value
      ) u
      JOIN read_csv('{windows}', header = true) w
        ON w.node = u.ProducerName AND u.ts BETWEEN w.start_us AND w.end_us
    ) TO '{out}' (FORMAT parquet, COMPRESSION zstd)
    """
)
seconds = time.perf_counter() - started
rows = con.execute(f"SELECT count(*) FROM '{out}'").fetchone()[0]
peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "rows": rows, "peak_mib": peak_mib}))
