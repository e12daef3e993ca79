-- Nexmark q17, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction); days are UTC.
SELECT auction, strftime(dateTime AT TIME ZONE 'UTC', '%Y-%m-%d') AS day,
       count(*) AS total_bids,
       count(*) FILTER (WHERE price < 10000) AS rank1_bids,
       count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
       count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
       min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price,
       sum(price) AS sum_price
FROM bid GROUP BY 1, 2
