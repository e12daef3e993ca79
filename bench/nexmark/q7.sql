-- Nexmark q7 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q7`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Highest bid per period: the bids whose price is the maximum of their 10 s tumbling window
-- (ties all kept). RisingWave's q7-rewrite as a per-window top-1: the aggregation groups the
-- window's bids by every output column (n counts identical bids; unnest(list_resize(...))
-- writes such a bid n times), emits each window once it closes, and the rank over that batch's
-- rows, partitioned by the window, keeps the maximum. The planner recognises this rank (= 1,
-- partitioned by the window, ordered by the grouping key price) and the aggregation keeps only
-- each window's maximal bids in its state (docs/streaming-sql.md "Per-window top-1"), instead of
-- every bid of an open window as the reference's interval join does. `rank() ... + 0 = 1` turns
-- that off (the same rows; the A/B of bench/RESULTS.md).
CREATE STREAMING TABLE nexmark_q7 AS
SELECT unnest(list_resize([auction], n, auction)) AS auction, price, bidder, dateTime, extra
FROM (SELECT auction, price, bidder, dateTime, extra, window.end AS endtime, count(*) AS n
      FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b
      GROUP BY window(dateTime, '10 seconds'), auction, price, bidder, dateTime, extra) AS w
QUALIFY rank() OVER (PARTITION BY endtime ORDER BY price DESC) = 1;
