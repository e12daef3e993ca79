-- Nexmark q22 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q22`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- URL directories: the reference's SPLIT_INDEX(url, '/', i) (0-based) is Spark's
-- split(url, '/')[i] (the array index is 0-based too; an index past the end is NULL).
CREATE STREAMING TABLE nexmark_q22 AS
SELECT auction, bidder, price, channel,
       split(url, '/')[3] AS dir1, split(url, '/')[4] AS dir2, split(url, '/')[5] AS dir3
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b;
