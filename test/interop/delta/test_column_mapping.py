"""Column mapping (issue 19): Spark writes tables with delta.columnMapping.mode name and id,
renames and drops columns (top-level, nested, a partition column), re-adds a dropped or renamed
name; Sluice must read the same rows as Spark at every version, the same rows for filtered
queries (data skipping reads stats under physical names), and stream them with Delta's rule:
a RENAME or DROP COLUMN stops the stream with the error Spark gives, naming
schemaTrackingLocation; with a schemaTrackingLocation, Sluice and Spark stream the same table
run by run across a rename, a drop and an added column with the same errors and rows. Sluice writes modes name and id (CREATE, INSERT, UPDATE, DELETE, MERGE,
ADD COLUMNS, RENAME / DROP COLUMN, the upgrade by SET TBLPROPERTIES, into Spark's renamed
tables; in mode id with Parquet field ids) and Spark (and delta-rs, for mode id) reads the same
rows; none -> id is refused, as Spark refuses it.
"""

import glob
import json
import os
import re
import tempfile

import pyarrow as pa

import pytest

import delta_peers as d
import peers


@pytest.fixture(scope="module")
def wh():
    with tempfile.TemporaryDirectory(prefix="column-mapping-") as w:
        yield w


def spark_sql(script):
    s = peers.spark()
    for statement in [x.strip() for x in script.split(";") if x.strip()]:
        s.sql(statement)


HISTORY = """
CREATE TABLE delta.`{p}` (id BIGINT, part STRING, s STRUCT<x: INT, y: STRING>,
  arr ARRAY<STRUCT<a: INT, b: STRING>>, m MAP<STRING, STRUCT<c: INT>>, drop_me STRING, v INT)
  USING delta PARTITIONED BY (part)
  TBLPROPERTIES ('delta.columnMapping.mode' = '{mode}', 'delta.checkpointInterval' = '4');
INSERT INTO delta.`{p}` VALUES
  (1, 'p1', named_struct('x', 10, 'y', 'y1'), array(named_struct('a', 1, 'b', 'b1')),
   map('k1', named_struct('c', 100)), 'd1', 1),
  (2, 'p1', named_struct('x', 20, 'y', 'y2'), array(), map(), 'd2', 2),
  (3, 'p2', NULL, NULL, NULL, NULL, 3);
ALTER TABLE delta.`{p}` RENAME COLUMN v TO w;
ALTER TABLE delta.`{p}` RENAME COLUMN s.x TO xx;
ALTER TABLE delta.`{p}` RENAME COLUMN part TO region;
ALTER TABLE delta.`{p}` DROP COLUMN drop_me;
ALTER TABLE delta.`{p}` ADD COLUMNS (v INT, drop_me STRING);
INSERT INTO delta.`{p}` VALUES
  (4, 'p2', named_struct('xx', 40, 'y', 'y4'),
   array(named_struct('a', 4, 'b', 'b4'), named_struct('a', 5, 'b', NULL)),
   map('k4', named_struct('c', 400)), 4, 1000, 'new d4'),
  (5, 'p3', named_struct('xx', 50, 'y', 'y5'), NULL, NULL, 5, 2000, NULL),
  (6, 'p1', NULL, array(NULL), map('k6', NULL), NULL, NULL, 'new d6');
DELETE FROM delta.`{p}` WHERE id = 2;
UPDATE delta.`{p}` SET v = 3000, s = named_struct('xx', 55, 'y', 'u') WHERE id = 5;
ALTER TABLE delta.`{p}` RENAME COLUMN region TO area;
INSERT INTO delta.`{p}` VALUES (7, 'p4', named_struct('xx', 70, 'y', 'y7'), NULL, NULL, 7, 7000, 'd7')
"""

# Sluice's appends, updates, deletes and merges on a table with HISTORY's columns.
SLUICE_DML_ON_HISTORY = """
INSERT INTO {name} (id, area, s, drop_me, v) VALUES (10, 'p1', {{'xx': 100, 'y': 'sluice'}}, '10', 10);
UPDATE {name} SET w = w + 100 WHERE area = 'p2';
DELETE FROM {name} WHERE id = 4;
MERGE INTO {name} t USING (SELECT * FROM (VALUES (1, 'm'), (11, 'n')) v(id, tag)) src
  ON t.id = src.id
  WHEN MATCHED THEN UPDATE SET drop_me = src.tag
  WHEN NOT MATCHED THEN INSERT (id, area, drop_me) VALUES (src.id, 'p9', src.tag);"""

QUERIES = ["v = 1", "v = 1000", "v IS NULL", "w = 1", "w >= 4", "w < 3", "area = 'p2'",
           "area = 'p1'", "id > 3", "s.xx = 40", "drop_me = 'new d4'", "drop_me IS NULL",
           "id = 2"]


@pytest.mark.parametrize("mode", ["name", "id"])
def test_spark_renames_and_drops_sluice_reads(wh, mode):
    name = f"cm_{mode}"
    p = os.path.join(wh, name)
    spark_sql(HISTORY.format(p=p, mode=mode))
    detail = peers.spark().sql(f"DESCRIBE DETAIL delta.`{p}`").collect()[0]
    assert "columnMapping" in detail.tableFeatures, detail.tableFeatures
    assert detail.properties["delta.columnMapping.mode"] == mode
    latest = d.latest_version(p)
    assert os.path.exists(os.path.join(p, "_delta_log", "_last_checkpoint"))
    # Every version, Sluice and Spark (versions before a rename have the old names).
    versions = list(range(0, latest + 1))
    sluice = d.sluice_rows_at(wh, name, versions + [None])
    for v in versions:
        d.assert_same({"spark": d.spark_rows(p, v), "sluice": sluice[v]},
                      f"{name} rows at version {v}")
    assert sluice[None] == d.spark_rows(p) and len(sluice[None]) == 6
    d.assert_same({"spark": [(n, t) for n, t, _ in d.spark_schema(p)],
                   "sluice": d.sluice_schema(wh, name)}, f"{name} schema")
    # Filtered queries: pruned by stats and partition values under physical names.
    got = d.sluice_arrow(wh, {q: f"SELECT * FROM {name} WHERE {q}" for q in QUERIES})
    for q in QUERIES:
        want = d.canonical_rows(d.spark_df(p).where(q).toArrow())
        d.assert_same({"spark": want, "sluice": d.canonical_rows(got[q])}, f"{name} WHERE {q}")


def test_upgraded_table(wh):
    """A table made without column mapping, then upgraded (SET TBLPROPERTIES): its old files
    keep the display names as physical names; a renamed column and a re-added name."""
    name = "cm_upgraded"
    p = os.path.join(wh, name)
    spark_sql(f"""
CREATE TABLE delta.`{p}` (a BIGINT, b STRING, part INT) USING delta PARTITIONED BY (part);
INSERT INTO delta.`{p}` VALUES (1, 'x', 1), (2, 'y', 2);
ALTER TABLE delta.`{p}` SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name');
ALTER TABLE delta.`{p}` RENAME COLUMN a TO c;
ALTER TABLE delta.`{p}` RENAME COLUMN part TO q;
ALTER TABLE delta.`{p}` ADD COLUMNS (a STRING);
INSERT INTO delta.`{p}` VALUES (3, 'z', 3, 'new')""")
    versions = list(range(0, d.latest_version(p) + 1))
    sluice = d.sluice_rows_at(wh, name, versions)
    for v in versions:
        d.assert_same({"spark": d.spark_rows(p, v), "sluice": sluice[v]},
                      f"{name} rows at version {v}")
    queries = ["a IS NULL", "a = 'new'", "c = 1", "c >= 3", "q = 2"]
    got = d.sluice_arrow(wh, {q: f"SELECT * FROM {name} WHERE {q}" for q in queries})
    for q in queries:
        want = d.canonical_rows(d.spark_df(p).where(q).toArrow())
        d.assert_same({"spark": want, "sluice": d.canonical_rows(got[q])}, f"{name} WHERE {q}")


def _spark_stream_error(p, checkpoint):
    """Spark's answer to a stream over `p` from version 0 (availableNow): its error text."""
    s = peers.spark()
    q = (s.readStream.format("delta").option("startingVersion", 0).load(p)
         .writeStream.format("noop").option("checkpointLocation", checkpoint)
         .trigger(availableNow=True).start())
    try:
        q.awaitTermination(600)
        return ""
    except Exception as e:  # noqa: BLE001 (Spark's StreamingQueryException)
        return str(e)


def test_stream_across_rename_and_drop(wh):
    """Sluice streams a column-mapped table; a RENAME COLUMN, then a DROP COLUMN, stops the
    stream with Delta's DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG (Spark gives
    the same error for the same table); a schemaTrackingLocation outside the checkpoint is
    refused (Delta's DELTA_STREAMING_SCHEMA_LOCATION_NOT_UNDER_CHECKPOINT)."""
    name = "cm_stream"
    p = os.path.join(wh, name)
    spark_sql(f"""
CREATE TABLE delta.`{p}` (id BIGINT, s STRING, t STRING) USING delta
  TBLPROPERTIES ('delta.columnMapping.mode' = 'name');
INSERT INTO delta.`{p}` VALUES (1, 'a', 'x'), (2, 'b', 'y')""")
    peers.sluice_sql(wh, f"""
CREATE STREAMING TABLE {name}_rows AS SELECT * FROM STREAM {name};
REFRESH STREAMING TABLE {name}_rows;""")
    got = d.canonical_rows(d.sluice_arrow(wh, {0: f"SELECT * FROM {name}_rows"})[0])
    d.assert_same({"spark": d.spark_rows(p), "sluice stream": got}, "FROM STREAM before rename")
    # An append streams on (additive: no schema change).
    spark_sql(f"INSERT INTO delta.`{p}` VALUES (3, 'c', 'z')")
    peers.sluice_sql(wh, f"REFRESH STREAMING TABLE {name}_rows")
    got = d.canonical_rows(d.sluice_arrow(wh, {0: f"SELECT * FROM {name}_rows"})[0])
    d.assert_same({"spark": d.spark_rows(p), "sluice stream": got}, "FROM STREAM of an append")
    for kind, change in [("rename", f"ALTER TABLE delta.`{p}` RENAME COLUMN s TO s2; "
                                    f"INSERT INTO delta.`{p}` VALUES (4, 'after', 'w')"),
                         ("drop", f"ALTER TABLE delta.`{p}` DROP COLUMN t; "
                                  f"INSERT INTO delta.`{p}` VALUES (5, 'after drop')")]:
        spark_sql(change)
        with tempfile.TemporaryDirectory(prefix="spark-ckpt-") as ck:
            spark_error = _spark_stream_error(p, ck)
        assert "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG" in spark_error, \
            spark_error[:2000]
        assert "schemaTrackingLocation" in spark_error, spark_error[:2000]
        stopped = peers.sluice_sql(wh, f"REFRESH STREAMING TABLE {name}_rows", check=False)
        assert stopped.returncode != 0, stopped.stdout
        assert "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG" in stopped.stderr, \
            stopped.stderr
        assert "schemaTrackingLocation" in stopped.stderr, stopped.stderr
        # A new stream (new checkpoint) from the latest snapshot reads the new schema.
        fresh = f"{name}_{kind}"
        peers.sluice_sql(wh, f"CREATE STREAMING TABLE {fresh} AS SELECT * FROM STREAM {name}; "
                             f"REFRESH STREAMING TABLE {fresh};")
        got = d.canonical_rows(d.sluice_arrow(wh, {0: f"SELECT * FROM {fresh}"})[0])
        d.assert_same({"spark": d.spark_rows(p), "sluice stream": got},
                      f"a new stream after the {kind}")
    refused = peers.sluice_sql(
        wh, f"CREATE STREAMING TABLE {name}_tracked AS SELECT * FROM STREAM {name} "
            f"WITH (schemaTrackingLocation = '{wh}/tracking'); REFRESH STREAMING TABLE "
            f"{name}_tracked;", check=False)
    assert refused.returncode != 0, refused.stdout
    assert "DELTA_STREAMING_SCHEMA_LOCATION_NOT_UNDER_CHECKPOINT" in refused.stderr, \
        refused.stderr


def _error_code(text):
    """The first Delta error class in an error text ('' for none): Spark's comes after its
    [STREAM_FAILED] wrapper."""
    m = re.search(r"\[(DELTA_[A-Z_]+)\]", text or "")
    return m.group(1) if m else ("" if not text else "OTHER: " + text[:300])


def _row_set(dicts):
    """Rows as sorted JSON objects without their NULL fields (Spark's json sink omits them; the
    streaming table has every column it has had, NULL where a row has none)."""
    return sorted(json.dumps({k: v for k, v in r.items() if v is not None}, sort_keys=True)
                  for r in dicts)


def test_stream_with_schema_tracking_location(wh):
    """Spark's probe (spark_schema_tracking_probe{,2}.py) as a differential test: one table,
    a Spark stream (json sink) and a Sluice streaming table, each with a schemaTrackingLocation
    and restarted after every stop; after each change both give the same error class (or none)
    and have the same rows: a RENAME stops with DELTA_STREAMING_METADATA_EVOLUTION, the
    restart is blocked (DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION) until
    allowSourceColumnRename names the version, a DROP needs allowSourceColumnDrop, an ADD
    COLUMN continues after the restart."""
    name = "cm_tracked"
    p = os.path.join(wh, name)
    spark_ck = tempfile.mkdtemp(prefix="spark-tracked-ck-", dir=wh)
    spark_out = tempfile.mkdtemp(prefix="spark-tracked-out-", dir=wh)
    spark_sql(f"""
CREATE TABLE delta.`{p}` (id BIGINT, s STRING, t STRING) USING delta
  TBLPROPERTIES ('delta.columnMapping.mode' = 'name');
INSERT INTO delta.`{p}` VALUES (1, 'a', 'x'), (2, 'b', 'y')""")

    def spark_run(options):
        r = (peers.spark().readStream.format("delta")
             .option("schemaTrackingLocation", spark_ck + "/_schema_log"))
        for k, v in options.items():
            r = r.option(k, v)
        q = (r.load(p).writeStream.format("json").option("checkpointLocation", spark_ck)
             .trigger(availableNow=True).start(spark_out))
        try:
            q.awaitTermination(600)
            error = ""
        except Exception as e:  # noqa: BLE001 (Spark's StreamingQueryException)
            error = str(e)
        rows = []
        for f in sorted(glob.glob(spark_out + "/*.json")):
            rows += [json.loads(line) for line in open(f) if line.strip()]
        return _error_code(error), _row_set(rows)

    def sluice_run(options):
        with_options = ", ".join([f"{k} = '{v}'" for k, v in
                                  {"schemaTrackingLocation": "_schema_log", **options}.items()])
        run = peers.sluice_sql(
            wh, f"CREATE OR REFRESH STREAMING TABLE {name}_rows AS SELECT * FROM STREAM {name} "
                f"WITH ({with_options}); REFRESH STREAMING TABLE {name}_rows;", check=False)
        error = run.stderr if run.returncode != 0 else ""
        got = d.sluice_arrow(wh, {0: f"SELECT * FROM {name}_rows"})[0].to_pylist()
        return _error_code(error), _row_set(got), run.stderr

    def both(what, want_code, options=None):
        spark_code, spark_rows = spark_run(options or {})
        sluice_code, sluice_rows, stderr = sluice_run(options or {})
        assert spark_code == want_code, f"{what}: Spark's answer changed: {spark_code}"
        assert sluice_code == spark_code, f"{what}: Spark {spark_code}, Sluice {sluice_code}: {stderr}"
        assert sluice_rows == spark_rows, f"{what}: rows differ:\n{d.diff(spark_rows, sluice_rows, 'spark', 'sluice')}"
        return stderr

    both("first run", "")
    spark_sql(f"ALTER TABLE delta.`{p}` RENAME COLUMN s TO s2; "
              f"INSERT INTO delta.`{p}` VALUES (3, 'c', 'z')")
    renamed_at = d.latest_version(p) - 1
    both("after the rename", "DELTA_STREAMING_METADATA_EVOLUTION")
    stderr = both("restart, not unblocked", "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION")
    assert f'.option("allowSourceColumnRename", "{renamed_at}")' in stderr, stderr
    assert "'s' -> 's2'" in stderr, stderr
    both("restart, the drop unblocked only",
         "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION",
         {"allowSourceColumnDrop": "always"})
    both("restart, the rename unblocked by its version", "",
         {"allowSourceColumnRename": str(renamed_at)})
    spark_sql(f"ALTER TABLE delta.`{p}` DROP COLUMN t; INSERT INTO delta.`{p}` VALUES (4, 'd')")
    both("after the drop", "DELTA_STREAMING_METADATA_EVOLUTION",
         {"allowSourceColumnRename": "always"})
    stderr = both("restart, the rename unblocked only",
                  "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION",
                  {"allowSourceColumnRename": "always"})
    assert "columns dropped: 't'" in stderr, stderr
    both("restart, the drop unblocked", "", {"allowSourceColumnDrop": "always"})
    spark_sql(f"INSERT INTO delta.`{p}` VALUES (5, 'e')")
    both("an append after the drop", "", {"allowSourceColumnDrop": "always"})
    spark_sql(f"ALTER TABLE delta.`{p}` ADD COLUMNS (u STRING); "
              f"INSERT INTO delta.`{p}` VALUES (6, 'f', 'n')")
    both("after an added column", "DELTA_STREAMING_METADATA_EVOLUTION",
         {"allowSourceColumnDrop": "always"})
    both("restart after the added column", "", {"allowSourceColumnDrop": "always"})


def _sluice_and_spark_agree(wh, name, versions=None):
    p = os.path.join(wh, name)
    latest = d.latest_version(p)
    versions = list(range(0, latest + 1)) if versions is None else versions
    sluice = d.sluice_rows_at(wh, name, versions + [None])
    for v in versions:
        d.assert_same({"spark": d.spark_rows(p, v), "sluice": sluice[v]},
                      f"{name} rows at version {v}")
    d.assert_same({"spark": d.spark_rows(p), "sluice": sluice[None]}, f"{name} latest rows")
    return sluice[None]


def test_sluice_writes_spark_reads(wh):
    """Sluice creates a table with mode name and runs every kind of write on it; Spark reads
    the same rows at every version, then renames and drops columns and writes, and Sluice reads
    and writes on. Sluice's data files, stats and partition values use physical names."""
    name = "cm_sluice"
    p = os.path.join(wh, name)
    peers.sluice_sql(wh, f"""
CREATE TABLE {name} (id BIGINT, p VARCHAR, s STRUCT(x INT, y VARCHAR), tags VARCHAR[])
  PARTITIONED BY (p) TBLPROPERTIES ('delta.columnMapping.mode' = 'name');
INSERT INTO {name} VALUES (1, 'a', {{'x': 1, 'y': 'one'}}, ['t1']), (2, 'b', NULL, []),
  (3, 'b', {{'x': 3, 'y': NULL}}, NULL), (4, 'c', {{'x': 4, 'y': 'four'}}, ['t4', NULL]);
UPDATE {name} SET s = NULL, tags = NULL WHERE id = 2;
DELETE FROM {name} WHERE p = 'c';
DELETE FROM {name} WHERE id = 1;
MERGE INTO {name} t USING (SELECT * FROM (VALUES (3, 'merged'), (5, 'new')) v(id, y)) src
  ON t.id = src.id
  WHEN MATCHED THEN DELETE
  WHEN NOT MATCHED THEN INSERT (id, p) VALUES (src.id, 'd');
ALTER TABLE {name} ADD COLUMNS (extra VARCHAR);
INSERT INTO {name} (id, p, extra) VALUES (6, 'a', 'six');""")
    detail = peers.spark().sql(f"DESCRIBE DETAIL delta.`{p}`").collect()[0]
    assert "columnMapping" in detail.tableFeatures, detail.tableFeatures
    for actions in d.log_commits(p).values():
        for a in actions:
            if "add" in a:
                stats = a["add"].get("stats") or ""
                assert '"id"' not in stats and all(k.startswith("col-")
                                                   for k in a["add"]["partitionValues"]), a
    _sluice_and_spark_agree(wh, name)
    got = d.sluice_arrow(wh, {q: f"SELECT * FROM {name} WHERE {q}"
                              for q in ["id >= 3", "p = 'b'", "extra IS NULL"]})
    for q, t in got.items():
        d.assert_same({"spark": d.canonical_rows(d.spark_df(p).where(q).toArrow()),
                       "sluice": d.canonical_rows(t)}, f"{name} WHERE {q}")
    # Spark renames and drops; both go on writing.
    spark_sql(f"""
ALTER TABLE delta.`{p}` RENAME COLUMN extra TO note;
ALTER TABLE delta.`{p}` RENAME COLUMN p TO part;
ALTER TABLE delta.`{p}` DROP COLUMN tags;
INSERT INTO delta.`{p}` VALUES (7, 'e', named_struct('x', 7, 'y', 'spark'), 'seven')""")
    peers.sluice_sql(wh, f"""
INSERT INTO {name} (id, part, note) VALUES (8, 'e', 'eight');
UPDATE {name} SET note = 'updated' WHERE part = 'e';
DELETE FROM {name} WHERE id = 2;""")
    rows = _sluice_and_spark_agree(wh, name)
    # 1-4 inserted; 4 (p = 'c') and 1 deleted; MERGE deletes 3 and inserts 5; then 6, Spark's 7,
    # Sluice's 8; 2 deleted last.
    assert sorted(r[0] for r in rows) == [5, 6, 7, 8], rows


def test_sluice_upgrades_and_writes_into_spark_tables(wh):
    """SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name') by Sluice upgrades the protocol
    as Delta does (the display names become the physical names); Spark renames a column of it;
    Sluice writes into Spark's renamed table too. Spark reads the same rows as Sluice."""
    name = "cm_upgrade_by_sluice"
    p = os.path.join(wh, name)
    peers.sluice_sql(wh, f"""
CREATE TABLE {name} (a BIGINT, b VARCHAR) PARTITIONED BY (b);
INSERT INTO {name} VALUES (1, 'x'), (2, 'y');
ALTER TABLE {name} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'name');
INSERT INTO {name} VALUES (3, 'z');""")
    detail = peers.spark().sql(f"DESCRIBE DETAIL delta.`{p}`").collect()[0]
    assert detail.minReaderVersion == 2 and detail.minWriterVersion == 5, detail
    spark_sql(f"ALTER TABLE delta.`{p}` RENAME COLUMN a TO c; "
              f"ALTER TABLE delta.`{p}` RENAME COLUMN b TO q; "
              f"INSERT INTO delta.`{p}` VALUES (4, 'x')")
    peers.sluice_sql(wh, f"INSERT INTO {name} VALUES (5, 'y'); DELETE FROM {name} WHERE q = 'x'")
    assert _sluice_and_spark_agree(wh, name) == [(2, "y"), (3, "z"), (5, "y")]
    # Spark's table with renames, drops and nested renames (the read test's history).
    name = "cm_spark_written"
    p = os.path.join(wh, name)
    spark_sql(HISTORY.format(p=p, mode="name"))
    peers.sluice_sql(wh, SLUICE_DML_ON_HISTORY.format(name=name))
    _sluice_and_spark_agree(wh, name)


def _file_field_ids(path):
    """(data file, physical name, Parquet field id or None) of every struct field, at any depth,
    of every live file (list element and map key/value steps are not fields)."""
    import pyarrow.parquet as pq
    out = []

    def walk_type(t, rel):
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk_field(t.field(i), rel)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk_type(t.value_type, rel)
        elif pa.types.is_map(t):
            walk_type(t.key_type, rel)
            walk_type(t.item_type, rel)

    def walk_field(field, rel):
        fid = (field.metadata or {}).get(b"PARQUET:field_id")
        out.append((rel, field.name, int(fid) if fid is not None else None))
        walk_type(field.type, rel)

    for uri in d.rs_table(path).file_uris():
        local = uri[len("file://"):] if uri.startswith("file://") else uri
        for field in pq.read_schema(local):
            walk_field(field, os.path.relpath(local, path))
    return out


def _schema_ids(path):
    """Physical name by field id of every field of the latest schema (any depth)."""
    by_id = {}

    def walk_type(t):
        if not isinstance(t, dict):
            return
        if t.get("type") == "struct":
            for f in t["fields"]:
                md = f.get("metadata", {})
                if "delta.columnMapping.id" in md:
                    by_id[md["delta.columnMapping.id"]] = md["delta.columnMapping.physicalName"]
                walk_type(f["type"])
        elif t.get("type") == "array":
            walk_type(t["elementType"])
        elif t.get("type") == "map":
            walk_type(t["keyType"])
            walk_type(t["valueType"])

    walk_type(json.loads(d.spark_snapshot(path).metadata().schemaString()))
    return by_id


def _assert_files_carry_ids(path):
    by_id = _schema_ids(path)
    for rel, name, fid in _file_field_ids(path):
        if name.startswith("col-"):
            assert fid is not None, f"{rel}: {name} has no Parquet field id"
        if fid is not None and fid in by_id:
            assert by_id[fid] == name, f"{rel}: field id {fid} on {name}, the schema's is {by_id[fid]}"


def _all_agree(wh, name):
    """Sluice and Spark at every version, delta-rs too; returns the latest rows."""
    p = os.path.join(wh, name)
    rows = _sluice_and_spark_agree(wh, name)
    for v in range(0, d.latest_version(p) + 1):
        d.assert_same({"spark": d.spark_rows(p, v), "deltalake": d.rs_sql_rows(p, v)},
                      f"{name} rows at version {v} (delta-rs)")
    return rows


def test_sluice_writes_id_mode(wh):
    """Sluice creates a table with mode id and runs every kind of write, RENAME and DROP COLUMN
    (a map of structs is in the next test: Sluice's CREATE TABLE does not parse MAP(VARCHAR,
    STRUCT(...)) column types)
    on it; its data files carry physical names and the schema's ids as Parquet field ids, which
    Spark matches columns by in mode id: Spark and delta-rs read the same rows at every version.
    Spark then renames, drops and writes; Sluice reads and writes on."""
    name = "cm_id_sluice"
    p = os.path.join(wh, name)
    peers.sluice_sql(wh, f"""
CREATE TABLE {name} (id BIGINT, p VARCHAR, s STRUCT(x INT, y VARCHAR), arr STRUCT(a INT)[],
  m MAP(VARCHAR, INT)) PARTITIONED BY (p)
  TBLPROPERTIES ('delta.columnMapping.mode' = 'id');
INSERT INTO {name} VALUES (1, 'a', {{'x': 1, 'y': 'one'}}, [{{'a': 1}}], MAP {{'k': 1}}),
  (2, 'b', NULL, [], NULL), (3, 'b', {{'x': 3, 'y': NULL}}, NULL, MAP {{'k3': NULL}}),
  (4, 'c', {{'x': 4, 'y': 'four'}}, [NULL, {{'a': 4}}], NULL);
UPDATE {name} SET s = NULL WHERE id = 2;
DELETE FROM {name} WHERE p = 'c';
MERGE INTO {name} t USING (SELECT * FROM (VALUES (3, 'merged'), (5, 'new')) v(id, y)) src
  ON t.id = src.id
  WHEN MATCHED THEN DELETE
  WHEN NOT MATCHED THEN INSERT (id, p) VALUES (src.id, 'd');
ALTER TABLE {name} RENAME COLUMN s.x TO xx;
ALTER TABLE {name} RENAME COLUMN id TO key;
ALTER TABLE {name} DROP COLUMN s.y;
ALTER TABLE {name} ADD COLUMNS (extra VARCHAR);
INSERT INTO {name} (key, p, s, extra) VALUES (6, 'a', {{'xx': 6}}, 'six');
UPDATE {name} SET extra = 'upd' WHERE key = 1;""")
    detail = peers.spark().sql(f"DESCRIBE DETAIL delta.`{p}`").collect()[0]
    assert detail.properties["delta.columnMapping.mode"] == "id", detail.properties
    assert (detail.minReaderVersion, detail.minWriterVersion) == (2, 5), detail
    _assert_files_carry_ids(p)
    _all_agree(wh, name)
    got = d.sluice_arrow(wh, {q: f"SELECT * FROM {name} WHERE {q}"
                              for q in ["key >= 3", "p = 'b'", "extra IS NULL", "s.xx = 6"]})
    for q, t in got.items():
        d.assert_same({"spark": d.canonical_rows(d.spark_df(p).where(q).toArrow()),
                       "sluice": d.canonical_rows(t)}, f"{name} WHERE {q}")
    spark_sql(f"""
ALTER TABLE delta.`{p}` RENAME COLUMN extra TO note;
ALTER TABLE delta.`{p}` RENAME COLUMN p TO part;
ALTER TABLE delta.`{p}` DROP COLUMN arr;
INSERT INTO delta.`{p}` VALUES (7, 'e', named_struct('xx', 7), map('k7', 7), 'seven')""")
    peers.sluice_sql(wh, f"""
INSERT INTO {name} (key, part, note) VALUES (8, 'e', 'eight');
UPDATE {name} SET note = 'updated' WHERE part = 'e';
DELETE FROM {name} WHERE key = 2;""")
    _assert_files_carry_ids(p)
    rows = _all_agree(wh, name)
    assert sorted(r[0] for r in rows) == [1, 5, 6, 7, 8], rows


def test_sluice_writes_into_spark_id_mode_table(wh):
    """Spark's id-mode table after renames, drops and re-added names (the read test's history):
    Sluice appends, updates, deletes and merges; Spark and delta-rs read the same rows."""
    name = "cm_id_spark"
    p = os.path.join(wh, name)
    spark_sql(HISTORY.format(p=p, mode="id"))
    peers.sluice_sql(wh, SLUICE_DML_ON_HISTORY.format(name=name))
    _assert_files_carry_ids(p)
    _all_agree(wh, name)


def test_upgrade_to_id_mode_is_refused_as_spark_does(wh):
    """Delta changes the mode of an existing table only from none to name; Spark and Sluice
    both refuse none -> id, and the table stays as it was."""
    name = "cm_to_id"
    p = os.path.join(wh, name)
    peers.sluice_sql(wh, f"CREATE TABLE {name} (a BIGINT); INSERT INTO {name} VALUES (1)")
    with pytest.raises(Exception) as spark_error:
        spark_sql(f"ALTER TABLE delta.`{p}` SET TBLPROPERTIES ('delta.columnMapping.mode' = 'id')")
    assert "DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE" in str(spark_error.value), \
        str(spark_error.value)[:2000]
    w = peers.sluice_sql(
        wh, f"ALTER TABLE {name} SET TBLPROPERTIES ('delta.columnMapping.mode' = 'id')",
        check=False)
    assert w.returncode != 0 and "from 'none' to 'id'" in w.stderr, w.stderr
    assert d.latest_version(p) == 1
