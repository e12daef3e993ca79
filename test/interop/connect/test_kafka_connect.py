"""Kafka over Spark Connect against a real broker (run by with_broker.sh, which sets
SLUICE_KAFKA_BOOTSTRAP): the unmodified PySpark client writes rows to a topic with
writeStream.format("kafka"), then reads the topic with readStream.format("kafka") into a Delta
path and through foreachBatch, as a Databricks job reads MSK. Sluice only: the expected rows are
the ones written (local Spark needs its Kafka jars and is not part of this check)."""

import os
import select
import signal
import subprocess
import sys
import tempfile

import pytest

import peers

SCRIPT = r'''
import json, os, sys
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
port, bootstrap, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
spark = SparkSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
topic = "connect_orders"
spark.sql("CREATE TABLE kafka_src (id BIGINT, item STRING) USING DELTA")
spark.sql("INSERT INTO kafka_src VALUES (1, 'apple'), (2, 'pear'), (3, 'fig')")
w = (spark.readStream.table("kafka_src")
     .selectExpr("CAST(id AS STRING) AS key", "to_json(struct(id, item)) AS value")
     .writeStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
     .option("topic", topic).option("checkpointLocation", tmp + "/cp_w")
     .trigger(availableNow=True).start())
w.awaitTermination()
def read():
    return (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic).option("startingOffsets", "earliest").load())
r = (read().selectExpr("CAST(key AS STRING) AS k", "CAST(value AS STRING) AS v", "topic",
                       "partition", "offset")
     .writeStream.format("delta").option("checkpointLocation", tmp + "/cp_r")
     .trigger(availableNow=True).start(tmp + "/out"))
r.awaitTermination()
out = [list(x) for x in spark.sql(f"SELECT k, v, topic, partition, offset FROM delta.`{tmp}/out` "
                                  "ORDER BY offset").collect()]
def upsert(df, batch_id):
    parsed = df.select(F.from_json(F.col("value").cast("string"),
                                   "id BIGINT, item STRING").alias("o")).select("o.*")
    parsed.createOrReplaceTempView("kafka_updates")
    df.sparkSession.sql("CREATE TABLE IF NOT EXISTS kafka_silver (id BIGINT, item STRING) "
                        "USING DELTA")
    df.sparkSession.sql("MERGE INTO kafka_silver s USING kafka_updates u ON s.id = u.id "
                        "WHEN MATCHED THEN UPDATE SET s.item = u.item "
                        "WHEN NOT MATCHED THEN INSERT (id, item) VALUES (u.id, u.item)")
f = (read().writeStream.foreachBatch(upsert).option("checkpointLocation", tmp + "/cp_f")
     .trigger(availableNow=True).start())
f.awaitTermination()
silver = [list(x) for x in spark.sql("SELECT * FROM kafka_silver ORDER BY id").collect()]
print(json.dumps({"out": out, "silver": silver,
                  "progress": [[p.batchId, p.numInputRows] for p in r.recentProgress]}))
spark.stop()
'''


@pytest.fixture(scope="module")
def server():
    warehouse = tempfile.mkdtemp(prefix="sluice-connect-kafka-")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    proc = subprocess.Popen([peers.sluice_bin(), "connect", "--port", "0", "--warehouse",
                             warehouse], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    if not ready:
        proc.kill()
        pytest.fail("sluice connect printed nothing within 60 s")
    line = proc.stdout.readline().strip()
    if "listening on" not in line:
        proc.kill()
        pytest.fail(f"sluice connect did not start: {line!r} {proc.stderr.read()}")
    yield {"port": int(line.rsplit(":", 1)[1])}
    proc.send_signal(signal.SIGTERM)
    try:
        assert proc.wait(timeout=30) == 0, proc.stderr.read()
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("sluice connect did not stop within 30 s of SIGTERM")


def test_kafka_write_read_and_foreach_batch_merge(server):
    import json
    bootstrap = os.environ.get("SLUICE_KAFKA_BOOTSTRAP")
    assert bootstrap, "SLUICE_KAFKA_BOOTSTRAP is not set: run through with_broker.sh"
    env = dict(os.environ, TZ="UTC", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(server["port"]), bootstrap,
                           tempfile.mkdtemp(prefix="sluice-kafka-case-")],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    # One partition (the broker's default for a new topic): offsets 0..2, each key its row's id.
    assert sorted(r[4] for r in got["out"]) == [0, 1, 2], got
    assert {r[2] for r in got["out"]} == {"connect_orders"} and {r[3] for r in got["out"]} == {0}
    assert sorted([r[0], json.loads(r[1])] for r in got["out"]) == [
        ["1", {"id": 1, "item": "apple"}], ["2", {"id": 2, "item": "pear"}],
        ["3", {"id": 3, "item": "fig"}]], got
    assert got["silver"] == [[1, "apple"], [2, "pear"], [3, "fig"]], got
    assert sum(n for _, n in got["progress"]) == 3, got
