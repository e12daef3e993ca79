"""Spark with Delta and delta-rs write, Sluice reads and writes (issue 16, section 3).

Tables written by Spark (Delta 4.4's defaults) and by delta-rs, with the same list of operations
as test_sluice_writes.py: Sluice must read the same rows at every version, the same schema,
history and change data feed (delta_peers.check_table compares Sluice, Spark, delta-rs and
DuckDB), stream them (FROM STREAM, STREAM table_changes), and append and MERGE into them so that
the other writer can still read and write them afterwards.
"""

import datetime
import decimal
import os
import tempfile

import pyarrow as pa
import pytest

import delta_peers as d
import peers


@pytest.fixture(scope="module")
def wh():
    with tempfile.TemporaryDirectory(prefix="peers-write-") as w:
        yield w


def spark_sql(script):
    s = peers.spark()
    for statement in [x.strip() for x in script.split(";") if x.strip()]:
        s.sql(statement)


def sluice_writes_then_peer_reads(wh, name):
    """Sluice appends and MERGEs into a table another engine wrote; every reader agrees."""
    peers.sluice_sql(wh, f"""
INSERT INTO {name} (id, s) VALUES (1000, 'sluice insert'), (1001, NULL);
MERGE INTO {name} t USING (SELECT * FROM (VALUES (1000, 'sluice merged'), (1002, 'sluice new'))
    v(id, s)) src ON t.id = src.id
  WHEN MATCHED THEN UPDATE SET s = src.s
  WHEN NOT MATCHED THEN INSERT (id, s) VALUES (src.id, src.s);
""")
    rows = peers.sluice_sql(wh, f"SELECT id, s FROM {name} WHERE id >= 1000 ORDER BY id").rows
    assert rows == [{"id": 1000, "s": "sluice merged"}, {"id": 1001, "s": None},
                    {"id": 1002, "s": "sluice new"}], rows


# ---------------------------------------------------------------------------------------------
# Spark writes

SPARK_PLAIN = """
CREATE TABLE delta.`{p}` (id INT NOT NULL, big BIGINT, s STRING, dec DECIMAL(10,2), f DOUBLE,
  b BOOLEAN, bin BINARY, day DATE, ts TIMESTAMP, st STRUCT<a: INT, b: STRING>, arr ARRAY<INT>,
  m MAP<STRING, INT>) USING delta TBLPROPERTIES ('delta.checkpointInterval' = '4');
INSERT INTO delta.`{p}` VALUES
  (1, 9223372036854775807, 'one', 12345678.91, 1.5, true, X'00FF', DATE'2024-02-29',
   TIMESTAMP'2024-01-01 10:00:00.123456', named_struct('a', 1, 'b', 'x'), array(1, 2, NULL),
   map('k', 1, 'l', NULL)),
  (2, -1, 'two', -0.01, double('NaN'), false, X'', DATE'1970-01-01',
   TIMESTAMP'1969-12-31 23:59:59.999999', named_struct('a', NULL, 'b', NULL), array(), map()),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO delta.`{p}` (id, s, ts) VALUES (4, 'ünïcödé', TIMESTAMP'2038-01-19 03:14:08'),
  (5, '', TIMESTAMP'1900-01-01 00:00:00');
UPDATE delta.`{p}` SET s = upper(s), dec = dec * 2 WHERE id IN (1, 4);
DELETE FROM delta.`{p}` WHERE id = 3;
MERGE INTO delta.`{p}` t USING (SELECT * FROM VALUES (2, 'merged'), (6, 'new'), (5, NULL) AS v(id, s)) src
  ON t.id = src.id
  WHEN MATCHED AND src.s IS NULL THEN DELETE
  WHEN MATCHED THEN UPDATE SET s = src.s
  WHEN NOT MATCHED THEN INSERT (id, s) VALUES (src.id, src.s);
ALTER TABLE delta.`{p}` ADD COLUMNS (extra STRING);
INSERT INTO delta.`{p}` (id, s, extra) VALUES (7, 'seven', 'added later');
INSERT OVERWRITE delta.`{p}` SELECT * FROM delta.`{p}` WHERE id <> 6;
INSERT INTO delta.`{p}` (id, extra) VALUES (8, 'eight');
OPTIMIZE delta.`{p}`;
RESTORE TABLE delta.`{p}` TO VERSION AS OF 8
"""


def test_spark_table_every_operation(wh):
    p = os.path.join(wh, "spark_plain")
    spark_sql(SPARK_PLAIN.format(p=p))
    detail = peers.spark().sql(f"DESCRIBE DETAIL delta.`{p}`").collect()[0]
    print("Spark's table:", detail.minReaderVersion, detail.minWriterVersion, detail.tableFeatures)
    assert os.path.exists(os.path.join(p, "_delta_log", "_last_checkpoint"))
    d.check_table(wh, "spark_plain")
    sluice_writes_then_peer_reads(wh, "spark_plain")
    d.check_table(wh, "spark_plain", versions=[])
    # Spark writes on after Sluice
    spark_sql(f"""
INSERT INTO delta.`{p}` (id, s) VALUES (2000, 'spark after sluice');
UPDATE delta.`{p}` SET s = 'spark updated' WHERE id = 1002;
DELETE FROM delta.`{p}` WHERE id = 1001""")
    latest = d.latest_version(p)
    d.check_table(wh, "spark_plain", versions=range(latest - 5, latest + 1))


SPARK_CDF = """
CREATE TABLE delta.`{p}` (id BIGINT, s STRING, p STRING, day DATE) USING delta
  PARTITIONED BY (p, day) TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true');
INSERT INTO delta.`{p}` VALUES (1, 'a', 'x', DATE'2024-01-01'), (2, 'b', 'b c', DATE'2024-01-01'),
  (3, 'c', NULL, DATE'2024-01-02'), (4, 'd', 'x=y/z%#', NULL), (5, 'e', 'x', DATE'2024-01-02');
UPDATE delta.`{p}` SET s = 'A' WHERE id = 1;
DELETE FROM delta.`{p}` WHERE p = 'b c';
DELETE FROM delta.`{p}` WHERE id = 3;
MERGE INTO delta.`{p}` t USING (SELECT * FROM VALUES (5, 'E', 'x', DATE'2024-01-02'), (6, 'f', 'new', DATE'2024-01-03') AS v(id, s, p, day)) src
  ON t.id = src.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
INSERT INTO delta.`{p}` VALUES (7, 'g', 'x', DATE'2024-01-01')
"""


def test_spark_partitions_cdf_and_streams(wh):
    p = os.path.join(wh, "spark_cdf")
    spark_sql(SPARK_CDF.format(p=p))
    latest = d.check_table(wh, "spark_cdf", cdf_from=0)
    for start in range(1, latest + 1):
        d.check_changes(wh, "spark_cdf", start, start)
    # Sluice streams the Spark table and its change feed
    peers.sluice_sql(wh, """
CREATE STREAMING TABLE spark_rows AS SELECT id, s, p FROM STREAM spark_cdf;
CREATE STREAMING TABLE spark_feed AS
  SELECT id, s, p, _change_type, _commit_version FROM STREAM table_changes('spark_cdf', 0);
REFRESH STREAMING TABLE spark_rows;
REFRESH STREAMING TABLE spark_feed;
""")
    spark_sql(f"INSERT INTO delta.`{p}` VALUES (8, 'h', 'y', DATE'2024-01-04')")
    peers.sluice_sql(wh, "REFRESH STREAMING TABLE spark_rows; REFRESH STREAMING TABLE spark_feed;")
    expected = d.canonical_rows(d.spark_df(p).select("id", "s", "p").toArrow())
    got = d.canonical_rows(d.sluice_arrow(wh, {0: "SELECT id, s, p FROM spark_rows"})[0])
    d.assert_same({"spark": expected, "sluice stream": got}, "FROM STREAM of a Spark table")
    feed = d.spark_changes(p, 0).select(["id", "s", "p", "_change_type", "_commit_version"])
    got = d.sluice_arrow(wh, {0: "SELECT id, s, p, _change_type, _commit_version FROM spark_feed"})[0]
    d.assert_same({"spark": d.canonical_rows(feed), "sluice stream": d.canonical_rows(got)},
                  "STREAM table_changes of a Spark table")
    sluice_writes_then_peer_reads(wh, "spark_cdf")
    spark_sql(f"""
INSERT INTO delta.`{p}` VALUES (3000, 'spark again', 'x', DATE'2024-01-01');
UPDATE delta.`{p}` SET s = 'spark updated' WHERE id = 1000""")
    latest = d.check_table(wh, "spark_cdf", versions=[], cdf_from=0)


def test_spark_vacuum(wh):
    p = os.path.join(wh, "spark_vac")
    peers.spark().conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    spark_sql(f"""
CREATE TABLE delta.`{p}` (id INT, s STRING) USING delta;
INSERT INTO delta.`{p}` VALUES (1, 'a'), (2, 'b');
INSERT INTO delta.`{p}` VALUES (3, 'c');
DELETE FROM delta.`{p}` WHERE id = 2;
VACUUM delta.`{p}` RETAIN 0 HOURS""")
    latest = d.latest_version(p)
    d.check_table(wh, "spark_vac", versions=range(3, latest + 1))
    sluice_writes_then_peer_reads(wh, "spark_vac")
    spark_sql(f"INSERT INTO delta.`{p}` VALUES (4, 'd')")
    d.check_table(wh, "spark_vac", versions=[])


SPARK_DV = """
CREATE TABLE delta.`{p}` (id BIGINT, s STRING, part STRING) USING delta PARTITIONED BY (part)
  TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true',
                 'delta.checkpointInterval' = '4');
INSERT INTO delta.`{p}` SELECT id, concat('s', id), IF(id % 2 = 0, 'even', 'odd') FROM range(0, 300);
DELETE FROM delta.`{p}` WHERE id % 7 = 0;
UPDATE delta.`{p}` SET s = 'updated' WHERE id % 10 = 3;
MERGE INTO delta.`{p}` t USING (SELECT id, 'merged' AS s, IF(id % 2 = 0, 'even', 'odd') AS part
    FROM range(290, 310)) src ON t.id = src.id
  WHEN MATCHED AND src.id % 3 = 0 THEN DELETE
  WHEN MATCHED THEN UPDATE SET *
  WHEN NOT MATCHED THEN INSERT *;
DELETE FROM delta.`{p}` WHERE id BETWEEN 50 AND 80;
INSERT INTO delta.`{p}` VALUES (1000, 'appended', 'even')
"""


def test_spark_deletion_vectors(wh):
    """Spark's DELETE, UPDATE and MERGE with deletion vectors (and a checkpoint after them):
    Sluice reads the same rows at every version as Spark, delta-rs and DuckDB, the same change
    data feed as Spark, streams the table, stops at a commit that adds a DV as Spark does (or
    skips it with skipChangeCommits), and writes into it (DVs) so that Spark reads the same."""
    p = os.path.join(wh, "spark_dv")
    spark_sql(SPARK_DV.format(p=p))
    detail = peers.spark().sql(f"DESCRIBE DETAIL delta.`{p}`").collect()[0]
    assert "deletionVectors" in detail.tableFeatures, detail.tableFeatures
    dv_adds = [a for actions in d.log_commits(p).values() for a in actions
               if "add" in a and a["add"].get("deletionVector")]
    assert dv_adds, "Spark wrote no deletion vector: the test checks nothing"
    assert os.path.exists(os.path.join(p, "_delta_log", "_last_checkpoint"))
    # Rows at every version: Sluice and Spark; at the latest also delta-rs (its DataFusion
    # QueryBuilder: delta-rs 1.6.6's to_pyarrow_table refuses DV tables) and DuckDB.
    latest = d.latest_version(p)
    versions = list(range(0, latest + 1))
    sluice = d.sluice_rows_at(wh, "spark_dv", versions + [None])
    for v in versions:
        d.assert_same({"sluice": sluice[v], "spark": d.spark_rows(p, v)},
                      f"spark_dv rows at version {v}")
    rs = peers.deltalake().QueryBuilder().register("t", d.rs_table(p)).execute("SELECT * FROM t")
    d.assert_same({"sluice": sluice[None], "spark": d.spark_rows(p),
                   "deltalake": d.canonical_rows(pa.table(rs.read_all())),
                   "duckdb": d.duck_rows(p)}, "spark_dv rows at the latest version")
    assert len(sluice[None]) < len(sluice[1]), "no row deleted: the check is empty"
    # The change feed, one commit at a time, with Spark as the oracle (its DELETEs with DVs write
    # no cdc file: the rows come from the DVs).
    for v in range(1, latest + 1):
        got = d.sluice_arrow(wh, {0: f"SELECT * FROM table_changes('spark_dv', {v}, {v})"})[0]
        d.assert_same({"sluice": d.canonical_rows(got),
                       "spark": d.canonical_rows(d.spark_changes(p, v, v))},
                      f"spark_dv changes at version {v}")
    # A stream starts from the latest snapshot (DVs applied) ...
    peers.sluice_sql(wh, """
CREATE STREAMING TABLE dv_rows AS SELECT id, s, part FROM STREAM spark_dv;
CREATE STREAMING TABLE dv_skip AS SELECT id, s, part FROM STREAM spark_dv
  WITH (skipChangeCommits = true);
REFRESH STREAMING TABLE dv_rows;
REFRESH STREAMING TABLE dv_skip;""")
    start_rows = d.canonical_rows(d.spark_df(p).select("id", "s", "part").toArrow())
    got = d.canonical_rows(d.sluice_arrow(wh, {0: "SELECT id, s, part FROM dv_rows"})[0])
    d.assert_same({"spark": start_rows, "sluice stream": got}, "FROM STREAM of a DV table")
    # ... and a commit adding a DV to a file is a data update: Spark's error, or skipped.
    spark_sql(f"""
INSERT INTO delta.`{p}` VALUES (2000, 'after', 'odd');
DELETE FROM delta.`{p}` WHERE id = 1""")
    stopped = peers.sluice_sql(wh, "REFRESH STREAMING TABLE dv_rows", check=False)
    assert stopped.returncode != 0, stopped.stdout
    assert "Detected a data update" in stopped.stderr, stopped.stderr
    assert "skipChangeCommits" in stopped.stderr, stopped.stderr
    peers.sluice_sql(wh, "REFRESH STREAMING TABLE dv_skip")
    got = d.canonical_rows(d.sluice_arrow(wh, {0: "SELECT id, s, part FROM dv_skip"})[0])
    want = sorted(start_rows + [(2000, "after", "odd")], key=repr)
    d.assert_same({"expected": want, "sluice stream": got}, "skipChangeCommits over a DV commit")
    # Sluice writes into it, with deletion vectors (test_deletion_vectors.py checks them in
    # depth); Spark reads the same rows.
    peers.sluice_sql(wh, """
DELETE FROM spark_dv WHERE id = 2;
INSERT INTO spark_dv VALUES (3000, 'x', 'odd')""")
    d.assert_same({"sluice": d.sluice_rows_at(wh, "spark_dv", [None])[None],
                   "spark": d.spark_rows(p)}, "spark_dv after Sluice's DELETE and INSERT")


# ---------------------------------------------------------------------------------------------
# delta-rs writes

UTC = datetime.timezone.utc


def rs_batch(ids, s=None):
    n = len(ids)
    return pa.table({
        "id": pa.array(ids, pa.int32()),
        "big": pa.array([i * 10_000_000_000 for i in ids], pa.int64()),
        "s": pa.array(s if s is not None else [f"r{i}" for i in ids], pa.string()),
        "dec": pa.array([decimal.Decimal(i) / 100 for i in ids], pa.decimal128(10, 2)),
        "f": pa.array([i / 4 for i in ids], pa.float64()),
        "b": pa.array([i % 2 == 0 for i in ids], pa.bool_()),
        "day": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=i) for i in ids],
                        pa.date32()),
        "ts": pa.array([datetime.datetime(2024, 1, 1, tzinfo=UTC) + datetime.timedelta(seconds=i)
                        for i in ids], pa.timestamp("us", tz="UTC")),
        "st": pa.array([{"a": i, "b": str(i)} for i in ids],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "arr": pa.array([[i, None] for i in ids], pa.list_(pa.int64())),
        "p": pa.array([["x", "y z", None][i % 3] for i in ids], pa.string()),
    }) if n else None


def test_delta_rs_table_every_operation(wh):
    dl = peers.deltalake()
    p = os.path.join(wh, "rs_plain")
    dl.write_deltalake(p, rs_batch([1, 2, 3]), partition_by=["p"],
                       configuration={"delta.enableChangeDataFeed": "true",
                                      "delta.checkpointInterval": "5"})
    dl.write_deltalake(p, rs_batch([4, 5]), mode="append")
    t = dl.DeltaTable(p)
    t.update(predicate="id = 1", updates={"s": "'updated'"})
    t.delete("id = 2")
    t.delete("p = 'y z'")
    src = rs_batch([3, 6])
    t.merge(src, "t.id = s.id", source_alias="s", target_alias="t") \
        .when_matched_update(updates={"s": "'merged'"}).when_not_matched_insert_all().execute()
    extra = rs_batch([7]).append_column("extra", pa.array(["added later"], pa.string()))
    dl.write_deltalake(p, extra, mode="append", schema_mode="merge")
    t = dl.DeltaTable(p)
    t.optimize.compact()
    t.create_checkpoint()
    dl.write_deltalake(p, rs_batch([8]), mode="append", schema_mode="merge")
    latest = d.check_table(wh, "rs_plain", cdf_from=0)
    for start in range(1, latest + 1):
        d.check_changes(wh, "rs_plain", start, start, require_rows=False)
    dl.DeltaTable(p).restore(3)
    dl.write_deltalake(p, rs_batch([9, 10, 11]), mode="overwrite", schema_mode="merge")
    d.check_table(wh, "rs_plain", cdf_from=latest + 1)
    # Sluice streams the table (appends only: skipChangeCommits), writes into it; delta-rs reads
    # and writes on
    start = d.latest_version(p)
    peers.sluice_sql(wh, "CREATE STREAMING TABLE rs_rows AS SELECT id, s FROM STREAM rs_plain "
                         "WITH (skipChangeCommits = true); REFRESH STREAMING TABLE rs_rows;")
    sluice_writes_then_peer_reads(wh, "rs_plain")
    dl.write_deltalake(p, rs_batch([3000]), mode="append", schema_mode="merge")
    dl.DeltaTable(p).delete("id = 1001")
    d.check_table(wh, "rs_plain", versions=[])
    peers.sluice_sql(wh, "REFRESH STREAMING TABLE rs_rows;")
    got = d.canonical_rows(d.sluice_arrow(wh, {0: "SELECT id, s FROM rs_rows"})[0])
    initial = dl.DeltaTable(p, version=start).to_pyarrow_table().select(["id", "s"])
    want = sorted(d.canonical_rows(initial) + [(1000, "sluice insert"), (1001, None),
                                               (3000, "r3000")], key=repr)
    d.assert_same({"expected": want, "sluice stream": got}, "FROM STREAM of a delta-rs table")


def test_delta_rs_vacuum_and_checkpoint(wh):
    dl = peers.deltalake()
    p = os.path.join(wh, "rs_vac")
    dl.write_deltalake(p, rs_batch([1, 2]))
    dl.write_deltalake(p, rs_batch([3]), mode="append")
    dl.DeltaTable(p).delete("id = 2")
    dl.DeltaTable(p).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    dl.DeltaTable(p).create_checkpoint()
    latest = d.latest_version(p)
    d.check_table(wh, "rs_vac", versions=range(2, latest + 1))
    sluice_writes_then_peer_reads(wh, "rs_vac")
    dl.write_deltalake(p, rs_batch([4]), mode="append")
    d.check_table(wh, "rs_vac", versions=[])


# ---------------------------------------------------------------------------------------------
# What Sluice refuses (refusals.EXPECTED_REFUSALS, the one list)

from refusals import EXPECTED_REFUSALS  # noqa: E402


@pytest.mark.parametrize("feature", sorted(EXPECTED_REFUSALS))
def test_expected_refusal(wh, feature):
    make, why = EXPECTED_REFUSALS[feature]
    name = "refused_" + feature.lower()
    p = os.path.join(wh, name)
    spark_sql(make.format(p=p))
    detail = peers.spark().sql(f"DESCRIBE DETAIL delta.`{p}`").collect()[0]
    assert feature in detail.tableFeatures, (
        f"Spark's table does not use {feature}: {detail.tableFeatures}; fix refusals.py")
    spark_count = d.spark_df(p).count()
    read = peers.sluice_sql(wh, f"SELECT count(*) AS n FROM {name}", check=False)
    assert read.returncode != 0, (
        f"Sluice now reads tables with {feature} ({read.rows}, Spark: {spark_count} rows): move "
        f"{feature} out of refusals.EXPECTED_REFUSALS and into the compared tables, and update "
        "docs/interop.md")
    assert feature in read.stderr, f"the refusal does not name {feature}: {read.stderr}"
    write = peers.sluice_sql(wh, f"INSERT INTO {name} (id) VALUES (99)", check=False)
    assert write.returncode != 0 and feature in write.stderr, (
        f"writing a {feature} table: exit {write.returncode}, {write.stderr}")
    assert d.spark_df(p).count() == spark_count, "the refused write changed the table"
