-- Nexmark q14 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q14`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Calculation: a projection with a filter and the reference's user-defined function
-- count_char(extra, 'c') (the number of 'c' bytes in extra), written as an expression: the
-- length of extra minus the length of extra without its 'c's. Hours are those of the session
-- time zone, UTC.
CREATE STREAMING TABLE nexmark_q14 AS
SELECT auction, bidder, CAST(0.908 * price AS DECIMAL(23, 3)) AS price,
       CASE WHEN hour(dateTime) >= 8 AND hour(dateTime) <= 18 THEN 'dayTime'
            WHEN hour(dateTime) <= 6 OR hour(dateTime) >= 20 THEN 'nightTime'
            ELSE 'otherTime' END AS bidTimeType,
       dateTime, extra, length(extra) - length(replace(extra, 'c', '')) AS c_counts
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
