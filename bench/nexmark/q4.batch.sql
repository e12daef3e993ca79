-- Nexmark q4, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction), with the reference's text where DuckDB can run it. Windows and
-- sessions are those the streaming run closes: end <= the final watermark (max dateTime - 4 s
-- over the query's streams), since a bounded stream's last windows never close.
-- The auctions are those the streaming run closes: expires at or below the closing
-- aggregation's final watermark, which is the query's final watermark (the least of
-- max(expires) - 4 s over the auctions and max(dateTime) - 4 s over the bids) lowered by the
-- join's bound on its output (10 s + 1 ms, q4.sql). The join condition is the reference's.
SELECT Q.category, avg(Q.final) AS avg_final
FROM (SELECT max(B.price) AS final, A.category
      FROM auction A, bid B
      WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
        AND A.expires <= (SELECT least((SELECT max(expires) FROM auction),
                                       (SELECT max(dateTime) FROM bid))
                                 - INTERVAL 4 SECONDS - INTERVAL 10001 MILLISECONDS)
      GROUP BY A.id, A.category) Q
GROUP BY Q.category
