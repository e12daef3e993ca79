"""The SQL dialect differential: every case of cases/*.cases runs on Spark SQL and on Sluice, and
the answers are compared with type-aware equality (values.py).

    scripts/peers/run-python.sh test/differential/sql/run.py [--only REGEX] [--verbose]

A case file holds one case per entry:

    # a comment
    name: an expression or a query
      continuation lines start with blanks

An entry whose text starts with SELECT, WITH, FROM, VALUES or ( is a query; anything else is an
expression, run as `SELECT <expr> AS v`. Cases read the tables of tables.py. A query whose last
top-level clause is ORDER BY is compared in order, every other result as a multiset of rows.

Spark: one local[2] session (test/interop/peers.py: UTC, ANSI as Spark 4 defaults it); each
case is one spark.sql(...).collect(). Spark's answers are cached per case in
${XDG_CACHE_HOME:-~/.cache}/sluice/differential/ (the key: the case's query, Spark's version and
a hash of the files that shape Spark's answer: tables.py, values.py, peers.py), and so are the
Delta tables Spark writes for Sluice, so that a rerun starts Spark only for new or changed cases
(--no-cache asks Spark for every case and rewrites the cache). Sluice: the cases go to `sluice sql --format json` as one
script over a warehouse holding the same tables (written by Spark as Delta); each case is
preceded by a marker row, and its query is read as `SELECT to_json(_q), typeof(_q) FROM (<query>)
_q` so that the row's values come with their types. A script stops at its first error: the
failing case is the one after the last marker, and the script is started again after it.

The catalog statements (SHOW TBLPROPERTIES, DESCRIBE EXTENDED, SHOW CREATE TABLE) are no
queries: catalog.py holds them, with the tables both engines create, and run.py reports them with
the other cases.

Outcomes: pass (same rows, or both refuse and Sluice's error is a clear refusal); `refuses`
(Spark answers, Sluice errors); `silent` (both answer, differently); `accepts` (Sluice answers
where Spark errors: under ANSI a job that fails on Spark goes on with a value on Sluice);
`unclear` (both refuse, but Sluice's error is a syntax error or an unknown function or type
while Spark's is not: Sluice did not understand the query, which is no refusal of what Spark
refuses); `crash` (Sluice failed without a clear error: an internal error, a crash, a timeout,
a row the harness cannot read). known_differences.txt lists the accepted differences, one per line:

    case_name | refuses|silent|accepts|unclear|crash | the reason

The run fails when a case differs that is not listed (or with another outcome than listed), or
when a listed case passes (delete its line: the list only shrinks), or when a listed name is no
case. It prints the pass rate and every difference.
"""

import argparse
import glob
import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "interop"))
sys.path.insert(0, HERE)

os.environ["TZ"] = "UTC"
time.tzset()

import catalog  # noqa: E402
import peers  # noqa: E402
import tables  # noqa: E402
import values  # noqa: E402

MARKER = "__case__"
QUERY_START = re.compile(r"^\s*(?:(?:SELECT|WITH|FROM|VALUES)\b|\()", re.I)
OUTCOMES = ("refuses", "silent", "accepts", "unclear", "crash")
# Sluice errors that say Sluice did not understand the query, rather than refusing what Spark
# refuses; Spark's errors of the same nature (its parser, an unknown function).
NOT_UNDERSTOOD = re.compile(r"^(Parser Error|Catalog Error: .*does not exist|Binder Error: No function "
                            r"matches|Binder Error: Referenced column .* not found)", re.S)
SPARK_NOT_UNDERSTOOD = re.compile(r"PARSE_SYNTAX_ERROR|UNRESOLVED_ROUTINE|UNRESOLVED_COLUMN")


class Case:
    def __init__(self, name, text, file, line):
        self.name, self.text, self.file, self.line = name, text.strip(), file, line
        self.is_query = bool(QUERY_START.match(self.text))
        self.query = self.text if self.is_query else f"SELECT {self.text} AS v"
        self.ordered = ends_with_order_by(self.query)


def ends_with_order_by(sql):
    """True when the last top-level clause of `sql` is ORDER BY (outside parentheses, strings
    and backquotes)."""
    depth, last, i = 0, None, 0
    while i < len(sql):
        c = sql[i]
        if c in "'\"`":
            end = sql.find(c, i + 1)
            i = len(sql) if end < 0 else end + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0:
            m = re.match(r"(ORDER\s+BY|LIMIT|QUALIFY|WHERE|GROUP\s+BY|HAVING|FROM|UNION)\b",
                         sql[i:], re.I)
            if m and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
                last = m.group(1).upper().split()[0]
                i += len(m.group(0))
                continue
        i += 1
    return last in ("ORDER", "LIMIT")


def load_cases(pattern):
    cases, seen = [], {}
    for path in sorted(glob.glob(os.path.join(HERE, "cases", "*.cases"))):
        rel = os.path.relpath(path, HERE)
        current = None
        with open(path, encoding="utf-8") as f:
            for n, raw in enumerate(f, 1):
                line = raw.rstrip("\n")
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                m = re.match(r"^([a-z][a-z0-9_]*):\s(.*)$", line)
                if m and not line[0].isspace():
                    current = [m.group(1), m.group(2), rel, n]
                    cases.append(current)
                elif line[0].isspace() and current is not None:
                    current[1] += "\n" + line
                else:
                    raise SystemExit(f"{rel}:{n}: not a case (`name: sql`) nor a continuation "
                                     f"line: {line!r}")
    out = []
    for name, text, rel, n in cases:
        if name in seen:
            raise SystemExit(f"{rel}:{n}: case {name} is already defined at {seen[name]}")
        seen[name] = f"{rel}:{n}"
        if pattern is None or re.search(pattern, name):
            out.append(Case(name, text, rel, n))
    return out


def load_known(path):
    known = {}
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|", 2)]
            if len(parts) != 3 or parts[1] not in OUTCOMES or not parts[2]:
                raise SystemExit(f"{path}:{n}: expected `case | {'|'.join(OUTCOMES)} | reason`, "
                                 f"got {line!r}")
            if parts[0] in known:
                raise SystemExit(f"{path}:{n}: {parts[0]} is listed twice")
            known[parts[0]] = (parts[1], parts[2])
    return known


# ---------------------------------------------------------------------------------------------
# Spark

def judge(name, outcome, listed):
    """A case's outcome against its line of known_differences.txt (None when not listed):
    (the tag printed, the failure to report or None). Shared by the streaming differential."""
    if outcome != "pass":
        if listed is None:
            return outcome + " NOT LISTED", f"{name}: {outcome}, not in known_differences.txt"
        if listed[0] != outcome:
            return (outcome + f" (listed as {listed[0]})",
                    f"{name}: {outcome}, listed as {listed[0]}")
        return outcome + " (known)", None
    if listed is not None:
        return ("pass, LISTED AS A KNOWN DIFFERENCE: delete its line",
                f"{name}: passes, delete it from known_differences.txt")
    return "pass", None


def spark_error_text(e):
    cond = None
    for attr in ("getCondition", "getErrorClass"):
        fn = getattr(e, attr, None)
        if fn:
            try:
                cond = fn()
            except Exception:  # noqa: BLE001 (py4j may fail to answer; the message remains)
                cond = None
            if cond:
                break
    java = getattr(e, "java_exception", None)  # a Py4JJavaError (Spark's internal errors)
    text = str(java.getMessage()) if java is not None else str(e)
    msg = text.strip().splitlines()[0] if text.strip() else type(e).__name__
    return f"[{cond}] {msg}" if cond and f"[{cond}]" not in msg else msg


def quiet_spark_errors(spark):
    """Each Spark refusal is an answer to compare, not a log line: the JVM's log and PySpark's
    loggers of query errors (which print every stack trace) are silenced."""
    spark.sparkContext.setLogLevel("OFF")
    from pyspark.logger import PySparkLogger
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True


def run_spark(spark, cases):
    results = {}
    for case in cases:
        try:
            df = spark.sql(case.query)
            fields = df.schema.fields
            rows = [[values.from_spark(r[i], f.dataType) for i, f in enumerate(fields)]
                    for r in df.collect()]
            results[case.name] = ("rows", rows)
        except Exception as e:  # noqa: BLE001 (every Spark refusal is an answer to compare)
            results[case.name] = ("error", spark_error_text(e))
    return results


# ---------------------------------------------------------------------------------------------
# The cache of Spark's answers (and of the tables Spark writes for Sluice)

CACHE_FORMAT = "1"  # bump when what a cache entry holds changes


def cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sluice", "differential")


def spark_version():
    import pyspark  # the version without starting the JVM
    return pyspark.__version__


def harness_hash():
    """The files that shape Spark's answers and tables: the tables, the canonical values, the
    session's configuration."""
    h = hashlib.sha256(CACHE_FORMAT.encode())
    for path in (os.path.join(HERE, "tables.py"), os.path.join(HERE, "values.py"),
                 peers.__file__):
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


class SparkCache:
    """Spark's answer per case: one pickle file per (query, Spark version, harness hash)."""

    def __init__(self, enabled):
        self.enabled = enabled
        self.prefix = f"{spark_version()}-{harness_hash()}"
        self.dir = os.path.join(cache_dir(), "answers")
        self.warehouse = os.path.join(cache_dir(), f"warehouse-{self.prefix}")

    def _path(self, case):
        key = hashlib.sha256(f"{self.prefix}\n{case.query}".encode()).hexdigest()
        return os.path.join(self.dir, key[:2], key + ".pickle")

    def get(self, case):
        if not self.enabled:
            return None
        try:
            with open(self._path(case), "rb") as f:
                return pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError):
            return None

    def put(self, case, result):
        path = self._path(case)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump(result, f)
        os.replace(tmp, path)

    def has_warehouse(self):
        return self.enabled and os.path.isfile(os.path.join(self.warehouse, "COMPLETE"))

    def save_warehouse(self, warehouse):
        tmp = f"{self.warehouse}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(warehouse, tmp)
        open(os.path.join(tmp, "COMPLETE"), "w").close()
        shutil.rmtree(self.warehouse, ignore_errors=True)
        os.replace(tmp, self.warehouse)

    def copy_warehouse(self, warehouse):
        shutil.copytree(self.warehouse, warehouse,
                        ignore=lambda d, names: ["COMPLETE"] if d == self.warehouse else [])


# ---------------------------------------------------------------------------------------------
# Sluice

def sluice_statement(case):
    return (f"SELECT main.to_json(_q) AS j, main.typeof(_q) AS t FROM (\n{case.query}\n) AS _q")


def run_sluice(warehouse, cases, timeout):
    """Runs the cases as few scripts as the errors allow. Returns {name: (kind, value)}: kind
    "rows" (canonical rows), "error" (Sluice's message) or "crash"."""
    results = {}
    pending = list(cases)
    env = {**os.environ, "TZ": "UTC"}
    while pending:
        script = []
        for case in pending:
            script.append(f"SELECT '{case.name}' AS {MARKER};")
            script.append(sluice_statement(case) + ";")
        try:
            proc = subprocess.run([peers.sluice_bin(), "sql", "--warehouse", warehouse,
                                   "--format", "json"], input="\n".join(script) + "\n",
                                  text=True, capture_output=True, timeout=timeout, env=env)
            stdout, stderr, code = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            stderr, code = f"timed out after {timeout} s", None
        current, rows = None, {}
        for line in stdout.splitlines():
            line = line.strip()
            if not line.startswith("{"):
                continue
            obj = json.loads(line)
            if MARKER in obj:
                current = obj[MARKER]
                rows[current] = []
            elif current is not None:
                rows[current].append(obj)
        done = 0
        for case in pending:
            if case.name not in rows:
                break
            done += 1
            if case.name == current and code != 0:
                break  # the failing case: its error below
            try:
                results[case.name] = ("rows", [values.sluice_row(r["j"], r["t"])
                                               for r in rows[case.name]])
            except Exception as e:  # noqa: BLE001 (a value the harness cannot read is a crash)
                results[case.name] = ("crash", f"the harness cannot read Sluice's row: {e}")
        if code == 0:
            for case in pending[done:]:  # a script that ended early without an error
                results[case.name] = ("crash", "sluice printed no answer for this case")
            break
        if current is None or current not in rows or done == 0:
            raise SystemExit(f"sluice failed before its first case (exit {code}): {stderr}")
        failing = pending[done - 1]
        err = " ".join(stderr.strip().splitlines()) or f"exit {code} without a message"
        err = re.sub(r"^Error \(statement at line \d+\): ", "", err)
        clear = code == 1 and "INTERNAL" not in err.upper().split(":")[0] and err
        results[failing.name] = ("error" if clear else "crash", err)
        pending = pending[done:]
    return results


# ---------------------------------------------------------------------------------------------
# Comparison and report

def outcome(spark_res, sluice_res, case):
    s_kind, s_val = spark_res
    k_kind, k_val = sluice_res
    if k_kind == "crash":
        return "crash"
    if s_kind == "error":
        if k_kind != "error":
            return "accepts"
        if NOT_UNDERSTOOD.match(k_val) and not SPARK_NOT_UNDERSTOOD.search(s_val):
            return "unclear"
        return "pass"
    if k_kind == "error":
        return "refuses"
    return "pass" if values.rows_equal(s_val, k_val, case.ordered) else "silent"


def show_result(res, limit=6):
    kind, val = res
    if kind != "rows":
        return f"{kind.upper()}: {val[:300]}"
    shown = ["(" + ", ".join(values.show(v) for v in row) + ")" for row in val[:limit]]
    more = f" ... {len(val)} rows" if len(val) > limit else ""
    return "; ".join(shown) + more if shown else "(no rows)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="run the cases whose name matches this regex")
    ap.add_argument("--verbose", action="store_true", help="print every case's answers")
    ap.add_argument("--known", default=os.path.join(HERE, "known_differences.txt"))
    ap.add_argument("--timeout", type=int, default=600, help="seconds per sluice script")
    ap.add_argument("--json", help="write every case's outcome and answers to this file")
    ap.add_argument("--no-cache", action="store_true",
                    help="ask Spark for every case (and rewrite the cache of its answers)")
    args = ap.parse_args()

    t0 = time.monotonic()
    cases = load_cases(args.only)
    catalog_cases = catalog.load_cases(args.only)  # SHOW / DESCRIBE statements (catalog.py)
    known = load_known(args.known)
    if not cases and not catalog_cases:
        raise SystemExit("no case matches")
    work = tempfile.mkdtemp(prefix="sluice-sqldiff-")
    cache = SparkCache(not args.no_cache)
    spark_results = {c.name: r for c in cases if (r := cache.get(c)) is not None}
    missing = [c for c in cases if c.name not in spark_results]
    def start_spark():
        spark = peers.spark()
        quiet_spark_errors(spark)
        return spark

    try:
        warehouse = os.path.join(work, "warehouse")
        if not cases:
            t_tables = time.monotonic()
        elif missing or not cache.has_warehouse():
            spark = start_spark()
            os.makedirs(warehouse)
            tables.create_in_spark(spark, warehouse)
            cache.save_warehouse(warehouse)
            t_tables = time.monotonic()
            answers = run_spark(spark, missing)
            for case in missing:
                spark_results[case.name] = answers[case.name]
                cache.put(case, answers[case.name])
        else:
            cache.copy_warehouse(warehouse)
            t_tables = time.monotonic()
        t_spark = time.monotonic()
        sluice_results = run_sluice(warehouse, cases, args.timeout)
        catalog.SPARK_ERROR_TEXT = spark_error_text
        catalog_spark, catalog_sluice = catalog.run(catalog_cases, work, cache_dir(),
                                                    not args.no_cache, start_spark, args.timeout)
        t_sluice = time.monotonic()
    finally:
        if peers._spark is not None:
            peers._spark.stop()
            peers._spark = None
        shutil.rmtree(work, ignore_errors=True)

    cases += catalog_cases
    spark_results.update(catalog_spark)
    sluice_results.update(catalog_sluice)
    outcomes = {c.name: outcome(spark_results[c.name], sluice_results[c.name], c) for c in cases}
    passed = sum(1 for o in outcomes.values() if o == "pass")
    failures = []
    print(f"SQL differential: {len(cases)} cases")
    for case in cases:
        o = outcomes[case.name]
        listed = known.get(case.name)
        if o == "pass" and not args.verbose and not listed:
            continue
        tag, failure = judge(case.name, o, listed)
        if failure:
            failures.append(failure)
        print(f"\n[{tag}] {case.name}  ({case.file}:{case.line})")
        print(f"  sql:    {' '.join(case.text.split())}")
        print(f"  spark:  {show_result(spark_results[case.name])}")
        print(f"  sluice: {show_result(sluice_results[case.name])}")
        if listed is not None:
            print(f"  reason: {listed[1]}")
    if args.only is None:
        names = {c.name for c in cases}
        for name in known:
            if name not in names:
                failures.append(f"{name}: listed in known_differences.txt but no such case")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([{"name": c.name, "file": c.file, "sql": c.text,
                        "outcome": outcomes[c.name],
                        "spark": show_result(spark_results[c.name], 20),
                        "sluice": show_result(sluice_results[c.name], 20),
                        "known": known.get(c.name)} for c in cases], f, indent=1,
                      ensure_ascii=False)
    by = {k: sum(1 for o in outcomes.values() if o == k) for k in ("pass",) + OUTCOMES}
    elapsed = time.monotonic() - t0
    print(f"\nSQL differential: {passed}/{len(cases)} cases give Spark's answer "
          f"({100.0 * passed / len(cases):.1f} %); " +
          ", ".join(f"{k} {by[k]}" for k in OUTCOMES))
    print(f"time: {elapsed:.0f} s (tables {t_tables - t0:.0f} s, spark {t_spark - t_tables:.0f} s "
          f"for {len(missing)} cases not in the cache, sluice {t_sluice - t_spark:.0f} s)")
    if failures:
        print(f"\nFAILED: {len(failures)} unexpected:")
        for f in failures:
            print("  " + f)
        return 1
    print("OK: every difference is listed in known_differences.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
