-- Nexmark q14, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction). Hours are UTC; count_char(extra, 'c') counts the 'c' bytes.
SELECT auction, bidder, CAST(0.908 * price AS DECIMAL(23, 3)) AS price,
       CASE WHEN hour(dateTime AT TIME ZONE 'UTC') >= 8 AND hour(dateTime AT TIME ZONE 'UTC') <= 18
              THEN 'dayTime'
            WHEN hour(dateTime AT TIME ZONE 'UTC') <= 6 OR hour(dateTime AT TIME ZONE 'UTC') >= 20
              THEN 'nightTime'
            ELSE 'otherTime' END AS bidTimeType,
       dateTime, extra, CAST(length(extra) - length(replace(extra, 'c', '')) AS INTEGER) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000
