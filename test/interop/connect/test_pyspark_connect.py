"""Spark Connect (issue 22): the unmodified PySpark client against `sluice connect`, compared
with local Spark running the same programs (connect_cases.py).

The server is started on a free port (--port 0; the port is read from its first line of output,
waited for at most 60 s) over a fresh warehouse, and stopped with SIGTERM at the end (waited for
at most 30 s, then killed). The client runs in its own process (connect_client.py), with TZ=UTC
as local Spark's session has.
"""

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import uuid

import pytest

import connect_cases
import peers

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def server():
    warehouse = tempfile.mkdtemp(prefix="sluice-connect-")
    proc = subprocess.Popen([peers.sluice_bin(), "connect", "--port", "0", "--warehouse",
                             warehouse], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    if not ready:
        proc.kill()
        pytest.fail("sluice connect printed nothing within 60 s")
    line = proc.stdout.readline().strip()
    if "listening on" not in line:
        proc.kill()
        pytest.fail(f"sluice connect did not start: {line!r} {proc.stderr.read()}")
    port = int(line.rsplit(":", 1)[1])
    yield {"port": port, "warehouse": warehouse, "proc": proc}
    proc.send_signal(signal.SIGTERM)
    try:
        assert proc.wait(timeout=30) == 0, proc.stderr.read()
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("sluice connect did not stop within 30 s of SIGTERM")


@pytest.fixture(scope="module")
def sluice_results(server):
    env = dict(os.environ, TZ="UTC", PYTHONDONTWRITEBYTECODE="1")
    prefix = "c" + uuid.uuid4().hex[:8]
    proc = subprocess.run([sys.executable, os.path.join(HERE, "connect_client.py"),
                           str(server["port"]), prefix], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["prefix"] = prefix
    return out


@pytest.fixture(scope="module")
def spark_results():
    spark = peers.spark()
    prefix = "c" + uuid.uuid4().hex[:8]
    results = {}
    for case in connect_cases.CASES:
        results[case.__name__] = case(spark, {"table": f"{prefix}_{case.__name__}",
                                              "tmp": tempfile.mkdtemp(prefix="spark-case-")})
    return results


# Where Sluice's answer differs from Spark's for a reason outside the Connect server, the
# difference is written here (case -> (Sluice's text, Spark's text) in the JSON of the result),
# and the test checks that it is exactly that: a fix shows up as a failure to update.
KNOWN_DIFFERENCES = {}


@pytest.mark.parametrize("case", [c.__name__ for c in connect_cases.CASES])
def test_same_answer_as_spark(case, sluice_results, spark_results):
    got = json.dumps(sluice_results["cases"][case], sort_keys=True)
    want = json.dumps(spark_results[case], sort_keys=True)
    if case in KNOWN_DIFFERENCES:
        ours, theirs = KNOWN_DIFFERENCES[case]
        assert ours in got and theirs in want, (got, want)
        got = got.replace(ours, theirs)
    assert got == want


def test_delta_table_is_readable_by_spark(server):
    """A table created and filled over Spark Connect is a Delta table local Spark reads."""
    env = dict(os.environ, TZ="UTC", PYTHONDONTWRITEBYTECODE="1")
    script = (
        "import sys\n"
        "from pyspark.sql import SparkSession\n"
        f"spark = SparkSession.builder.remote('sc://127.0.0.1:{server['port']}').getOrCreate()\n"
        "spark.sql('CREATE TABLE shared_events (id BIGINT, kind STRING) USING DELTA')\n"
        "spark.sql(\"INSERT INTO shared_events VALUES (1, 'click'), (2, 'view')\")\n"
        "spark.stop()\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    path = os.path.join(server["warehouse"], "shared_events")
    got = peers.spark().read.format("delta").load(path).orderBy("id").collect()
    assert [tuple(r) for r in got] == [(1, "click"), (2, "view")]


def test_refusals_name_what_is_not_supported(sluice_results):
    errors = sluice_results["errors"]
    cls, condition, message = errors["unsupported_relation"]
    assert condition == "UNSUPPORTED_CONNECT_FEATURE", errors
    assert "the relation sample (DataFrame.sample)" in message, message
    cls, condition, message = errors["unsupported_expression"]
    assert condition == "UNSUPPORTED_CONNECT_FEATURE", errors
    assert "lambda_function" in message, message
    # What Sluice does not serve yet names the relation or command with its PySpark spelling.
    for probe, names in [("unsupported_command", ["write_operation", "DataFrame.write"]),
                         ("unsupported_stream_relation", ["the relation sample", "on a stream"]),
                         ("foreach_batch", ["writeStream.foreachBatch"]),
                         ("continuous_trigger", ["trigger(continuous=", "micro-batches"])]:
        cls, condition, message = errors[probe]
        assert condition == "UNSUPPORTED_CONNECT_FEATURE", (probe, errors[probe])
        for name in names:
            assert name in message, (probe, message)
    cls, condition, message = errors["missing_table"]
    assert cls == "AnalysisException", errors
    assert "no_such_table_here" in message, message
