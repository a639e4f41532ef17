"""DuckDB's side of benches/summaries.rs: one query over the warehouse's Parquet, as an admin with
DuckDB would run it. A fresh connection creates the same views jobsight shows (`jobs` with the
same derived columns), then the query runs; best of three, each with its own connection, so the
time includes what jobsight's time includes (opening the tables).

Usage: python summaries_peers.py DATA_DIR SQL  ->  {"seconds": s, "rows": n, "checksum": x}
"""

import json
import os
import sys
import time

import duckdb

TABLES = ["job_summary", "findings", "summaries"]

# The `jobs` view's derived columns, as query::JOBS_DERIVED defines them (times in µs).
JOBS_VIEW = """
CREATE VIEW jobs AS SELECT *,
  (epoch_us("end") - epoch_us(start)) // 1000000 AS elapsed_s,
  (epoch_us(start) - epoch_us(submit)) // 1000000 AS wait_s,
  CAST(cpus AS DOUBLE) * CAST(epoch_us("end") - epoch_us(start) AS DOUBLE) / 3.6e9 AS core_hours,
  CAST(num_nodes AS DOUBLE) * CAST(epoch_us("end") - epoch_us(start) AS DOUBLE) / 3.6e9 AS node_hours,
  CAST(gpus AS DOUBLE) * CAST(epoch_us("end") - epoch_us(start) AS DOUBLE) / 3.6e9 AS gpu_hours,
  CAST(req_mem_mb AS DOUBLE) / 1024 AS req_mem_gb
FROM read_parquet('{data}/jobs/*/*.parquet', hive_partitioning = true, hive_types_autocast = false)
"""


def run(data, sql):
    con = duckdb.connect()
    con.execute(JOBS_VIEW.format(data=data))
    for table in TABLES:
        if not os.path.isdir(f"{data}/{table}"):
            continue  # a warehouse without it (benches/web.rs has no summaries)
        con.execute(
            f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{data}/{table}/*/*.parquet', "
            "hive_partitioning = true, hive_types_autocast = false)"
        )
    rows = con.execute(sql).fetchall()
    con.close()
    return rows


def checksum(rows):
    total = 0.0
    for row in rows:
        for value in row:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                total += float(value)
                break
    return total


def main():
    data, sql = sys.argv[1], sys.argv[2]
    best = None
    for _ in range(3):
        start = time.perf_counter()
        rows = run(data, sql)
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    print(json.dumps({"seconds": best, "rows": len(rows), "checksum": checksum(rows)}))


if __name__ == "__main__":
    main()
