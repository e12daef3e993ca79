-- The headline pipeline (issue 6), in SQL: orders from Kafka -> bronze -> (dead letters | valid,
-- deduplicated within a 10-minute watermark) -> silver by AUTO CDC -> gold from silver's change
-- data feed. `run.sh` renders @KAFKA_BOOTSTRAP@ and runs it with `sluice run`.
--
--   kafka:orders --> orders_bronze --> orders_dlq
--                                  \-> orders_valid --AUTO CDC--> orders_silver
--                                                  orders_silver (change feed) --> revenue_by_customer
--
-- Every table runs TRIGGER AVAILABLE NOW: the pipeline processes what Kafka holds and stops.

-- Bronze: every record, parsed with Spark's from_json; a payload that is not JSON keeps its raw
-- text in bad_payload; the Kafka coordinates come along.
CREATE OR REFRESH STREAMING TABLE orders_bronze TRIGGER AVAILABLE NOW AS
SELECT o.order_id, o.customer, o.status, o.amount, o.ts, o._corrupt_record AS bad_payload,
       topic, `partition`, `offset`
FROM (SELECT from_json(decode(value),
                       'order_id BIGINT, customer STRING, status STRING, amount DOUBLE, ts TIMESTAMP, _corrupt_record STRING') AS o,
             topic, `partition`, `offset`
      FROM STREAM read_kafka(bootstrapServers => '@KAFKA_BOOTSTRAP@', subscribe => 'orders',
                             startingOffsets => 'earliest', maxOffsetsPerTrigger => 5000));

-- Dead letters: records that did not parse or lack the key or event time, with where they came
-- from and why.
CREATE OR REFRESH STREAMING TABLE orders_dlq TRIGGER AVAILABLE NOW AS
SELECT topic, `partition`, `offset`, bad_payload,
       CASE WHEN bad_payload IS NOT NULL THEN 'malformed JSON'
            WHEN order_id IS NULL THEN 'missing order_id'
            ELSE 'missing ts' END AS error
FROM STREAM orders_bronze
WHERE bad_payload IS NOT NULL OR order_id IS NULL OR ts IS NULL;

-- Valid events, duplicates dropped within a 10-minute watermark (a redelivered event has the same
-- order, status and event time).
CREATE OR REFRESH STREAMING TABLE orders_valid TRIGGER AVAILABLE NOW AS
SELECT order_id, customer, status, amount, ts
FROM STREAM orders_bronze WATERMARK ts DELAY OF INTERVAL 10 MINUTES AS b
WHERE bad_payload IS NULL AND order_id IS NOT NULL AND ts IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY order_id, status, ts ORDER BY ts) = 1;

-- Silver: the latest state of each order (out-of-order events resolved by event time; a
-- cancelled order is deleted and stays deleted against older events).
CREATE OR REFRESH STREAMING TABLE orders_silver
  (order_id BIGINT, customer VARCHAR, status VARCHAR, amount DOUBLE, ts TIMESTAMP WITH TIME ZONE)
  TRIGGER AVAILABLE NOW;
CREATE FLOW orders_silver_cdc AS AUTO CDC INTO orders_silver
FROM STREAM orders_valid
KEYS (order_id)
SEQUENCE BY ts
APPLY AS DELETE WHEN status = 'cancelled'
STORED AS SCD TYPE 1;

-- Gold: revenue and open orders per customer, maintained from silver's change data feed (an
-- update or delete takes back the old row's amount).
CREATE OR REFRESH STREAMING TABLE revenue_by_customer OUTPUT MODE COMPLETE TRIGGER AVAILABLE NOW AS
SELECT customer,
       sum(CASE WHEN _change_type IN ('insert', 'update_postimage') THEN 1 ELSE -1 END) AS orders,
       round(sum(CASE WHEN _change_type IN ('insert', 'update_postimage') THEN amount
                      ELSE -amount END), 2) AS revenue
FROM STREAM table_changes('orders_silver', 0)
GROUP BY customer;
