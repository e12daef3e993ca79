"""The cases of the streaming differential: what a case is, how it is loaded, and how its one
spelling becomes each engine's.

A case is a Python dict in cases/*.py (each file defines CASES, a list of dicts):

    name      lower_case_name, unique over all files
    sources   {name: schema} for a Delta table ({name: {"schema": ddl, "cdf": True}} with the
              change data feed on), {name: {"format": "json"|"csv"|"parquet",
              "schema": ddl}} for a directory of files, or {name: {"format": "kafka",
              "partitions": n}} for a topic of the real broker (kafka_peer.py; each engine
              reads a topic of its own, created with n partitions); schemas are DDL
              ("k STRING, ts TIMESTAMP") of STRING, BIGINT, INT, DOUBLE, BOOLEAN, TIMESTAMP
              columns. A Kafka source's rows are Spark's (key, value, topic, partition, offset,
              timestamp, timestampType[, headers]); "{topic}" in its WITH options is that
              engine's topic (startingOffsets JSON), and a case never selects `topic`
    static    optional {name: (schema, rows)}: Delta tables read as static relations
    query     the streaming query in Databricks SQL, as `CREATE STREAMING TABLE ... AS` takes it:
              each streamed source is `STREAM name [WITH (k = v, ...)]
              [WATERMARK col DELAY OF INTERVAL n unit] [AS alias]`
    mode      "append" (default), "update" or "complete"
    trigger   "availableNow" (default) or "once": what every run step runs (Spark:
              trigger(availableNow=True) or trigger(once=True); Sluice: the table's TRIGGER
              AVAILABLE NOW or TRIGGER ONCE); a processing-time trigger on a manual clock has
              no PySpark spelling (docs/testing.md, "Streaming differential")
    spark     optional: a Python expression giving Spark's DataFrame where Spark SQL has no
              spelling (dropDuplicates(['k']), dropDuplicatesWithinWatermark); the streamed
              sources are bound by name (watermarks of the query applied), F is
              pyspark.sql.functions
    steps     a list of tuples, run in order:
                ("append", source, [row, ...])   one Delta commit, or one new file
                ("sql", table, "UPDATE {t} SET v = 0 WHERE k = 'a'")   a change of a Delta
                                                 source or static table ({t} is the table on
                                                 each engine)
                ("conf", "noDataBatches" | "multipleWatermarkPolicy", value)
                ("produce", source, [record, ...])   Kafka records, produced in order and
                                                 flushed; a record is (key, value[, partition[,
                                                 timestamp[, headers]]]): key and value text or
                                                 None (UTF-8 bytes), partition default 0, the
                                                 timestamp (CreateTime) as a TIMESTAMP value of
                                                 a row, headers [(key, value or None), ...]
                ("partitions", source, n)        the Kafka topic grows to n partitions
                ("run",)                         a new query from the checkpoint, run until idle
                                                 (Spark: trigger(availableNow=True); Sluice:
                                                 REFRESH STREAMING TABLE in a new process)
                ("crash",)                       after a run: what a crash after offsets/N was
                                                 written and before commits/N leaves, N the
                                                 run's last batch: commits/N is deleted from
                                                 the checkpoint, so the next run runs batch N
                                                 again with offsets/N (its sink writes are
                                                 idempotent by batch id on both engines)
    words     optional: words both engines' errors must contain when both refuse (lower case)

A TIMESTAMP value in a row may be a number: seconds after 2024-01-01 00:00:00 UTC.
"""

import datetime as dt
import glob
import importlib.util
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
EPOCH = dt.datetime(2024, 1, 1)
TYPES = ("STRING", "BIGINT", "INT", "DOUBLE", "BOOLEAN", "TIMESTAMP")
MODES = ("append", "update", "complete")
TRIGGERS = ("availableNow", "once")
CONFS = {
    "noDataBatches": ("spark.sql.streaming.noDataMicroBatches.enabled", "sluice.noDataBatches"),
    "multipleWatermarkPolicy": ("spark.sql.streaming.multipleWatermarkPolicy",
                                "sluice.multipleWatermarkPolicy"),
}
FORMATS = ("json", "csv", "parquet")
STEP_KINDS = ("append", "sql", "conf", "produce", "partitions", "run", "crash")

# STREAM name [WITH (...)] [WATERMARK col DELAY OF INTERVAL n unit]
STREAM_RE = re.compile(
    r"\bSTREAM\s+(?P<name>[A-Za-z_]\w*)"
    r"(?P<with>\s+WITH\s*\((?P<opts>[^)]*)\))?"
    r"(?P<wm>\s+WATERMARK\s+(?P<col>[A-Za-z_]\w*)\s+DELAY\s+OF\s+INTERVAL\s+'?(?P<n>\d+)'?"
    r"\s+(?P<unit>[A-Za-z]+))?", re.I)


def parse_schema(ddl, where):
    cols = []
    for part in ddl.split(","):
        bits = part.split()
        if len(bits) != 2 or bits[1].upper() not in TYPES:
            raise SystemExit(f"{where}: bad column {part.strip()!r} (name TYPE, TYPE one of "
                             f"{', '.join(TYPES)})")
        cols.append((bits[0], bits[1].upper()))
    return cols


def timestamp_of(value):
    if isinstance(value, (int, float)):
        return EPOCH + dt.timedelta(seconds=value)
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    raise ValueError(f"not a timestamp: {value!r}")


def literal(value, typ):
    """A SQL literal both engines read the same way."""
    if value is None:
        return "NULL"
    if typ == "STRING":
        return "'" + str(value).replace("'", "''") + "'"
    if typ == "TIMESTAMP":
        return f"TIMESTAMP '{timestamp_of(value).isoformat(sep=' ')}'"
    if typ == "BOOLEAN":
        return "true" if value else "false"
    if typ == "DOUBLE":
        return f"CAST({float(value)!r} AS DOUBLE)"
    return str(int(value))


def values_sql(cols, rows):
    return ", ".join("(" + ", ".join(literal(v, t) for v, (_, t) in zip(row, cols)) + ")"
                     for row in rows)


def python_value(value, typ):
    """A row value as a file writer gets it."""
    if value is None:
        return None
    if typ == "TIMESTAMP":
        return timestamp_of(value).replace(tzinfo=dt.timezone.utc)
    if typ in ("BIGINT", "INT"):
        return int(value)
    if typ == "DOUBLE":
        return float(value)
    if typ == "BOOLEAN":
        return bool(value)
    return str(value)


def _split_options(text):
    """The comma-separated parts of WITH (...)'s text; commas inside '...' (JSON) do not split."""
    parts, cur, quoted = [], "", False
    for ch in text or "":
        if ch == "'":
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def parse_options(text):
    opts = {}
    for part in filter(None, (p.strip() for p in _split_options(text))):
        m = re.fullmatch(r"'?(\w+)'?\s*=?\s*(.+)", part)
        if not m:
            raise ValueError(f"bad option {part!r}")
        opts[m.group(1)] = m.group(2).strip().strip("'")
    return opts


class Source:
    """A streamed input: a Delta table (with its change data feed when "cdf" is true) or a
    directory of files of one format."""

    def __init__(self, name, spec, where):
        if isinstance(spec, str):
            spec = {"format": "delta", "schema": spec}
        self.name, self.format = name, spec.get("format", "delta")
        if set(spec) - {"format", "schema", "cdf", "partitions"}:
            raise SystemExit(f"{where}: source {name}: unknown keys {sorted(spec)}")
        if self.format not in ("delta", "kafka") + FORMATS:
            raise SystemExit(f"{where}: source {name}: unknown format {self.format}")
        if self.format == "kafka":
            if "schema" in spec or not isinstance(spec.get("partitions"), int):
                raise SystemExit(f"{where}: source {name}: a Kafka source has partitions (a "
                                 f"number) and no schema")
            self.partitions, self.ddl, self.cdf, self.cols = spec["partitions"], None, False, []
            return
        self.partitions = None
        self.ddl, self.cdf = spec["schema"], bool(spec.get("cdf"))
        if self.cdf and self.format != "delta":
            raise SystemExit(f"{where}: source {name}: only a Delta table has a change feed")
        self.cols = parse_schema(self.ddl, f"{where}: source {name}")


class Case:
    def __init__(self, d, file):
        where = f"{file}: case {d.get('name')!r}"
        unknown = set(d) - {"name", "sources", "static", "query", "mode", "spark", "steps",
                            "words", "trigger"}
        if unknown:
            raise SystemExit(f"{where}: unknown keys {sorted(unknown)}")
        self.name, self.file = d["name"], file
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise SystemExit(f"{where}: the name must be lower_case")
        self.sources = {n: Source(n, s, where) for n, s in d["sources"].items()}
        self.static = {n: (parse_schema(s, f"{where}: static {n}"), rows)
                       for n, (s, rows) in d.get("static", {}).items()}
        self.static_ddl = {n: s for n, (s, _) in d.get("static", {}).items()}
        self.query, self.mode = d["query"].strip(), d.get("mode", "append")
        if self.mode not in MODES:
            raise SystemExit(f"{where}: mode must be one of {MODES}")
        self.trigger = d.get("trigger", "availableNow")
        if self.trigger not in TRIGGERS:
            raise SystemExit(f"{where}: trigger must be one of {TRIGGERS}")
        self.spark_expr, self.words = d.get("spark"), [w.lower() for w in d.get("words", [])]
        self.steps = [tuple(s) for s in d["steps"]]
        for s in self.steps:
            if s[0] not in STEP_KINDS:
                raise SystemExit(f"{where}: unknown step {s!r}")
            if s[0] == "append" and s[1] not in self.sources:
                raise SystemExit(f"{where}: step {s!r} names no source")
            if s[0] == "sql" and s[1] not in self.sources and s[1] not in self.static:
                raise SystemExit(f"{where}: step {s!r} names no source or static table")
            if s[0] == "sql" and s[1] in self.sources and self.sources[s[1]].format != "delta":
                raise SystemExit(f"{where}: step {s!r}: only a Delta source takes SQL changes")
            if s[0] == "conf" and s[1] not in CONFS:
                raise SystemExit(f"{where}: unknown conf {s[1]} (one of {sorted(CONFS)})")
            kafka_step = s[0] in ("produce", "partitions")
            if kafka_step and (s[1] not in self.sources or
                               self.sources[s[1]].format != "kafka"):
                raise SystemExit(f"{where}: step {s!r} names no Kafka source")
            if s[0] == "append" and self.sources[s[1]].format == "kafka":
                raise SystemExit(f"{where}: step {s!r}: a Kafka source takes produce steps")
        for before, s in zip([None] + self.steps, self.steps):
            if s[0] == "crash" and (before is None or before[0] != "run"):
                raise SystemExit(f"{where}: a crash step must follow a run step")
        if not any(s[0] == "run" for s in self.steps):
            raise SystemExit(f"{where}: no run step")
        self.streams = [m for m in STREAM_RE.finditer(self.query)]
        for m in self.streams:
            if m.group("name") not in self.sources:
                raise SystemExit(f"{where}: STREAM {m.group('name')} is no source of the case")
        self.text = json.dumps(d, sort_keys=True, default=str)

    # Sluice: file sources become read_files(...), Kafka sources read_kafka(...) of the topic;
    # Delta sources are tables of the warehouse.
    def sluice_query(self, file_dirs, kafka=None):
        """kafka: (bootstrap servers, {source: topic}) when the case has Kafka sources."""
        def repl(m):
            src = self.sources[m.group("name")]
            if src.format == "delta":
                return m.group(0)
            if src.format == "kafka":
                servers, topics = kafka
                rest = m.group(0)[m.end("name") - m.start():]
                rest = rest.replace("{topic}", topics[src.name])
                return (f"STREAM read_kafka(bootstrapServers => '{servers}', subscribe => "
                        f"'{topics[src.name]}')" + rest)
            args = [f"'{file_dirs[src.name]}'", f"format => '{src.format}'",
                    f"schema => '{src.ddl}'"]
            if src.format == "csv":
                args.append("header => true")
            return "STREAM read_files(" + ", ".join(args) + ")" + m.group(0)[
                m.end("name") - m.start():]
        return STREAM_RE.sub(repl, self.query)

    # Spark: each STREAM ... becomes a temporary view of a readStream DataFrame.
    def spark_streams(self):
        """[(view name, source, options, (col, delay) or None)] and the query over the views."""
        counts = {}
        for m in self.streams:
            counts[m.group("name")] = counts.get(m.group("name"), 0) + 1
        views, seen = [], {}
        for m in self.streams:
            name = m.group("name")
            seen[name] = seen.get(name, 0) + 1
            view = name if counts[name] == 1 else f"{name}__{seen[name]}"
            wm = (m.group("col"), f"{m.group('n')} {m.group('unit').lower()}") \
                if m.group("wm") else None
            views.append((view, self.sources[name], parse_options(m.group("opts")), wm))
        it = iter(views)
        query = STREAM_RE.sub(lambda m: next(it)[0], self.query)
        return views, query


def load_cases(pattern=None):
    cases, seen = [], {}
    for path in sorted(glob.glob(os.path.join(HERE, "cases", "*.py"))):
        rel = os.path.relpath(path, HERE)
        spec = importlib.util.spec_from_file_location(
            "streaming_cases_" + os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for d in mod.CASES:
            case = Case(d, rel)
            if case.name in seen:
                raise SystemExit(f"{rel}: case {case.name} is already defined in {seen[case.name]}")
            seen[case.name] = rel
            if pattern is None or re.search(pattern, case.name):
                cases.append(case)
    return cases


def batches(source, *row_lists):
    """Steps: each list of rows appended to `source`, then a run."""
    steps = []
    for rows in row_lists:
        steps += [("append", source, rows), ("run",)]
    return steps


CDF_PROPERTIES = "TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"


def create_table_sql(ref, src, using=""):
    """CREATE TABLE of a Delta source, the same on both engines but for Spark's `USING DELTA`."""
    return f"CREATE TABLE {ref} ({src.ddl}){using}" + (f" {CDF_PROPERTIES}" if src.cdf else "")
