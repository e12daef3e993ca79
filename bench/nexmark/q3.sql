-- Nexmark q3 (docs/nexmark.md "Queries").
-- Run by `sluice bench nexmark --query q3`, which replaces @BID@, @PERSON@ and @AUCTION@ with
-- the stream relation of that kind (README.md "Placeholders") and runs the table to the end.
-- Local item suggestion: an unbounded stream-stream inner join (both sides kept forever, as in
-- Flink). The one-side filters are in ON, which for an inner join is the same as WHERE and
-- filters each side before it is stored in the join's state.
CREATE STREAMING TABLE nexmark_q3 AS
SELECT P.name, P.city, P.state, A.id
FROM STREAM @AUCTION@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS A
JOIN STREAM @PERSON@ WATERMARK dateTime DELAY OF INTERVAL 4 SECONDS AS P
  ON A.seller = P.id AND A.category = 10 AND P.state IN ('OR', 'ID', 'CA');
