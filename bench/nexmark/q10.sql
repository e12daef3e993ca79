-- Nexmark q10 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q10`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Log bids to a file system sink, partitioned by day and minute. The file sink is the
-- streaming table's Delta table, PARTITIONED BY (dt, hm) as the reference's file system sink;
-- the `sink:` line below makes the command write it whatever --sink says (a blackhole would
-- drop what the query measures).
-- sink: delta
CREATE STREAMING TABLE nexmark_q10 PARTITIONED BY (dt, hm) AS
SELECT auction, bidder, price, dateTime, extra,
       date_format(dateTime, 'yyyy-MM-dd') AS dt, date_format(dateTime, 'HH:mm') AS hm
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b;
