-- Nexmark q16 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q16`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Channel statistics per day: q15's counts per channel and day, and the latest minute (HH:mm)
-- of the group's bids. A streaming aggregation refuses count(DISTINCT ...) (as Spark) and FILTER,
-- so the query is a pipeline of two streaming tables (README.md "q15, q16"), as q15.sql:
--
-- nexmark_q16_firsts: each bid becomes four (what, id, r) rows, its bidder and its auction, each
-- once with r = 0 (any price) and once with r = its price range (1, 2, 3); DISTINCT ON (Spark's
-- dropDuplicates) keeps the first row of each (channel, day, what, id, r): one row per
-- distinct bidder (and auction) per channel and day, per range and overall. Nothing in a row is
-- event time, so the keys stay in the state for good, as the reference's per-day distinct sets
-- do.
CREATE STREAMING TABLE nexmark_q16_firsts AS
SELECT DISTINCT ON (channel, day, what, id, r)
       channel, day, e.what AS what, e.id AS id, e.r AS r
FROM (SELECT channel, date_format(dateTime, 'yyyy-MM-dd') AS day,
             explode(array(named_struct('what', 'bidder', 'id', bidder, 'r', 0),
                           named_struct('what', 'bidder', 'id', bidder, 'r', r),
                           named_struct('what', 'auction', 'id', auction, 'r', 0),
                           named_struct('what', 'auction', 'id', auction, 'r', r))) AS e
      FROM (SELECT channel, bidder, auction, dateTime,
                   CASE WHEN price < 10000 THEN 1 WHEN price < 1000000 THEN 2 ELSE 3 END AS r
            FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b) AS b1) AS x;

-- nexmark_q16: per channel and day, the bids (one 'bid' row each, with its price range, from
-- the bid stream) and the distinct bidders and auctions (the rows of nexmark_q16_firsts)
-- counted in one aggregation, updating (OUTPUT MODE UPDATE, upserted by channel and day); the
-- minute is the greatest of the bid rows' (NULL in the other rows, which max skips).
-- `count(*) FILTER (WHERE c)` is `sum(CASE WHEN c THEN 1 ELSE 0 END)`.
CREATE STREAMING TABLE nexmark_q16 OUTPUT MODE UPDATE AS
SELECT channel, day, max(minute) AS minute,
       sum(CASE WHEN what = 'bid' THEN 1 ELSE 0 END) AS total_bids,
       sum(CASE WHEN what = 'bid' AND r = 1 THEN 1 ELSE 0 END) AS rank1_bids,
       sum(CASE WHEN what = 'bid' AND r = 2 THEN 1 ELSE 0 END) AS rank2_bids,
       sum(CASE WHEN what = 'bid' AND r = 3 THEN 1 ELSE 0 END) AS rank3_bids,
       sum(CASE WHEN what = 'bidder' AND r = 0 THEN 1 ELSE 0 END) AS total_bidders,
       sum(CASE WHEN what = 'bidder' AND r = 1 THEN 1 ELSE 0 END) AS rank1_bidders,
       sum(CASE WHEN what = 'bidder' AND r = 2 THEN 1 ELSE 0 END) AS rank2_bidders,
       sum(CASE WHEN what = 'bidder' AND r = 3 THEN 1 ELSE 0 END) AS rank3_bidders,
       sum(CASE WHEN what = 'auction' AND r = 0 THEN 1 ELSE 0 END) AS total_auctions,
       sum(CASE WHEN what = 'auction' AND r = 1 THEN 1 ELSE 0 END) AS rank1_auctions,
       sum(CASE WHEN what = 'auction' AND r = 2 THEN 1 ELSE 0 END) AS rank2_auctions,
       sum(CASE WHEN what = 'auction' AND r = 3 THEN 1 ELSE 0 END) AS rank3_auctions
FROM (SELECT channel, day, CAST(NULL AS STRING) AS minute, what, r
      FROM STREAM nexmark_q16_firsts AS f
      UNION ALL
      SELECT channel, date_format(dateTime, 'yyyy-MM-dd') AS day,
             date_format(dateTime, 'HH:mm') AS minute, 'bid' AS what,
             CASE WHEN price < 10000 THEN 1 WHEN price < 1000000 THEN 2 ELSE 3 END AS r
      FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b) AS u
GROUP BY channel, day;
