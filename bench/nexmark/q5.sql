-- Nexmark q5 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q5`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Hot items: bids per auction in sliding windows of 10 s every 2 s, and the auction(s) with the
-- most bids in each window (ties all kept). This is RisingWave's q5-rewrite (same rows as the
-- reference's join with the per-window max): the aggregation emits each window's groups
-- together (APPEND, when the watermark passes the window's end), so the rank over the rows of
-- that batch, partitioned by the window, is exact.
CREATE STREAMING TABLE nexmark_q5 AS
SELECT auction, num, starttime, endtime
FROM (SELECT auction, count(*) AS num, window.start AS starttime, window.end AS endtime
      FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b
      GROUP BY window(dateTime, '10 seconds', '2 seconds'), auction) AS ab
QUALIFY rank() OVER (PARTITION BY starttime ORDER BY num DESC) = 1;
