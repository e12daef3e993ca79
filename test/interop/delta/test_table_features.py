"""Reader table features Sluice learned in issue 19 beyond DVs and column mapping: timestampNtz,
typeWidening and v2Checkpoint. Spark (Delta 4.4) writes each table; Sluice reads the same rows
at every version; where Sluice writes (timestampNtz, typeWidening), Spark reads Sluice's rows;
where it does not (v2Checkpoint), the write is refused naming the feature and changes nothing.
"""

import os
import tempfile

import pytest

import delta_peers as d
import peers


@pytest.fixture(scope="module")
def wh():
    with tempfile.TemporaryDirectory(prefix="table-features-") as w:
        yield w


def spark_sql(script):
    s = peers.spark()
    for statement in [x.strip() for x in script.split(";") if x.strip()]:
        s.sql(statement)


def features(path):
    return set(peers.spark().sql(f"DESCRIBE DETAIL delta.`{path}`").collect()[0].tableFeatures)


def agree(wh, name, versions):
    """Sluice's rows at each version (None: latest) equal Spark's; returns Sluice's latest."""
    p = os.path.join(wh, name)
    sluice = d.sluice_rows_at(wh, name, list(versions) + [None])
    for v in list(versions) + [None]:
        d.assert_same({"sluice": sluice[v], "spark": d.spark_rows(p, v)},
                      f"{name} rows at version {'latest' if v is None else v}")
    return sluice[None]


def test_timestamp_ntz_both_ways(wh):
    name = "ntz"
    p = os.path.join(wh, name)
    spark_sql(f"""
CREATE TABLE delta.`{p}` (id INT, ts TIMESTAMP_NTZ, pt TIMESTAMP_NTZ) USING delta
  PARTITIONED BY (pt);
INSERT INTO delta.`{p}` VALUES (1, TIMESTAMP_NTZ'2021-01-01 10:00:00.123456',
  TIMESTAMP_NTZ'2020-02-03 04:05:06'), (2, NULL, NULL),
  (3, TIMESTAMP_NTZ'1969-12-31 23:59:59', TIMESTAMP_NTZ'2020-02-03 04:05:06')""")
    assert "timestampNtz" in features(p)
    agree(wh, name, [1])
    # Filters on the ntz data and partition columns (data skipping on Spark's stats).
    got = peers.sluice_sql(wh, f"SELECT id FROM {name} WHERE ts > TIMESTAMP '2021-01-01 10:00:00' "
                               f"OR pt IS NULL ORDER BY id").rows
    assert [r["id"] for r in got] == [1, 2], got
    # Sluice writes into it (an append and a DELETE); Spark reads the same rows.
    peers.sluice_sql(wh, f"""
INSERT INTO {name} VALUES (4, TIMESTAMP '2024-05-06 07:08:09.5', TIMESTAMP '2024-05-06 00:00:00');
DELETE FROM {name} WHERE id = 3""")
    latest = d.latest_version(p)
    rows = agree(wh, name, range(0, latest + 1))
    assert [r[0] for r in rows] == [1, 2, 4], rows
    spark_sql(f"INSERT INTO delta.`{p}` VALUES (5, TIMESTAMP_NTZ'2000-01-01 00:00:00', NULL)")
    agree(wh, name, [])


def test_type_widening_both_ways(wh):
    name = "widened"
    p = os.path.join(wh, name)
    spark_sql(f"""
CREATE TABLE delta.`{p}` (id INT, s SMALLINT, f FLOAT, dec DECIMAL(5,2), b TINYINT) USING delta
  PARTITIONED BY (b) TBLPROPERTIES ('delta.enableTypeWidening' = 'true');
INSERT INTO delta.`{p}` VALUES (1, 2, 1.5, 1.25, 3), (2, -3, NULL, -999.99, NULL);
ALTER TABLE delta.`{p}` CHANGE COLUMN id TYPE BIGINT;
ALTER TABLE delta.`{p}` CHANGE COLUMN s TYPE INT;
ALTER TABLE delta.`{p}` CHANGE COLUMN f TYPE DOUBLE;
ALTER TABLE delta.`{p}` CHANGE COLUMN dec TYPE DECIMAL(10,4);
ALTER TABLE delta.`{p}` CHANGE COLUMN b TYPE SMALLINT;
INSERT INTO delta.`{p}` VALUES (5000000000, 100000, 2.5, 123456.1234, 1000)""")
    assert "typeWidening" in features(p)
    latest = d.latest_version(p)
    agree(wh, name, range(1, latest + 1))
    got = peers.sluice_sql(wh, f"SELECT count(*) AS n FROM {name} WHERE id > 3000000000").rows
    assert got == [{"n": 1}], got
    # Sluice writes values that only the widened types hold, and updates an old file's row.
    peers.sluice_sql(wh, f"""
INSERT INTO {name} VALUES (6000000000, 200000, 0.1, 99999.9999, 2000);
UPDATE {name} SET s = 300000 WHERE id = 1""")
    after = d.latest_version(p)
    rows = agree(wh, name, [after - 1, after])
    assert (1, 300000) in [(r[0], r[1]) for r in rows], rows
    spark_sql(f"INSERT INTO delta.`{p}` VALUES (7, 7, 7.0, 7.0, 7)")
    agree(wh, name, [])


@pytest.mark.parametrize("top_level", ["json", "parquet"])
def test_v2_checkpoint_read_and_write_refused(wh, top_level):
    name = f"v2_{top_level}"
    p = os.path.join(wh, name)
    key = "spark.databricks.delta.checkpointV2.topLevelFileFormat"
    peers.spark().conf.set(key, top_level)
    try:
        spark_sql(f"""
CREATE TABLE delta.`{p}` (id BIGINT, part STRING) USING delta PARTITIONED BY (part)
  TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '3',
                 'delta.enableDeletionVectors' = 'true');
INSERT INTO delta.`{p}` SELECT id, concat('p', id % 3) FROM range(0, 100);
INSERT INTO delta.`{p}` SELECT id, concat('p', id % 3) FROM range(100, 200);
DELETE FROM delta.`{p}` WHERE id % 7 = 0;
INSERT INTO delta.`{p}` SELECT id, concat('p', id % 3) FROM range(200, 250);
DELETE FROM delta.`{p}` WHERE id BETWEEN 10 AND 20;
INSERT INTO delta.`{p}` SELECT id, concat('p', id % 3) FROM range(250, 260)""")
    finally:
        peers.spark().conf.unset(key)
    assert "v2Checkpoint" in features(p)
    log = os.listdir(os.path.join(p, "_delta_log"))
    uuid_cps = [f for f in log if ".checkpoint." in f and f.endswith("." + top_level)
                and not f.endswith(".checkpoint.parquet")]
    assert uuid_cps, f"Spark wrote no UUID-named {top_level} checkpoint: {sorted(log)}"
    assert os.listdir(os.path.join(p, "_delta_log", "_sidecars")), "no sidecar files"
    latest = d.latest_version(p)
    agree(wh, name, range(0, latest + 1))
    # Writes stay refused (Sluice writes no V2 checkpoints), naming the feature; nothing changes.
    write = peers.sluice_sql(wh, f"INSERT INTO {name} VALUES (999, 'p0')", check=False)
    assert write.returncode != 0 and "v2Checkpoint" in write.stderr, write.stderr
    assert d.latest_version(p) == latest
