-- Nexmark q1, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction), with the reference's text where DuckDB can run it. Windows and
-- sessions are those the streaming run closes: end <= the final watermark (max dateTime - 4 s
-- over the query's streams), since a bounded stream's last windows never close.
SELECT auction, bidder, CAST(0.908 * price AS DECIMAL(23, 3)) AS price, dateTime, extra FROM bid
