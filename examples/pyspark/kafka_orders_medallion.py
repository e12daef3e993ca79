"""The headline job as a Databricks user writes it in PySpark: order events from Kafka (MSK on
Databricks) -> from_json -> withWatermark -> dropDuplicatesWithinWatermark -> foreachBatch
MERGE into the silver table, exactly once by Delta's txnAppId/txnVersion confs; malformed records
to a dead-letter table; then silver's change data feed (readChangeFeed) -> foreachBatch MERGE
into a gold table of per-customer totals. Run it against Sluice unchanged:

    sluice connect --port 15002 --warehouse /tmp/wh &
    python examples/pyspark/produce_orders.py localhost:9092 orders 0 40    # some events
    SPARK_REMOTE=sc://127.0.0.1:15002 python examples/pyspark/kafka_orders_medallion.py \\
        localhost:9092 orders /tmp/job

(PySpark connects to $SPARK_REMOTE; on Databricks the session is already there.) Each run
processes what the topic holds since the last run (availableNow) and stops; run it again after
more events arrived, or after a crash: the checkpoints under the third argument carry on, and
silver, the dead letters and gold hold every event exactly once. An optional fourth argument is
maxOffsetsPerTrigger (default 1000), a fifth the trigger: "availableNow" (default) or a
processing time such as "1 second" (then bronze -> silver and the dead letters run until stopped,
and gold is left to the next availableNow run).

The events are JSON: {"order_id": 1, "customer": "c1", "status": "created" | "paid" |
"cancelled", "amount": 10.5, "ts": "2026-11-30T10:00:00Z"}, possibly out of order, possibly
delivered twice, some malformed (produce_orders.py writes such a stream).
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

bootstrap, topic, base = sys.argv[1], sys.argv[2], sys.argv[3]
max_offsets = sys.argv[4] if len(sys.argv) > 4 else "1000"
trigger = sys.argv[5] if len(sys.argv) > 5 else "availableNow"
spark = SparkSession.builder.getOrCreate()

EVENT = "order_id BIGINT, customer STRING, status STRING, amount DOUBLE, ts TIMESTAMP"
spark.sql("CREATE TABLE IF NOT EXISTS orders_silver (order_id BIGINT, customer STRING, "
          "status STRING, amount DOUBLE, ts TIMESTAMP) USING DELTA "
          "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')")
spark.sql("CREATE TABLE IF NOT EXISTS orders_dead_letters (topic STRING, `partition` INT, "
          "`offset` BIGINT, payload STRING, error STRING) USING DELTA")
spark.sql("CREATE TABLE IF NOT EXISTS customer_gold (customer STRING, orders BIGINT, "
          "paid_revenue DOUBLE) USING DELTA")

events = (spark.readStream.format("kafka")
          .option("kafka.bootstrap.servers", bootstrap)
          .option("subscribe", topic)
          .option("startingOffsets", "earliest")
          .option("maxOffsetsPerTrigger", max_offsets)
          .load()
          .select(F.col("topic"), F.col("partition"), F.col("offset"),
                  F.col("value").cast("string").alias("payload"),
                  F.from_json(F.col("value").cast("string"), EVENT).alias("e")))
is_valid = F.col("e.order_id").isNotNull() & F.col("e.ts").isNotNull()


def with_txn(session, app_id, batch_id, statement):
    """Runs a MERGE exactly once per (app_id, batch_id): Delta skips it when the table already
    records app_id at a version >= batch_id (a batch run again after a crash)."""
    session.conf.set("spark.databricks.delta.write.txnAppId", app_id)
    session.conf.set("spark.databricks.delta.write.txnVersion", str(batch_id))
    try:
        session.sql(statement)
    finally:
        session.conf.unset("spark.databricks.delta.write.txnAppId")
        session.conf.unset("spark.databricks.delta.write.txnVersion")


def merge_silver(batch, batch_id):
    """The latest event of each order in the batch, merged by event time: a newer event
    replaces the order's row, an older one (out of order) changes nothing."""
    batch.createOrReplaceTempView("order_events")
    with_txn(batch.sparkSession, "orders-silver", batch_id, """
        MERGE INTO orders_silver s
        USING (SELECT order_id, customer, status, amount, ts
               FROM (SELECT *, row_number() OVER (PARTITION BY order_id ORDER BY ts DESC) AS rn
                     FROM order_events) AS ranked
               WHERE rn = 1) AS u
        ON s.order_id = u.order_id
        WHEN MATCHED AND u.ts > s.ts THEN
          UPDATE SET s.customer = u.customer, s.status = u.status, s.amount = u.amount,
                     s.ts = u.ts
        WHEN NOT MATCHED THEN
          INSERT (order_id, customer, status, amount, ts)
          VALUES (u.order_id, u.customer, u.status, u.amount, u.ts)""")


def merge_gold(changes, batch_id):
    """Silver's changes as per-customer deltas (an update's pre-image takes back what its
    post-image adds), added to the gold totals: not idempotent by itself, exactly once by the
    txn confs."""
    changes.createOrReplaceTempView("silver_changes")
    with_txn(changes.sparkSession, "customer-gold", batch_id, """
        MERGE INTO customer_gold g
        USING (SELECT customer,
                      sum(sign) AS orders,
                      sum(CASE WHEN status = 'paid' THEN sign * amount ELSE 0 END) AS paid_revenue
               FROM (SELECT customer, status, amount,
                            CASE WHEN _change_type IN ('insert', 'update_postimage') THEN 1
                                 ELSE -1 END AS sign
                     FROM silver_changes) AS signed
               GROUP BY customer) AS d
        ON g.customer = d.customer
        WHEN MATCHED THEN
          UPDATE SET g.orders = g.orders + d.orders,
                     g.paid_revenue = g.paid_revenue + d.paid_revenue
        WHEN NOT MATCHED THEN
          INSERT (customer, orders, paid_revenue) VALUES (d.customer, d.orders, d.paid_revenue)""")


def triggered(writer):
    if trigger == "availableNow":
        return writer.trigger(availableNow=True)
    return writer.trigger(processingTime=trigger)


# Bronze -> silver: valid events, a redelivered event (same order, status and event time)
# dropped within the 10-minute watermark.
silver = triggered(
    events.where(is_valid).select("e.*")
    .withWatermark("ts", "10 minutes")
    .dropDuplicatesWithinWatermark(["order_id", "status", "ts"])
    .writeStream.queryName("orders_silver").foreachBatch(merge_silver)
    .option("checkpointLocation", f"{base}/checkpoints/silver")).start()

# The dead letters: what did not parse, or has no order id or event time, with where it came
# from (the Delta sink is exactly once by itself).
dead_letters = triggered(
    events.where(~is_valid)
    .select("topic", "partition", "offset", "payload",
            F.when(F.col("e.order_id").isNull() & F.col("e.customer").isNull() &
                   F.col("e.status").isNull(), "malformed JSON")
            .when(F.col("e.order_id").isNull(), "missing order_id")
            .otherwise("missing ts").alias("error"))
    .writeStream.queryName("orders_dead_letters").format("delta")
    .option("checkpointLocation", f"{base}/checkpoints/dead_letters")).toTable(
        "orders_dead_letters")

if trigger != "availableNow":
    # A continuous job: bronze -> silver and the dead letters until stopped; gold is the next
    # availableNow run's (its foreachBatch sets the same session's txn confs as silver's, so the
    # two must not run at once in one session).
    spark.streams.awaitAnyTermination()
    sys.exit(1)

silver.awaitTermination()
dead_letters.awaitTermination()
# Silver -> gold, after silver has taken in what the topic held.
gold = triggered(
    spark.readStream.format("delta").option("readChangeFeed", "true")
    .option("startingVersion", 0).table("orders_silver")
    .writeStream.queryName("customer_gold").foreachBatch(merge_gold)
    .option("checkpointLocation", f"{base}/checkpoints/gold")).start()
gold.awaitTermination()

print("silver orders:", spark.table("orders_silver").count())
print("dead letters:", spark.table("orders_dead_letters").count())
for row in spark.sql("SELECT * FROM customer_gold ORDER BY customer").collect():
    print(row.customer, row.orders, row.paid_revenue)
spark.stop()
