"""Checkpoints and the warehouse on S3 (moto's S3 server): streaming tables in a warehouse at
s3://bucket/wh keep their checkpoints (offsets, commits, sources, state) on S3 and their Delta
tables there too; a run killed with SIGKILL, or dying at a named crash point, and restarted
gives every row once and the same aggregation; two processes refreshing one streaming table at
once write every row once (the conditional writes of the logs fence the loser). docs/storage.md
has the design, docs/s3.md the user's view.

Run by ctest through with_moto.sh (AWS_ENDPOINT_URL_S3 and test credentials in the environment).
Each test has its own bucket and its own local cache directory (SLUICE_LOCAL_CACHE_DIR).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import peers  # noqa: E402
from test_delta_s3 import ENDPOINT, bucket, deltalake_rows  # noqa: E402,F401

FILES = 24
ROWS_PER_FILE = 5
SCHEMA = "id BIGINT, k STRING"


def s3_client():
    import boto3

    return boto3.client("s3", endpoint_url=ENDPOINT, region_name="us-east-1",
                        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"])


def keys_under(bucket_name, prefix):
    s3 = s3_client()
    out = []
    token = None
    while True:
        kw = {"Bucket": bucket_name, "Prefix": prefix}
        if token:
            kw["ContinuationToken"] = token
        page = s3.list_objects_v2(**kw)
        out += [o["Key"] for o in page.get("Contents", [])]
        if not page.get("IsTruncated"):
            return out
        token = page["NextContinuationToken"]


def read_object(bucket_name, key):
    return s3_client().get_object(Bucket=bucket_name, Key=key)["Body"].read().decode()


def batch_ids(bucket_name, prefix):
    ids = set()
    for key in keys_under(bucket_name, prefix):
        name = key.rsplit("/", 1)[1]
        if name.isdigit():
            ids.add(int(name))
    return ids


@pytest.fixture
def env():
    """A cwd and a local cache directory of the test's own, checked for stray local dirs."""
    cwd = tempfile.mkdtemp(prefix="sluice-s3-cp-cwd-")
    cache = tempfile.mkdtemp(prefix="sluice-s3-cp-cache-")
    landing = tempfile.mkdtemp(prefix="sluice-s3-cp-landing-")
    for f in range(FILES):
        with open(os.path.join(landing, f"f{f:03d}.json"), "w") as out:
            for j in range(ROWS_PER_FILE):
                i = f * ROWS_PER_FILE + j
                out.write(f'{{"id": {i}, "k": "k{i % 3}"}}\n')
    yield {"cwd": cwd, "cache": cache, "landing": landing,
           "vars": {**os.environ, "SLUICE_LOCAL_CACHE_DIR": cache}}
    # Nothing of an s3:// warehouse or checkpoint is ever made as a local directory.
    try:
        assert not os.path.exists(os.path.join(cwd, "s3:")), os.listdir(cwd)
        assert os.listdir(cwd) == [], os.listdir(cwd)
    finally:
        for d in [cwd, cache, landing] + _ELSEWHERE:
            shutil.rmtree(d, ignore_errors=True)
        _ELSEWHERE.clear()


def expected_rows():
    return sorted((i, f"k{i % 3}") for i in range(FILES * ROWS_PER_FILE))


def expected_counts():
    out = {}
    for i in range(FILES * ROWS_PER_FILE):
        n, s = out.get(f"k{i % 3}", (0, 0))
        out[f"k{i % 3}"] = (n + 1, s + i)
    return sorted((k, n, s) for k, (n, s) in out.items())


def run_sql(env, warehouse, text, check=True, extra=None):
    proc = subprocess.run([peers.sluice_bin(), "sql", "--warehouse", warehouse, "--format",
                           "csv", text], capture_output=True, text=True, cwd=env["cwd"],
                          env={**env["vars"], **(extra or {})}, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def start_sql(env, warehouse, text, extra=None):
    return subprocess.Popen([peers.sluice_bin(), "sql", "--warehouse", warehouse, text],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=env["cwd"], env={**env["vars"], **(extra or {})})


_ELSEWHERE = []  # the caches elsewhere() made, removed by the env fixture


def elsewhere():
    """The environment of a process on another machine: a local cache of its own."""
    _ELSEWHERE.append(tempfile.mkdtemp(prefix="sluice-s3-cp-elsewhere-"))
    return {"SLUICE_LOCAL_CACHE_DIR": _ELSEWHERE[-1]}


def define_tables(env, warehouse):
    landing = env["landing"]
    run_sql(env, warehouse, f"""
        CREATE STREAMING TABLE raw AS SELECT id, k FROM STREAM read_files('{landing}',
          format => 'json', schema => '{SCHEMA}', maxFilesPerTrigger => 1);
        CREATE STREAMING TABLE counts OUTPUT MODE COMPLETE AS
          SELECT k, count(*) AS n, sum(id) AS s FROM STREAM read_files('{landing}',
            format => 'json', schema => '{SCHEMA}', maxFilesPerTrigger => 1) GROUP BY k""")


def table_rows(bucket_name, table):
    rows, _ = deltalake_rows(f"s3://{bucket_name}/wh/{table}")
    return rows


def sluice_rows(env, warehouse, query):
    out = run_sql(env, warehouse, query).stdout.strip().splitlines()[1:]
    return sorted(tuple(int(v) if v.lstrip("-").isdigit() else v for v in line.split(","))
                  for line in out)


def test_streaming_tables_in_a_warehouse_on_s3(bucket, env):
    wh = f"s3://{bucket}/wh"
    define_tables(env, wh)
    run_sql(env, wh, "REFRESH STREAMING TABLE raw")
    run_sql(env, wh, "REFRESH STREAMING TABLE counts")
    # delta-rs reads both tables from S3; Sluice reads them by name.
    assert table_rows(bucket, "raw") == expected_rows()
    assert table_rows(bucket, "counts") == expected_counts()
    assert sluice_rows(env, wh, "SELECT id, k FROM raw") == expected_rows()
    assert sluice_rows(env, wh, "SELECT k, n, s FROM counts") == expected_counts()
    # The catalog and the checkpoints are on S3: one batch per file for raw, the state of the
    # aggregation as changelogs (and snapshots every 10 versions).
    keys = keys_under(bucket, "wh/")
    assert "wh/_sluice/streaming_tables/raw.json" in keys
    assert batch_ids(bucket, "wh/_checkpoints/raw/offsets/") == set(range(FILES))
    assert batch_ids(bucket, "wh/_checkpoints/raw/commits/") == set(range(FILES))
    assert batch_ids(bucket, "wh/_checkpoints/counts/commits/") == set(range(FILES))
    changelogs = [k for k in keys if k.startswith("wh/_checkpoints/counts/state/0/")
                  and k.endswith(".changelog")]
    snapshots = [k for k in keys if k.startswith("wh/_checkpoints/counts/state/0/")
                 and k.endswith(".snapshot")]
    assert changelogs and snapshots, keys
    assert "wh/_checkpoints/counts/metadata" in keys
    # Released: the holder record is empty. The RocksDB working copies lived in the local cache
    # and are gone with the query.
    assert read_object(bucket, "wh/_checkpoints/counts/lock") == ""
    work = os.path.join(env["cache"], "s3", bucket, "wh", "_checkpoints", "counts", "_work")
    assert os.path.isdir(work) and os.listdir(work) == []
    # A second REFRESH has nothing to do and changes nothing.
    run_sql(env, wh, "REFRESH STREAMING TABLE counts")
    assert table_rows(bucket, "counts") == expected_counts()
    assert batch_ids(bucket, "wh/_checkpoints/counts/commits/") == set(range(FILES))


def test_checkpoint_and_state_commands_read_s3(bucket, env):
    """sluice checkpoint inspect and sluice state dump on a checkpoint on S3."""
    wh = f"s3://{bucket}/wh"
    define_tables(env, wh)
    run_sql(env, wh, "REFRESH STREAMING TABLE counts")
    cp = f"{wh}/_checkpoints/counts"

    def cli(*args):
        proc = subprocess.run([peers.sluice_bin(), *args], capture_output=True, text=True,
                              cwd=env["cwd"], env=env["vars"], timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    report = json.loads(cli("checkpoint", "inspect", cp, "--json"))
    assert report["lastCommittedBatch"] == FILES - 1, report
    rows = [json.loads(line) for line in cli("state", "dump", cp, "--json").splitlines()]
    counted = sorted((r["k"], r["count(*)"]) for r in rows if "k" in r)
    assert counted == [(k, n) for k, n, _ in expected_counts()], rows
    assert not os.path.exists(os.path.join(env["cwd"], "s3:"))


def kill_after_commits(env, bucket_name, wh, table, commits):
    """Starts REFRESH of `table`, waits until `commits` batches are committed on S3 and kills
    the process with SIGKILL while it is still running."""
    proc = start_sql(env, wh, f"REFRESH STREAMING TABLE {table}")
    prefix = f"wh/_checkpoints/{table}/commits/"
    for _ in range(3000):  # bounded: at most about 10 minutes
        if proc.poll() is not None or len(batch_ids(bucket_name, prefix)) >= commits:
            break
        time.sleep(0.2)
    assert proc.poll() is None, "REFRESH ended before it could be killed: " + proc.stderr.read()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    done = batch_ids(bucket_name, prefix)
    assert commits <= len(done) < FILES, done
    return done


@pytest.mark.parametrize("case", ["raw", "counts", "counts_from_a_snapshot", "counts_elsewhere"])
def test_sigkill_and_restart_is_exact(bucket, env, case):
    """SIGKILL during REFRESH, then a restart. counts: an aggregation whose state is restored
    from changelogs (killed after 3 batches) or from the snapshot of version 10 plus changelogs
    (killed after 12); counts_elsewhere: the restart has an empty local cache of its own, as on
    another machine, and rebuilds the state from S3 alone."""
    table = "raw" if case == "raw" else "counts"
    wh = f"s3://{bucket}/wh"
    define_tables(env, wh)
    kill_after_commits(env, bucket, wh, table, 12 if case == "counts_from_a_snapshot" else 3)
    # The killed run left its holder record and its RocksDB working directory (counts) behind.
    assert read_object(bucket, f"wh/_checkpoints/{table}/lock") != ""
    extra = {}
    if case == "counts_elsewhere":
        extra = elsewhere()
    restarted = run_sql(env, wh, f"REFRESH STREAMING TABLE {table}", extra=extra)
    assert "did not release it" in restarted.stderr, restarted.stderr
    assert batch_ids(bucket, f"wh/_checkpoints/{table}/commits/") == set(range(FILES))
    if table == "raw":
        assert table_rows(bucket, "raw") == expected_rows()
        return
    assert table_rows(bucket, "counts") == expected_counts()
    state = keys_under(bucket, "wh/_checkpoints/counts/state/0/")
    assert any(k.endswith("/10.snapshot") for k in state), state
    work = os.path.join(env["cache"], "s3", bucket, "wh", "_checkpoints", "counts", "_work")
    if case == "counts_elsewhere":
        assert len(os.listdir(work)) == 1  # the killed run's copy: this machine never restarted
    else:
        assert os.listdir(work) == []  # the restart removed the killed run's working copy


@pytest.mark.parametrize("point", ["after_offsets_write:3", "state.after_changelog_write:3",
                                   "after_state_commit:3", "delta.after_commit:3",
                                   "after_sink_write:3", "after_commit_write:3"])
def test_crash_points_and_restart_are_exact(bucket, env, point):
    """The process ends (_exit 137) at a named point of the 3rd batch (docs/testing.md): offsets/2
    written and nothing else of it; a state changelog written; the state committed, no sink;
    the Delta commit made, or the sink written, and no commits/2; commits/2 written."""
    wh = f"s3://{bucket}/wh"
    define_tables(env, wh)
    crashed = run_sql(env, wh, "REFRESH STREAMING TABLE counts", check=False,
                      extra={"SLUICE_CRASH_AT": point})
    assert crashed.returncode == 137, crashed.stdout + crashed.stderr
    run_sql(env, wh, "REFRESH STREAMING TABLE counts")
    assert table_rows(bucket, "counts") == expected_counts()
    assert batch_ids(bucket, "wh/_checkpoints/counts/commits/") == set(range(FILES))


def test_two_processes_on_one_machine_are_refused_at_once(bucket, env):
    """Two runs of one S3 checkpoint that share a local cache (one machine) meet at the cache's
    file lock, as on a local disk: the second is refused before it reads anything."""
    wh = f"s3://{bucket}/wh"
    define_tables(env, wh)
    first = start_sql(env, wh, "REFRESH STREAMING TABLE counts")
    prefix = "wh/_checkpoints/counts/commits/"
    for _ in range(3000):  # bounded: at most about 10 minutes
        if first.poll() is not None or batch_ids(bucket, prefix):
            break
        time.sleep(0.2)
    assert first.poll() is None, "REFRESH ended too soon: " + first.stderr.read()
    second = run_sql(env, wh, "REFRESH STREAMING TABLE counts", check=False)
    out, err = first.communicate(timeout=600)
    assert first.returncode == 0, out + err
    assert second.returncode == 1, second.stdout + second.stderr
    assert (f"checkpoint s3://{bucket}/wh/_checkpoints/counts is in use by another query (pid "
            in second.stdout + second.stderr), second.stdout + second.stderr
    assert table_rows(bucket, "counts") == expected_counts()


def test_two_machines_on_one_checkpoint_write_every_row_once(bucket, env):
    """No lock across machines on S3: both REFRESHes run; where they meet, the create-if-absent
    of offsets/N, commits/N, a source log entry or a state file stops the later one with a
    conflict, and the Delta sink's txn(queryId, batch) keeps a batch that both ran from being
    written twice."""
    wh = f"s3://{bucket}/wh"
    define_tables(env, wh)
    procs = [start_sql(env, wh, "REFRESH STREAMING TABLE raw", extra=elsewhere())
             for _ in range(2)]
    outcomes = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        outcomes.append((p.returncode, out + err))
    print("two processes:", [(c, t[-300:]) for c, t in outcomes])
    for code, text in outcomes:
        assert code == 0 or ("another query is using the checkpoint" in text
                             or "is another query using the same checkpoint" in text), text
    # Whatever a loser left unfinished, one more REFRESH completes; every row is there once.
    run_sql(env, wh, "REFRESH STREAMING TABLE raw")
    assert table_rows(bucket, "raw") == expected_rows()
    assert batch_ids(bucket, "wh/_checkpoints/raw/commits/") == set(range(FILES))


def test_a_paused_run_is_fenced_when_it_resumes(bucket, env):
    """A zombie: run A is stopped (SIGSTOP) in the middle of its batches, run B on another
    machine refreshes the same table to the end (re-running A's batch in flight), then A resumes
    (SIGCONT): its next write finds B's files (a checkpoint log entry, or B's Delta commit of the
    same batch) and it stops with a conflict, having written nothing twice."""
    wh = f"s3://{bucket}/wh"
    define_tables(env, wh)
    a = start_sql(env, wh, "REFRESH STREAMING TABLE raw", extra=elsewhere())
    prefix = "wh/_checkpoints/raw/commits/"
    for _ in range(3000):  # bounded: at most about 10 minutes
        if a.poll() is not None or len(batch_ids(bucket, prefix)) >= 3:
            break
        time.sleep(0.2)
    assert a.poll() is None, "REFRESH ended before it could be paused: " + a.stderr.read()
    a.send_signal(signal.SIGSTOP)
    try:
        b = run_sql(env, wh, "REFRESH STREAMING TABLE raw")
        assert "did not release it" in b.stderr, b.stderr
    finally:
        a.send_signal(signal.SIGCONT)
    out, err = a.communicate(timeout=600)
    print("the resumed run:", (out + err)[-300:])
    assert a.returncode == 1, out + err
    # Fenced by whichever conditional write it reaches first: a checkpoint log entry B wrote,
    # or, when it was paused between offsets/N and its Delta commit, the Delta commit of B that
    # recorded the same txn (appId = query id, version = batch id).
    fenced = ("another query is using the checkpoint" in out + err
              or "is another query using the same checkpoint" in out + err
              or ("ConcurrentTransactionException" in out + err
                  and "recorded a transaction for the same appId" in out + err))
    assert fenced, out + err
    assert table_rows(bucket, "raw") == expected_rows()
    assert batch_ids(bucket, prefix) == set(range(FILES))


def test_read_files_from_s3(bucket, env):
    """The files source on s3://: listing (ListObjectsV2), JSON lines read by GET, the
    schema inferred by DuckDB through Sluice's S3 file system; files added later are read by the
    next REFRESH only."""
    s3 = s3_client()
    for f in range(4):
        body = "".join(f'{{"id": {f * 10 + j}, "k": "k{j}"}}\n' for j in range(3))
        s3.put_object(Bucket=bucket, Key=f"landing/f{f}.json", Body=body.encode())
    wh = f"s3://{bucket}/wh"
    run_sql(env, wh, f"""
        CREATE STREAMING TABLE from_s3 AS SELECT id, k FROM STREAM read_files(
          's3://{bucket}/landing', format => 'json', maxFilesPerTrigger => 3)""")
    run_sql(env, wh, "REFRESH STREAMING TABLE from_s3")
    first = sorted((f * 10 + j, f"k{j}") for f in range(4) for j in range(3))
    assert table_rows(bucket, "from_s3") == first
    s3.put_object(Bucket=bucket, Key="landing/f9.json", Body=b'{"id": 99, "k": "k9"}\n')
    run_sql(env, wh, "REFRESH STREAMING TABLE from_s3")
    assert table_rows(bucket, "from_s3") == sorted(first + [(99, "k9")])
    assert batch_ids(bucket, "wh/_checkpoints/from_s3/commits/") == {0, 1, 2}


def test_read_files_csv_from_s3(bucket, env):
    s3 = s3_client()
    for f in range(3):
        body = "id,k\n" + "".join(f"{f * 10 + j},k{j}\n" for j in range(2))
        s3.put_object(Bucket=bucket, Key=f"csv/f{f}.csv", Body=body.encode())
    wh = f"s3://{bucket}/wh"
    run_sql(env, wh, f"""
        CREATE STREAMING TABLE csv_s3 AS SELECT id, k FROM STREAM read_files(
          's3://{bucket}/csv', format => 'csv', schema => 'id BIGINT, k STRING',
          maxFilesPerTrigger => 2)""")
    run_sql(env, wh, "REFRESH STREAMING TABLE csv_s3")
    assert table_rows(bucket, "csv_s3") == sorted(
        (f * 10 + j, f"k{j}") for f in range(3) for j in range(2))
