-- Nexmark q10, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction). Times are UTC.
SELECT auction, bidder, price, dateTime, extra,
       strftime(dateTime AT TIME ZONE 'UTC', '%Y-%m-%d') AS dt,
       strftime(dateTime AT TIME ZONE 'UTC', '%H:%M') AS hm
FROM bid
