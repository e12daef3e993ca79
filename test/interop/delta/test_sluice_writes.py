"""Sluice writes, Spark with Delta, delta-rs and DuckDB read (issue 16, section 3).

Every kind of commit Sluice makes is made here with the CLI, and then Spark, delta-rs (and DuckDB
at the latest version) must return the same rows at every version, the same schema, the same
history (version, operation), the same change data feed and the same txn versions as the log
Sluice wrote (delta_peers.check_table). Spark's session validates every snapshot it reconstructs
(spark.databricks.delta.stateReconstructionValidation.enabled, peers.spark()).
"""

import json
import os
import tempfile

import pyarrow.parquet as pq
import pytest

import delta_peers as d
import peers


@pytest.fixture(scope="module")
def wh():
    with tempfile.TemporaryDirectory(prefix="sluice-writes-") as w:
        yield w


TYPES = """
CREATE TABLE types (id INT NOT NULL, big BIGINT, small SMALLINT, tiny TINYINT, f FLOAT, d DOUBLE,
  dec DECIMAL(10,2), wide DECIMAL(38,6), s VARCHAR, b BOOLEAN, bin BLOB, day DATE, ts TIMESTAMP,
  st STRUCT(a INT, b VARCHAR), arr INT[], m MAP(VARCHAR, INT));
INSERT INTO types VALUES
  (1, 9223372036854775807, -32768, -128, 1.5, 2.25, 12345678.91, 12345678901234567890123456789012.123456,
   'one', true, '\\x00\\xFF'::BLOB, DATE '2024-02-29', TIMESTAMPTZ '2024-01-01 10:00:00.123456+00',
   {'a': 1, 'b': 'x'}, [1, 2, NULL], MAP {'k': 1, 'l': NULL}),
  (2, -1, 0, 0, -0.5, 'NaN'::DOUBLE, -0.01, 0, 'two with spaces', false, ''::BLOB,
   DATE '1970-01-01', TIMESTAMPTZ '1969-12-31 23:59:59.999999+00', {'a': NULL, 'b': NULL}, [], MAP {}),
  (3, NULL, NULL, NULL, NULL, 'Infinity'::DOUBLE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO types (id, s, ts, day) VALUES (4, 'ünïcödé ✓', TIMESTAMPTZ '2038-01-19 03:14:08+00', DATE '2100-12-31'),
  (5, '', TIMESTAMPTZ '1900-01-01 00:00:00+00', DATE '1900-01-01');
UPDATE types SET s = upper(s), dec = dec * 2 WHERE id IN (1, 4);
DELETE FROM types WHERE id = 3;
MERGE INTO types t USING (SELECT * FROM (VALUES (2, 'merged'), (6, 'new'), (5, NULL)) v(id, s)) src
  ON t.id = src.id
  WHEN MATCHED AND src.s IS NULL THEN DELETE
  WHEN MATCHED THEN UPDATE SET s = src.s
  WHEN NOT MATCHED THEN INSERT (id, s) VALUES (src.id, src.s);
ALTER TABLE types ADD COLUMNS (extra VARCHAR, score DOUBLE);
INSERT INTO types (id, s, extra, score) VALUES (7, 'seven', 'added later', 7.5);
INSERT OVERWRITE types SELECT * FROM types WHERE id <> 6;
INSERT INTO types (id, extra) VALUES (8, 'eight');
OPTIMIZE types;
RESTORE TABLE types TO VERSION AS OF 8;
"""


def test_types_and_every_dml_commit(wh):
    peers.sluice_sql(wh, TYPES)
    ops = [op for _, op in sorted(d.sluice_history(wh, "types"))]
    assert ops == ["CREATE TABLE", "WRITE", "WRITE", "UPDATE", "DELETE", "MERGE", "ADD COLUMNS",
                   "WRITE", "WRITE", "WRITE", "OPTIMIZE", "RESTORE"], ops
    d.check_table(wh, "types")


EVENTS = """
CREATE TABLE events (id BIGINT, p VARCHAR, day DATE, v DOUBLE) PARTITIONED BY (p, day)
  TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true');
INSERT INTO events VALUES (1, 'a', '2024-01-01', 1.0), (2, 'b c', '2024-01-01', 2.0),
  (3, NULL, '2024-01-02', 3.0), (4, 'x=y/z%25#', '2024-01-02', 4.0), (5, 'ü', NULL, 5.0),
  (6, 'a', '2024-01-02', 6.0);
UPDATE events SET v = v * 10 WHERE id IN (1, 4);
DELETE FROM events WHERE p = 'b c';
DELETE FROM events WHERE id = 3;
MERGE INTO events t USING (SELECT * FROM (VALUES (1, 'a', DATE '2024-01-01', -1.0),
    (6, 'a', DATE '2024-01-02', 60.0), (7, 'new', DATE '2024-01-03', 7.0)) v(id, p, day, v)) s
  ON t.id = s.id
  WHEN MATCHED AND s.v < 0 THEN DELETE
  WHEN MATCHED THEN UPDATE SET v = s.v
  WHEN NOT MATCHED THEN INSERT *;
UPDATE events SET p = 'moved' WHERE id = 5;
INSERT INTO events VALUES (8, 'a', '2024-01-01', 8.0);
OPTIMIZE events;
INSERT OVERWRITE events SELECT * FROM events WHERE id > 4;
RESTORE TABLE events TO VERSION AS OF 7;
"""


def test_partitions_and_change_data_feed(wh):
    peers.sluice_sql(wh, EVENTS)
    latest = d.check_table(wh, "events", cdf_from=0)
    # every window of the feed, not only the whole range
    for start in range(1, latest + 1):
        d.check_changes(wh, "events", start, min(start + 1, latest))
    # the partition directories are Hive-escaped as Spark writes them
    dirs = sorted(os.listdir(os.path.join(wh, "events")))
    assert "p=x%3Dy%2Fz%2525%23" in dirs, dirs
    assert "p=__HIVE_DEFAULT_PARTITION__" in dirs, dirs


VACUUM = """
CREATE TABLE vac (id INT, s VARCHAR);
INSERT INTO vac VALUES (1, 'a'), (2, 'b');
INSERT INTO vac VALUES (3, 'c');
DELETE FROM vac WHERE id = 2;
SET sluice.delta.retentionDurationCheck = false;
VACUUM vac RETAIN 0 HOURS;
"""


def test_vacuum(wh):
    peers.sluice_sql(wh, VACUUM)
    path = os.path.join(wh, "vac")
    live = {os.path.basename(f) for f in d.spark_df(path).inputFiles()}
    on_disk = {f for f in os.listdir(path) if f.endswith(".parquet")}
    assert on_disk == live, f"VACUUM left {on_disk - live} / deleted {live - on_disk}"
    history = d.sluice_history(wh, "vac")
    assert [op for _, op in history[:2]] == ["VACUUM END", "VACUUM START"], history
    # versions from the DELETE on still have their files; older ones do not (in every reader)
    d.check_table(wh, "vac", versions=range(3, history[0][0] + 1))
    with pytest.raises(Exception):
        d.spark_rows(path, 1)
    proc = peers.sluice_sql(wh, "SELECT * FROM vac VERSION AS OF 1", check=False)
    assert proc.returncode != 0, proc.stdout


STREAMS = """
CREATE TABLE src (id BIGINT, name VARCHAR);
CREATE STREAMING TABLE st AS SELECT id, upper(name) AS name FROM STREAM src;
CREATE STREAMING TABLE totals OUTPUT MODE COMPLETE AS
  SELECT name, count(*) AS n, sum(id) AS total FROM STREAM src GROUP BY name;
CREATE STREAMING TABLE latest OUTPUT MODE UPDATE AS
  SELECT name, max(id) AS top FROM STREAM src GROUP BY name;
INSERT INTO src VALUES (1, 'a'), (2, 'b'), (3, 'a');
REFRESH STREAMING TABLE st;
REFRESH STREAMING TABLE totals;
REFRESH STREAMING TABLE latest;
INSERT INTO src VALUES (4, 'c'), (5, 'a');
REFRESH STREAMING TABLE st;
REFRESH STREAMING TABLE totals;
REFRESH STREAMING TABLE latest;
INSERT INTO src VALUES (6, 'b');
REFRESH STREAMING TABLE st;
REFRESH STREAMING TABLE totals;
REFRESH STREAMING TABLE latest;
"""


def query_id(wh, name):
    with open(os.path.join(wh, "_checkpoints", name, "metadata")) as f:
        return json.loads(f.readline())["id"]


@pytest.mark.parametrize("name", ["st", "totals", "latest"])
def test_streaming_appends_complete_and_update_with_txn(wh, name):
    if not os.path.exists(os.path.join(wh, "src")):
        peers.sluice_sql(wh, STREAMS)
    path = os.path.join(wh, name)
    latest = d.check_table(wh, name, cdf_from=0)
    txns = d.log_txns(path)
    qid = query_id(wh, name)
    assert txns == {qid: 2}, f"{name}: txn actions {txns}, expected batch 2 of query {qid}"
    assert_txn = {"log": txns, "spark": d.spark_txns(path), "deltalake": d.rs_txns(path, [qid])}
    d.assert_same(assert_txn, f"{name} txn versions")
    assert latest >= 2


CHECKPOINTS = """
CREATE TABLE ckpt (id INT, s VARCHAR) PARTITIONED BY (s)
  TBLPROPERTIES ('delta.checkpointInterval' = '3');
""" + "\n".join(f"INSERT INTO ckpt VALUES ({i}, 'p{i % 3}');" for i in range(8)) + """
DELETE FROM ckpt WHERE id = 4;
UPDATE ckpt SET id = id + 100 WHERE s = 'p1';
"""


def test_checkpoint_and_last_checkpoint(wh):
    peers.sluice_sql(wh, CHECKPOINTS)
    path = os.path.join(wh, "ckpt")
    latest = d.check_table(wh, "ckpt")
    assert latest == 10
    with open(os.path.join(path, "_delta_log", "_last_checkpoint")) as f:
        last = json.load(f)
    assert last["version"] == 9, last
    part = os.path.join(path, "_delta_log", f"{9:020d}.checkpoint.parquet")
    table = pq.read_table(part)
    assert last["size"] == table.num_rows, (last, table.num_rows)
    adds = sum(1 for a in table.column("add").to_pylist() if a is not None)
    if "numOfAddFiles" in last:
        assert last["numOfAddFiles"] == adds, (last, adds)
    assert d.spark_checkpoint_version(path) == 9
    # readers that start from the checkpoint alone: the commits before it are not needed
    log = os.path.join(path, "_delta_log")
    for v in range(0, 9):
        os.rename(os.path.join(log, f"{v:020d}.json"), os.path.join(log, f"{v:020d}.json.away"))
    try:
        d.check_table(wh, "ckpt", versions=[9, 10], history=False)
    finally:
        for v in range(0, 9):
            os.rename(os.path.join(log, f"{v:020d}.json.away"), os.path.join(log, f"{v:020d}.json"))


def test_create_table_as_select_and_empty_table(wh):
    peers.sluice_sql(wh, """
CREATE TABLE empty (id INT NOT NULL, v VARCHAR) PARTITIONED BY (v);
CREATE TABLE ctas PARTITIONED BY (k) AS SELECT range AS id, range % 3 AS k, 'r' || range AS s FROM range(10);
""")
    d.check_table(wh, "empty")
    d.check_table(wh, "ctas")
