-- Nexmark q11 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q11`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- User sessions: bids per bidder in session windows with a 10 s gap.
CREATE STREAMING TABLE nexmark_q11 AS
SELECT bidder, count(*) AS bid_count, session_window.start AS starttime,
       session_window.end AS endtime
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b
GROUP BY bidder, session_window(dateTime, '10 seconds');
