-- Nexmark q7, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction), with the reference's text where DuckDB can run it. Windows and
-- sessions are those the streaming run closes: end <= the final watermark (max dateTime - 4 s
-- over the query's streams), since a bounded stream's last windows never close.
-- The reference's join with the per-window maximum, with the window's half-open bounds
-- (Flink's BETWEEN would also match a bid at exactly the window's end, which is in the next
-- window).
SELECT B.auction, B.price, B.bidder, B.dateTime, B.extra
FROM bid B
JOIN (SELECT max(price) AS maxprice, to_timestamp((epoch_ms(dateTime) // 10000 + 1) * 10) AS dateTime
      FROM bid GROUP BY 2) B1
  ON B.price = B1.maxprice
WHERE B.dateTime >= B1.dateTime - INTERVAL 10 SECONDS AND B.dateTime < B1.dateTime
  AND B1.dateTime <= (SELECT max(dateTime) - INTERVAL 4 SECONDS FROM bid)
