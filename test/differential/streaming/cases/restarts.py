"""Restarts inside a batch: a crash after offsets/N was written and before commits/N (the
("crash",) step deletes the last commits/N), then a restart that runs batch N again with the
offsets, watermark and state it had, and goes on. Stateless, aggregation (append and update),
dedup (with and without a watermark), stream-stream join and Kafka queries; compared are the
rows (the re-run writes no row twice), the batch ids and the watermark of every batch."""

EV = "k STRING, v BIGINT, ts TIMESTAMP"
WM10 = "STREAM ev WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS e"
R1 = [("a", 1, 1), ("b", 2, 5), ("a", 3, 12)]
R2 = [("a", 4, 25), ("b", 5, 3), ("c", 6, 14)]
R3 = [("b", 7, 61), ("a", 8, 9), ("c", 9, 55)]


def crash_steps(source="ev", runs=(R1, R2, R3), crash_after=2, then_new=True):
    """Runs of `runs`; after run `crash_after` a crash; the next run re-runs the last batch,
    alone (then_new=False) or with new rows after it."""
    steps = []
    for i, rows in enumerate(runs, 1):
        steps += [("append", source, rows), ("run",)]
        if i == crash_after:
            steps.append(("crash",))
            if not then_new:
                steps.append(("run",))
    return steps


def crash(name, query, mode="append", **kw):
    steps = kw.pop("steps", None) or crash_steps(**{k: kw.pop(k) for k in
                                                      ("runs", "crash_after", "then_new")
                                                      if k in kw})
    return dict(name=name, sources=kw.pop("sources", {"ev": EV}), query=query, mode=mode,
                steps=steps, **kw)


TUMBLE = (f"SELECT window.start AS ws, k, count(*) AS n, sum(v) AS s FROM {WM10} "
          f"GROUP BY window(ts, '10 seconds'), k")
L = "k STRING, lv BIGINT, lts TIMESTAMP"
R = "k STRING, rv BIGINT, rts TIMESTAMP"
JOIN = ("SELECT a.k, a.lv, b.rv FROM STREAM l WATERMARK lts DELAY OF INTERVAL 10 SECONDS AS a "
        "JOIN STREAM r WATERMARK rts DELAY OF INTERVAL 10 SECONDS AS b ON a.k = b.k AND "
        "b.rts BETWEEN a.lts AND a.lts + INTERVAL 10 SECONDS")
JOIN_STEPS = [("append", "l", [("a", 1, 10), ("b", 2, 20)]), ("append", "r", [("a", 10, 15)]),
              ("run",),
              ("append", "l", [("c", 3, 30), ("a", 4, 70)]),
              ("append", "r", [("b", 20, 25), ("c", 30, 35)]), ("run",), ("crash",),
              ("append", "r", [("a", 40, 72)]), ("append", "l", [("d", 5, 200)]), ("run",)]
KAFKA = {"kt": {"format": "kafka", "partitions": 2}}
KAFKA_STEPS = [("produce", "kt", [("a", "1", 0, 1), ("b", "2", 1, 5)]), ("run",),
               ("produce", "kt", [("c", "3", 0, 30), ("a", "4", 1, 31)]), ("run",), ("crash",),
               ("produce", "kt", [("d", "5", 1, 90)]), ("run",)]

CASES = [
    crash("crash_stateless", "SELECT k, v FROM STREAM ev"),
    crash("crash_stateless_rerun_alone", "SELECT k, v * 2 AS v2 FROM STREAM ev",
          then_new=False),
    crash("crash_first_batch", "SELECT k, v FROM STREAM ev", crash_after=1),
    crash("crash_window_append", TUMBLE),
    crash("crash_window_update", TUMBLE, "update"),
    crash("crash_window_update_rerun_alone", TUMBLE, "update", then_new=False),
    crash("crash_keyed_complete", "SELECT k, count(*) AS n, max(v) AS hi FROM STREAM ev "
          "GROUP BY k", "complete"),
    crash("crash_dedup", "SELECT DISTINCT ON (k) k, v FROM STREAM ev",
          spark="ev.dropDuplicates(['k']).select('k', 'v')"),
    crash("crash_dedup_watermark",
          f"SELECT DISTINCT ON (k, ts) k, ts FROM {WM10}",
          spark="ev.dropDuplicates(['k', 'ts']).select('k', 'ts')",
          runs=([("a", 0, 1), ("a", 0, 1), ("b", 0, 5)], [("a", 0, 1), ("c", 0, 40)],
                [("b", 0, 5), ("d", 0, 90)])),
    crash("crash_join_inner_time_bound", JOIN, sources={"l": L, "r": R}, steps=JOIN_STEPS),
    crash("crash_kafka_stateless",
          "SELECT CAST(key AS STRING) AS k, partition, offset FROM STREAM kt WITH "
          "(startingOffsets = 'earliest')", sources=KAFKA, steps=KAFKA_STEPS),
    crash("crash_kafka_window_append",
          "SELECT window.start AS ws, count(*) AS n FROM STREAM kt WITH (startingOffsets = "
          "'earliest') WATERMARK timestamp DELAY OF INTERVAL 10 SECONDS AS e "
          "GROUP BY window(timestamp, '10 seconds')", sources=KAFKA, steps=KAFKA_STEPS),
]
