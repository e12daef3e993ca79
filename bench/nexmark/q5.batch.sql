-- Nexmark q5, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction), with the reference's text where DuckDB can run it. Windows and
-- sessions are those the streaming run closes: end <= the final watermark (max dateTime - 4 s
-- over the query's streams), since a bounded stream's last windows never close.
-- HOP(10 s, slide 2 s): a bid is in the 5 windows starting at its 2 s bucket and the 4 before.
WITH AuctionBids AS (
  SELECT auction, count(*) AS num, starttime, starttime + INTERVAL 10 SECONDS AS endtime
  FROM (SELECT auction, to_timestamp((epoch_ms(dateTime) // 2000 - k.i) * 2) AS starttime
        FROM bid, range(5) AS k(i))
  GROUP BY auction, starttime),
MaxBids AS (
  SELECT max(num) AS maxn, starttime, endtime FROM AuctionBids GROUP BY starttime, endtime)
SELECT AB.auction, AB.num, AB.starttime, AB.endtime
FROM AuctionBids AB JOIN MaxBids MB
  ON AB.starttime = MB.starttime AND AB.endtime = MB.endtime AND AB.num >= MB.maxn
WHERE AB.endtime <= (SELECT max(dateTime) - INTERVAL 4 SECONDS FROM bid)
