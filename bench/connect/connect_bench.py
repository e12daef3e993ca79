"""The Connect bench (issue 22): the same PySpark job, examples/pyspark/kafka_orders_medallion.py
(Kafka -> from_json -> watermark -> dropDuplicatesWithinWatermark -> foreachBatch MERGE into
silver, dead letters, silver's change feed -> foreachBatch MERGE into gold), run with availableNow
over one backlog of events on local Spark (pyspark 4.2 + delta-spark 4.4, local[2], the peers'
settings) and on Sluice through Spark Connect, in one run; prints one JSON object with each
engine's wall time, records/s and the ratio.

Run through a real broker and under the peer lock (a JVM):
    flock /tmp/sluice-peer.lock test/interop/kafka/with_broker.sh -- \\
        scripts/peers/run-python.sh bench/connect/connect_bench.py [--rounds R] [--orders O]

Measured: the job's own run (from its start to its end: three queries one after the other), not
the JVM's start (the Spark session is built first, in this process, and the script runs in it)
nor the server's (sluice connect is started first; the script runs as its own process, the
PySpark client). Each engine reads its own topic holding the same records; "same_output" says
whether the job printed the same silver and dead-letter counts and gold rows on both. Not measured yet:
end-to-end latency (a processing-time run with a paced producer).
"""

import argparse
import contextlib
import io
import json
import os
import runpy
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "test", "interop"))
sys.path.insert(0, os.path.join(REPO, "test", "interop", "connect"))
sys.path.insert(0, os.path.join(REPO, "examples", "pyspark"))
import connect_server  # noqa: E402
import peers  # noqa: E402
import produce_orders  # noqa: E402

JOB = os.path.join(REPO, "examples", "pyspark", "kafka_orders_medallion.py")


def run_sluice(bootstrap, topic, work, max_offsets):
    server = connect_server.start(os.path.join(work, "wh"))
    try:
        env = dict(os.environ, SPARK_REMOTE=server.url, TZ="UTC")
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, JOB, bootstrap, topic, os.path.join(work, "job"),
                               max_offsets], capture_output=True, text=True, env=env,
                              timeout=3600)
        seconds = time.monotonic() - t0
    finally:
        server.stop()
    if proc.returncode != 0:
        sys.exit(f"connect_bench: the job failed on Sluice: {proc.stderr[-3000:]}")
    return seconds, proc.stdout


def run_spark(bootstrap, topic, work, max_offsets):
    from pyspark.sql import SparkSession
    jars = peers.delta_jars() + peers.spark_kafka_jars()
    (SparkSession.builder.master("local[2]").appName("sluice-bench-connect")
     .config("spark.jars", ",".join(jars))
     .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
     .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
     .config("spark.sql.session.timeZone", "UTC")
     .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
     .config("spark.sql.shuffle.partitions", "2")
     .config("spark.ui.enabled", "false")
     .config("spark.ui.showConsoleProgress", "false")
     .config("spark.databricks.delta.snapshotPartitions", "2")
     .config("spark.driver.memory", "2g")
     .config("spark.sql.warehouse.dir", os.path.join(work, "wh"))
     .getOrCreate().sparkContext.setLogLevel("ERROR"))
    argv = sys.argv
    sys.argv = [JOB, bootstrap, topic, os.path.join(work, "job"), max_offsets]
    out = io.StringIO()
    t0 = time.monotonic()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(JOB, run_name="__main__")
    finally:
        sys.argv = argv
    return time.monotonic() - t0, out.getvalue()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--orders", type=int, default=100)
    ap.add_argument("--max-offsets", default="1000")
    a = ap.parse_args()
    bootstrap = os.environ.get("SLUICE_KAFKA_BOOTSTRAP")
    if not bootstrap:
        sys.exit("connect_bench: SLUICE_KAFKA_BOOTSTRAP is not set: run through with_broker.sh")
    work = tempfile.mkdtemp(prefix="sluice-bench-connect-")
    records = None
    for topic in ("orders_sluice", "orders_spark"):
        n = produce_orders.produce(bootstrap, topic, 0, a.orders, a.rounds)
        records = n if records is None else records
    load = os.getloadavg()
    s_seconds, s_out = run_sluice(bootstrap, "orders_sluice", os.path.join(work, "sluice"),
                                  a.max_offsets)
    p_seconds, p_out = run_spark(bootstrap, "orders_spark", os.path.join(work, "spark"), a.max_offsets)
    print(json.dumps({
        "job": "examples/pyspark/kafka_orders_medallion.py (availableNow)",
        "records": records, "rounds": a.rounds, "orders_per_round": a.orders,
        "maxOffsetsPerTrigger": int(a.max_offsets),
        "sluice_seconds": round(s_seconds, 2), "sluice_records_per_s": round(records / s_seconds),
        "spark_seconds": round(p_seconds, 2), "spark_records_per_s": round(records / p_seconds),
        "throughput_ratio_sluice_over_spark": round(p_seconds / s_seconds, 2),
        "same_output": s_out.strip() == p_out.strip(),
        "job_output": s_out.strip().splitlines()[:2],
        "loadavg_at_start": [round(x, 2) for x in load], "loadavg_at_end":
        [round(x, 2) for x in os.getloadavg()]}))


if __name__ == "__main__":
    main()
