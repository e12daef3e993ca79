-- Nexmark q18, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction), the reference's text with its ties broken as q18.sql does (the
-- struct's fields after dateTime, the greatest first).
SELECT auction, bidder, price, channel, url, dateTime, extra
FROM (SELECT *, row_number() OVER (PARTITION BY bidder, auction
                                   ORDER BY dateTime DESC, price DESC, channel DESC, url DESC,
                                            extra DESC) AS rn
      FROM bid)
WHERE rn <= 1
