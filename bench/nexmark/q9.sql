-- Nexmark q9 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q9`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Winning bid per auction, in the "closed auctions" form of q4 (README.md "q4", "q9"): the
-- auction stream is watermarked on `expires` and the aggregation over the join is grouped by
-- the auction's columns with `A.expires` among them, so each auction's winning bid is written
-- once, when the watermark passes its expiry. The winning bid is the reference's ROW_NUMBER()
-- = 1 ordered by price DESC, dateTime ASC, taken as the max of a struct ordered the same way
-- (price, then the negated time); bidder and extra break the remaining ties, which the
-- reference leaves to chance. The last ON conjunct bounds the bids' join state as in q4.
CREATE STREAMING TABLE nexmark_q9 AS
SELECT id, itemName, description, initialBid, reserve, dateTime, expires, seller, category, extra,
       id AS auction, w.bidder AS bidder, w.price AS price, w.dateTime AS bid_dateTime,
       w.extra AS bid_extra
FROM (SELECT A.id, A.itemName, A.description, A.initialBid, A.reserve, A.dateTime, A.expires,
             A.seller, A.category, A.extra,
             max(struct(B.price AS price, -unix_micros(B.dateTime) AS earliest,
                        B.dateTime AS dateTime, B.bidder AS bidder, B.extra AS extra)) AS w
      FROM (SELECT id, itemName, description, initialBid, reserve, dateTime, expires, seller,
                   category, extra
            FROM STREAM @AUCTION@ WATERMARK expires DELAY OF INTERVAL 4 SECONDS AS a) AS A
      JOIN (SELECT auction, bidder, price, dateTime, extra
            FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b) AS B
        ON A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
       AND A.expires <= B.dateTime + INTERVAL 10 SECONDS
      GROUP BY A.id, A.itemName, A.description, A.initialBid, A.reserve, A.dateTime, A.expires,
               A.seller, A.category, A.extra) AS q;
