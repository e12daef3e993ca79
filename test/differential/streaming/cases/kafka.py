"""Kafka on the real broker (kafka_peer.py): from_json(CAST(value AS STRING)) projections,
startingOffsets earliest / latest / JSON, maxOffsetsPerTrigger, the partition, offset, timestamp
and headers columns, NULL keys and values, windowed counts on the Kafka timestamp with a
watermark, dedup on the key, and partitions added between runs. Each engine reads a topic of its
own with the same records at the same offsets, so `topic` is never selected."""


def kafka(name, query, steps, partitions=2, mode="append", **kw):
    return dict(name=name, sources={"kt": {"format": "kafka", "partitions": partitions}},
                query=query, mode=mode, steps=steps, **kw)


def j(i, name, amount):
    return f'{{"id": {i}, "name": "{name}", "amount": {amount}}}'


# (key, value, partition, timestamp): timestamps in seconds after 2024-01-01, out of order.
P1 = [("a", j(1, "x", 1.5), 0, 1), ("b", j(2, "y", 2.0), 1, 5), ("a", j(3, "z", 0.25), 0, 12)]
P2 = [("c", j(4, "w", 4.0), 1, 25), ("b", j(5, "v", 5.5), 0, 3), ("a", j(6, "u", 6.0), 1, 14)]
P3 = [("d", j(7, "t", 7.0), 0, 61), ("a", j(8, "s", 8.0), 1, 9), ("c", j(9, "r", 9.0), 0, 55)]
P4 = [("a", j(10, "q", 10.0), 1, 40), ("e", j(11, "p", 11.0), 0, 130)]


def runs(*record_lists, source="kt"):
    steps = []
    for records in record_lists:
        steps += [("produce", source, records), ("run",)]
    return steps


EARLIEST = "STREAM kt WITH (startingOffsets = 'earliest')"
PARSED = (f"SELECT CAST(key AS STRING) AS k, s.id, s.name, s.amount FROM (SELECT key, "
          f"from_json(CAST(value AS STRING), 'id INT, name STRING, amount DOUBLE') AS s "
          f"FROM {EARLIEST}) AS p")
WM = "WATERMARK timestamp DELAY OF INTERVAL 10 SECONDS AS e"

CASES = [
    kafka("kafka_from_json_projection", PARSED, runs(P1, P2, P3)),
    kafka("kafka_from_json_filter",
          f"SELECT s.id, upper(s.name) AS name FROM (SELECT from_json(CAST(value AS STRING), "
          f"'id INT, name STRING, amount DOUBLE') AS s FROM {EARLIEST}) AS p "
          f"WHERE s.amount >= 2", runs(P1, P2)),
    kafka("kafka_from_json_malformed",
          f"SELECT CAST(key AS STRING) AS k, CAST(value AS STRING) AS raw, s.id, s.name, "
          f"s.amount FROM (SELECT key, value, from_json(CAST(value AS STRING), "
          f"'id INT, name STRING, amount DOUBLE') AS s FROM {EARLIEST}) AS p",
          runs([("a", '{"id": 1, "name": "ok", "amount": 1}', 0, 1),
                ("b", "not json", 0, 2), ("c", '{"id": "seven"}', 1, 3),
                ("d", None, 1, 4), (None, '{"name": "nokey"}', 0, 5)])),
    kafka("kafka_columns_partition_offset",
          f"SELECT CAST(value AS STRING) AS v, partition, offset, timestamp, timestampType "
          f"FROM {EARLIEST}", runs(P1, P2)),
    kafka("kafka_key_value_binary",
          f"SELECT key, value, length(value) AS n FROM {EARLIEST}",
          runs([("k1", "v1", 0, 1), (None, "no key", 1, 2), ("k3", None, 0, 3)])),
    kafka("kafka_starting_latest",
          "SELECT CAST(key AS STRING) AS k, offset FROM STREAM kt",
          [("produce", "kt", P1), ("run",), ("produce", "kt", P2), ("run",),
           ("produce", "kt", P3), ("run",)]),
    kafka("kafka_starting_json",
          "SELECT CAST(key AS STRING) AS k, partition, offset FROM STREAM kt WITH "
          "(startingOffsets = '{\"{topic}\":{\"0\":1,\"1\":-2}}')",
          [("produce", "kt", P1 + P2), ("run",), ("produce", "kt", P3), ("run",)]),
    kafka("kafka_max_offsets_per_trigger",
          "SELECT CAST(key AS STRING) AS k, partition, offset FROM STREAM kt WITH "
          "(startingOffsets = 'earliest', maxOffsetsPerTrigger = 3)",
          [("produce", "kt", P1 + P2 + P3), ("run",), ("produce", "kt", P4), ("run",)]),
    kafka("kafka_window_count_append",
          f"SELECT window.start AS ws, count(*) AS n FROM {EARLIEST} {WM} "
          f"GROUP BY window(timestamp, '10 seconds')", runs(P1, P2, P3, P4)),
    kafka("kafka_window_key_update",
          f"SELECT window.start AS ws, CAST(key AS STRING) AS k, count(*) AS n FROM {EARLIEST} "
          f"{WM} GROUP BY window(timestamp, '10 seconds'), key", runs(P1, P2, P3, P4),
          mode="update"),
    kafka("kafka_count_by_key_complete",
          f"SELECT CAST(key AS STRING) AS k, count(*) AS n, sum(s.amount) AS total FROM "
          f"(SELECT key, from_json(CAST(value AS STRING), 'id INT, name STRING, amount DOUBLE') "
          f"AS s FROM {EARLIEST}) AS p GROUP BY key", runs(P1, P2, P3), mode="complete"),
    kafka("kafka_dedup_key",
          f"SELECT DISTINCT ON (k) k, v FROM (SELECT CAST(key AS STRING) AS k, CAST(value AS "
          f"STRING) AS v FROM {EARLIEST}) AS p",
          spark="kt.selectExpr('CAST(key AS STRING) AS k', 'CAST(value AS STRING) AS v')"
                ".dropDuplicates(['k'])",
          steps=runs([("a", "1", 0, 1), ("b", "2", 1, 2)], [("a", "3", 1, 3), ("c", "4", 0, 4)],
                     [("b", "5", 0, 5), ("d", "6", 1, 6)])),
    kafka("kafka_dedup_key_watermark",
          f"SELECT DISTINCT ON (k, timestamp) k, timestamp FROM (SELECT CAST(key AS STRING) AS "
          f"k, timestamp FROM {EARLIEST} {WM}) AS p",
          spark="kt.selectExpr('CAST(key AS STRING) AS k', 'timestamp')"
                ".dropDuplicates(['k', 'timestamp'])",
          steps=runs([("a", "1", 0, 1), ("a", "2", 1, 1), ("b", "3", 0, 5)],
                     [("a", "4", 0, 1), ("c", "5", 1, 40)], [("b", "6", 0, 5), ("d", "7", 1, 90)])),
    kafka("kafka_added_partitions",
          "SELECT CAST(key AS STRING) AS k, partition, offset FROM STREAM kt WITH "
          "(startingOffsets = 'earliest')",
          [("produce", "kt", [("a", "1", 0, 1), ("b", "2", 0, 2)]), ("run",),
           ("partitions", "kt", 3),
           ("produce", "kt", [("c", "3", 1, 3), ("d", "4", 2, 4), ("e", "5", 0, 5)]), ("run",),
           ("produce", "kt", [("f", "6", 2, 6)]), ("run",)], partitions=1),
    kafka("kafka_added_partitions_max_offsets",
          "SELECT CAST(key AS STRING) AS k, partition, offset FROM STREAM kt WITH "
          "(startingOffsets = 'earliest', maxOffsetsPerTrigger = 2)",
          [("produce", "kt", [("a", "1", 0, 1), ("b", "2", 0, 2), ("c", "3", 0, 3)]), ("run",),
           ("partitions", "kt", 2),
           ("produce", "kt", [("d", "4", 1, 4), ("e", "5", 1, 5), ("f", "6", 0, 6)]), ("run",)],
          partitions=1),
    kafka("kafka_headers",
          f"SELECT CAST(value AS STRING) AS v, headers FROM STREAM kt WITH "
          f"(startingOffsets = 'earliest', includeHeaders = true)",
          runs([("a", "1", 0, 1, [("h1", "x"), ("h2", None)]), ("b", "2", 0, 2, None),
                ("c", "3", 1, 3, [("h1", "y"), ("h1", "z")])])),
    kafka("kafka_headers_projection",
          f"SELECT CAST(value AS STRING) AS v, size(headers) AS n, "
          f"CAST(headers[0].value AS STRING) AS first FROM STREAM kt WITH "
          f"(startingOffsets = 'earliest', includeHeaders = true)",
          runs([("a", "1", 0, 1, [("h1", "x"), ("h2", None)]),
                ("c", "3", 1, 3, [("h1", "y"), ("h1", "z")])])),
]
