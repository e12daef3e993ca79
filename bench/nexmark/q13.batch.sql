-- Nexmark q13, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction), with the side table built the same way.
WITH side_input AS (SELECT range AS key, CAST(range AS VARCHAR) AS value FROM range(10000))
SELECT B.auction, B.bidder, B.price, B.dateTime, S.value
FROM bid AS B JOIN side_input AS S ON B.auction % 10000 = S.key
