-- Nexmark q4 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q4`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Average winning price per category, in Nexmark's original "closed auctions" form: a pipeline
-- of two streaming tables (README.md "q4"). The bench command runs nexmark_q4_closed to its end
-- first, then nexmark_q4 over it.
--
-- nexmark_q4_closed: each auction's winning price, written once when the watermark passes the
-- auction's expiry (APPEND: an aggregation over a stream-stream join, grouped by the auctions'
-- watermarked `expires`). The last ON conjunct is implied by `B.dateTime >= A.dateTime` when no
-- auction lasts more than 10 s (at the generator's rates >= 334 events/s); it bounds how long a
-- bid stays in the join's state (and delays the aggregation's watermark by 10 s + 1 ms).
CREATE STREAMING TABLE nexmark_q4_closed AS
SELECT A.id, A.category, A.expires, max(B.price) AS final
FROM (SELECT id, category, dateTime, expires
      FROM STREAM @AUCTION@ WATERMARK expires DELAY OF INTERVAL 4 SECONDS AS a) AS A
JOIN (SELECT auction, price, dateTime
      FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b) AS B
  ON A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
 AND A.expires <= B.dateTime + INTERVAL 10 SECONDS
GROUP BY A.id, A.category, A.expires;

-- nexmark_q4: the average of the closed auctions' winning prices per category, the whole result
-- every batch (COMPLETE), reading the first table's rows as a stream.
CREATE STREAMING TABLE nexmark_q4 OUTPUT MODE COMPLETE AS
SELECT category, avg(final) AS avg_final
FROM STREAM nexmark_q4_closed
GROUP BY category;
