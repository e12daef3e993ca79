"""Triggers: the batches a Once run constructs beside an AvailableNow run of the same input
(read limits of Delta, files and Kafka; a stateful query whose watermark moves, where Once runs
no no-data batch). Processing-time triggers on a manual clock have no PySpark spelling
(docs/testing.md, "Streaming differential": the evidence), so these stand in for them."""

from case_model import batches

EV = "k STRING, v BIGINT, ts TIMESTAMP"
B1 = [("a", 1, 1), ("b", 2, 5)]
B2 = [("c", 3, 12), ("a", 4, 25)]
B3 = [("d", 5, 61)]
# The last run is a restart without new data: no batch on either engine (Spark reports the idle
# trigger's progress, which is not a batch: observations.split_idle).
STEPS = [("append", "ev", B1), ("append", "ev", B2), ("run",), ("append", "ev", B3), ("run",),
         ("run",)]
WINDOW = ("SELECT window.start AS ws, count(*) AS n FROM STREAM ev WATERMARK ts DELAY OF "
          "INTERVAL 10 SECONDS AS e GROUP BY window(ts, '10 seconds')")


def both(name, query, sources=None, steps=STEPS, **kw):
    """The case under Once and under AvailableNow."""
    sources = sources or {"ev": EV}
    return [dict(name=f"{name}_{t.lower()}", sources=sources, query=query, steps=steps,
                 trigger=t, **kw) for t in ("once", "availableNow")]


KAFKA = {"kt": {"format": "kafka", "partitions": 2}}
KAFKA_STEPS = [("produce", "kt", [("a", "1", 0, 1), ("b", "2", 1, 2), ("c", "3", 0, 3),
                                  ("d", "4", 1, 4), ("e", "5", 0, 5)]), ("run",),
               ("produce", "kt", [("f", "6", 1, 6)]), ("run",), ("run",)]

CASES = (
    both("trigger_delta_max_files", "SELECT k, v FROM STREAM ev WITH (maxFilesPerTrigger = 1)")
    + both("trigger_json_max_files", "SELECT k, v FROM STREAM f WITH (maxFilesPerTrigger = 1)",
           {"f": {"format": "json", "schema": EV}},
           [("append", "f", B1), ("append", "f", B2), ("run",), ("append", "f", B3), ("run",)])
    + both("trigger_window_append", WINDOW)
    + both("trigger_window_update", WINDOW, mode="update")
    + both("trigger_kafka_max_offsets", "SELECT CAST(key AS STRING) AS k, partition, offset "
           "FROM STREAM kt WITH (startingOffsets = 'earliest', maxOffsetsPerTrigger = 2)",
           KAFKA, KAFKA_STEPS)
    + [dict(name="trigger_once_no_new_data", sources={"ev": EV}, trigger="once",
            query="SELECT k, v FROM STREAM ev", steps=batches("ev", B1) + [("run",)])]
)
