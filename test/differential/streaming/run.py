"""The streaming differential: every case of cases/*.py runs on Spark Structured Streaming and on
Sluice, and after every run step the sink's rows, the batches (ids, numInputRows), the watermark,
the state operators' numRowsTotal and numRowsDroppedByWatermark, and refusals are compared.

    scripts/peers/run-python.sh test/differential/streaming/run.py [--only REGEX] [--verbose]
        [--no-cache] [--seeds N]

case_model.py says what a case is; spark_side.py and sluice_side.py how each engine runs it;
observations.py what is compared. Values are compared with the SQL differential's type-aware
equality (../sql/values.py); rows as multisets.

Kafka cases run against a real broker: SLUICE_KAFKA_BOOTSTRAP's, or one this run starts
(scripts/kafka.sh) when a selected case has a Kafka source and stops at its end.

Spark's observations are cached per case (key: the case's text, the Spark version and HARNESS)
in ${XDG_CACHE_HOME:-~/.cache}/sluice/differential-streaming/, so a rerun starts Spark only for
new or changed cases. Sluice runs every time.

A case's outcome is `pass` or the set of what differs, joined by `+`, from: `refuses` (Spark
runs it, Sluice refuses or fails), `accepts` (Sluice runs what Spark refuses), `message` (both
refuse, but an error lacks one of the case's words), `columns`, `rows` (sink or emitted rows),
`metrics` (batches, input rows, watermark, state operators), `crash` (Sluice failed without a
clear error). known_differences.txt lists the accepted ones, `case | outcome | reason`; the run
fails on an unlisted difference, a listed case with another outcome or that passes, and a
listed name that is no case. It prints the pass count.
"""

import argparse
import glob
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TESTS, "interop"))
sys.path.insert(0, os.path.join(TESTS, "differential", "sql"))
sys.path.insert(0, HERE)

os.environ["TZ"] = "UTC"
time.tzset()

import case_model  # noqa: E402
import kafka_peer  # noqa: E402
import observations  # noqa: E402
import peers  # noqa: E402
import sluice_side  # noqa: E402
import spark_side  # noqa: E402
import values  # noqa: E402

# Bump when what the Spark side records changes, so that cached answers are recomputed.
HARNESS = "2"  # 2: Spark's idle-trigger progress events kept apart (observations.py)
ASPECTS = ("refuses", "accepts", "message", "columns", "rows", "metrics", "crash")
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                     "sluice", "differential-streaming")


def _sql_differential():
    """The SQL differential's run.py, for its Spark error text, log silencing and judge()."""
    spec = importlib.util.spec_from_file_location(
        "sql_differential", os.path.join(TESTS, "differential", "sql", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_known(path):
    known = {}
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|", 2)]
            if (len(parts) != 3 or not parts[2] or
                    not all(a in ASPECTS for a in parts[1].split("+"))):
                raise SystemExit(f"{path}:{n}: expected `case | outcome | reason` with outcome "
                                 f"one or more of {'+'.join(ASPECTS)}, got {line!r}")
            if parts[0] in known:
                raise SystemExit(f"{path}:{n}: {parts[0]} is listed twice")
            known[parts[0]] = (normal_outcome(parts[1]), parts[2])
    return known


def normal_outcome(text):
    return "+".join(a for a in ASPECTS if a in text.split("+"))


# ---------------------------------------------------------------------------------------------
# Spark, cached

def spark_version():
    from importlib.metadata import version
    return version("pyspark")


def cache_path(case, sv):
    key = hashlib.sha256(f"{HARNESS}\n{sv}\n{case.text}".encode()).hexdigest()[:32]
    return os.path.join(CACHE, f"{case.name}-{key}.json")


def spark_observations(cases, work, use_cache):
    sv = spark_version()
    out, todo = {}, []
    for case in cases:
        path = cache_path(case, sv)
        if use_cache and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                out[case.name] = observations.decode(json.load(f))
        else:
            todo.append(case)
    if todo:
        sqld = _sql_differential()
        spark = peers.spark(kafka=any(has_kafka(c) for c in todo))
        sqld.quiet_spark_errors(spark)
        # peers.py turns Delta's snapshot validation on for the Delta suites; here it only
        # doubles the time of every run.
        spark.conf.set("spark.databricks.delta.stateReconstructionValidation.enabled", "false")
        os.makedirs(CACHE, exist_ok=True)
        for case in todo:
            obs = spark_side.run_case(spark, case, work, sqld.spark_error_text)
            encoded = observations.encode(obs)
            tmp = cache_path(case, sv) + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(encoded, f)
            os.replace(tmp, cache_path(case, sv))
            for old in glob.glob(os.path.join(CACHE, f"{glob.escape(case.name)}-*.json")):
                if re.fullmatch(re.escape(case.name) + r"-[0-9a-f]{32}\.json",
                                os.path.basename(old)) and old != cache_path(case, sv):
                    os.remove(old)  # the answer to an earlier text of the case
            out[case.name] = observations.decode(encoded)
    return out, len(todo)


def has_kafka(case):
    return any(s.format == "kafka" for s in case.sources.values())


# ---------------------------------------------------------------------------------------------
# Comparison

def compare(case, spark_obs, sluice_obs):
    """(outcome, [notes]): `pass` or the aspects that differ, and what differs where."""
    found, notes = set(), []
    for i in range(max(len(spark_obs), len(sluice_obs))):
        where = f"run {i + 1}"
        s = spark_obs[i] if i < len(spark_obs) else None
        k = sluice_obs[i] if i < len(sluice_obs) else None
        if k is not None and "crash" in k:
            found.add("crash")
            notes.append(f"{where}: sluice crashed: {k['crash'][:300]}")
            break
        if s is None or k is None:
            found.add("metrics")
            notes.append(f"{where}: only {'sluice' if s is None else 'spark'} ran it")
            break
        if "error" in s or "error" in k:
            if "error" not in k:
                found.add("accepts")
                notes.append(f"{where}: spark refuses: {s['error'][:300]}")
            elif "error" not in s:
                found.add("refuses")
                notes.append(f"{where}: sluice refuses: {k['error'][:300]}")
            else:
                missing = [w for w in case.words
                           if w not in s["error"].lower() or w not in k["error"].lower()]
                if missing:
                    found.add("message")
                    notes.append(f"{where}: an error lacks {missing}:\n    spark:  "
                                 f"{s['error'][:300]}\n    sluice: {k['error'][:300]}")
            break
        if s["cols"] != k["cols"]:
            found.add("columns")
            notes.append(f"{where}: columns spark {s['cols']} sluice {k['cols']}")
        if "rows" in s and not values.rows_equal(s["rows"], k["rows"], False):
            found.add("rows")
            notes.append(f"{where}: sink rows\n    spark:  {show_rows(s['rows'])}\n"
                         f"    sluice: {show_rows(k['rows'])}")
        if "emitted" in s and not (len(s["emitted"]) == len(k["emitted"]) and all(
                values.rows_equal(a, b, False) for a, b in zip(s["emitted"], k["emitted"]))):
            found.add("rows")
            notes.append(f"{where}: rows emitted per batch\n    spark:  "
                         f"{[show_rows(b) for b in s['emitted']]}\n    sluice: "
                         f"{[show_rows(b) for b in k['emitted']]}")
        if s["batches"] != k["batches"]:
            found.add("metrics")
            notes.append(f"{where}: batches\n    spark:  {show_batches(s['batches'])}\n"
                         f"    sluice: {show_batches(k['batches'])}")
    return ("+".join(a for a in ASPECTS if a in found) or "pass"), notes


def show_rows(rows, limit=8):
    shown = ["(" + ", ".join(values.show(v) for v in row) + ")" for row in rows[:limit]]
    return ("; ".join(shown) + (f" ... {len(rows)} rows" if len(rows) > limit else "")) \
        if shown else "(no rows)"


def show_batches(batches):
    def one(b):
        wm = b["wm"][:19].replace("T", " ") if b["wm"] else "-"
        ops = ",".join(f"{o[0]}:{o[1]}/{o[2]}" for o in b["ops"])
        return f"#{b['id']} in={b['in']} wm={wm}" + (f" {ops}" if ops else "")
    return " | ".join(one(b) for b in batches) or "(no batches)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="run the cases whose name matches this regex")
    ap.add_argument("--verbose", action="store_true", help="print every case")
    ap.add_argument("--no-cache", action="store_true", help="run Spark for every case")
    ap.add_argument("--known", default=os.path.join(HERE, "known_differences.txt"))
    ap.add_argument("--timeout", type=int, default=300, help="seconds per sluice process")
    ap.add_argument("--seeds", type=int, default=None,
                    help="generated cases: this many seeds (default: the fixed ones)")
    args = ap.parse_args()
    if args.seeds is not None:
        os.environ["SLUICE_STREAMING_DIFF_SEEDS"] = str(args.seeds)

    t0 = time.monotonic()
    cases = case_model.load_cases(args.only)
    known = load_known(args.known)
    if not cases:
        raise SystemExit("no case matches")
    work = tempfile.mkdtemp(prefix="sluice-streamdiff-")
    try:
        spark_obs, spark_ran = spark_observations(cases, work, not args.no_cache)
        t_spark = time.monotonic()
        sluice_obs = {c.name: sluice_side.run_case(c, work, args.timeout) for c in cases}
        t_sluice = time.monotonic()
    finally:
        if peers._spark is not None:
            peers._spark.stop()
            peers._spark = None
        kafka_peer.stop()  # the broker this run started for its Kafka cases, if any
        shutil.rmtree(work, ignore_errors=True)

    failures, passed = [], 0
    print(f"Streaming differential: {len(cases)} cases")
    judge = _sql_differential().judge
    for case in cases:
        outcome, notes = compare(case, spark_obs[case.name], sluice_obs[case.name])
        listed = known.get(case.name)
        passed += outcome == "pass"
        if outcome == "pass" and not listed and not args.verbose:
            continue
        tag, failure = judge(case.name, outcome, listed)
        if failure:
            failures.append(failure)
        print(f"\n[{tag}] {case.name}  ({case.file})")
        for note in notes:
            print("  " + note)
        idle = [f"run {i + 1} #{b}" for i, o in enumerate(spark_obs[case.name])
                for b in o.get("idle", [])]
        if idle:
            print("  not compared: Spark's progress of idle triggers (no batch): " +
                  ", ".join(idle))
        if args.verbose and outcome == "pass":
            for i, o in enumerate(sluice_obs[case.name]):
                print(f"  run {i + 1}: " + (o.get("error") or show_batches(o["batches"])))
        if listed is not None:
            print(f"  reason: {listed[1]}")
    if args.only is None:
        names = {c.name for c in cases}
        for name in known:
            if name not in names:
                failures.append(f"{name}: listed in known_differences.txt but no such case")
    elapsed = time.monotonic() - t0
    print(f"\nStreaming differential: {passed}/{len(cases)} cases give Spark's answers")
    print(f"time: {elapsed:.0f} s (spark {t_spark - t0:.0f} s, {spark_ran} cases run, the rest "
          f"cached; sluice {t_sluice - t_spark:.0f} s)")
    if failures:
        print(f"\nFAILED: {len(failures)} unexpected:")
        for f in failures:
            print("  " + f)
        return 1
    print("OK: every difference is listed in known_differences.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
