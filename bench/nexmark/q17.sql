-- Nexmark q17 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q17`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Auction statistics per day: an unbounded aggregation per (auction, day), updating
-- (OUTPUT MODE UPDATE: each batch upserts the groups it changed, keyed by auction and day).
-- The reference's `count(*) FILTER (WHERE c)` is written `sum(CASE WHEN c THEN 1 ELSE 0 END)`
-- (the same value; FILTER is not supported in streaming aggregations).
CREATE STREAMING TABLE nexmark_q17 OUTPUT MODE UPDATE AS
SELECT auction, date_format(dateTime, 'yyyy-MM-dd') AS day,
       count(*) AS total_bids,
       sum(CASE WHEN price < 10000 THEN 1 ELSE 0 END) AS rank1_bids,
       sum(CASE WHEN price >= 10000 AND price < 1000000 THEN 1 ELSE 0 END) AS rank2_bids,
       sum(CASE WHEN price >= 1000000 THEN 1 ELSE 0 END) AS rank3_bids,
       min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price,
       sum(price) AS sum_price
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b
GROUP BY auction, date_format(dateTime, 'yyyy-MM-dd');
