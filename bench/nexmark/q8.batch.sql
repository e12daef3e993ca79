-- Nexmark q8, the batch reference: the same query run by DuckDB as one batch over all the events
-- (tables bid, person, auction), with the reference's text where DuckDB can run it. Windows and
-- sessions are those the streaming run closes: end <= the final watermark (max dateTime - 4 s
-- over the query's streams), since a bounded stream's last windows never close.
SELECT P.id, P.name, P.starttime
FROM (SELECT id, name, to_timestamp(epoch_ms(dateTime) // 10000 * 10) AS starttime
      FROM person GROUP BY id, name, starttime) P
JOIN (SELECT seller, to_timestamp(epoch_ms(dateTime) // 10000 * 10) AS starttime
      FROM auction GROUP BY seller, starttime) A
  ON P.id = A.seller AND P.starttime = A.starttime
WHERE P.starttime + INTERVAL 10 SECONDS <=
      (SELECT least((SELECT max(dateTime) FROM person), (SELECT max(dateTime) FROM auction))
              - INTERVAL 4 SECONDS)
