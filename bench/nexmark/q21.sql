-- Nexmark q21 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q21`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Add channel id: the hot channels' fixed ids, else the url's channel_id parameter. In Spark's
-- (and Sluice's) dialect regexp_extract returns '' when the regex does not match, where Flink's
-- REGEXP_EXTRACT returns NULL, so the reference's `IS NOT NULL` is written `<> ''` (the same
-- rows as the reference in Flink; README.md "q21").
CREATE STREAMING TABLE nexmark_q21 AS
SELECT auction, bidder, price, channel,
       CASE WHEN lower(channel) = 'apple' THEN '0'
            WHEN lower(channel) = 'google' THEN '1'
            WHEN lower(channel) = 'facebook' THEN '2'
            WHEN lower(channel) = 'baidu' THEN '3'
            ELSE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) END AS channel_id
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS b
WHERE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) <> ''
   OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu');
