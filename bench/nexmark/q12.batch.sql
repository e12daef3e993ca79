-- Nexmark q12, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction), with the reference's text where DuckDB can run it. Windows and
-- sessions are those the streaming run closes: end <= the final watermark (max dateTime - 4 s
-- over the query's streams), since a bounded stream's last windows never close.
-- Processing-time windows depend on the wall clock, so the check compares what does not: the
-- bids per bidder summed over all windows.
-- compare: SELECT bidder, sum(bid_count) AS bid_count FROM @RESULT@ GROUP BY bidder
SELECT bidder, count(*) AS bid_count FROM bid GROUP BY bidder
