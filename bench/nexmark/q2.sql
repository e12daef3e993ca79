-- Nexmark q2 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q2`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Selection (Flink's variant: every 123rd auction).
CREATE STREAMING TABLE nexmark_q2 AS
SELECT auction, price
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b
WHERE auction % 123 = 0;
