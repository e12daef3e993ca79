"""Sluice's commit latency beside delta-rs's on the same tables (issue 16, section 3).

Runs bench/delta_commit_bench (which builds the base tables of 100, 1,000 and 10,000 files and
times one `sluice sql` session's INSERTs into copies of them), then makes delta-rs append one row
per commit to other copies of the same base tables with write_deltalake(mode="append"), twice:

  rs_uri    write_deltalake(path, ...): each append opens the table from its path (a new process
            or a new DeltaTable per commit, as most delta-rs users call it)
  rs_table  write_deltalake(dt, ...) with one DeltaTable kept for all appends (the equivalent of
            one Sluice session, which keeps its snapshot between statements)

and prints one row per size: the median ms per commit of each (commits that wrote no checkpoint;
both checkpoint at the same versions, delta.checkpointInterval=10) and Sluice's ratio to each.

  scripts/peers/run-python.sh bench/delta_commit_rs.py --bench build/release/bench/delta_commit_bench \
      [--files 100,1000,10000] [--commits 50] [--dir DIR]

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
    cmd = [args.bench, "--files", args.files, "--commits", str(args.commits), "--dir", args.dir]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    figures = {}
    for line in out.splitlines():
        fields = dict(kv.split("=", 1) for kv in line.split())
        figures[int(fields["files"])] = fields
    return figures


def rs_run(base, work, commits, files, keep_table):
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work)
    dt = DeltaTable(work) if keep_table else None
    plain, version = [], dt.version() if dt else DeltaTable(work).version()
    for i in range(commits):
        row = pa.table({"id": pa.array([files + i], pa.int32()), "s": pa.array(["x"])})
        start = time.perf_counter()
        write_deltalake(dt if keep_table else work, row, mode="append")
        ms = (time.perf_counter() - start) * 1000
        version += 1
        if version % 10 != 0:
            plain.append(ms)
    assert DeltaTable(work).version() == version, "an append was lost"
    return statistics.median(plain)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", required=True, help="the delta_commit_bench binary")
    p.add_argument("--files", default="100,1000,10000")
    p.add_argument("--commits", type=int, default=50)
    p.add_argument("--dir", default="/dev/shm/sluice-delta-commit-bench"
                   if os.path.isdir("/dev/shm") else "/tmp/sluice-delta-commit-bench")
    args = p.parse_args()
    sluice = sluice_figures(args)
    print(f"{'files':>6} {'sluice ms':>10} {'rs_table ms':>12} {'rs_uri ms':>10} "
          f"{'sluice/rs_table':>16} {'sluice/rs_uri':>14}")
    for n in sorted(sluice):
        base = os.path.join(args.dir, f"base-{n}", "t")
        table = rs_run(base, os.path.join(args.dir, f"rs-table-{n}", "t"), args.commits, n, True)
        uri = rs_run(base, os.path.join(args.dir, f"rs-uri-{n}", "t"), args.commits, n, False)
        s = float(sluice[n]["median_ms"])
        print(f"{n:>6} {s:>10.2f} {table:>12.2f} {uri:>10.2f} {s / table:>16.2f} {s / uri:>14.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
