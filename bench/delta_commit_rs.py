"""Sluice's commit latency beside delta-rs's on the same tables (issue 16, section 3).

Runs bench/delta_commit_bench (which builds the base tables of 100, 1,000 and 10,000 one-row
files and times one `sluice sql` session's INSERTs, UPDATEs, DELETEs and MERGEs of one row in
copies of them), then makes delta-rs do the same to other copies of the same base tables.
INSERT: delta-rs appends one row per commit with write_deltalake(mode="append"), twice:

  rs_uri    write_deltalake(path, ...): each append opens the table from its path (a new process
            or a new DeltaTable per commit, as most delta-rs users call it)
  rs_table  write_deltalake(dt, ...) with one DeltaTable kept for all appends (the equivalent of
            one Sluice session, which keeps its snapshot between statements)

UPDATE / DELETE / MERGE: one DeltaTable kept for all statements (rs_table), the same statements
on the same rows as Sluice's: dt.update(updates={"s": "'u'"}, predicate="id = k"),
dt.delete("id = k"), dt.merge(<one row (k, 'm')>, "t.id = src.id", source_alias="src",
target_alias="t").when_matched_update({"s": "src.s"}).execute().

Prints one row per size and operation: the median ms per statement of each (statements whose
commit wrote no checkpoint; both checkpoint at the same versions, delta.checkpointInterval=10)
and Sluice's ratio to each.

  scripts/peers/run-python.sh bench/delta_commit_rs.py --bench build/release/bench/delta_commit_bench \
      [--files 100,1000,10000] [--commits 50] [--dml 20] [--ops insert,update,delete,merge] [--dir DIR]

Figures are recorded in bench/RESULTS.md ("## Delta commits in one session").
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake


def sluice_figures(args):
    cmd = [args.bench, "--files", args.files, "--commits", str(args.commits), "--dml",
           str(args.dml), "--ops", args.ops, "--dir", args.dir]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    figures = {}
    for line in out.splitlines():
        fields = dict(kv.split("=", 1) for kv in line.split())
        figures[(fields["op"], int(fields["files"]))] = fields
    return figures


def key(files, i):
    return (i * 7919) % files  # the rows delta_commit_bench's statements change


def rs_run(base, work, op, statements, files, keep_table):
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work)
    dt = DeltaTable(work) if keep_table else None
    plain, version = [], dt.version() if dt else DeltaTable(work).version()
    for i in range(statements):
        k = key(files, i)
        start = time.perf_counter()
        if op == "insert":
            row = pa.table({"id": pa.array([files + i], pa.int32()), "s": pa.array(["x"])})
            write_deltalake(dt if keep_table else work, row, mode="append")
        elif op == "update":
            dt.update(updates={"s": "'u'"}, predicate=f"id = {k}")
        elif op == "delete":
            dt.delete(f"id = {k}")
        else:
            src = pa.table({"id": pa.array([k], pa.int32()), "s": pa.array(["m"])})
            (dt.merge(src, "t.id = src.id", source_alias="src", target_alias="t")
             .when_matched_update({"s": "src.s"}).execute())
        ms = (time.perf_counter() - start) * 1000
        version += 1
        if version % 10 != 0:
            plain.append(ms)
    assert DeltaTable(work).version() == version, f"{op}: a statement did not commit one version"
    return statistics.median(plain)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", required=True, help="the delta_commit_bench binary")
    p.add_argument("--files", default="100,1000,10000")
    p.add_argument("--commits", type=int, default=50)
    p.add_argument("--dml", type=int, default=20)
    p.add_argument("--ops", default="insert,update,delete,merge")
    p.add_argument("--dir", default="/dev/shm/sluice-delta-commit-bench"
                   if os.path.isdir("/dev/shm") else "/tmp/sluice-delta-commit-bench")
    args = p.parse_args()
    sluice = sluice_figures(args)
    print(f"{'op':>6} {'files':>6} {'sluice ms':>10} {'rs_table ms':>12} {'rs_uri ms':>10} "
          f"{'sluice/rs_table':>16} {'sluice/rs_uri':>14}")
    for (op, n) in sorted(sluice, key=lambda k: (args.ops.split(",").index(k[0]), k[1])):
        base = os.path.join(args.dir, f"base-{n}", "t")
        count = args.commits if op == "insert" else args.dml
        table = rs_run(base, os.path.join(args.dir, f"rs-table-{n}-{op}", "t"), op, count, n, True)
        s = float(sluice[(op, n)]["median_ms"])
        if op == "insert":
            uri = rs_run(base, os.path.join(args.dir, f"rs-uri-{n}", "t"), op, count, n, False)
            print(f"{op:>6} {n:>6} {s:>10.2f} {table:>12.2f} {uri:>10.2f} {s / table:>16.2f} "
                  f"{s / uri:>14.2f}")
        else:
            print(f"{op:>6} {n:>6} {s:>10.2f} {table:>12.2f} {'-':>10} {s / table:>16.2f} "
                  f"{'-':>14}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
