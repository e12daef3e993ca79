"""Scanning a Delta table with deletion vectors vs the same table compacted (issue 19).

Spark (the peers' Delta 4.4) writes ROWS rows (id BIGINT, v DOUBLE, s STRING) in 4 files with
delta.enableDeletionVectors=true and DELETEs every row with id % 100 = 7 (1 % of the rows, one
on-disk DV per file); a copy of that table is compacted with REORG TABLE ... APPLY (PURGE)
(files rewritten without the deleted rows, no DVs). Then each engine scans both tables REPS
times with the same query, SELECT count(*), sum(v), count(DISTINCT s):

  sluice   one `sluice sql` process per scan (the child's CPU time: user + sys)
  duckdb   DuckDB 1.4.4's delta extension (delta_scan, the peers' Python), in-process wall time

Prints the median of each and the DV/compacted ratio.

  scripts/peers/run-python.sh bench/delta_dv_scan.py --sluice build/release/sluice \
      [--rows 5000000] [--reps 5] [--dir DIR]

Figures are recorded in bench/RESULTS.md ("## Delta scan with deletion vectors").
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test",
                                "interop"))
import peers  # noqa: E402

QUERY = "SELECT count(*) AS n, sum(v) AS total, count(DISTINCT s) AS names FROM {t}"


def make_tables(base, rows):
    dv = os.path.join(base, "dv")
    compacted = os.path.join(base, "compacted")
    if os.path.exists(os.path.join(compacted, "_delta_log")):
        return dv, compacted
    shutil.rmtree(base, ignore_errors=True)
    s = peers.spark()
    s.sql(f"CREATE TABLE delta.`{dv}` (id BIGINT, v DOUBLE, s STRING) USING delta "
          "TBLPROPERTIES (delta.enableDeletionVectors = true)")
    s.range(0, rows, 1, 4).selectExpr("id", "rand(1) * 100 AS v", "concat('s', id % 1000) AS s") \
        .write.format("delta").mode("append").save(dv)
    s.sql(f"DELETE FROM delta.`{dv}` WHERE id % 100 = 7")
    shutil.copytree(dv, compacted)
    s.sql(f"REORG TABLE delta.`{compacted}` APPLY (PURGE)")
    return dv, compacted


def sluice_scan(binary, table):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run([binary, "sql", "--format", "csv", "--warehouse", "/tmp",
                          QUERY.format(t=f"delta.`{table}`")],
                         capture_output=True, text=True, check=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout.strip().splitlines()[-1], cpu, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir", default="/tmp/sluice-bench-dv")
    a = ap.parse_args()
    dv, compacted = make_tables(a.dir, a.rows)
    duck = peers.duckdb_delta()
    results = {}
    for name, table in (("dv", dv), ("compacted", compacted)):
        cpu, wall, dwall = [], [], []
        answer = duck_answer = None
        for _ in range(a.reps):
            answer, c, w = sluice_scan(a.sluice, table)
            cpu.append(c)
            wall.append(w)
            t0 = time.monotonic()
            duck_answer = duck.execute(QUERY.format(t=f"delta_scan('{table}')")).fetchall()
            dwall.append(time.monotonic() - t0)
        results[name] = (statistics.median(cpu), statistics.median(wall), statistics.median(dwall))
        print(f"{name:10s} sluice answer {answer}; duckdb {duck_answer}")
    print(f"{'table':10s} {'sluice cpu s':>13s} {'sluice wall s':>14s} {'duckdb wall s':>14s}")
    for name, (c, w, d) in results.items():
        print(f"{name:10s} {c:13.3f} {w:14.3f} {d:14.3f}")
    (c1, w1, d1), (c0, w0, d0) = results["dv"], results["compacted"]
    print(f"{'dv/compact':10s} {c1 / c0:13.2f} {w1 / w0:14.2f} {d1 / d0:14.2f}")


if __name__ == "__main__":
    main()
