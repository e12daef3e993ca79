"""The catalog statements of the SQL differential: SHOW TBLPROPERTIES [('key')], DESCRIBE [TABLE]
EXTENDED | FORMATTED and SHOW CREATE TABLE over tables both engines create with the same DDL.

These are no queries (run.py reads a query's rows through `SELECT to_json(_q) FROM (<query>)`),
so they run here: SETUP makes the tables in each engine (Spark: its session's catalog and a
scratch directory; Sluice: a warehouse and a scratch directory), then each case's statement runs
alone (`sluice sql --format json`, one process per case) and the rows are compared exactly, in
order, as text, with the column names. The places that differ by run are written as
`<warehouse>` (the directory of managed tables; Spark writes a location as `file:<warehouse>/t`)
and `<dir>` (the scratch directory of path and LOCATION tables).

A case may compare a part of the rows: "detail" keeps DESCRIBE EXTENDED's rows from
'# Detailed Table Information' on (a difference in the DESCRIBE rows before it would hide the
rest).

SHOW CREATE TABLE is refused by Delta 4.4 (`DELTA_OPERATION_NOT_ALLOWED`); Sluice answers it as
Databricks does. ROUNDTRIP checks what it answers: Spark runs Sluice's statement under a new name
and its DESCRIBE EXTENDED of the new table must be the original's (names and places aside).

Spark's answers are cached beside run.py's (one file per hash of this file, peers.py and Spark's
version; the round trips by Sluice's statement), so a rerun starts Spark only when something
changed. Outcomes and known_differences.txt as run.py's.
"""

import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess

import peers

HERE = os.path.dirname(os.path.abspath(__file__))

SETUP = [
    "CREATE TABLE cat_part (id BIGINT NOT NULL COMMENT 'the id', s STRING, d DATE) USING delta "
    "PARTITIONED BY (d) COMMENT 'a table' TBLPROPERTIES ('mykey' = 'v1')",
    "CREATE TABLE cat_cdf (k STRING, v BIGINT) USING delta "
    "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')",
    # The change data feed on the legacy protocol 1/4 (what Sluice writes for it), asked of Spark.
    "CREATE TABLE cat_cdf4 (k STRING, v BIGINT) USING delta "
    "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', 'delta.minWriterVersion' = '4')",
    "CREATE TABLE cat_nested (id BIGINT, m MAP<STRING, INT>, st STRUCT<a: INT, b: STRING>, "
    "arr ARRAY<STRUCT<x: DOUBLE>>, `select` DECIMAL(10,2)) USING delta",
    "CREATE TABLE delta.`{dir}/pathtab` (id BIGINT, s STRING) USING delta COMMENT 'it''s outside'",
    "CREATE TABLE cat_ext (id BIGINT) USING delta LOCATION '{dir}/ext'",
    "CREATE TABLE cat_first (d DATE, id BIGINT) USING delta PARTITIONED BY (d)",
    # Protocol requests as Databricks users write them (the protocol each engine makes of them).
    "CREATE TABLE cat_p37 (id BIGINT) USING delta "
    "TBLPROPERTIES ('delta.minReaderVersion' = '3', 'delta.minWriterVersion' = '7')",
    "CREATE TABLE cat_p37cdf (k STRING, v BIGINT) USING delta "
    "TBLPROPERTIES ('delta.minReaderVersion' = '3', 'delta.minWriterVersion' = '7', "
    "'delta.enableChangeDataFeed' = 'true')",
    "CREATE TABLE cat_fdv (id BIGINT) USING delta "
    "TBLPROPERTIES ('delta.feature.deletionVectors' = 'supported')",
    "CREATE TABLE cat_p15 (id BIGINT) USING delta TBLPROPERTIES ('delta.minWriterVersion' = '5')",
]
TABLES = ["cat_part", "cat_cdf", "cat_cdf4", "cat_nested", "cat_ext", "cat_first", "cat_p37",
          "cat_p37cdf", "cat_fdv", "cat_p15"]

# (name, statement, part)
CASES = [
    ("catalog_tblprops_part", "SHOW TBLPROPERTIES cat_part", "all"),
    ("catalog_tblprops_key", "SHOW TBLPROPERTIES cat_part ('mykey')", "all"),
    ("catalog_tblprops_version_key", "SHOW TBLPROPERTIES cat_part ('delta.minWriterVersion')",
     "all"),
    ("catalog_tblprops_missing_key", "SHOW TBLPROPERTIES cat_part ('nope')", "all"),
    ("catalog_tblprops_cdf", "SHOW TBLPROPERTIES cat_cdf", "all"),
    ("catalog_tblprops_cdf4", "SHOW TBLPROPERTIES cat_cdf4", "all"),
    ("catalog_tblprops_nested", "SHOW TBLPROPERTIES cat_nested", "all"),
    ("catalog_tblprops_path", "SHOW TBLPROPERTIES delta.`{dir}/pathtab`", "all"),
    ("catalog_tblprops_path_missing_key", "SHOW TBLPROPERTIES delta.`{dir}/pathtab` ('nope')",
     "all"),
    ("catalog_tblprops_no_table", "SHOW TBLPROPERTIES nosuch", "all"),
    ("catalog_describe_extended_part", "DESCRIBE EXTENDED cat_part", "all"),
    ("catalog_describe_extended_part_detail", "DESCRIBE EXTENDED cat_part", "detail"),
    ("catalog_describe_formatted_part_detail", "DESCRIBE FORMATTED cat_part", "detail"),
    ("catalog_describe_extended_cdf4_detail", "DESCRIBE TABLE EXTENDED cat_cdf4", "detail"),
    ("catalog_describe_extended_nested", "DESCRIBE EXTENDED cat_nested", "all"),
    ("catalog_describe_extended_nested_detail", "DESCRIBE EXTENDED cat_nested", "detail"),
    ("catalog_describe_extended_path_detail", "DESCRIBE EXTENDED delta.`{dir}/pathtab`", "detail"),
    ("catalog_describe_extended_location_detail", "DESCRIBE EXTENDED cat_ext", "detail"),
    ("catalog_describe_partition_first", "DESCRIBE TABLE cat_first", "all"),
    ("catalog_describe_extended_column", "DESCRIBE EXTENDED cat_part id", "all"),
    ("catalog_show_create_part", "SHOW CREATE TABLE cat_part", "all"),
    ("catalog_tblprops_protocol_3_7", "SHOW TBLPROPERTIES cat_p37", "all"),
    ("catalog_tblprops_protocol_3_7_cdf", "SHOW TBLPROPERTIES cat_p37cdf", "all"),
    ("catalog_tblprops_feature_dv", "SHOW TBLPROPERTIES cat_fdv", "all"),
    ("catalog_tblprops_protocol_writer_5", "SHOW TBLPROPERTIES cat_p15", "all"),
]

# The tables whose SHOW CREATE TABLE (Sluice's) Spark runs again under a new name.
ROUNDTRIP = ["cat_part", "cat_cdf4", "cat_nested", "cat_first", "delta.`{dir}/pathtab`"]

CACHE_FORMAT = "1"
SPARK_ERROR_TEXT = str  # run.py sets its spark_error_text (the condition and the first line)


def _file_hash():
    h = hashlib.sha256(CACHE_FORMAT.encode())
    for path in (os.path.abspath(__file__), peers.__file__):
        with open(path, "rb") as f:
            h.update(f.read())
    import pyspark
    h.update(pyspark.__version__.encode())
    return h.hexdigest()[:16]


class Case:
    """A catalog case in the shape run.py's report reads."""

    def __init__(self, name, text, part):
        self.name, self.text, self.part = name, text, part
        self.file = "catalog.py"
        self.line = 0
        self.ordered = True


def load_cases(pattern):
    names = [c[0] for c in CASES] + [roundtrip_name(t) for t in ROUNDTRIP]
    if len(set(names)) != len(names):
        raise SystemExit("catalog.py: a case name is defined twice")
    out = [Case(n, s, p) for n, s, p in CASES]
    out += [Case(roundtrip_name(t), f"Spark runs Sluice's SHOW CREATE TABLE {t}", "roundtrip")
            for t in ROUNDTRIP]
    return [c for c in out if pattern is None or re.search(pattern, c.name)]


def roundtrip_name(table):
    return "catalog_show_create_roundtrip_" + re.sub(r"[^a-z0-9]+", "_", table.lower()).strip("_")


def _canon(rows):
    return [[("null",) if v is None else ("str", v) for v in row] for row in rows]


def _normalize(result, places):
    """Writes `places` ({path: placeholder}) as their placeholders in every value and error."""
    def sub(text):
        for path, name in sorted(places.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(path, name)
        return text
    kind, value = result
    if kind != "rows":
        return kind, sub(value)
    cols, rows = value
    return kind, (cols, [[None if v is None else sub(v) for v in row] for row in rows])


def _part(result, part):
    kind, value = result
    if kind != "rows" or part != "detail":
        return result
    cols, rows = value
    for i, row in enumerate(rows):
        if row and row[0] == "# Detailed Table Information":
            return kind, (cols, rows[i:])
    return kind, (cols, [])


# ---------------------------------------------------------------------------------------------
# Spark

def _spark_rows(spark, sql):
    """Spark's rows of `sql` with the column names, or its error (run.py's spark_error_text)."""
    try:
        df = spark.sql(sql)
        cols = [f.name for f in df.schema.fields]
        return "rows", (cols, [[None if v is None else str(v) for v in r] for r in df.collect()])
    except Exception as e:  # noqa: BLE001 (every Spark refusal is an answer to compare)
        return "error", SPARK_ERROR_TEXT(e)


def _spark_places(spark, scratch):
    wh = spark.conf.get("spark.sql.warehouse.dir")
    wh = wh[len("file:"):] if wh.startswith("file:") else wh
    return {wh: "<warehouse>", os.path.realpath(wh): "<warehouse>", scratch: "<dir>",
            os.path.realpath(scratch): "<dir>"}


def _drop_spark_tables(spark, names):
    """Drops the harness's tables and removes their directories: Spark's catalog lives in its
    session (no metastore), so a table of an earlier session is no name but still a directory,
    which a CREATE TABLE of the name refuses (DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION)."""
    wh = spark.conf.get("spark.sql.warehouse.dir")
    wh = wh[len("file:"):] if wh.startswith("file:") else wh
    for t in names:
        spark.sql(f"DROP TABLE IF EXISTS {t}")
        shutil.rmtree(os.path.join(wh, t), ignore_errors=True)


def ask_spark(spark, scratch):
    """Spark's answer to every case of CASES: {name: result}, places normalized."""
    os.makedirs(scratch, exist_ok=True)
    _drop_spark_tables(spark, TABLES)
    for ddl in SETUP:
        spark.sql(ddl.format(dir=scratch))
    places = _spark_places(spark, scratch)
    out = {}
    for name, sql, _ in CASES:
        out[name] = _normalize(_spark_rows(spark, sql.format(dir=scratch)), places)
    _drop_spark_tables(spark, TABLES)
    return out


def _roundtrip_in_spark(spark, table, statement, scratch):
    """Spark runs `statement` (Sluice's, places as placeholders) for `table` under a new name and
    describes both: (the original's DESCRIBE EXTENDED, the new table's, names made equal)."""
    os.makedirs(scratch, exist_ok=True)
    _drop_spark_tables(spark, TABLES + [t + "_rt" for t in TABLES])
    for ddl in SETUP:
        spark.sql(ddl.format(dir=scratch))
    places = _spark_places(spark, scratch)
    original = table.format(dir=scratch)
    if table.startswith("delta.`"):  # delta.`{dir}/pathtab`: a new path beside it
        base = table[len("delta.`{dir}/"):-1]
        copy = f"delta.`{scratch}/{base}_rt`"
        again = statement.replace(f"<dir>/{base}", f"{scratch}/{base}_rt")
    else:
        base = table
        copy = table + "_rt"
        again = statement.replace(f"spark_catalog.default.{table} (",
                                  f"spark_catalog.default.{copy} (")
    made = _spark_rows(spark, again.replace("<dir>", scratch))
    if made[0] != "rows":
        result = ("error", f"Spark refused Sluice's statement: {made[1]}")
    else:
        a = _normalize(_spark_rows(spark, f"DESCRIBE EXTENDED {original}"), places)
        b = _normalize(_spark_rows(spark, f"DESCRIBE EXTENDED {copy}"), places)
        if b[0] == "rows":  # the new table's name and place written as the original's
            b = "rows", (b[1][0], [[None if v is None else v.replace(base + "_rt", base)
                                    for v in row] for row in b[1][1]])
        result = ("pair", (a, b))
    _drop_spark_tables(spark, TABLES + [t + "_rt" for t in TABLES])
    return result


# ---------------------------------------------------------------------------------------------
# Sluice

def _sluice_rows(warehouse, sql, timeout):
    try:
        proc = subprocess.run([peers.sluice_bin(), "sql", "--warehouse", warehouse, "--format",
                               "json", sql], text=True, capture_output=True, timeout=timeout,
                              env={**os.environ, "TZ": "UTC"})
    except subprocess.TimeoutExpired:
        return "crash", f"timed out after {timeout} s"
    if proc.returncode == 1:
        err = " ".join(proc.stderr.strip().splitlines())
        return ("error", err) if err and "INTERNAL" not in err.upper().split(":")[0] else \
            ("crash", err or "exit 1 without a message")
    if proc.returncode != 0:
        return "crash", f"exit {proc.returncode}: {proc.stderr.strip()}"
    cols, rows = None, []
    for line in proc.stdout.splitlines():
        if line.strip().startswith("{"):
            obj = json.loads(line)
            cols = cols or list(obj.keys())
            rows.append([None if v is None else str(v) for v in obj.values()])
    return "rows", (cols or [], rows)


def ask_sluice(work, timeout):
    warehouse = os.path.join(work, "warehouse")
    scratch = os.path.join(work, "dir")
    os.makedirs(warehouse)
    os.makedirs(scratch)
    for ddl in SETUP:
        res = _sluice_rows(warehouse, ddl.format(dir=scratch), timeout)
        if res[0] != "rows":
            raise SystemExit(f"catalog.py: Sluice refused the setup statement {ddl}: {res[1]}")
    places = {warehouse: "<warehouse>", os.path.realpath(warehouse): "<warehouse>",
              scratch: "<dir>", os.path.realpath(scratch): "<dir>"}
    out = {}
    for name, sql, _ in CASES:
        out[name] = _normalize(_sluice_rows(warehouse, sql.format(dir=scratch), timeout), places)
    statements = {}
    for t in ROUNDTRIP:
        res = _normalize(_sluice_rows(warehouse, f"SHOW CREATE TABLE {t.format(dir=scratch)}",
                                      timeout), places)
        statements[t] = res
    return out, statements


# ---------------------------------------------------------------------------------------------
# The run

def _load(path):
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError):
        return None


def _save(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        pickle.dump(value, f)
    os.replace(tmp, path)


def run(cases, work, cache_root, use_cache, start_spark, timeout):
    """Runs the catalog cases: ({name: spark result}, {name: sluice result}) in run.py's result
    shapes (("rows", canonical rows) or ("error", text)), with the column names as a first row.
    start_spark() gives the Spark session (started only when an answer is not cached)."""
    if not cases:
        return {}, {}
    wanted = {c.name for c in cases}
    key = _file_hash()
    answers_path = os.path.join(cache_root, "catalog", f"answers-{key}.pickle")
    spark_answers = _load(answers_path) if use_cache else None
    if spark_answers is None:
        spark_answers = ask_spark(start_spark(), os.path.join(work, "spark-dir"))
        _save(answers_path, spark_answers)
    sluice_answers, statements = ask_sluice(os.path.join(work, "sluice"), timeout)

    spark_out, sluice_out = {}, {}
    for name, _, part in CASES:
        if name in wanted:
            spark_out[name] = _shape(_part(spark_answers[name], part))
            sluice_out[name] = _shape(_part(sluice_answers[name], part))
    for t in ROUNDTRIP:
        name = roundtrip_name(t)
        if name not in wanted:
            continue
        stmt = statements[t]
        if stmt[0] != "rows":
            spark_out[name] = ("rows", [])
            sluice_out[name] = stmt
            continue
        text = stmt[1][1][0][0]
        h = hashlib.sha256(f"{key}\n{t}\n{text}".encode()).hexdigest()[:24]
        path = os.path.join(cache_root, "catalog", f"roundtrip-{h}.pickle")
        res = _load(path) if use_cache else None
        if res is None:
            res = _roundtrip_in_spark(start_spark(), t, text, os.path.join(work, "spark-" + name))
            _save(path, res)
        if res[0] != "pair":
            spark_out[name], sluice_out[name] = ("rows", []), ("error", res[1])
        else:
            spark_out[name], sluice_out[name] = _shape(res[1][0]), _shape(res[1][1])
    return spark_out, sluice_out


def _shape(result):
    kind, value = result
    if kind != "rows":
        return kind, value
    cols, rows = value
    return "rows", _canon([cols] + rows)
