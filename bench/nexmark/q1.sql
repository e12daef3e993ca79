-- Nexmark q1 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q1`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Currency conversion: DECIMAL arithmetic (Flink's result type DECIMAL(23, 3)).
CREATE STREAMING TABLE nexmark_q1 AS
SELECT auction, bidder, CAST(0.908 * price AS DECIMAL(23, 3)) AS price, dateTime, extra
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b;
