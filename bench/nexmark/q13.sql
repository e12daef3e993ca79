-- Nexmark q13 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q13`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Bounded side input join: each bid joined with a static table of 10 000 rows (key, value =
-- the key as text) on auction mod 10 000. The reference's lookup join `FOR SYSTEM_TIME AS OF
-- p_time` reads the side table as of the bid's processing time; a stream-static join reads
-- the static table's latest snapshot in every batch, which for a table that does not change
-- is the same. The side table is a Delta table created by the file's first statement.
CREATE TABLE side_input AS
SELECT CAST(k AS BIGINT) AS key, CAST(k AS STRING) AS value
FROM (SELECT explode(sequence(0, 9999)) AS k) AS keys;

CREATE STREAMING TABLE nexmark_q13 AS
SELECT B.auction, B.bidder, B.price, B.dateTime, S.value
FROM STREAM @BID@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS B
JOIN side_input AS S ON B.auction % 10000 = S.key;
