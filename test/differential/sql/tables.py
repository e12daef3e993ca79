"""The small input tables the cases read, identical for both engines.

Spark writes each table once as a Delta table into the Sluice warehouse (<warehouse>/<name>), so
Sluice reads the very files Spark wrote; Spark's cases read the same rows as a temporary view of
an in-memory DataFrame (no Delta snapshot per case). Schemas are Spark DDL; rows are Python.
"""

import datetime as dt
from decimal import Decimal

TS = dt.datetime
D = dt.date

TABLES = {
    # Numbers, with NULLs, negatives and the extremes.
    "nums": ("id INT, i INT, l BIGINT, d DOUBLE, dec DECIMAL(10,2), s STRING", [
        (1, 7, 10, 1.5, Decimal("12.34"), "7"),
        (2, -7, -10, -2.25, Decimal("-0.05"), "-7"),
        (3, 0, 9223372036854775807, 0.0, Decimal("0.00"), "x"),
        (4, None, None, None, None, None),
        (5, 2147483647, -9223372036854775808, 1e300, Decimal("99999999.99"), " 42 "),
    ]),
    # Strings: ASCII, Unicode, empty, blanks, NULL.
    "strs": ("id INT, s STRING, t STRING", [
        (1, "Hello World", "o"),
        (2, "héllo wörld", "ö"),
        (3, "", ""),
        (4, "  padded  ", " "),
        (5, None, None),
        (6, "a,b,,c", ","),
    ]),
    # Times: instants in UTC, dates, the text Spark's parsers read.
    "times": ("id INT, ts TIMESTAMP, d DATE, s STRING", [
        (1, TS(2024, 1, 15, 10, 30, 45, 123456), D(2024, 1, 15), "2024-01-15 10:30:45"),
        (2, TS(2024, 2, 29, 23, 59, 59), D(2024, 2, 29), "2024-02-29"),
        (3, TS(1970, 1, 1, 0, 0, 0), D(1970, 1, 1), "1970-01-01T00:00:00Z"),
        (4, None, None, None),
        (5, TS(2023, 12, 31, 0, 0, 1), D(2023, 12, 31), "31/12/2023"),
    ]),
    # JSON documents as text, as they arrive from Kafka or files.
    "docs": ("id INT, j STRING", [
        (1, '{"a":1,"b":"x","c":[1,2,3],"d":{"e":true,"f":null}}'),
        (2, '{"a":2,"b":"y","c":[],"d":{"e":false}}'),
        (3, '{"a":"not a number","b":3}'),
        (4, 'not json'),
        (5, None),
        (6, '{"a":4,"items":[{"id":10,"q":2},{"id":11,"q":5}],"n":1.25}'),
    ]),
    # A Kafka-shaped table: binary key and value, the keyword-named metadata columns.
    "kafka": ("key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, "
              "timestamp TIMESTAMP", [
        (b"k1", b'{"id":1,"name":"caf\xc3\xa9","amount":12.5}', "orders", 0, 100,
         TS(2024, 3, 1, 12, 0, 0)),
        (b"k2", b'{"id":2,"name":"b","amount":3}', "orders", 1, 7, TS(2024, 3, 1, 12, 0, 5)),
        (None, b'{"id":3}', "orders", 0, 101, TS(2024, 3, 1, 12, 1, 0)),
        (b"\x00\xff", b"\xe2\x82\xac", "raw", 2, 0, TS(2024, 3, 1, 13, 0, 0)),
    ]),
    # Nested types.
    "nested": ("id INT, a ARRAY<INT>, tags ARRAY<STRING>, m MAP<STRING,INT>, "
               "st STRUCT<x: INT, y: STRING>", [
        (1, [3, 1, 2], ["b", "a"], {"k1": 1, "k2": 2}, (1, "one")),
        (2, [], [], {}, (2, None)),
        (3, None, None, None, None),
        (4, [5, None, 5], ["a", None], {"k3": None}, (None, "three")),
    ]),
    # Groups for aggregates, window functions, QUALIFY.
    "sales": ("g STRING, k INT, v INT, price DECIMAL(8,2), ts TIMESTAMP", [
        ("a", 1, 10, Decimal("1.10"), TS(2024, 1, 1, 10, 0, 0)),
        ("a", 2, 20, Decimal("2.20"), TS(2024, 1, 1, 10, 5, 0)),
        ("a", 3, 20, Decimal("3.30"), TS(2024, 1, 1, 10, 12, 0)),
        ("b", 1, 5, Decimal("0.50"), TS(2024, 1, 1, 11, 0, 0)),
        ("b", 2, None, None, TS(2024, 1, 2, 0, 0, 0)),
        ("c", 1, 7, Decimal("7.00"), TS(2024, 2, 1, 0, 0, 0)),
    ]),
    # Columns named by words that are keywords somewhere.
    "kw": ("`window` STRING, `value` INT, `key` STRING, `timestamp` TIMESTAMP, `date` DATE, "
           "`offset` BIGINT, `partition` INT, `order` INT, `group` STRING, `user` STRING", [
        ("w1", 1, "a", TS(2024, 1, 1, 0, 0, 0), D(2024, 1, 1), 10, 0, 2, "g1", "u1"),
        ("w2", 2, "b", TS(2024, 1, 2, 0, 0, 0), D(2024, 1, 2), 11, 1, 1, "g1", "u2"),
    ]),
    # Columns whose names need backticks.
    "odd_cols": ("`first-name` STRING, `a-b` INT, `x.y` INT, `select` INT", [
        ("ann", 1, 2, 5),
        ("bob", 3, 4, 6),
    ]),
}


def create_in_spark(spark, warehouse):
    """Writes every table as Delta into `warehouse` (for Sluice) and registers a temporary view
    of the same rows in Spark. Returns {name: path}."""
    import os
    paths = {}
    for name, (schema, rows) in TABLES.items():
        df = spark.createDataFrame(rows, schema)
        path = os.path.join(warehouse, name)
        df.coalesce(1).write.format("delta").mode("overwrite").save(path)
        df.createOrReplaceTempView(f"`{name}`")
        paths[name] = path
    return paths
