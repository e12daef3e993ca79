"""Concurrent writers of different engines on one table on the local file system (issue 16,
section 3): Sluice beside delta-rs, and Sluice beside Spark.

Blind appends never conflict (Delta's protocol: an append reads nothing), so every commit of each
writer must be in the log exactly once, one version each, and every row exactly once. Updates of
different partitions do not conflict either; updates of the same rows do, and a writer that
loses must fail (or retry) rather than lose the other's update: the final counter equals the
number of updates that reported success. Afterwards every reader agrees on the table.
"""

import os
import subprocess
import tempfile
import threading
import time

import pyarrow as pa
import pytest

import delta_peers as d
import peers

APPENDS = 40        # per writer (Sluice, delta-rs)
SPARK_APPENDS = 15  # Spark's commits take ~1 s each here
SPARK_UPDATES = 8
UPDATES = 12        # per writer
DEADLINE_S = 180  # every loop below is bounded by this


@pytest.fixture(scope="module")
def wh():
    with tempfile.TemporaryDirectory(prefix="concurrent-") as w:
        yield w


def start_sluice_script(wh, script):
    """Starts one sluice process running `script` (from a file in the warehouse's parent)."""
    fd, path = tempfile.mkstemp(suffix=".sql", dir=os.path.dirname(wh))
    with os.fdopen(fd, "w") as f:
        f.write(script)
    return subprocess.Popen([peers.sluice_bin(), "sql", "--warehouse", wh, "--format", "csv",
                             "--file", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(proc):
    out, err = proc.communicate(timeout=DEADLINE_S)
    assert proc.returncode == 0, f"sluice failed (exit {proc.returncode}): {err}"
    return out


def engines_by_version(path):
    """[(version, engineInfo)] of every commit after the first."""
    out = []
    for v, actions in sorted(d.log_commits(path).items()):
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        out.append((v, info.get("engineInfo", info.get("clientVersion", "?"))))
    return out[1:]


def check_appends(wh, name, expected_rows, engines):
    path = os.path.join(wh, name)
    commits = d.log_commits(path)
    versions = sorted(commits)
    assert versions == list(range(len(versions))), f"versions not contiguous: {versions}"
    by_engine = {}
    for _, engine in engines_by_version(path):
        kind = next((k for k in engines if k.lower() in engine.lower()), engine)
        by_engine[kind] = by_engine.get(kind, 0) + 1
    assert by_engine == {k: APPENDS for k in engines}, by_engine
    switches = sum(1 for (_, a), (_, b) in zip(engines_by_version(path),
                                               engines_by_version(path)[1:]) if a != b)
    print(f"{name}: {len(versions)} commits, the writer changes {switches} times")
    assert switches >= 2, f"{name}: the writers did not overlap (one ran after the other)"
    rows = d.sluice_rows_at(wh, name, [None])[None]
    assert rows == sorted(expected_rows, key=repr), d.diff(rows, expected_rows, "table", "written")
    d.check_table(wh, name, versions=[versions[-1]], history=False)


def test_sluice_and_delta_rs_append_at_once(wh):
    dl = peers.deltalake()
    peers.sluice_sql(wh, "CREATE TABLE appends (id INT, who VARCHAR)")
    path = os.path.join(wh, "appends")
    # A query between Sluice's commits spaces them out to about delta-rs's pace, and delta-rs
    # starts once Sluice's first commit is in (a loaded machine can start the sluice process
    # after delta-rs's 40 appends are done: the writers then do not overlap)
    proc = start_sluice_script(wh, "\n".join(
        f"INSERT INTO appends VALUES ({i}, 'sluice'); SELECT count(*) FROM range(20000000);"
        for i in range(APPENDS)))
    first = os.path.join(path, "_delta_log", f"{1:020d}.json")
    t0 = time.monotonic()
    while not os.path.exists(first) and time.monotonic() - t0 < DEADLINE_S:
        time.sleep(0.02)
    errors = []
    for i in range(APPENDS):
        try:
            dl.write_deltalake(path, pa.table({"id": pa.array([i], pa.int32()),
                                               "who": pa.array(["rs"])}), mode="append")
        except Exception as e:  # recorded: a blind append must never fail
            errors.append(f"{i}: {e}")
    finish(proc)
    assert not errors, errors
    expected = [(i, w) for i in range(APPENDS) for w in ("sluice", "rs")]
    check_appends(wh, "appends", expected, ["Sluice", "delta-rs"])


def test_sluice_and_spark_append_at_once(wh):
    peers.sluice_sql(wh, "CREATE TABLE spark_appends (id INT, who VARCHAR)")
    path = os.path.join(wh, "spark_appends")
    spark = peers.spark()
    spark.sql(f"INSERT INTO delta.`{path}` VALUES (-1, 'warm-up')")
    spark.sql(f"DELETE FROM delta.`{path}` WHERE id = -1")
    # Spark's commits take ~0.3 s here; Sluice's a few ms: Sluice waits a little between them
    # Sluice starts once Spark's first commit is in (Spark's first commits are slow to start);
    # a query between Sluice's commits spaces them out to about Spark's pace
    started = []

    def start_after_first_spark_commit():
        first = os.path.join(path, "_delta_log", f"{3:020d}.json")
        t0 = time.monotonic()
        while not os.path.exists(first) and time.monotonic() - t0 < DEADLINE_S:
            time.sleep(0.05)
        started.append(start_sluice_script(wh, "\n".join(
            f"INSERT INTO spark_appends VALUES ({i}, 'sluice');"
            " SELECT count(*) FROM range(200000000);" for i in range(SPARK_APPENDS))))

    starter = threading.Thread(target=start_after_first_spark_commit)
    starter.start()
    for i in range(SPARK_APPENDS):
        spark.sql(f"INSERT INTO delta.`{path}` VALUES ({i}, 'spark')")
    starter.join(DEADLINE_S)
    finish(started[0])
    # the warm-up commits are versions 1 and 2: skip them in the count
    expected = [(i, w) for i in range(SPARK_APPENDS) for w in ("sluice", "spark")]
    commits = d.log_commits(path)
    for v in (1, 2):
        del commits[v]
    path_engines = [(v, next(a["commitInfo"] for a in c if "commitInfo" in a)["engineInfo"])
                    for v, c in sorted(commits.items())][1:]
    kinds = {}
    for _, e in path_engines:
        k = "Sluice" if "Sluice" in e else "Spark" if "Spark" in e else e
        kinds[k] = kinds.get(k, 0) + 1
    assert kinds == {"Sluice": SPARK_APPENDS, "Spark": SPARK_APPENDS}, kinds
    order = ["Sluice" if "Sluice" in e else "Spark" for _, e in path_engines]
    switches = sum(1 for a, b in zip(order, order[1:]) if a != b)
    print(f"spark_appends: the writer changes {switches} times")
    assert switches >= 2, f"the writers did not overlap: {order}"
    rows = d.sluice_rows_at(wh, "spark_appends", [None])[None]
    assert rows == sorted(expected, key=repr), d.diff(rows, expected, "table", "written")
    d.check_table(wh, "spark_appends", versions=[], history=True)


def sluice_update(wh, sql):
    """Runs one UPDATE in its own sluice process: (ok, error text)."""
    proc = peers.sluice_sql(wh, sql, check=False)
    return proc.returncode == 0, proc.stderr.strip()


def rs_updates(path, predicate, results):
    dl = peers.deltalake()
    for _ in range(UPDATES):
        try:
            dl.DeltaTable(path).update(predicate=predicate, updates={"n": "n + 1"})
            results.append((True, ""))
        except Exception as e:
            results.append((False, f"{type(e).__name__}: {e}"))


@pytest.mark.parametrize("same_rows", [False, True])
def test_sluice_and_delta_rs_update_at_once(wh, same_rows):
    dl = peers.deltalake()
    name = "counters_shared" if same_rows else "counters_disjoint"
    peers.sluice_sql(wh, f"""
CREATE TABLE {name} (k VARCHAR, n BIGINT) PARTITIONED BY (k);
INSERT INTO {name} VALUES ('sluice', 0), ('rs', 0), ('both', 0);""")
    path = os.path.join(wh, name)
    sluice_key, rs_key = ("both", "both") if same_rows else ("sluice", "rs")
    rs_results = []
    thread = threading.Thread(target=rs_updates, args=(path, f"k = '{rs_key}'", rs_results))
    thread.start()
    sluice_results = []
    t0 = time.monotonic()
    for _ in range(UPDATES):
        assert time.monotonic() - t0 < DEADLINE_S
        sluice_results.append(sluice_update(
            wh, f"UPDATE {name} SET n = n + 1 WHERE k = '{sluice_key}'"))
    thread.join(DEADLINE_S)
    assert not thread.is_alive()
    ok_sluice = sum(1 for ok, _ in sluice_results if ok)
    ok_rs = sum(1 for ok, _ in rs_results if ok)
    failures = [e for ok, e in sluice_results if not ok] + [e for ok, e in rs_results if not ok]
    print(f"{name}: Sluice {ok_sluice}/{UPDATES} and delta-rs {ok_rs}/{UPDATES} updates committed;"
          f" failures: {failures}")
    for ok, e in sluice_results:
        assert ok or "Concurrent" in e, f"a Sluice update failed but not with a conflict: {e}"
    for ok, e in rs_results:
        assert ok or "Commit" in e or "onflict" in e or "Concurrent" in e, (
            f"a delta-rs update failed but not with a conflict: {e}")
    if not same_rows:
        # different partitions: Delta's protocol says these never conflict, for Sluice
        assert ok_sluice == UPDATES, failures
    counts = {r["k"]: r["n"] for r in peers.sluice_sql(wh, f"SELECT k, n FROM {name}").rows}
    if same_rows:
        assert counts == {"sluice": 0, "rs": 0, "both": ok_sluice + ok_rs}, (counts, failures)
    else:
        assert counts == {"sluice": ok_sluice, "rs": ok_rs, "both": 0}, (counts, failures)
    versions = sorted(d.log_commits(path))
    assert versions == list(range(2 + ok_sluice + ok_rs)), versions
    d.check_table(wh, name, versions=[], history=True)
    # the other engine can still write after the race
    dl.write_deltalake(path, pa.table({"k": ["after"], "n": pa.array([1], pa.int64())}),
                       mode="append")
    peers.sluice_sql(wh, f"INSERT INTO {name} VALUES ('after', 2)")
    d.check_table(wh, name, versions=[], history=False)


@pytest.mark.parametrize("same_rows", [False, True])
def test_sluice_and_spark_update_at_once(wh, same_rows):
    name = "spark_counters_shared" if same_rows else "spark_counters"
    peers.sluice_sql(wh, f"""
CREATE TABLE {name} (k VARCHAR, n BIGINT) PARTITIONED BY (k);
INSERT INTO {name} VALUES ('sluice', 0), ('spark', 0), ('both', 0);""")
    path = os.path.join(wh, name)
    sluice_key, spark_key = ("both", "both") if same_rows else ("sluice", "spark")
    spark = peers.spark()
    proc_results = []

    def sluice_loop():
        for _ in range(SPARK_UPDATES):
            proc_results.append(sluice_update(
                wh, f"UPDATE {name} SET n = n + 1 WHERE k = '{sluice_key}'"))

    thread = threading.Thread(target=sluice_loop)
    thread.start()
    spark_ok, spark_errors = 0, []
    for _ in range(SPARK_UPDATES):
        try:
            spark.sql(f"UPDATE delta.`{path}` SET n = n + 1 WHERE k = '{spark_key}'")
            spark_ok += 1
        except Exception as e:
            # py4j's first line is generic; the Delta exception's class and message follow
            spark_errors.append(" ".join(str(e).split())[:400])
    thread.join(DEADLINE_S)
    assert not thread.is_alive()
    failures = [e for ok, e in proc_results if not ok]
    ok_sluice = len(proc_results) - len(failures)
    print(f"{name}: Sluice {ok_sluice}/{SPARK_UPDATES}, Spark {spark_ok}/{SPARK_UPDATES};"
          f" failures: {failures} {spark_errors}")
    if not same_rows:
        # different partitions: neither may conflict (Spark's WriteSerializable, Sluice's checker)
        assert not failures and not spark_errors
    for e in failures:
        assert "Concurrent" in e, f"a Sluice update failed but not with a conflict: {e}"
    for e in spark_errors:
        assert "Concurrent" in e or "CONCURRENT" in e, (
            f"a Spark update failed but not with a conflict: {e}")
    counts = {r["k"]: r["n"] for r in peers.sluice_sql(wh, f"SELECT k, n FROM {name}").rows}
    if same_rows:
        # the same row: a loser fails with a conflict, nobody's committed update is lost
        assert counts == {"sluice": 0, "spark": 0, "both": ok_sluice + spark_ok}, (
            counts, failures, spark_errors)
    else:
        assert counts == {"sluice": SPARK_UPDATES, "spark": SPARK_UPDATES, "both": 0}, counts
    versions = sorted(d.log_commits(path))
    assert versions == list(range(2 + ok_sluice + spark_ok)), versions
    d.check_table(wh, name, versions=[], history=True)
