-- Nexmark q15 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q15`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Bidding statistics per day: counts of bids, and of distinct bidders and auctions, per day and
-- per price range. A streaming aggregation refuses count(DISTINCT ...) (as Spark) and FILTER,
-- so the query is a pipeline of two streaming tables (README.md "q15, q16"):
--
-- nexmark_q15_firsts: each bid becomes four (what, id, r) rows, its bidder and its auction, each
-- once with r = 0 (any price) and once with r = its price range (1, 2, 3); DISTINCT ON (Spark's
-- dropDuplicates) keeps the first row of each (day, what, id, r), so the table holds one row
-- per distinct bidder (and auction) per day, per range and overall. Nothing in a row is event
-- time, so the keys stay in the state for good, as the reference's per-day distinct sets do.
CREATE STREAMING TABLE nexmark_q15_firsts AS
SELECT DISTINCT ON (day, what, id, r) day, e.what AS what, e.id AS id, e.r AS r
FROM (SELECT date_format(dateTime, 'yyyy-MM-dd') AS day,
             explode(array(named_struct('what', 'bidder', 'id', bidder, 'r', 0),
                           named_struct('what', 'bidder', 'id', bidder, 'r', r),
                           named_struct('what', 'auction', 'id', auction, 'r', 0),
                           named_struct('what', 'auction', 'id', auction, 'r', r))) AS e
      FROM (SELECT bidder, auction, dateTime,
                   CASE WHEN price < 10000 THEN 1 WHEN price < 1000000 THEN 2 ELSE 3 END AS r
            FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b) AS b1) AS x;

-- nexmark_q15: per day, the bids (one 'bid' row each, with its price range, from the bid
-- stream) and the distinct bidders and auctions (the rows of nexmark_q15_firsts) counted in one
-- aggregation, updating (OUTPUT MODE UPDATE, upserted by day). `count(*) FILTER (WHERE c)` is
-- `sum(CASE WHEN c THEN 1 ELSE 0 END)`.
CREATE STREAMING TABLE nexmark_q15 OUTPUT MODE UPDATE AS
SELECT day,
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
FROM (SELECT day, what, r FROM STREAM nexmark_q15_firsts AS f
      UNION ALL
      SELECT date_format(dateTime, 'yyyy-MM-dd') AS day, 'bid' AS what,
             CASE WHEN price < 10000 THEN 1 WHEN price < 1000000 THEN 2 ELSE 3 END AS r
      FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b) AS u
GROUP BY day;
