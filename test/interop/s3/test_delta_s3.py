"""Delta tables on S3 (moto's S3 server): Sluice writes, delta-rs reads the same rows; delta-rs
writes, Sluice reads; a streaming append into an S3 table; two Sluice writers racing on one S3
table commit every INSERT once (put-if-absent commits); unsupported schemes are refused by name.

Run by ctest through with_moto.sh, which starts moto on a free loopback port and exports
AWS_ENDPOINT_URL_S3 and test credentials (docs/s3.md "Tests"); Sluice finds them there as the AWS
SDKs do, delta-rs gets them as storage_options. Each test uses its own bucket.
"""

import os
import subprocess
import sys
import tempfile
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import peers  # noqa: E402

ENDPOINT = os.environ.get("AWS_ENDPOINT_URL_S3", "")


def _require_moto():
    if not ENDPOINT.startswith("http://127.0.0.1:"):
        raise AssertionError("AWS_ENDPOINT_URL_S3 is not a loopback moto server: run this module "
                             "through test/interop/s3/with_moto.sh (ctest does)")


def storage_options():
    """delta-rs's options for the moto server; conditional put (If-None-Match) for its commits."""
    return {
        "AWS_ENDPOINT_URL": ENDPOINT,
        "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"],
        "AWS_REGION": os.environ.get("AWS_REGION", "us-east-1"),
        "AWS_ALLOW_HTTP": "true",
        "AWS_CONDITIONAL_PUT": "etag",
    }


@pytest.fixture
def bucket():
    _require_moto()
    import boto3

    name = "sluice-" + uuid.uuid4().hex[:12]
    s3 = boto3.client("s3", endpoint_url=ENDPOINT, region_name="us-east-1",
                      aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                      aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"])
    s3.create_bucket(Bucket=name)
    yield name


@pytest.fixture
def warehouse():
    with tempfile.TemporaryDirectory(prefix="sluice-s3-wh-") as d:
        yield d


def sql(warehouse, text, check=True):
    return peers.sluice_sql(warehouse, text, check=check)


def deltalake_rows(uri, version=None):
    dl = peers.deltalake()
    t = dl.DeltaTable(uri, storage_options=storage_options(), version=version)
    return sorted(tuple(r.values()) for r in t.to_pyarrow_table().to_pylist()), t.version()


def sluice_rows(warehouse, query):
    return sorted(tuple(r.values()) for r in sql(warehouse, query).rows)


def test_sluice_writes_deltalake_reads(bucket, warehouse):
    uri = f"s3://{bucket}/tables/events"
    sql(warehouse, f"CREATE TABLE events (id BIGINT, name STRING) LOCATION '{uri}'")
    sql(warehouse, "INSERT INTO events VALUES (1, 'a'), (2, 'b')")
    sql(warehouse, "INSERT INTO events VALUES (3, 'c')")
    expected = [(1, "a"), (2, "b"), (3, "c")]
    rows, version = deltalake_rows(uri)
    assert version == 2
    assert rows == expected
    assert deltalake_rows(uri, version=1)[0] == [(1, "a"), (2, "b")]
    # Sluice reads its own table back by name and by path.
    assert sluice_rows(warehouse, "SELECT id, name FROM events") == expected
    assert sluice_rows(warehouse, f"SELECT id, name FROM delta.`{uri}`") == expected
    # Nothing was written locally under a directory named after the scheme.
    assert not os.path.exists(os.path.join(warehouse, "s3:"))
    assert not os.path.exists("s3:")


def test_deltalake_writes_sluice_reads_and_appends(bucket, warehouse):
    import pyarrow as pa

    dl = peers.deltalake()
    uri = f"s3://{bucket}/from_rs"
    data = pa.table({"id": pa.array([10, 20], pa.int64()), "name": pa.array(["x", "y"])})
    dl.write_deltalake(uri, data, storage_options=storage_options())
    more = pa.table({"id": pa.array([30], pa.int64()), "name": pa.array(["z"])})
    dl.write_deltalake(uri, more, mode="append", storage_options=storage_options())
    assert sluice_rows(warehouse, f"SELECT id, name FROM delta.`{uri}`") == [
        (10, "x"), (20, "y"), (30, "z")]
    assert sluice_rows(warehouse, f"SELECT count(*) FROM delta.`{uri}` VERSION AS OF 0") == [(2,)]
    # Sluice appends to delta-rs's table; delta-rs sees Sluice's commit.
    sql(warehouse, f"INSERT INTO delta.`{uri}` VALUES (40, 'w')")
    rows, version = deltalake_rows(uri)
    assert version == 2
    assert rows == [(10, "x"), (20, "y"), (30, "z"), (40, "w")]


def test_streaming_append_into_s3_table(bucket, warehouse):
    uri = f"s3://{bucket}/stream_out"
    landing = os.path.join(warehouse, "landing")
    os.makedirs(landing)
    with open(os.path.join(landing, "a.json"), "w") as f:
        f.write('{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n')
    sql(warehouse, f"""
        CREATE TABLE sink (id BIGINT, name STRING) LOCATION '{uri}';
        CREATE FLOW to_sink AS INSERT INTO sink BY NAME
          SELECT id, name FROM STREAM read_files('{landing}', format => 'json',
                                                 schema => 'id BIGINT, name STRING');
        REFRESH STREAMING TABLE sink;
    """)
    assert deltalake_rows(uri)[0] == [(1, "a"), (2, "b")]
    with open(os.path.join(landing, "b.json"), "w") as f:
        f.write('{"id": 3, "name": "c"}\n')
    sql(warehouse, "REFRESH STREAMING TABLE sink")
    # A REFRESH with nothing new writes nothing (the sink's txn keeps batches exactly once).
    sql(warehouse, "REFRESH STREAMING TABLE sink")
    rows, version = deltalake_rows(uri)
    assert rows == [(1, "a"), (2, "b"), (3, "c")]
    assert version == 2
    dl = peers.deltalake()
    history = dl.DeltaTable(uri, storage_options=storage_options()).history()
    assert [h["operation"] for h in history].count("STREAMING UPDATE") == 2


def test_two_sluice_writers_race_on_one_s3_table(bucket, warehouse):
    """Each INSERT is one commit; the two processes race for the same versions, the loser of
    each race gets 412 from S3 (If-None-Match: *) and retries at the next version."""
    uri = f"s3://{bucket}/raced"
    sql(warehouse, f"CREATE TABLE raced (writer INT, n INT) LOCATION '{uri}'")
    per_writer = 12
    procs = []
    for w in (1, 2):
        script = "".join(f"INSERT INTO delta.`{uri}` VALUES ({w}, {i});\n"
                         for i in range(per_writer))
        wh = os.path.join(warehouse, f"w{w}")
        os.makedirs(wh)
        procs.append(subprocess.Popen(
            [peers.sluice_bin(), "sql", "--warehouse", wh, "--format", "csv"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        procs[-1].stdin.write(script)
        procs[-1].stdin.close()
    for p in procs:
        code = p.wait(timeout=600)
        assert code == 0, p.stderr.read()
    expected = sorted((w, i) for w in (1, 2) for i in range(per_writer))
    rows, version = deltalake_rows(uri)
    assert rows == expected
    assert version == 2 * per_writer  # CREATE at 0, then one commit per INSERT
    assert sluice_rows(warehouse, f"SELECT writer, n FROM delta.`{uri}`") == expected


@pytest.mark.parametrize("scheme", ["s3a", "gs", "abfss"])
def test_unsupported_schemes_are_refused_by_name(scheme, warehouse):
    cwd = tempfile.mkdtemp(prefix="sluice-s3-cwd-")
    proc = subprocess.run(
        [peers.sluice_bin(), "sql", "--warehouse", warehouse,
         f"CREATE TABLE t (id BIGINT) LOCATION '{scheme}://bucket/t'"],
        capture_output=True, text=True, cwd=cwd, timeout=120)
    assert proc.returncode == 1
    assert f"scheme '{scheme}' is not supported" in proc.stdout + proc.stderr
    proc = subprocess.run(
        [peers.sluice_bin(), "sql", "--warehouse", warehouse,
         f"SELECT * FROM delta.`{scheme}://bucket/t`"],
        capture_output=True, text=True, cwd=cwd, timeout=120)
    assert proc.returncode == 1
    assert f"scheme '{scheme}' is not supported" in proc.stdout + proc.stderr
    proc = subprocess.run(
        [peers.sluice_bin(), "sql", "--warehouse", f"{scheme}://bucket/wh", "SELECT 1"],
        capture_output=True, text=True, cwd=cwd, timeout=120)
    assert proc.returncode == 1
    assert f"scheme '{scheme}' is not supported" in proc.stdout + proc.stderr
    assert os.listdir(cwd) == []
    assert not any(n.startswith(scheme) for n in os.listdir(warehouse))


def test_dml_history_time_travel_and_table_commands_on_s3(bucket, warehouse):
    uri = f"s3://{bucket}/dml"
    sql(warehouse, f"""
        CREATE TABLE d (id BIGINT, s STRING) LOCATION '{uri}';
        INSERT INTO d VALUES (1, 'a'), (2, 'b'), (3, 'c');
        UPDATE d SET s = 'B' WHERE id = 2;
        DELETE FROM d WHERE id = 3;
        MERGE INTO d USING (SELECT 1 AS id, 'A' AS s UNION ALL SELECT 4, 'd') AS src
          ON d.id = src.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
    """)
    expected = [(1, "A"), (2, "B"), (4, "d")]
    assert deltalake_rows(uri)[0] == expected
    assert sluice_rows(warehouse, "SELECT id, s FROM d") == expected
    assert sluice_rows(warehouse, "SELECT id, s FROM d VERSION AS OF 1") == [
        (1, "a"), (2, "b"), (3, "c")]
    assert [r["operation"] for r in sql(
        warehouse, "SELECT version, operation FROM (DESCRIBE HISTORY d) ORDER BY version").rows] \
        == ["CREATE TABLE", "WRITE", "UPDATE", "DELETE", "MERGE"]
    proc = subprocess.run([peers.sluice_bin(), "table", "history", uri, "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count('"operation"') == 5, proc.stdout


def test_settings_give_the_endpoint(bucket, warehouse):
    """Without AWS_ENDPOINT_URL_S3, SET sluice.s3.endpoint points Sluice at the same server."""
    uri = f"s3://{bucket}/by_setting"
    env = {k: v for k, v in os.environ.items() if k != "AWS_ENDPOINT_URL_S3"}
    script = (f"SET sluice.s3.endpoint = '{ENDPOINT}';\n"
              f"CREATE TABLE st (id BIGINT) LOCATION '{uri}';\n"
              "INSERT INTO st VALUES (7);\n"
              "SELECT id FROM st;\n")
    proc = subprocess.run([peers.sluice_bin(), "sql", "--warehouse", warehouse, "--format",
                           "json"], input=script, capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '{"id":7}' in proc.stdout
    assert deltalake_rows(uri)[0] == [(7,)]
    proc = subprocess.run([peers.sluice_bin(), "sql", "--warehouse", warehouse,
                           "SET sluice.s3.endpoint = 'ftp://host'"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1
    assert "'ftp://host' (from sluice.s3.endpoint) is not http(s)://host[:port]" in proc.stdout \
        + proc.stderr
