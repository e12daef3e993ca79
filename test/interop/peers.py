"""The real peers for the interop suites: Spark with Delta, delta-rs, DuckDB, a Kafka broker, and
the Sluice binary.

Every suite under test/interop/ imports this module instead of finding the peers itself, and so do
the peers' benchmarks (bench/peers/, bench/latency/, bench/delta_dv_scan.py: they put this
directory on sys.path). It imports nothing beyond the standard library until a peer is asked for.
The peers are installed by `make peers` (scripts/peers.sh) into ${XDG_CACHE_HOME:-~/.cache}/sluice;
nothing here downloads anything. A missing peer is an error that names `make peers`, never a skip.

Environment:
  SLUICE_BIN    the sluice binary under test (ctest passes $<TARGET_FILE:sluice>); default
                build/release/sluice of this checkout
  SLUICE_CACHE  the peers' cache (default ${XDG_CACHE_HOME:-~/.cache}/sluice)
"""

import contextlib
import functools
import glob
import json
import os
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.environ.get("SLUICE_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sluice")


class PeerMissing(RuntimeError):
    """A peer is not installed: the message says what and that `make peers` installs it."""


class PeerFailed(RuntimeError):
    """A step with a peer failed (a broker that did not start, a topic not created): the
    message names the step and carries the peer's error."""


def sluice_bin():
    path = os.environ.get("SLUICE_BIN") or os.path.join(REPO, "build", "release", "sluice")
    if not os.access(path, os.X_OK):
        raise PeerMissing(f"the sluice binary {path} does not exist: build it (make build) "
                          "or set SLUICE_BIN")
    return path


def sluice_sql(warehouse, sql, fmt="json", check=True, timeout=300, env=None):
    """Runs `sluice sql --warehouse W --format FMT` with SQL on stdin (a script: one or more
    statements). Returns the CompletedProcess; with check=True a non-zero exit raises with the
    error text. With fmt="json" the rows of the last result are in .rows (one dict per row)."""
    proc = subprocess.run([sluice_bin(), "sql", "--warehouse", warehouse, "--format", fmt],
                          input=sql, text=True, capture_output=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"sluice sql failed (exit {proc.returncode}):\n{sql}\n"
                             f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
    proc.rows = []
    if fmt == "json":
        for line in proc.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                proc.rows.append(json.loads(line))
    return proc


@functools.lru_cache(maxsize=None)
def delta_jars():
    jars = sorted(glob.glob(os.path.join(CACHE, "jars", "delta", "*.jar")))
    if not jars:
        raise PeerMissing(f"the Delta Lake jars for Spark are not in {CACHE}/jars/delta: "
                          "run `make peers`")
    return jars


@functools.lru_cache(maxsize=None)
def spark_kafka_jars():
    jars = sorted(glob.glob(os.path.join(CACHE, "jars", "spark-kafka", "*.jar")))
    if not jars:
        raise PeerMissing(f"Spark's Kafka connector is not in {CACHE}/jars/spark-kafka: "
                          "run `make peers`")
    return jars


def spark_builder(app, delta=True, kafka=False, conf=None):
    """A SparkSession builder with the settings every Sluice run of Spark shares: local[2], UTC
    (the session's time zone and the JVM's), 2 shuffle partitions, the UI and the console
    progress off. delta=True adds the Delta jars, extension and catalog and Delta's snapshot
    partitions = 2; kafka=True adds Spark's Kafka connector (format("kafka")); conf: more settings
    {key: value}, applied last (they win). The caller calls getOrCreate()."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise PeerMissing(f"pyspark is not installed in this Python ({e}): run `make peers` and "
                          f"use {CACHE}/venv/bin/python") from e
    jars = (delta_jars() if delta else []) + (spark_kafka_jars() if kafka else [])
    b = SparkSession.builder.master("local[2]").appName(app)
    if jars:
        b = b.config("spark.jars", ",".join(jars))
    settings = {}
    if delta:
        settings.update({
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            # Delta's snapshot state is reconstructed in this many tasks (default 50): far too
            # many for small tables on two cores (a streaming batch cost ~15 s with 50).
            "spark.databricks.delta.snapshotPartitions": "2",
        })
    settings.update({
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
        "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
        "spark.sql.shuffle.partitions": "2",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    })
    settings.update(conf or {})
    for k, v in settings.items():
        b = b.config(k, v)
    return b


_spark = None


def spark(kafka=False):
    """One local[2] SparkSession with Delta Lake per process (a suite shares it), UTC, ANSI as
    Spark 4 defaults it, and Delta's state reconstruction validation on. kafka=True adds Spark's
    Kafka connector (format("kafka")); it must be asked for by the first call of the process."""
    global _spark
    if _spark is not None:
        return _spark
    _spark = spark_builder("sluice-interop", kafka=kafka, conf={
        "spark.driver.memory": "1g",
        "spark.databricks.delta.stateReconstructionValidation.enabled": "true",
        "spark.sql.warehouse.dir": os.path.join(CACHE, "tmp", "spark-warehouse"),
    }).getOrCreate()
    _spark.sparkContext.setLogLevel("ERROR")
    return _spark


def start_broker(work):
    """Starts a real Kafka broker (scripts/kafka.sh) with its state in work/kafka; returns (its
    directory, for stop_broker; the bootstrap servers "127.0.0.1:PORT")."""
    d = os.path.join(work, "kafka")
    p = subprocess.run([os.path.join(REPO, "scripts", "kafka.sh"), "start", d],
                       capture_output=True, text=True, timeout=180)
    if p.returncode != 0:
        raise PeerFailed(f"starting the broker (scripts/kafka.sh start): {p.stderr.strip()}")
    return d, p.stdout.strip().splitlines()[-1]


def stop_broker(d):
    """Stops the broker of start_broker's directory `d` and removes the directory."""
    subprocess.run([os.path.join(REPO, "scripts", "kafka.sh"), "stop", d],
                   capture_output=True, text=True, timeout=120)


@contextlib.contextmanager
def kafka_broker(work, bootstrap=None):
    """`with kafka_broker(work, bootstrap) as servers:` the bootstrap servers: `bootstrap` when
    given (a broker someone else runs), else those of a broker start_broker(work) starts, which is
    stopped when the block ends, however it ends."""
    if bootstrap:
        yield bootstrap
        return
    d, servers = start_broker(work)
    try:
        yield servers
    finally:
        stop_broker(d)


def recreate_topics(bootstrap, names, partitions, config=None, timeout_s=60):
    """Creates the topics `names` afresh at `bootstrap` (deleted first when they exist), each of
    `partitions` partitions, replication 1, with the topic `config` ({key: value}). A deletion
    completes asynchronously: the creation is retried until `timeout_s` has passed."""
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    stale = [n for n in names if n in admin.list_topics(timeout=30).topics]
    if stale:
        for f in admin.delete_topics(stale, operation_timeout=30).values():
            f.result()
    deadline = time.monotonic() + timeout_s
    todo = list(names)
    while todo:
        futures = admin.create_topics(
            [NewTopic(n, num_partitions=partitions, replication_factor=1, config=config or {})
             for n in todo], operation_timeout=30)
        failed = {}
        for n, f in futures.items():
            try:
                f.result()
            except Exception as e:  # noqa: BLE001 - TOPIC_ALREADY_EXISTS while a delete completes
                failed[n] = e
        if failed and time.monotonic() > deadline:
            raise PeerFailed("creating topic(s) " + "; ".join(f"{n}: {e}"
                                                              for n, e in failed.items()))
        todo = list(failed)
        if todo:
            time.sleep(0.5)


def deltalake():
    try:
        import deltalake as dl
    except ImportError as e:
        raise PeerMissing(f"deltalake (delta-rs) is not installed ({e}): run `make peers`") from e
    return dl


def duckdb():
    try:
        import duckdb as dd
    except ImportError as e:
        raise PeerMissing(f"duckdb is not installed ({e}): run `make peers`") from e
    return dd


def duckdb_delta():
    """A new DuckDB connection with the delta extension of the duckdb-ext-delta package LOADed by
    path (offline: no INSTALL, no autoloading from the network)."""
    dd = duckdb()
    try:
        import duckdb_ext
    except ImportError as e:
        raise PeerMissing(f"duckdb-ext-delta is not installed ({e}): run `make peers`") from e
    pattern = os.path.join(duckdb_ext.__path__[0], "extensions", f"v{dd.__version__}", "*",
                           "delta.duckdb_extension")
    found = sorted(glob.glob(pattern))
    if not found:
        raise PeerMissing(f"no delta extension for DuckDB {dd.__version__} ({pattern}): "
                          "run `make peers`")
    con = dd.connect()
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("LOAD " + "'" + found[0].replace("'", "''") + "'")
    return con
