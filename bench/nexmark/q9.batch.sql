-- Nexmark q9, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction), the reference's text with its ties broken as q9.sql does
-- (bidder, then extra, the greatest first). The auctions are those the streaming run closes,
-- as in q4.batch.sql: expires at or below the aggregation's final watermark.
SELECT id, itemName, description, initialBid, reserve, dateTime, expires, seller, category, extra,
       auction, bidder, price, bid_dateTime, bid_extra
FROM (SELECT A.*, B.auction, B.bidder, B.price, B.dateTime AS bid_dateTime, B.extra AS bid_extra,
             row_number() OVER (PARTITION BY A.id
                                ORDER BY B.price DESC, B.dateTime ASC, B.bidder DESC,
                                         B.extra DESC) AS rownum
      FROM auction A, bid B
      WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
        AND A.expires <= (SELECT least((SELECT max(expires) FROM auction),
                                       (SELECT max(dateTime) FROM bid))
                                 - INTERVAL 4 SECONDS - INTERVAL 10001 MILLISECONDS))
WHERE rownum <= 1
