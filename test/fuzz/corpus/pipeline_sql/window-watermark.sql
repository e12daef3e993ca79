CREATE STREAMING TABLE spend TRIGGER PROCESSING TIME '5 seconds' AS
SELECT window(ts, '1 minute') AS w, user_id, count(*) AS n, sum(amount)::DECIMAL(10, 2) AS s
FROM STREAM events WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS e
GROUP BY window(ts, '1 minute'), user_id;
/* a block comment; with a ';' inside */
SELECT * FROM streaming_progress('spend');
