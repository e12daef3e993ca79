-- Nexmark q12 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q12`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Processing-time tumbling window per bidder: p_time is the wall clock when the batch's query
-- runs (current_timestamp), Flink's PROCTIME(); the watermark follows it with no delay, so a
-- window leaves the state once the clock has passed its end. OUTPUT MODE UPDATE writes each
-- window's count as it grows (a processing-time window never gets a later batch to close it at
-- the end of a bounded run); the final table holds every window's final count.
CREATE STREAMING TABLE nexmark_q12 OUTPUT MODE UPDATE AS
SELECT bidder, count(*) AS bid_count, window.start AS starttime, window.end AS endtime
FROM STREAM @BID@ WATERMARK current_timestamp AS p_time DELAY OF INTERVAL 0 SECONDS AS b
GROUP BY bidder, window(p_time, '10 seconds');
