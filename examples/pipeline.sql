-- The `make run` demo pipeline (scripts/demo.sh writes the JSON files under landing/ first, then
-- runs `sluice run examples/pipeline.sql` in the warehouse directory).
--
--   landing/events/*.json --> bronze_events --> silver_checkouts --> user_totals
--
-- Every table runs TRIGGER AVAILABLE NOW, so the pipeline processes what is there and stops;
-- without a TRIGGER clause the tables would keep running, a batch as new files arrive, until
-- Ctrl-C. Each table reads the one before it as a stream (its new Delta commits), and
-- `sluice run` starts a table after the one it reads has finished.

-- Bronze: the raw events, two files per micro-batch.
CREATE OR REFRESH STREAMING TABLE bronze_events TRIGGER AVAILABLE NOW AS
SELECT id, user_id, page, amount, ts
FROM STREAM read_files('landing/events', format => 'json',
                       schema => 'id BIGINT, user_id VARCHAR, page VARCHAR, amount DOUBLE, ts TIMESTAMP',
                       maxFilesPerTrigger => 2);

-- Silver: checkouts only, with tax added (stateless).
CREATE OR REFRESH STREAMING TABLE silver_checkouts TRIGGER AVAILABLE NOW AS
SELECT id, user_id, amount, round(amount * 1.2, 2) AS amount_with_tax, ts
FROM STREAM bronze_events
WHERE page = 'checkout';

-- Gold: checkouts and revenue per user, the whole result rewritten each batch.
CREATE OR REFRESH STREAMING TABLE user_totals OUTPUT MODE COMPLETE TRIGGER AVAILABLE NOW AS
SELECT user_id, count(*) AS checkouts, round(sum(amount_with_tax), 2) AS revenue
FROM STREAM silver_checkouts
GROUP BY user_id;
