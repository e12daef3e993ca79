"""The Databricks upsert job, as a PySpark user writes it: a stream of order updates (a Delta
table, `bronze_orders`) merged into `silver_orders` by foreachBatch, with an audit copy of each
batch written exactly once (txnAppId/txnVersion). Run it against Sluice unchanged:

    sluice connect --port 15002 --warehouse /tmp/wh &
    SPARK_REMOTE=sc://127.0.0.1:15002 python examples/pyspark/foreach_batch_merge.py /tmp/job

(PySpark connects to $SPARK_REMOTE; on Databricks the session is already there.) Each run
processes what arrived since the last one (availableNow) and prints silver_orders. The first
argument is where the checkpoint and the audit table live; the rows of each run come from the
second argument, "first" (the default) or "second" (updates of orders 2 and 3, a new order 4).
"""

import sys

from pyspark.sql import SparkSession

base = sys.argv[1]
run = sys.argv[2] if len(sys.argv) > 2 else "first"
spark = SparkSession.builder.getOrCreate()

spark.sql("CREATE TABLE IF NOT EXISTS bronze_orders (order_id BIGINT, status STRING, "
          "amount DOUBLE) USING DELTA")
spark.sql("CREATE TABLE IF NOT EXISTS silver_orders (order_id BIGINT, status STRING, "
          "amount DOUBLE) USING DELTA")
if run == "first":
    spark.sql("INSERT INTO bronze_orders VALUES (1, 'placed', 10.0), (2, 'placed', 25.5), "
              "(3, 'placed', 7.25)")
else:
    spark.sql("INSERT INTO bronze_orders VALUES (2, 'shipped', 25.5), (3, 'cancelled', 0.0), "
              "(4, 'placed', 12.0)")


def upsert(batch, batch_id):
    batch.createOrReplaceTempView("order_updates")
    batch.sparkSession.sql("""
        MERGE INTO silver_orders s USING order_updates u ON s.order_id = u.order_id
        WHEN MATCHED THEN UPDATE SET s.status = u.status, s.amount = u.amount
        WHEN NOT MATCHED THEN INSERT (order_id, status, amount)
                              VALUES (u.order_id, u.status, u.amount)""")
    # Exactly once per batch, even when a restart runs the batch again.
    (batch.write.format("delta").mode("append")
     .option("txnAppId", "orders-audit").option("txnVersion", batch_id)
     .save(f"{base}/audit"))


query = (spark.readStream.table("bronze_orders").writeStream.foreachBatch(upsert)
         .option("checkpointLocation", f"{base}/checkpoint").trigger(availableNow=True)
         .start())
query.awaitTermination()
for row in spark.sql("SELECT * FROM silver_orders ORDER BY order_id").collect():
    print(row.order_id, row.status, row.amount)
print("audit rows:", spark.read.format("delta").load(f"{base}/audit").count())
spark.stop()
