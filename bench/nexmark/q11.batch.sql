-- Nexmark q11, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction), with the reference's text where DuckDB can run it. Windows and
-- sessions are those the streaming run closes: end <= the final watermark (max dateTime - 4 s
-- over the query's streams), since a bounded stream's last windows never close.
-- Sessions: a bidder's bid more than 10 s after its previous one starts a new session; a
-- session ends 10 s after its last bid.
WITH s AS (
  SELECT bidder, dateTime,
         CASE WHEN dateTime - lag(dateTime) OVER (PARTITION BY bidder ORDER BY dateTime)
                   <= INTERVAL 10 SECONDS THEN 0 ELSE 1 END AS new_session
  FROM bid),
g AS (
  SELECT bidder, dateTime,
         sum(new_session) OVER (PARTITION BY bidder ORDER BY dateTime
                                ROWS UNBOUNDED PRECEDING) AS session_id
  FROM s)
SELECT bidder, count(*) AS bid_count, min(dateTime) AS starttime,
       max(dateTime) + INTERVAL 10 SECONDS AS endtime
FROM g GROUP BY bidder, session_id
HAVING max(dateTime) + INTERVAL 10 SECONDS <= (SELECT max(dateTime) - INTERVAL 4 SECONDS FROM bid)
