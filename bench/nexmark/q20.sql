-- Nexmark q20 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q20`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Bids expanded with their auction, category 10 only: an unbounded stream-stream inner join
-- (both sides kept forever, as in Flink). The auction filter is in ON, which for an inner join
-- is the same as WHERE and filters the auctions before they are stored.
CREATE STREAMING TABLE nexmark_q20 AS
SELECT B.auction, B.bidder, B.price, B.channel, B.url, B.dateTime AS bid_dateTime,
       B.extra AS bid_extra, A.itemName, A.description, A.initialBid, A.reserve,
       A.dateTime AS auction_dateTime, A.expires, A.seller, A.category, A.extra AS auction_extra
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS B
JOIN STREAM @AUCTION@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS A
  ON B.auction = A.id AND A.category = 10;
