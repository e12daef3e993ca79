CREATE SINK out USING kafka OPTIONS (kafka.bootstrap.servers = 'localhost:9092', topic 'o');
CREATE FLOW f AS INSERT INTO out SELECT CAST(id AS STRING) AS key, to_json(struct(*)) AS value
FROM STREAM(events) WITH ('startingVersion' = 3);
CREATE FLOW g AS AUTO CDC INTO target FROM STREAM changes KEYS (id) SEQUENCE BY seq
  APPLY AS DELETE WHEN op = 'D' STORED AS SCD TYPE 2;
REFRESH SINK out;
DROP SINK out;
