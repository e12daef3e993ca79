"""The kafka_to_delta latency case on Apache Spark Structured Streaming (bench/latency/latency.py).

Run with the peers' Python (scripts/peers/run-python.sh):
    spark_latency.py --bootstrap HOST:PORT --rate R --seconds S --warmup W --partitions P
                     --trigger-ms T --work DIR
The same job as bench/kafka_latency_bench.cc's kafka_to_delta case: a topic of P partitions whose
timestamps are the broker's LogAppendTime (created afresh: latency-spark), a producer in this
process writing R records/s for S seconds (~300-byte JSON values; key = the produce time in ms,
taken when the record is handed to the producer; librdkafka's default producer settings, as the
Sluice bench's), a streaming query Kafka -> Delta (Spark 4.2 + delta-spark, local[2], UTC, UI off,
trigger processingTime T ms, the table's change data feed on), started and idle ("Waiting for
data to arrive") before the first record is produced, then warmed by --prewarm seconds of
records at the rate (default 10; drained with processAllAvailable, not measured: a cold JVM's
first batches took 10-30 s each here). Latency = the change feed's _commit_timestamp of the
version that added a row - its produce time; of the measured run's records, those produced in
its first W seconds are left out, and its batches are the ones after the pre-warm's. Prints one JSON object (as kafka_latency_bench --json, with
engine "spark"); exit 1 when a row is missing.
"""

import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test",
                                "interop"))
import peers  # noqa: E402

TOPIC = "latency-spark"


def quantile_cont(values, q):  # DuckDB's quantile_cont, as kafka_latency_bench
    if not values:
        return 0.0
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def produce(bootstrap, rate, seconds, partitions, first_id=0):
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap, "log_level": 3})
    total = rate * seconds
    pad = "x" * 200
    start = time.monotonic()
    n = 0
    while n < total:
        due = min(total, int(rate * (time.monotonic() - start)))
        while n < due:
            v = (f'{{"id":{first_id + n},"customer":"c{n % 997}","amount":12.5,'
                 f'"ts":"2026-11-30T10:00:00Z","pad":"{pad}"}}')
            p.produce(TOPIC, key=str(int(time.time() * 1000)), value=v, partition=n % partitions)
            n += 1
        p.poll(0)
        time.sleep(0.001)
    if p.flush(60) != 0:
        sys.exit("spark_latency: records left unsent after 60 s")
    return total


def main():
    ap = argparse.ArgumentParser()
    for name in ["--rate", "--seconds", "--warmup", "--partitions", "--trigger-ms"]:
        ap.add_argument(name, type=int, required=True)
    ap.add_argument("--prewarm", type=int, default=10,
                    help="seconds of records at the rate before the measured ones (not measured)")
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    try:
        # The peers' settings (peers.spark_builder: local[2], UTC, Delta with snapshotPartitions
        # 2, whose default of 50 made every batch cost ~15 s on 2 cores), Kafka, the change feed.
        builder = peers.spark_builder("sluice-bench-latency", kafka=True, conf={
            "spark.databricks.delta.properties.defaults.enableChangeDataFeed": "true",
            "spark.driver.memory": "2g"})
        peers.recreate_topics(a.bootstrap, [TOPIC], a.partitions,
                              config={"message.timestamp.type": "LogAppendTime"})
    except (peers.PeerMissing, peers.PeerFailed) as e:
        sys.exit(f"spark_latency: {e}")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    table = os.path.join(a.work, "events")
    query = (spark.readStream.format("kafka")
             .option("kafka.bootstrap.servers", a.bootstrap)
             .option("subscribe", TOPIC)
             .option("startingOffsets", "earliest")
             .load()
             .selectExpr("timestamp AS appended", "CAST(CAST(key AS STRING) AS BIGINT) AS sent_ms",
                         "CAST(value AS STRING) AS v")
             .writeStream.format("delta")
             .option("checkpointLocation", os.path.join(a.work, "checkpoint"))
             .trigger(processingTime=f"{a.trigger_ms} milliseconds")
             .start(table))
    deadline = time.monotonic() + 180
    while query.status["message"] != "Waiting for data to arrive":
        if time.monotonic() > deadline or query.exception():
            sys.exit(f"spark_latency: the query did not start: {query.status} "
                     f"{query.exception()}")
        time.sleep(0.1)
    # The JVM's first batches (class loading, JIT, Delta's first commits) took 10-30 s each on
    # this machine: a pre-warm at the rate, drained, is left out of the measurement.
    prewarmed = 0
    if a.prewarm > 0:
        prewarmed = produce(a.bootstrap, a.rate, a.prewarm, a.partitions)
        query.processAllAvailable()
    measured_from = int(time.time() * 1000) + a.warmup * 1000
    prewarm_last = max((p["batchId"] for p in query.recentProgress), default=-1)
    total = produce(a.bootstrap, a.rate, a.seconds, a.partitions, first_id=prewarmed)
    query.processAllAvailable()
    progresses = [p for p in query.recentProgress if p["batchId"] > prewarm_last]
    query.stop()
    rows = (spark.read.format("delta").option("readChangeFeed", "true")
            .option("startingVersion", 0).load(table)
            .selectExpr("unix_millis(_commit_timestamp) - sent_ms AS ms",
                        "unix_millis(_commit_timestamp) - unix_millis(appended) AS ams",
                        "sent_ms").collect())
    w = [r for r in rows if r.sent_ms >= measured_from]
    ms = [float(r.ms) for r in w]
    ams = [float(r.ams) for r in w]
    phases = {}
    for p in progresses:
        print(f"spark batch {p.get('batchId')} rows={p.get('numInputRows')} "
              f"durationMs={p.get('durationMs')}", file=sys.stderr, flush=True)
        for k, v in (p.get("durationMs") or {}).items():
            phases.setdefault(k, []).append(float(v))
    out = {"engine": "spark", "case": "kafka_to_delta", "rate": a.rate,
           "p50_ms": quantile_cont(ms, 0.5), "p99_ms": quantile_cont(ms, 0.99),
           "max_ms": max(ms) if ms else 0.0, "rows": len(rows) - prewarmed, "measured": len(w),
           "batches": len(progresses), "broker": "real", "partitions": a.partitions,
           "seconds": a.seconds, "trigger": f"processingTime {a.trigger_ms} ms",
           "trigger_ms": a.trigger_ms,
           "append_p50_ms": quantile_cont(ams, 0.5), "append_p99_ms": quantile_cont(ams, 0.99),
           "append_max_ms": max(ams) if ams else 0.0,
           "durationMs": {k: {"mean": sum(v) / len(v), "p50": quantile_cont(v, 0.5),
                              "p99": quantile_cont(v, 0.99)} for k, v in phases.items()},
           "version": f"Spark {spark.version}"}
    print(json.dumps(out), flush=True)
    spark.stop()
    return 0 if len(rows) == prewarmed + total else 1


if __name__ == "__main__":
    sys.exit(main())
