"""Commit latency of a Delta table on S3: Sluice beside delta-rs, against one moto S3 server.

Each commit appends one row (one Parquet file, one _delta_log/N.json created with
If-None-Match: *). Sluice: one `sluice sql` session running CREATE TABLE ... LOCATION 's3://...'
and then --commits INSERTs of one row; its time per commit is (that session's wall time minus a
session that only creates the table) / commits, so the process start and the CREATE are left
out. delta-rs: write_deltalake(dt, <one row>, mode="append") --commits times with one DeltaTable
kept (as one Sluice session keeps its snapshot), AWS_CONDITIONAL_PUT=etag; its mean and median.
Each writer follows its own default checkpoint policy (Sluice: every 10 commits), so the means
include the commits that also wrote a checkpoint.

  test/interop/s3/with_moto.sh scripts/peers/run-python.sh bench/s3_commit_rs.py \
      [--bin build/release/sluice] [--commits 50]

Prints one line: commits, Sluice ms per commit, delta-rs mean and median ms, the ratio of the
means. Figures are recorded in bench/RESULTS.md ("## Delta commits on S3 (moto)").
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time
import uuid

import boto3
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake


def sluice_session(binary, warehouse, script):
    start = time.perf_counter()
    subprocess.run([binary, "sql", "--warehouse", warehouse, "--format", "csv"], input=script,
                   text=True, check=True, capture_output=True)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "release", "sluice"))
    parser.add_argument("--commits", type=int, default=50)
    args = parser.parse_args()
    endpoint = os.environ["AWS_ENDPOINT_URL_S3"]
    bucket = "bench-" + uuid.uuid4().hex[:10]
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket=bucket)

    with tempfile.TemporaryDirectory() as wh:
        create = "CREATE TABLE {name} (id BIGINT, s STRING) LOCATION 's3://%s/{name}';\n" % bucket
        base = sluice_session(args.bin, wh, create.format(name="base"))
        script = create.format(name="t") + "".join(
            f"INSERT INTO t VALUES ({i}, 'x');\n" for i in range(args.commits))
        total = sluice_session(args.bin, wh, script)
    sluice_ms = (total - base) * 1000 / args.commits

    so = {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
          "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"],
          "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true", "AWS_CONDITIONAL_PUT": "etag"}
    uri = f"s3://{bucket}/rs"
    row = lambda i: pa.table({"id": pa.array([i], pa.int64()), "s": pa.array(["x"])})  # noqa
    write_deltalake(uri, row(-1), storage_options=so)
    dt = DeltaTable(uri, storage_options=so)
    times = []
    for i in range(args.commits):
        start = time.perf_counter()
        write_deltalake(dt, row(i), mode="append")
        times.append((time.perf_counter() - start) * 1000)
    assert dt.version() == args.commits
    rs_mean, rs_median = statistics.mean(times), statistics.median(times)
    print(f"commits={args.commits} sluice_ms_per_commit={sluice_ms:.1f} "
          f"deltars_mean_ms={rs_mean:.1f} deltars_median_ms={rs_median:.1f} "
          f"ratio_of_means={sluice_ms / rs_mean:.2f}")


if __name__ == "__main__":
    main()
