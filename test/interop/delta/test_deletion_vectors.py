"""Sluice writes deletion vectors (issue 19): DELETE, UPDATE and MERGE by Sluice on tables with
delta.enableDeletionVectors mark rows in DVs, which Spark (Delta 4.4) reads; both directions.

- Spark creates and writes a DV table (DVs present); Sluice appends, DELETEs, UPDATEs and MERGEs
  into it with DVs (a file that already has Spark's DV gets the union); Spark reads the same rows
  at every version and the same change data feed; then Spark deletes and updates on top of
  Sluice's DVs and Sluice reads the same rows.
- Sluice creates a DV table and writes it; Spark reads its protocol, rows, history and feed, and
  writes on it.
"""

import os
import tempfile

import pyarrow as pa
import pytest

import delta_peers as d
import peers


@pytest.fixture(scope="module")
def wh():
    with tempfile.TemporaryDirectory(prefix="dv-writes-") as w:
        yield w


def spark_sql(script):
    s = peers.spark()
    for statement in [x.strip() for x in script.split(";") if x.strip()]:
        s.sql(statement)


def sluice_dv_adds(path, first_version):
    """The adds with a deletion vector in Sluice's commits from `first_version` on."""
    out = []
    for v, actions in d.log_commits(path).items():
        if v < first_version:
            continue
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        if not info.get("engineInfo", "").startswith("Sluice"):
            continue
        out += [a["add"] for a in actions if "add" in a and a["add"].get("deletionVector")]
    return out


def agree_everywhere(wh, name, versions, cdf_versions):
    """Sluice and Spark: rows at each version; at the latest also DuckDB and delta-rs (its
    DataFusion QueryBuilder: to_pyarrow_table refuses DV tables); the feed per version."""
    p = os.path.join(wh, name)
    sluice = d.sluice_rows_at(wh, name, list(versions) + [None])
    for v in versions:
        d.assert_same({"sluice": sluice[v], "spark": d.spark_rows(p, v)},
                      f"{name} rows at version {v}")
    rs = peers.deltalake().QueryBuilder().register("t", d.rs_table(p)).execute("SELECT * FROM t")
    d.assert_same({"sluice": sluice[None], "spark": d.spark_rows(p),
                   "deltalake": d.canonical_rows(pa.table(rs.read_all())),
                   "duckdb": d.duck_rows(p)}, f"{name} rows at the latest version")
    for v in cdf_versions:
        got = d.sluice_arrow(wh, {0: f"SELECT * FROM table_changes('{name}', {v}, {v})"})[0]
        d.assert_same({"sluice": d.canonical_rows(got),
                       "spark": d.canonical_rows(d.spark_changes(p, v, v))},
                      f"{name} changes at version {v}")
    return sluice[None]


def test_sluice_dml_with_dvs_on_a_spark_table(wh):
    name = "spark_dv"
    p = os.path.join(wh, name)
    spark_sql(f"""
CREATE TABLE delta.`{p}` (id BIGINT, s STRING, part STRING) USING delta PARTITIONED BY (part)
  TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true',
                 'delta.checkpointInterval' = '4');
INSERT INTO delta.`{p}` SELECT id, concat('s', id), IF(id % 2 = 0, 'even', 'odd')
  FROM range(0, 3000);
DELETE FROM delta.`{p}` WHERE id % 7 = 0""")
    first = d.latest_version(p) + 1
    peers.sluice_sql(wh, f"""
INSERT INTO {name} VALUES (5000, 'sluice insert', 'odd');
DELETE FROM {name} WHERE id % 11 = 0;
UPDATE {name} SET s = 'sluice updated' WHERE id % 13 = 1;
MERGE INTO {name} t USING (SELECT id, 'merged' AS s, IF(id % 2 = 0, 'even', 'odd') AS part
    FROM range(2990, 3010) r(id)) src ON t.id = src.id
  WHEN MATCHED AND src.id % 3 = 0 THEN DELETE
  WHEN MATCHED THEN UPDATE SET s = src.s
  WHEN NOT MATCHED THEN INSERT (id, s, part) VALUES (src.id, src.s, src.part);
DELETE FROM {name} WHERE id BETWEEN 100 AND 400""")
    adds = sluice_dv_adds(p, first)
    assert adds, "Sluice wrote no deletion vector: the test checks nothing"
    assert all(a["deletionVector"]["storageType"] == "u" for a in adds), adds
    # Spark's DV files got the union: some Sluice DV replaces a DV Spark wrote.
    removes = [a["remove"] for v, acts in d.log_commits(p).items() if v >= first
               for a in acts if "remove" in a and a["remove"].get("deletionVector")]
    assert removes, "no Sluice commit replaced an existing DV"
    latest = d.latest_version(p)
    rows = agree_everywhere(wh, name, range(0, latest + 1), range(first, latest + 1))
    ids = {r[0] for r in rows}
    assert 5000 in ids and 3005 in ids and 7 not in ids and 11 not in ids and 200 not in ids
    history = d.spark_history(p)
    d.assert_same({"sluice": d.sluice_history(wh, name), "spark": history}, f"{name} history")
    ops = [op for _, op in history]
    assert ops[:5] == ["DELETE", "MERGE", "UPDATE", "DELETE", "WRITE"], ops
    # Spark writes on top of Sluice's DVs (its DELETE unions with them); Sluice reads the same.
    spark_sql(f"""
DELETE FROM delta.`{p}` WHERE id % 5 = 0;
UPDATE delta.`{p}` SET s = 'spark again' WHERE id % 17 = 2""")
    after = d.latest_version(p)
    agree_everywhere(wh, name, [after - 1, after], [after - 1, after])
    # And Sluice again, over Spark's newest DVs.
    peers.sluice_sql(wh, f"DELETE FROM {name} WHERE id % 3 = 1")
    agree_everywhere(wh, name, [after + 1], [after + 1])


def test_sluice_creates_a_dv_table_spark_reads_and_writes(wh):
    name = "sluice_dv"
    p = os.path.join(wh, name)
    peers.sluice_sql(wh, f"""
CREATE TABLE {name} (id BIGINT, s VARCHAR)
  TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true');
INSERT INTO {name} SELECT range AS id, 's' || range AS s FROM range(0, 1000);
DELETE FROM {name} WHERE id % 4 = 0;
UPDATE {name} SET s = 'u' WHERE id % 10 = 1;
MERGE INTO {name} t USING (SELECT * FROM (VALUES (1, 'm'), (2, 'x'), (2000, 'n')) v(id, s)) src
  ON t.id = src.id
  WHEN MATCHED AND src.s = 'x' THEN DELETE
  WHEN MATCHED THEN UPDATE SET s = src.s
  WHEN NOT MATCHED THEN INSERT (id, s) VALUES (src.id, src.s)""")
    detail = peers.spark().sql(f"DESCRIBE DETAIL delta.`{p}`").collect()[0]
    assert "deletionVectors" in detail.tableFeatures, detail.tableFeatures
    assert sluice_dv_adds(p, 0), "Sluice wrote no deletion vector"
    latest = d.latest_version(p)
    agree_everywhere(wh, name, range(0, latest + 1), range(1, latest + 1))
    history = d.spark_history(p)
    d.assert_same({"sluice": d.sluice_history(wh, name), "spark": history}, f"{name} history")
    ops = [op for _, op in history]
    assert ops == ["MERGE", "UPDATE", "DELETE", "WRITE", "CREATE TABLE"], ops
    spark_sql(f"""
DELETE FROM delta.`{p}` WHERE id % 5 = 0;
MERGE INTO delta.`{p}` t USING (SELECT 3 AS id, 'spark' AS s) src ON t.id = src.id
  WHEN MATCHED THEN UPDATE SET s = src.s""")
    after = d.latest_version(p)
    agree_everywhere(wh, name, [after - 1, after], [after - 1, after])


def spark_dv_files(path):
    """How many live files of Spark's own log replay of the table carry a deletion vector."""
    return d.spark_snapshot(path).allFiles().filter("deletionVector IS NOT NULL").count()


def spark_last_commit(path):
    """The newest DESCRIBE HISTORY row of the table, as Spark reads it: (operation,
    operationParameters, operationMetrics, isolationLevel, isBlindAppend)."""
    row = peers.spark().sql(f"DESCRIBE HISTORY delta.`{path}` LIMIT 1").collect()[0]
    return (row.operation, dict(row.operationParameters), dict(row.operationMetrics),
            row.isolationLevel, row.isBlindAppend)


def test_sluice_reorg_purge_read_by_spark(wh):
    """Sluice's REORG TABLE ... APPLY (PURGE) on a table Spark wrote with DVs: Spark reads the
    same rows, no live file keeps a DV, and its DESCRIBE HISTORY shows Sluice's REORG commit as
    it shows the one Spark writes for the same REORG of a copy of the table."""
    import shutil
    name, twin = "reorg_sluice", "reorg_spark"
    p, q = os.path.join(wh, name), os.path.join(wh, twin)
    spark_sql(f"""
CREATE TABLE delta.`{p}` (id BIGINT, s STRING, part STRING) USING delta PARTITIONED BY (part)
  TBLPROPERTIES ('delta.enableDeletionVectors' = 'true', 'delta.enableChangeDataFeed' = 'true');
INSERT INTO delta.`{p}` SELECT id, concat('s', id), concat('p', id % 3) FROM range(0, 600);
INSERT INTO delta.`{p}` SELECT id, concat('s', id), concat('p', id % 3) FROM range(600, 900);
DELETE FROM delta.`{p}` WHERE id % 7 = 0 AND part <> 'p2';
DELETE FROM delta.`{p}` WHERE id BETWEEN 100 AND 150""")
    shutil.copytree(p, q)
    before = d.spark_rows(p)
    dv_before = spark_dv_files(p)
    assert dv_before > 0, "Spark wrote no deletion vector: the test checks nothing"
    # Only one partition first (a partition predicate), then the rest.
    peers.sluice_sql(wh, f"REORG TABLE {name} WHERE part = 'p0' APPLY (PURGE)")
    spark_sql(f"REORG TABLE delta.`{q}` WHERE part = 'p0' APPLY (PURGE)")
    partial = spark_dv_files(p)
    assert 0 < partial < dv_before and partial == spark_dv_files(q), (dv_before, partial)
    for path in (p, q):
        assert d.spark_rows(path) == before
    sluice_commit, spark_commit = spark_last_commit(p), spark_last_commit(q)
    peers.sluice_sql(wh, f"REORG TABLE {name} APPLY (PURGE)")
    spark_sql(f"REORG TABLE delta.`{q}` APPLY (PURGE)")
    assert spark_dv_files(p) == 0 and spark_dv_files(q) == 0
    d.assert_same({"sluice's table": d.spark_rows(p), "spark's table": d.spark_rows(q),
                   "before": before}, "rows after REORG, read by Spark")
    for sl, sp in ((sluice_commit, spark_commit), (spark_last_commit(p), spark_last_commit(q))):
        assert sl[0] == sp[0] == "REORG", (sl, sp)
        # The predicate's text is each engine's own rendering (Spark 4.2 wrote ["('part = p0)"]
        # for WHERE part = 'p0', Sluice the SQL text ["part = 'p0'"], as for DELETE); without a
        # WHERE both are "[]".
        assert sorted(sl[1]) == sorted(sp[1]) and sl[1]["applyPurge"] == sp[1]["applyPurge"], \
            f"operationParameters: Sluice {sl[1]}, Spark {sp[1]}"
        assert (sl[1]["predicate"] == "[]") == (sp[1]["predicate"] == "[]"), (sl[1], sp[1])
        assert sorted(sl[2]) == sorted(sp[2]), f"operationMetrics keys: Sluice {sorted(sl[2])}, " \
            f"Spark {sorted(sp[2])}"
        for key in ("numRemovedFiles", "numAddedFiles", "numDeletionVectorsRemoved"):
            assert sl[2][key] == sp[2][key], (key, sl[2], sp[2])
        assert sl[3:] == sp[3:], f"isolationLevel, isBlindAppend: Sluice {sl[3:]}, Spark {sp[3:]}"
    # The history as a whole, the change data feed (REORG adds nothing to it) and Sluice's reads.
    latest = d.latest_version(p)
    d.assert_same({"sluice": d.sluice_history(wh, name), "spark": d.spark_history(p)},
                  f"{name} history")
    agree_everywhere(wh, name, [latest - 2, latest - 1, latest], [latest - 1, latest])
    # A second REORG commits nothing, in Sluice as in Spark.
    peers.sluice_sql(wh, f"REORG TABLE {name} APPLY (PURGE)")
    spark_sql(f"REORG TABLE delta.`{q}` APPLY (PURGE)")
    assert d.latest_version(p) == latest and d.latest_version(q) == latest
    # Spark deletes on Sluice's rewritten files; Sluice reads the same.
    spark_sql(f"DELETE FROM delta.`{p}` WHERE id % 5 = 0")
    agree_everywhere(wh, name, [latest + 1], [latest + 1])
