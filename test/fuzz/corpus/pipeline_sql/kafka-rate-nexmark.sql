CREATE STREAMING TABLE k AS SELECT CAST(value AS STRING) AS v FROM STREAM read_kafka(
  bootstrapServers => 'localhost:9092', subscribe => 'in', startingOffsets => '{"in":{"0":-2}}',
  `kafka.sasl.jaas.config` => secret('scope', 'key'));
CREATE STREAMING TABLE r AS SELECT * FROM STREAM read_rate(rowsPerSecond => 10, rampUpTime => '2s');
CREATE STREAMING TABLE n AS SELECT * FROM STREAM nexmark(kind => 'bid', eventsPerSecond => 100)
  WATERMARK date_time DELAY OF INTERVAL 1 SECOND AS b;
SELECT * FROM (SHOW STREAMING TABLES);
