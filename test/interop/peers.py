"""The real peers for the interop suites: Spark with Delta, delta-rs, DuckDB, and the Sluice binary.

Every suite under test/interop/ imports this module instead of finding the peers itself. The peers
are installed by `make peers` (scripts/peers.sh) into ${XDG_CACHE_HOME:-~/.cache}/sluice; nothing
here downloads anything. A missing peer is an error that names `make peers`, never a skip.

Environment:
  SLUICE_BIN    the sluice binary under test (ctest passes $<TARGET_FILE:sluice>); default
                build/release/sluice of this checkout
  SLUICE_CACHE  the peers' cache (default ${XDG_CACHE_HOME:-~/.cache}/sluice)
"""

import functools
import glob
import json
import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.environ.get("SLUICE_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sluice")


class PeerMissing(RuntimeError):
    """A peer is not installed: the message says what and that `make peers` installs it."""


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


_spark = None


def spark(kafka=False):
    """One local[2] SparkSession with Delta Lake per process (a suite shares it), UTC, ANSI as
    Spark 4 defaults it, and Delta's state reconstruction validation on. kafka=True adds Spark's
    Kafka connector (format("kafka")); it must be asked for by the first call of the process."""
    global _spark
    if _spark is not None:
        return _spark
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise PeerMissing(f"pyspark is not installed in this Python ({e}): run `make peers` and "
                          f"use {CACHE}/venv/bin/python") from e
    jars = delta_jars() + (spark_kafka_jars() if kafka else [])
    _spark = (SparkSession.builder.master("local[2]").appName("sluice-interop")
              .config("spark.jars", ",".join(jars))
              .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
              .config("spark.sql.catalog.spark_catalog",
                      "org.apache.spark.sql.delta.catalog.DeltaCatalog")
              .config("spark.sql.session.timeZone", "UTC")
              .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
              .config("spark.executor.extraJavaOptions", "-Duser.timezone=UTC")
              .config("spark.sql.shuffle.partitions", "2")
              .config("spark.ui.enabled", "false")
              .config("spark.ui.showConsoleProgress", "false")
              # Delta's snapshot state is computed in this many tasks (default 50): on a small
              # local table each task costs more than it reads.
              .config("spark.databricks.delta.snapshotPartitions", "2")
              .config("spark.ui.showConsoleProgress", "false")
              # Delta's snapshot reconstruction uses 50 partitions by default: far too many
              # tasks for the tiny tables of the tests on two cores.
              .config("spark.databricks.delta.snapshotPartitions", "2")
              .config("spark.driver.memory", "1g")
              .config("spark.databricks.delta.stateReconstructionValidation.enabled", "true")
              .config("spark.sql.warehouse.dir", os.path.join(CACHE, "tmp", "spark-warehouse"))
              .getOrCreate())
    _spark.sparkContext.setLogLevel("ERROR")
    return _spark


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
