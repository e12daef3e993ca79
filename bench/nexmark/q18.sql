-- Nexmark q18 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q18`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Last bid per (bidder, auction), updating: the reference's ROW_NUMBER() OVER (PARTITION BY
-- bidder, auction ORDER BY dateTime DESC) = 1 as an unbounded aggregation per (bidder,
-- auction) in OUTPUT MODE UPDATE (upserted by the two keys), the last bid being the max of a
-- struct that starts with dateTime. Bids of one pair with the same dateTime (frequent: the hot
-- bidder bids on the hot auction many times per millisecond) are ordered by the struct's other
-- fields, the greatest first, where the reference leaves the choice to chance. Every output
-- column reads a field of the same aggregate.
CREATE STREAMING TABLE nexmark_q18 OUTPUT MODE UPDATE AS
SELECT auction, bidder,
       max(struct(dateTime, price, channel, url, extra)).price AS price,
       max(struct(dateTime, price, channel, url, extra)).channel AS channel,
       max(struct(dateTime, price, channel, url, extra)).url AS url,
       max(struct(dateTime, price, channel, url, extra)).dateTime AS dateTime,
       max(struct(dateTime, price, channel, url, extra)).extra AS extra
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b
GROUP BY bidder, auction;
