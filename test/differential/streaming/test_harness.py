"""The streaming differential's own checks: a case's one spelling becomes each engine's query as
documented, the comparison tells apart what it must, the cache's encoding round-trips. No Spark
session.

    scripts/peers/run-python.sh -m pytest -q -p no:cacheprovider test/differential/streaming/test_harness.py
"""

import datetime as dt
import os
import sys
from decimal import Decimal

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import run  # noqa: E402  (puts ../sql and ../../interop on the path)
import case_model  # noqa: E402
import observations  # noqa: E402

EV = "k STRING, v BIGINT, ts TIMESTAMP"


def case(query, sources=None, **kw):
    kw.setdefault("steps", [("run",)])
    d = dict(name="c", sources=sources or {"ev": EV}, query=query, **kw)
    return case_model.Case(d, "test")


def test_spark_views_carry_the_watermark_and_options():
    c = case("SELECT k FROM STREAM ev WITH (skipChangeCommits = true) WATERMARK ts DELAY OF "
             "INTERVAL 10 SECONDS AS e WHERE v > 1")
    views, query = c.spark_streams()
    assert query == "SELECT k FROM ev AS e WHERE v > 1"
    (view, src, opts, wm), = views
    assert (view, src.name, opts, wm) == ("ev", "ev", {"skipChangeCommits": "true"},
                                          ("ts", "10 seconds"))


def test_a_source_streamed_twice_gets_two_views():
    c = case("SELECT a.k FROM STREAM ev AS a JOIN STREAM ev AS b ON a.k = b.k")
    views, query = c.spark_streams()
    assert [v[0] for v in views] == ["ev__1", "ev__2"]
    assert query == "SELECT a.k FROM ev__1 AS a JOIN ev__2 AS b ON a.k = b.k"


def test_sluice_reads_a_file_source_with_read_files():
    c = case("SELECT k FROM STREAM f WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS e",
             {"f": {"format": "csv", "schema": EV}})
    assert c.sluice_query({"f": "/d"}) == (
        "SELECT k FROM STREAM read_files('/d', format => 'csv', schema => "
        "'k STRING, v BIGINT, ts TIMESTAMP', header => true) WATERMARK ts DELAY OF "
        "INTERVAL 5 SECONDS AS e")
    assert case("SELECT k FROM STREAM ev").sluice_query({}) == "SELECT k FROM STREAM ev"


def test_bad_cases_are_refused():
    with pytest.raises(SystemExit, match="no source"):
        case("SELECT * FROM STREAM nope")
    with pytest.raises(SystemExit, match="bad column"):
        case("SELECT * FROM STREAM ev", {"ev": "k TEXT"})
    with pytest.raises(SystemExit, match="no run step"):
        case_model.Case(dict(name="c", sources={"ev": EV}, query="SELECT * FROM STREAM ev",
                             steps=[]), "test")


def test_literals_and_second_offsets():
    assert case_model.literal(12, "TIMESTAMP") == "TIMESTAMP '2024-01-01 00:00:12'"
    assert case_model.literal("it's", "STRING") == "'it''s'"
    assert case_model.literal(None, "BIGINT") == "NULL"


BATCH = {"id": 0, "in": 2, "wm": "1970-01-01T00:00:00.000Z", "ops": [["stateStoreSave", 1, 0]]}
ROWS = [[("str", "a"), ("int", 1)]]


def ok(rows=ROWS, batches=(BATCH,)):
    return {"cols": ["k", "n"], "rows": rows, "batches": list(batches)}


def test_compare_tells_each_aspect_apart():
    c = case("SELECT k FROM STREAM ev", words=["watermark"])
    assert run.compare(c, [ok()], [ok()])[0] == "pass"
    assert run.compare(c, [ok()], [ok(rows=[[("str", "a"), ("int", 2)]])])[0] == "rows"
    assert run.compare(c, [ok()], [ok(batches=[dict(BATCH, **{"in": 3})])])[0] == "metrics"
    assert run.compare(c, [ok()], [ok(batches=[dict(BATCH, ops=[["dedupe", 1, 0]])])])[0] \
        == "metrics"
    assert run.compare(c, [ok()], [{"cols": ["k", "m"], "rows": ROWS, "batches": [BATCH]}])[0] \
        == "columns"
    assert run.compare(c, [{"error": "no watermark"}], [ok()])[0] == "accepts"
    assert run.compare(c, [ok()], [{"error": "no"}])[0] == "refuses"
    assert run.compare(c, [{"error": "no watermark"}], [{"error": "Watermark missing"}])[0] \
        == "pass"
    assert run.compare(c, [{"error": "no watermark"}], [{"error": "unsupported"}])[0] \
        == "message"
    assert run.compare(c, [ok()], [{"crash": "exit -11"}])[0] == "crash"
    both = run.compare(c, [ok()], [ok(rows=[], batches=[])])[0]
    assert both == "rows+metrics"


def test_update_mode_compares_each_batch_emission():
    c = case("SELECT k FROM STREAM ev")
    one = {"cols": ["k"], "emitted": [ROWS, ROWS], "batches": []}
    merged = {"cols": ["k"], "emitted": [ROWS + ROWS], "batches": []}
    assert run.compare(c, [one], [one])[0] == "pass"
    assert run.compare(c, [one], [merged])[0] == "rows"


def test_cache_encoding_round_trips():
    obs = [{"cols": ["a"], "rows": [[("ts", dt.datetime(2024, 1, 1, 0, 0, 1)),
                                     ("dec", Decimal("1.50")), ("bin", b"\x00\xff"),
                                     ("array", [("int", 1), ("null",)]),
                                     ("struct", [("s", ("date", dt.date(2024, 1, 2)))])]],
            "batches": [BATCH]}, {"error": "x"}]
    back = observations.decode(observations.encode(obs))
    assert back == obs


def test_known_list_format():
    assert run.normal_outcome("metrics+rows") == "rows+metrics"


def test_a_kafka_source_reads_its_own_topic_with_the_options():
    c = case("SELECT partition FROM STREAM kt WITH (startingOffsets = '{\"{topic}\":{\"0\":1,"
             "\"1\":-2}}', maxOffsetsPerTrigger = 3) WATERMARK timestamp DELAY OF INTERVAL 10 "
             "SECONDS AS e", {"kt": {"format": "kafka", "partitions": 2}})
    assert c.sluice_query({}, ("127.0.0.1:9", {"kt": "sd.sluice.c.kt"})) == (
        "SELECT partition FROM STREAM read_kafka(bootstrapServers => '127.0.0.1:9', "
        "subscribe => 'sd.sluice.c.kt') WITH (startingOffsets = '{\"sd.sluice.c.kt\":{\"0\":1,"
        "\"1\":-2}}', maxOffsetsPerTrigger = 3) WATERMARK timestamp DELAY OF INTERVAL 10 "
        "SECONDS AS e")
    (view, src, opts, wm), = c.spark_streams()[0]
    # a comma inside the quoted JSON does not split the options
    assert opts == {"startingOffsets": '{"{topic}":{"0":1,"1":-2}}', "maxOffsetsPerTrigger": "3"}
    assert (src.format, src.partitions, wm) == ("kafka", 2, ("timestamp", "10 seconds"))


def test_bad_kafka_crash_and_trigger_steps_are_refused():
    kt = {"kt": {"format": "kafka", "partitions": 1}}
    with pytest.raises(SystemExit, match="no Kafka source"):
        case("SELECT * FROM STREAM ev", steps=[("produce", "ev", []), ("run",)])
    with pytest.raises(SystemExit, match="takes produce steps"):
        case("SELECT * FROM STREAM kt", kt, steps=[("append", "kt", []), ("run",)])
    with pytest.raises(SystemExit, match="partitions"):
        case("SELECT * FROM STREAM kt", {"kt": {"format": "kafka", "schema": EV}})
    with pytest.raises(SystemExit, match="must follow a run"):
        case("SELECT * FROM STREAM ev", steps=[("crash",), ("run",)])
    with pytest.raises(SystemExit, match="trigger"):
        case("SELECT * FROM STREAM ev", trigger="continuous")


def test_a_crash_deletes_the_last_commit_only(tmp_path):
    import sluice_side
    import spark_side
    for side in (sluice_side, spark_side):
        commits = tmp_path / side.__name__ / "commits"
        commits.mkdir(parents=True)
        for n in ("0", "1", ".1.crc", "2"):
            (commits / n).write_text("v1")
        side.crash_before_commit(str(commits.parent))
        assert "2" not in os.listdir(commits) and "1" in os.listdir(commits)


def _progress(batch_id, rows, durations):
    return {"batchId": batch_id, "numInputRows": rows, "durationMs": durations,
            "stateOperators": [], "eventTime": {}}


def test_only_spark_idle_triggers_are_kept_apart():
    ran = {"addBatch": 5, "triggerExecution": 9}
    idle = {"latestOffset": 1, "triggerExecution": 2}
    batches, idle_ids = observations.split_idle(
        [_progress(0, 2, ran), _progress(1, 0, ran), _progress(2, 0, idle)], {0, 1})
    assert [b["id"] for b in batches] == [0, 1] and idle_ids == [2]  # #1: a batch of 0 rows
    with pytest.raises(observations.HarnessError, match="no addBatch but offsets/1"):
        observations.split_idle([_progress(1, 0, idle)], {0, 1})  # planned, not run
    with pytest.raises(observations.HarnessError, match="addBatch and no offsets/3"):
        observations.split_idle([_progress(3, 1, ran)], {0, 1})
    with pytest.raises(observations.HarnessError, match="numInputRows 4"):
        observations.split_idle([_progress(2, 4, idle)], {0, 1})


def test_the_idle_triggers_are_not_compared():
    spark = [dict(ok(), idle=[1])]
    assert run.compare(case("SELECT k FROM STREAM ev"), spark, [ok()])[0] == "pass"
