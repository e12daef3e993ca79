-- Nexmark q8 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q8`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Monitor new users: people who opened an auction in the 10 s tumbling window in which they
-- registered. The reference joins two windowed GROUP BYs (which only deduplicate); here the
-- join is on (id, window) and one GROUP BY after it deduplicates the pairs: the same rows.
-- An aggregation below a join is not supported; an aggregation over a join is.
CREATE STREAMING TABLE nexmark_q8 AS
SELECT P.id, P.name, window.start AS starttime
FROM (SELECT id, name, dateTime, window(dateTime, '10 seconds') AS w
      FROM STREAM @PERSON@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS p) AS P
JOIN (SELECT seller, window(dateTime, '10 seconds') AS w
      FROM STREAM @AUCTION@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS a) AS A
  ON P.id = A.seller AND P.w = A.w
GROUP BY P.id, P.name, window(P.dateTime, '10 seconds');
