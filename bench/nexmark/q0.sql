-- Nexmark q0 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q0`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Pass-through: source and framework overhead.
CREATE STREAMING TABLE nexmark_q0 AS
SELECT auction, bidder, price, dateTime, extra
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b;
