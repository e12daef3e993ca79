-- The `make run` demo. Until streaming tables land (see the issues), it shows the SQL surface
-- that the streaming layers build on: DuckDB's SQL engine embedded in Sluice.

-- A small event log: 10,000 page views over one hour from 50 users.
CREATE TABLE events AS
SELECT
  i AS event_id,
  TIMESTAMP '2026-01-01 00:00:00' + to_seconds(i * 0.36) AS ts,
  'user-' || (i * 7919 % 50) AS user_id,
  ['home', 'search', 'product', 'cart', 'checkout'][1 + (i * 31 % 5)] AS page
FROM range(10000) t(i);

-- Views per 5-minute tumbling window: what a windowed streaming aggregation will maintain.
SELECT time_bucket(INTERVAL 5 MINUTES, ts) AS window_start, count(*) AS views,
       count(DISTINCT user_id) AS users
FROM events GROUP BY window_start ORDER BY window_start LIMIT 6;

-- The funnel per page.
SELECT page, count(*) AS views FROM events GROUP BY page ORDER BY views DESC;

-- Engine settings are plain SQL too.
SET sluice.shufflePartitions = 4;
