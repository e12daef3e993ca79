"""The change data feed of a Delta source (readChangeFeed), with and without a starting version:
without one, Spark streams the table's snapshot as inserts first, then the changes."""

EV = {"schema": "k STRING, v BIGINT, ts TIMESTAMP", "cdf": True}
COLS = "k, v, _change_type, _commit_version"


def cdf(name, query, steps, mode="append"):
    return dict(name=name, sources={"ev": EV}, query=query, steps=steps, mode=mode)


CHANGES = [("append", "ev", [("a", 1, 1), ("b", 2, 2)]), ("run",),
           ("sql", "ev", "UPDATE {t} SET v = 20 WHERE k = 'b'"), ("run",),
           ("sql", "ev", "DELETE FROM {t} WHERE k = 'a'"), ("append", "ev", [("c", 3, 3)]),
           ("run",)]
SNAPSHOT_FIRST = [("append", "ev", [("a", 1, 1)]), ("append", "ev", [("b", 2, 2)]),
                  ("sql", "ev", "UPDATE {t} SET v = 10 WHERE k = 'a'"), ("run",),
                  ("sql", "ev", "DELETE FROM {t} WHERE k = 'b'"), ("run",)]

CASES = [
    cdf("cdf_starting_version_0", f"SELECT {COLS} FROM STREAM ev WITH (readChangeFeed = true, "
        f"startingVersion = 0)", CHANGES),
    cdf("cdf_starting_version_2", f"SELECT {COLS} FROM STREAM ev WITH (readChangeFeed = true, "
        f"startingVersion = 2)", SNAPSHOT_FIRST),
    cdf("cdf_without_starting_version", f"SELECT {COLS} FROM STREAM ev WITH "
        f"(readChangeFeed = true)", SNAPSHOT_FIRST),
    cdf("cdf_without_starting_version_changes", f"SELECT {COLS} FROM STREAM ev WITH "
        f"(readChangeFeed = true)", CHANGES),
    cdf("cdf_filter_change_type", "SELECT k, v FROM STREAM ev WITH (readChangeFeed = true, "
        "startingVersion = 0) WHERE _change_type IN ('insert', 'update_postimage')", CHANGES),
    cdf("cdf_count_by_change_type", "SELECT _change_type, count(*) AS n FROM STREAM ev WITH "
        "(readChangeFeed = true, startingVersion = 0) GROUP BY _change_type", CHANGES, "complete"),
]
