"""One Nexmark query on Apache Spark Structured Streaming, reading the peers benchmark's topics.

Run by bench/peers/nexmark_peers.py with the peers' Python (scripts/peers/run-python.sh):
    spark_nexmark.py --bootstrap HOST:PORT --query qN --batch-events M --work DIR [--out FILE]
The topics nexmark-<kind> hold the generator's events as JSON records whose timestamp is the
event's dateTime (docs/nexmark.md "Kafka-fed runs"); the stream relation is what Sluice's Kafka
form of the query reads: every column parsed from the JSON with from_json except dateTime, the
record's timestamp, watermarked 4 s. Settings (pinned, bench/peers/README.md): local[2], UTC,
spark.sql.shuffle.partitions = 2, the RocksDB state store provider with changelog checkpointing,
Trigger.AvailableNow with maxOffsetsPerTrigger = the kind's share of M (as Sluice), checkpoint
in DIR. Sink: `noop` (Spark's blackhole), or with --out the memory sink, whose rows are written
to FILE (peers_rows.write_rows) at the end.
Prints "PEERS-READY" when the session is up and the query is about to start, and
"PEERS-DONE <output rows or -1>" when it has ended; the driver times the span between them.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "interop"))
import peers  # noqa: E402
import peers_rows  # noqa: E402

# The kind's share of every 50 events (1 : 3 : 46), as Sluice's maxOffsetsPerTrigger.
SHARE = {"person": 1, "auction": 3, "bid": 46}
COLUMNS = {
    "bid": "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, extra STRING",
}
# The queries, in Spark SQL over the views of the kinds (the texts of bench/nexmark/qN.sql).
QUERIES = {
    "q0": ("bid", "SELECT auction, bidder, price, dateTime, extra FROM bid"),
    "q1": ("bid", "SELECT auction, bidder, CAST(0.908 * price AS DECIMAL(23, 3)) AS price, "
                  "dateTime, extra FROM bid"),
    "q2": ("bid", "SELECT auction, price FROM bid WHERE auction % 123 = 0"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--query", required=True, choices=sorted(QUERIES))
    ap.add_argument("--batch-events", type=int, required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out")
    a = ap.parse_args()
    try:
        builder = peers.spark_builder("sluice-bench-peers", delta=False, kafka=True, conf={
            "spark.driver.memory": "2g",
            "spark.sql.streaming.stateStore.providerClass":
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
            "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
            "spark.sql.warehouse.dir": os.path.join(a.work, "warehouse")})
    except peers.PeerMissing as e:
        sys.exit(f"spark_nexmark: {e}")
    from pyspark.sql.functions import col, from_json

    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    kind, text = QUERIES[a.query]
    names = [c.split()[0] for c in COLUMNS[kind].split(", ")]
    stream = (spark.readStream.format("kafka")
              .option("kafka.bootstrap.servers", a.bootstrap)
              .option("subscribe", f"nexmark-{kind}")
              .option("startingOffsets", "earliest")
              .option("maxOffsetsPerTrigger", str(max(1, SHARE[kind] * a.batch_events // 50)))
              .load()
              .select(from_json(col("value").cast("string"),
                                f"{kind} STRUCT<{COLUMNS[kind]}>").alias("e"),
                      col("timestamp").alias("dateTime")))
    view = stream.select(*[col(f"e.{kind}.{n}").alias(n) for n in names], "dateTime")
    # The generator form's column order: dateTime before extra.
    order = [n for n in names if n != "extra"] + ["dateTime", "extra"]
    view.select(*order).withWatermark("dateTime", "4 seconds").createOrReplaceTempView(kind)
    result = spark.sql(text)
    writer = (result.writeStream.outputMode("append").trigger(availableNow=True)
              .option("checkpointLocation", os.path.join(a.work, "checkpoint")))
    writer = (writer.format("memory").queryName("peers_out") if a.out else writer.format("noop"))
    print("PEERS-READY", flush=True)
    query = writer.start()
    query.awaitTermination()
    if query.exception() is not None:
        sys.exit(f"spark: the query failed: {query.exception()}")
    rows = -1
    if a.out:
        collected = spark.sql("SELECT * FROM peers_out").collect()
        peers_rows.write_rows(a.out, [tuple(r) for r in collected])
        rows = len(collected)
    print(f"PEERS-DONE {rows}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
