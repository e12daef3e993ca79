-- Nexmark q22, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction). DuckDB's split_part counts from 1.
SELECT auction, bidder, price, channel,
       split_part(url, '/', 4) AS dir1, split_part(url, '/', 5) AS dir2,
       split_part(url, '/', 6) AS dir3
FROM bid
