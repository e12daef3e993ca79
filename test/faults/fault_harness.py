#!/usr/bin/env python3
"""The fault harness of issue 24 section 1: one real pipeline, a seeded fault schedule, a batch oracle.

Each round builds a fresh work directory and a Kafka cluster (sluice_mock_kafka in its own
process, or the real broker when SLUICE_KAFKA_BOOTSTRAP is set: the mock binary then stands for
it), and a pipeline (`pipeline.sql` below) with JSON files and two Kafka topics in, Delta tables
out, and the stateful operators of the engine:

  orders      files -> Delta (append)
  payments    Kafka -> Delta (append)
  changes     Kafka -> Delta (append)
  win_agg     windowed aggregation over orders (APPEND mode, 10 s windows, watermark 20 s)
  dedup       deduplication within the watermark over orders
  matched     stream-stream inner join orders x payments with an event-time range
  cdc_target  AUTO CDC (SCD type 1, deletes) from changes

Every step of a round adds inputs (one file of orders, some of them repeated from the previous
file; payments for some of the new orders; change events) and then runs `sluice run --triggered`
under one fault of the schedule, drawn from the round's seed:

  clean       no fault
  kill        SIGKILL at a random moment
  crash       SLUICE_CRASH_AT=<named crash point>:<n> (the n-th hit ends the process as kill -9)
  fail        SLUICE_TEST_FAIL_AT=<named crash point>:<n>: injected transient I/O errors; the
              run's supervisor restarts the query (--max-restarts)
  zombie      SIGSTOP at a random moment, a second run started beside the stopped one (it must
              finish or be refused with an error naming the checkpoint lock), then SIGCONT; the
              first run then finishes or is killed
  torn        temporary files as a killed write leaves them (".<name>.<random>.tmp", cut at a
              random byte of a real file) planted in the checkpoints and the Delta logs
  enospc      with --enospc-preload: the run's writes to regular files fail with ENOSPC after a
              random number of bytes (test/faults/enospc_preload.cc, LD_PRELOAD), as on a full
              disk; the run must fail with an error that says so, or finish. Every round with
              the library has at least one such step (finding 15 of docs/reliability.md)
  broker      with a real broker (SLUICE_KAFKA_DIR and SLUICE_KAFKA_BOOTSTRAP, as
              test/interop/kafka/with_broker.sh sets them): the broker is killed (SIGKILL, or
              SIGTERM) at a random moment of the run and started again (scripts/kafka.sh halt,
              resume) after a random pause; the run must finish (it waited) or fail with an
              error naming Kafka or the broker
  s3stop      with --s3 (the warehouse on moto's S3 server, as test/interop/s3/with_moto.sh
              starts it): moto is stopped (SIGSTOP) at a random moment of the run, mid-commit or
              elsewhere, and continued (SIGCONT) after a random pause of 0.5-8 s
  s3cut       with --s3: the harness's proxy in front of moto resets every open connection and
              every new one for a random 0.5-5 s (the server gone: moto itself keeps its
              objects in memory only, so killing it would lose the bucket, not model a restart)
  s3flaky     with --s3: for the whole run each new connection through the proxy is, with
              probability 0.2, reset after a random number of bytes of its request (an upload
              cut mid-way) or of its response
              An S3 fault's run must finish (the client's retries) or fail with an error naming
              S3; with --s3 there is no torn fault (the checkpoints are not local files)
  netcut      with the mock cluster (three brokers): at a random moment of the run every broker
              drops its connections and refuses new ones for 0.5-5 s (a network cut between the
              run and Kafka, no leader change); the run must finish or fail naming Kafka
  leader      with the mock cluster: the leaders of both topics' partitions move to other
              brokers, one to three times at random moments of the run (what a broker's
              controlled shutdown or a reassignment does); the run must finish
  clock       Sluice's wall clock (common/clock.h WallClockMs: commit and progress timestamps,
              state file ages, timers) jumps, at a random moment, by 1 s to 6 h forward or back,
              as an NTP step does: the skew file of SLUICE_TEST_CLOCK_SKEW_FILE is rewritten
              mid-run. The libraries' clocks and the monotonic clock are left alone (libfaketime
              was tried: librdkafka's timed waits then hang even at a constant offset, see
              docs/reliability.md). The run must finish

A run may only end in the ways its fault allows (0, a kill, the crash point's 137, an error that
names the injected fault); anything else (a crash signal, an unclear error, a hang past the
timeout) is a failure. After the last step the inputs are flushed (a late event that closes every
window), one clean run must succeed, and then every output table is compared, as a multiset of
rows, with a batch query over the same inputs (`sluice sql` with DuckDB's read_json over the files
and a batch read_kafka over the topics: the oracle). The checkpoints must hold no temporary file
and TMPDIR must be empty.

At the end one line:
  faults: rounds=R runs=N faults=F lost=L duplicated=D wrong=W seed=S
lost: rows of the oracle missing from a table; duplicated: extra copies of a row the oracle has;
wrong: rows the oracle does not have. Every failing round prints its seed and the command that
reproduces it (--round-seed). Exits 1 when any round failed. All loops are bounded.
"""

import argparse
import collections
import os
import random
import re
import select
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

# Named crash points (src/fs/crash_point.h; grep CrashPoint/MaybeCrash in src/).
CRASH_POINTS = [
    "after_offsets_write", "after_state_commit", "after_sink_write", "after_commit_write",
    "delta.before_commit", "delta.after_commit", "sources.before_file_log_write",
    "sources.after_file_log_write", "state.before_changelog_write",
    "state.after_changelog_write", "state.after_snapshot_write",
    "stream.before_offsets_write", "stream.after_offsets_write", "stream.after_commit",
]
FAULTS = ["clean", "kill", "kill", "kill", "crash", "crash", "fail", "zombie", "torn", "enospc"]
BROKER_FAULTS = ["broker", "broker"]          # with a real broker (SLUICE_KAFKA_DIR)
MOCK_FAULTS = ["netcut", "leader"]            # with the mock cluster (no SLUICE_KAFKA_BOOTSTRAP)
CLOCK_FAULTS = ["clock"]
S3_FAULTS = ["s3stop", "s3cut", "s3cut", "s3flaky", "s3flaky"]  # with --s3
ALL_FAULTS = sorted(set(FAULTS + BROKER_FAULTS + MOCK_FAULTS + CLOCK_FAULTS + S3_FAULTS))
MOCK_BROKERS = 3         # the mock cluster's brokers (the leader fault moves partitions among them)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLES = ["orders", "payments", "changes", "win_agg", "dedup", "matched", "cdc_target"]
BASE_EPOCH = 1767225600  # 2026-01-01 00:00:00 UTC, a multiple of the 10 s window
DELAY_S = 20             # the watermark delay of every event-time relation
STEP_S = 10              # event time moves 10 s per step
RUN_TIMEOUT_S = 180      # a run that takes longer has hung
KILLED = -signal.SIGKILL


class RoundFailure(Exception):
    pass


def pipeline_sql(bootstrap, pay_topic, changes_topic, landing="landing/"):
    kafka = ("bootstrapServers => '{b}', subscribe => '{t}', startingOffsets => 'earliest', "
             "maxOffsetsPerTrigger => 25")
    return f"""
CREATE OR REFRESH STREAMING TABLE orders AS
SELECT id, k, v, ts FROM STREAM read_files('{landing}', format => 'json',
  schema => 'id BIGINT, k VARCHAR, v BIGINT, ts TIMESTAMP', maxFilesPerTrigger => 1);

CREATE OR REFRESH STREAMING TABLE win_agg AS
SELECT window.start AS ws, window.end AS we, count(*) AS n, sum(v) AS total
FROM STREAM orders WATERMARK ts DELAY OF INTERVAL {DELAY_S} SECONDS AS o
GROUP BY window(ts, '10 seconds');

CREATE OR REFRESH STREAMING TABLE dedup AS
SELECT id, k, v, ts FROM STREAM orders WATERMARK ts DELAY OF INTERVAL {DELAY_S} SECONDS AS o
QUALIFY row_number() OVER (PARTITION BY id ORDER BY ts) = 1;

CREATE OR REFRESH STREAMING TABLE payments AS
SELECT (decode(value)::JSON->>'id')::BIGINT AS pid,
       (decode(value)::JSON->>'amount')::BIGINT AS amount,
       (decode(value)::JSON->>'pts')::TIMESTAMPTZ AS pts
FROM STREAM read_kafka({kafka.format(b=bootstrap, t=pay_topic)});

CREATE OR REFRESH STREAMING TABLE matched AS
SELECT o.id, o.v, p.amount, o.ts, p.pts
FROM STREAM orders WATERMARK ts DELAY OF INTERVAL {DELAY_S} SECONDS AS o
JOIN STREAM payments WATERMARK pts DELAY OF INTERVAL {DELAY_S} SECONDS AS p
  ON p.pid = o.id AND p.pts BETWEEN o.ts AND o.ts + INTERVAL 30 SECONDS;

CREATE OR REFRESH STREAMING TABLE changes AS
SELECT (decode(value)::JSON->>'key')::BIGINT AS key, decode(value)::JSON->>'val' AS val,
       (decode(value)::JSON->>'seq')::BIGINT AS seq, decode(value)::JSON->>'op' AS op
FROM STREAM read_kafka({kafka.format(b=bootstrap, t=changes_topic)});

CREATE OR REFRESH STREAMING TABLE cdc_target (key BIGINT, val VARCHAR, seq BIGINT);
CREATE FLOW cdc_flow AS AUTO CDC INTO cdc_target FROM STREAM changes KEYS (key) SEQUENCE BY seq
APPLY AS DELETE WHEN op = 'DELETE' COLUMNS * EXCEPT (op);
"""


def oracle_and_tables_sql(bootstrap, pay_topic, changes_topic):
    """One query: every table's rows ('g') and the oracle's ('w'), as text, tagged by table."""
    files = ("read_json('landing/*.json', format = 'newline_delimited', columns = "
             "{id: 'BIGINT', k: 'VARCHAR', v: 'BIGINT', ts: 'TIMESTAMPTZ'})")
    kafka = "read_kafka(bootstrapServers => '{b}', subscribe => '{t}', startingOffsets => 'earliest')"
    pay = (f"(SELECT (decode(value)::JSON->>'id')::BIGINT AS pid, "
           f"(decode(value)::JSON->>'amount')::BIGINT AS amount, "
           f"(decode(value)::JSON->>'pts')::TIMESTAMPTZ AS pts "
           f"FROM {kafka.format(b=bootstrap, t=pay_topic)})")
    chg = (f"(SELECT (decode(value)::JSON->>'key')::BIGINT AS key, decode(value)::JSON->>'val' AS val, "
           f"(decode(value)::JSON->>'seq')::BIGINT AS seq, decode(value)::JSON->>'op' AS op "
           f"FROM {kafka.format(b=bootstrap, t=changes_topic)})")
    cols = {
        "orders": "id, k, v, ts", "payments": "pid, amount, pts", "changes": "key, val, seq, op",
        "win_agg": "ws, we, n, total", "dedup": "id, k, v, ts",
        "matched": "id, v, amount, ts, pts", "cdc_target": "key, val, seq",
    }
    oracle = {
        "orders": "SELECT * FROM o",
        "payments": "SELECT * FROM p",
        "changes": "SELECT * FROM c",
        "win_agg": ("SELECT win.start AS ws, win.end AS we, n, total FROM (SELECT window(ts, "
                    "'10 seconds') AS win, count(*) AS n, sum(v) AS total FROM o GROUP BY "
                    f"window(ts, '10 seconds')) WHERE win.end <= (SELECT max(ts) FROM o) - "
                    f"INTERVAL {DELAY_S} SECONDS"),
        "dedup": "SELECT DISTINCT * FROM o",
        "matched": ("SELECT o.id, o.v, p.amount, o.ts, p.pts FROM o JOIN p ON p.pid = o.id AND "
                    "p.pts BETWEEN o.ts AND o.ts + INTERVAL 30 SECONDS"),
        "cdc_target": ("SELECT key, val, seq FROM c QUALIFY row_number() OVER (PARTITION BY key "
                       "ORDER BY seq DESC) = 1 AND op <> 'DELETE'"),
    }

    def text(c):
        return "concat_ws('|', " + ", ".join(
            f"coalesce({x.strip()}::VARCHAR, 'NULL')" for x in c.split(",")) + ")"

    parts = []
    for t in TABLES:
        parts.append(f"SELECT '{t}' AS t, 'g' AS side, {text(cols[t])} AS r FROM {t}")
        parts.append(f"SELECT '{t}', 'w', {text(cols[t])} FROM ({oracle[t]})")
    return (f"WITH o AS (SELECT * FROM {files}), p AS {pay}, c AS {chg} " +
            " UNION ALL ".join(parts))


class _Pair:
    """One proxied connection: the client's socket, moto's, and how many directions ended."""

    def __init__(self, client, up):
        self.client = client
        self.up = up
        self.ended = 0


class S3Proxy:
    """A TCP proxy on loopback in front of moto's S3 server that can fail connections: cut()
    resets every open connection and refuses (resets) new ones for a while; with flaky > 0 each
    new connection is, with that probability, reset after a random number of bytes of its request
    or of its response. Threads: one accepting, two per connection; all daemons, closed by
    close()."""

    def __init__(self, upstream, seed):
        host, port = upstream.split("//", 1)[1].rsplit(":", 1)
        self.upstream = (host, int(port))
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.cut_until = 0.0
        self.flaky = 0.0
        self.live = set()
        self.stats = collections.Counter()
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(64)
        self.endpoint = "http://127.0.0.1:%d" % self.server.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @staticmethod
    def _reset(sock):
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.shutdown(socket.SHUT_RD)  # wakes a thread blocked in recv
        except OSError:
            pass
        try:
            sock.close()  # linger 0: an RST
        except OSError:
            pass

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            with self.lock:
                if time.time() < self.cut_until:
                    self.stats["refused"] += 1
                    self._reset(client)
                    continue
                limit = None
                if self.flaky > 0 and self.rng.random() < self.flaky:
                    limit = (self.rng.choice(["up", "down"]), self.rng.randint(0, 64 << 10))
                    self.stats["dropped"] += 1
            try:
                up = socket.create_connection(self.upstream, timeout=10)
                up.settimeout(None)
            except OSError:
                self._reset(client)
                continue
            pair = _Pair(client, up)
            with self.lock:
                self.live.add(pair)
            for src, dst, way in ((client, up, "up"), (up, client, "down")):
                cap = limit[1] if limit is not None and limit[0] == way else None
                threading.Thread(target=self._pump, args=(src, dst, pair, cap), daemon=True).start()

    def _pump(self, src, dst, pair, cap):
        sent = 0
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    try:
                        dst.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    with self.lock:
                        pair.ended += 1
                        both = pair.ended == 2
                    if both:  # both directions ended: close the pair
                        self._drop(pair)
                    return
                if cap is not None and sent + len(data) > cap:
                    dst.sendall(data[: cap - sent])
                    break
                dst.sendall(data)
                sent += len(data)
        except OSError:
            pass
        self._drop(pair)

    def _drop(self, pair):
        with self.lock:
            if pair not in self.live:
                return
            self.live.discard(pair)
        for sock in (pair.client, pair.up):
            self._reset(sock)

    def cut(self, seconds):
        with self.lock:
            self.cut_until = time.time() + seconds
            live = list(self.live)
            self.stats["cut"] += len(live)
        for pair in live:
            self._drop(pair)

    def close(self):
        self.closed = True
        try:
            self.server.close()
        except OSError:
            pass
        with self.lock:
            live = list(self.live)
        for pair in live:
            self._drop(pair)


def error_lines(log):
    return [line for line in log.splitlines() if re.search(r"(?i)error|fail", line)]


class Round:
    def __init__(self, args, seed, steps):
        self.args = args
        self.seed = seed
        self.steps = steps
        self.rng = random.Random(seed)
        self.work = tempfile.mkdtemp(prefix=f"sluice-faults-{seed}-", dir=args.work_root)
        self.runs = 0
        self.faults = 0
        self.events = []  # what happened, for the failure report
        self.next_id = 0
        self.files = 0
        self.prev_rows = []
        self.seq = 0
        self.mock = None
        self.bootstrap = None
        self.run_seconds = 0.5  # how long a run without a fault took last (where kills aim)
        self.proxy = None
        self.wh = "wh"
        self.s3_env = {}

    # ----- inputs -----
    def start_kafka(self):
        boot = os.path.join(self.work, "mock-kafka-bootstrap.txt")
        log = open(os.path.join(self.work, "mock-kafka.log"), "w")
        # Its standard input and output carry the fault commands (mock_command).
        self.mock = subprocess.Popen(
            [self.args.mock_kafka, "--brokers", str(MOCK_BROKERS), boot, "pay:1", "changes:1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=self.work, text=True)
        for _ in range(300):
            if os.path.exists(boot) and os.path.getsize(boot) > 0:
                break
            if self.mock.poll() is not None:
                break
            time.sleep(0.1)
        if not (os.path.exists(boot) and os.path.getsize(boot) > 0):
            raise RoundFailure("the Kafka cluster did not start: " + read(log.name))
        self.bootstrap = read(boot).strip()

    def start_s3(self):
        """The round's bucket on moto (AWS_ENDPOINT_URL_S3) and a proxy in front of it."""
        moto = os.environ["AWS_ENDPOINT_URL_S3"].rstrip("/")
        bucket = "sluice-faults-%d" % self.seed
        # moto accepts unsigned requests.
        urllib.request.urlopen(urllib.request.Request(f"{moto}/{bucket}", method="PUT"),
                               timeout=30).read()
        self.proxy = S3Proxy(moto, self.seed)
        self.wh = f"s3://{bucket}/wh"
        self.s3_env = {"AWS_ENDPOINT_URL_S3": self.proxy.endpoint,
                       "SLUICE_LOCAL_CACHE_DIR": os.path.join(self.work, "cache")}

    def mock_command(self, command):
        """Plays a fault command on the mock cluster (src/sources/kafka/mock_kafka_main.cc) and
        waits (up to 10 s) for its answer; anything but "ok" fails the round."""
        self.mock.stdin.write(command + "\n")
        self.mock.stdin.flush()
        ready, _, _ = select.select([self.mock.stdout], [], [], 10)
        answer = self.mock.stdout.readline().strip() if ready else ""
        if answer != "ok " + command:
            raise RoundFailure(f"the mock cluster did not play '{command}': {answer or 'no answer'}")

    def stop_kafka(self):
        if self.proxy is not None:
            self.proxy.close()
        if self.mock is not None and self.mock.poll() is None:
            self.mock.terminate()
            try:
                self.mock.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.mock.kill()
                self.mock.wait()

    def produce(self, topic, lines):
        if not lines:
            return
        p = subprocess.run(["kcat", "-P", "-b", self.bootstrap, "-t", topic, "-p", "0"],
                           input="\n".join(lines) + "\n", text=True, capture_output=True,
                           timeout=60)
        if p.returncode != 0:
            raise RoundFailure(f"kcat could not produce to {topic}: {p.stderr.strip()}")

    def add_inputs(self, step, final=False):
        rng = self.rng
        t0 = BASE_EPOCH + step * STEP_S
        rows = []
        if final:  # one late event: its watermark closes every window of the steps
            rows.append((self.new_id(), "flush", 0, t0 + 3600))
        else:
            for _ in range(rng.randint(10, 40)):
                rows.append((self.new_id(), rng.choice("abcdefg"), rng.randint(-50, 1000),
                             t0 + rng.randint(0, 5)))
        # Copies of some of the previous file's rows (same id and event time): the dedup drops
        # them, the aggregation and the join count them.
        repeats = rng.sample(self.prev_rows, min(len(self.prev_rows), rng.randint(0, 10)))
        self.prev_rows = [r for r in rows if not final]
        name = "part-%05d.json" % self.files
        self.files += 1
        staging = os.path.join(self.work, "staging", name)
        with open(staging, "w") as f:
            for (i, k, v, ts) in rows + repeats:
                f.write('{"id": %d, "k": "%s", "v": %d, "ts": "%s"}\n' % (i, k, v, ts_text(ts)))
        os.rename(staging, os.path.join(self.work, "landing", name))
        # Payments: for some new orders (0-20 s after the order), and some that match nothing;
        # in event-time order within a step, so that no payment is late for its watermark.
        pays = []
        if final:
            pays.append((-1, 0, t0 + 3600))
        else:
            for (i, _, _, ts) in rows:
                if rng.random() < 0.6:
                    pays.append((i, rng.randint(1, 500), ts + rng.randint(0, 20)))
            for _ in range(rng.randint(0, 3)):
                pays.append((-rng.randint(2, 10**6), rng.randint(1, 500), t0 + rng.randint(0, 20)))
        pays.sort(key=lambda p: p[2])
        self.produce("pay", ['{"id": %d, "amount": %d, "pts": "%s"}' % (i, a, ts_text(ts))
                             for (i, a, ts) in pays])
        changes = []
        for _ in range(0 if final else rng.randint(5, 25)):
            self.seq += 1
            op = "DELETE" if rng.random() < 0.2 else "UPSERT"
            changes.append('{"key": %d, "val": "v%d", "seq": %d, "op": "%s"}' %
                           (rng.randint(0, 29), rng.randint(0, 99), self.seq, op))
        self.produce("changes", changes)

    def new_id(self):
        self.next_id += 1
        return self.next_id

    # ----- runs -----
    def command(self):
        return [self.args.sluice, "run", "pipeline.sql", "--warehouse", self.wh, "--triggered",
                "--restart-backoff", "100ms"]

    def start(self, env_extra, log_name):
        env = dict(os.environ)
        env["TMPDIR"] = os.path.join(self.work, "tmp")
        env.update(self.s3_env)
        env.update(env_extra)
        log = open(os.path.join(self.work, log_name), "w")
        self.runs += 1
        p = subprocess.Popen(self.command(), cwd=self.work, env=env, stdout=log,
                             stderr=subprocess.STDOUT)
        p.log_path = log.name
        log.close()
        return p

    def wait(self, p, what):
        try:
            return p.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise RoundFailure(f"{what}: sluice run did not end within {RUN_TIMEOUT_S} s (hung):\n"
                               + tail(p.log_path))

    def check_exit(self, code, p, what, allowed_codes, allowed_error=None):
        if code in allowed_codes:
            return
        log = read(p.log_path)
        if code == 1 and allowed_error is not None and allowed_error(log):
            return
        raise RoundFailure(f"{what}: sluice run exited {code}:\n" + tail(p.log_path))

    def run_step(self, fault, step):
        rng = self.rng
        what = f"step {step} ({fault})"
        if fault == "clean":
            started = time.time()
            p = self.start({}, "run.log")
            self.check_exit(self.wait(p, what), p, what, {0})
            self.run_seconds = time.time() - started
        elif fault == "kill":
            p = self.start({}, "run.log")
            delay = rng.uniform(0.0, 1.2 * self.run_seconds)
            time.sleep(delay)
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                self.faults += 1
                what += f" after {delay:.3f} s"
            self.check_exit(self.wait(p, what), p, what, {0, KILLED})
        elif fault == "crash":
            point = f"{rng.choice(CRASH_POINTS)}:{rng.randint(1, 4)}"
            what += f" SLUICE_CRASH_AT={point}"
            p = self.start({"SLUICE_CRASH_AT": point}, "run.log")
            code = self.wait(p, what)
            self.check_exit(code, p, what, {0, 137})
            if code == 137:
                self.faults += 1
        elif fault == "fail":
            point = f"{rng.choice(CRASH_POINTS)}:{rng.randint(1, 2)}"
            what += f" SLUICE_TEST_FAIL_AT={point}"
            p = self.start({"SLUICE_TEST_FAIL_AT": point}, "run.log")
            code = self.wait(p, what)
            # The supervisor restarts a query up to 3 times; a failure it gave up on must say so.
            self.check_exit(code, p, what, {0}, lambda log: "injected failure" in log)
            if "injected failure" in read(p.log_path):
                self.faults += 1
        elif fault == "zombie":
            self.zombie(step, what)
        elif fault in ("broker", "s3stop", "s3cut", "s3flaky", "netcut", "leader", "clock"):
            what = self.peer_fault(fault, what)
        elif fault == "torn":
            planted = self.plant_torn_files()
            self.faults += planted
            what += f" ({planted} files)"
            p = self.start({}, "run.log")
            self.check_exit(self.wait(p, what), p, what, {0})
        elif fault == "enospc":
            limit = rng.randint(0, 400000)
            what += f" ENOSPC after {limit} bytes"
            p = self.start({"LD_PRELOAD": self.args.enospc_preload,
                            "SLUICE_FAULT_ENOSPC_AFTER_BYTES": str(limit)}, "run.log")
            code = self.wait(p, what)
            self.check_exit(code, p, what, {0}, lambda log: "No space left on device" in log)
            if code != 0:
                self.faults += 1
        self.events.append(what)

    def peer_fault(self, fault, what):
        """A broker or S3 fault during one run (see the module's comment)."""
        rng = self.rng
        delay = rng.uniform(0.0, 0.8 * self.run_seconds)
        env = {}  # the run's own environment for the fault
        if fault == "broker":
            kafka_dir = os.environ["SLUICE_KAFKA_DIR"]
            kafka_sh = os.path.join(REPO, "scripts", "kafka.sh")
            how = rng.choice(["--kill", "--term"])
            down = rng.uniform(0.5, 5.0)
            what += f" broker {how[2:]} after {delay:.3f} s, down {down:.1f} s"
            halt = [kafka_sh, "halt", kafka_dir] + (["--kill"] if how == "--kill" else [])

            def act():
                subprocess.run(halt, check=True, capture_output=True, timeout=120)
                time.sleep(down)
                subprocess.run([kafka_sh, "resume", kafka_dir], check=True, capture_output=True,
                               timeout=240)
            named = r"(?i)kafka|broker"
        elif fault == "s3stop":
            pid = int(read(os.path.join(os.environ["SLUICE_MOTO_DIR"], "pid")).strip())
            down = rng.uniform(0.5, 8.0)
            what += f" moto stopped after {delay:.3f} s for {down:.1f} s"

            def act():
                os.kill(pid, signal.SIGSTOP)
                try:
                    time.sleep(down)
                finally:
                    os.kill(pid, signal.SIGCONT)
            named = r"S3|s3://"
        elif fault == "s3cut":
            down = rng.uniform(0.5, 5.0)
            what += f" S3 connections cut after {delay:.3f} s for {down:.1f} s"

            def act():
                self.proxy.cut(down)
                time.sleep(down)  # the next run starts after the cut
            named = r"S3|s3://"
        elif fault == "s3flaky":
            delay = 0.0
            what += " S3 connections dropped with probability 0.2"
            self.proxy.flaky = 0.2

            def act():
                pass
            named = r"S3|s3://"
        elif fault == "netcut":
            down = rng.uniform(0.5, 5.0)
            what += f" Kafka's network cut after {delay:.3f} s for {down:.1f} s"

            def act():
                self.mock_command("down")
                try:
                    time.sleep(down)
                finally:
                    self.mock_command("up")
            named = r"(?i)kafka|broker"
        elif fault == "leader":
            # Drawn here, not in the thread, so that the round's seed decides them.
            moves = [(rng.uniform(0.0, 0.4 * self.run_seconds), topic, rng.randint(1, MOCK_BROKERS))
                     for _ in range(rng.randint(1, 3)) for topic in ("pay", "changes")]
            what += " leaders moved after %.3f s: %s" % (delay, ", ".join(
                f"{t}/0 to broker {b}" for (_, t, b) in moves))

            def act():
                for (pause, topic, broker) in moves:
                    time.sleep(pause)
                    self.mock_command(f"leader {topic} 0 {broker}")
            named = None  # the run must finish
        else:  # clock
            jump = rng.choice([-1, 1]) * int(rng.choice([1, 30, 600, 3600, 6 * 3600]) *
                                             rng.uniform(0.5, 1.0) + 1)
            what += f" clock jumps {jump:+d} s after {delay:.3f} s"
            skew_file = os.path.join(self.work, "clock-skew-ms")
            write_atomically(skew_file, "0\n")
            env = {"SLUICE_TEST_CLOCK_SKEW_FILE": skew_file}

            def act():
                write_atomically(skew_file, "%d\n" % (jump * 1000))
            named = None
        errors = []
        during = []  # whether the run was still running when the fault began

        def fault_thread():
            try:
                time.sleep(delay)
                during.append(p.poll() is None)
                act()
            except (OSError, subprocess.SubprocessError) as e:
                errors.append(f"{e}: {getattr(e, 'stderr', '')}")
        p = self.start(env, "run.log")
        t = threading.Thread(target=fault_thread, daemon=True)
        t.start()
        try:
            code = self.wait(p, what)
        finally:
            t.join(timeout=300)
            if self.proxy is not None:
                self.proxy.flaky = 0.0
        if t.is_alive() or errors:
            raise RoundFailure(f"{what}: the fault could not be played or undone: {errors}")
        if during and during[0]:
            self.faults += 1
        else:
            what += " (after the run had ended)"
        # The run waited for the peer and finished, or it failed with an error that names it
        # (for a fault without a name, it finished).
        self.check_exit(code, p, what, {0}, None if named is None else
                        lambda log: any(re.search(named, line) for line in error_lines(log)))
        if code == 0:
            return what + ": the run finished"
        named_lines = [line for line in error_lines(read(p.log_path)) if re.search(named, line)]
        return what + ": the run failed naming it: " + named_lines[-1].strip()[:200]

    def zombie(self, step, what):
        rng = self.rng
        a = self.start({}, "run-a.log")
        time.sleep(rng.uniform(0.0, 0.8))
        if a.poll() is not None:  # it finished before it could be stopped: a clean run
            self.check_exit(a.wait(), a, what, {0})
            return
        a.send_signal(signal.SIGSTOP)
        self.faults += 1
        pause = rng.uniform(0.5, 2.0)  # past the trigger's and the caller's patience
        time.sleep(pause)
        b = self.start({}, "run-b.log")
        code = self.wait(b, what + " (second run beside the stopped one)")
        self.events.append(f"{what}: the second run beside the stopped one exited {code}")
        # The second run must finish (the stopped one held no checkpoint it needed) or be refused
        # naming the checkpoint lock and its holder.
        self.check_exit(code, b, what + " (second run)", {0},
                        lambda log: "checkpoint" in log and ("in use" in log or "lock" in log
                                                              or "using" in log))
        a.send_signal(signal.SIGCONT)
        if rng.random() < 0.5:
            time.sleep(rng.uniform(0.0, 0.5))
            if a.poll() is None:
                a.send_signal(signal.SIGKILL)
        code = self.wait(a, what + " (resumed run)")
        self.events.append(f"{what}: the resumed run exited {code}")
        # The resumed run may be fenced by what the second one committed meanwhile: an error
        # that says so is allowed, a crash or a hang is not.
        self.check_exit(code, a, what + " (resumed run)", {0, KILLED},
                        lambda log: "Error" in log and "crash" not in log.lower())

    def plant_torn_files(self):
        """Temporary files as a killed AtomicReplace/CreateIfAbsent leaves them: a prefix of a
        real file of the directory, named .<name>.<16 hex>.tmp."""
        rng = self.rng
        dirs = []
        for root, subdirs, files in os.walk(os.path.join(self.work, "wh")):
            if files and (root.endswith(("offsets", "commits", "_delta_log")) or "/state/" in root
                          or "/sources/" in root):
                dirs.append((root, sorted(f for f in files if not f.startswith("."))))
        dirs.sort()
        planted = 0
        for (root, files) in rng.sample(dirs, min(len(dirs), rng.randint(1, 6))):
            if not files:
                continue
            src = rng.choice(files)
            data = open(os.path.join(root, src), "rb").read()
            cut = data[: rng.randint(0, len(data))]
            name = ".%s.%016x.tmp" % (src, rng.getrandbits(64))
            with open(os.path.join(root, name), "wb") as f:
                f.write(cut)
            planted += 1
        return planted

    # ----- the oracle -----
    def compare(self):
        sql = oracle_and_tables_sql(self.bootstrap, "pay", "changes")
        env = dict(os.environ, TMPDIR=os.path.join(self.work, "tmp"))
        env.update(self.s3_env)
        if self.proxy is not None:  # the oracle reads moto directly
            env["AWS_ENDPOINT_URL_S3"] = os.environ["AWS_ENDPOINT_URL_S3"]
        p = subprocess.run([self.args.sluice, "sql", "--warehouse", self.wh, "--format", "csv", sql],
                           cwd=self.work, capture_output=True, text=True, timeout=300, env=env)
        if p.returncode != 0:
            raise RoundFailure("the oracle query failed: " + p.stderr.strip()[-2000:])
        got = collections.defaultdict(collections.Counter)
        want = collections.defaultdict(collections.Counter)
        lines = p.stdout.splitlines()
        if not lines or lines[0].strip() != "t,side,r":
            raise RoundFailure("unexpected oracle output: " + p.stdout[:500])
        import csv
        for (t, side, r) in csv.reader(lines[1:]):
            (got if side == "g" else want)[t][r] += 1
        lost = duplicated = wrong = 0
        report = []
        for t in TABLES:
            if not want[t]:
                raise RoundFailure(f"the oracle of {t} is empty: the round tested nothing")
            t_lost = sum(max(0, n - got[t][r]) for r, n in want[t].items())
            t_dup = sum(max(0, n - want[t][r]) for r, n in got[t].items() if r in want[t])
            t_wrong = sum(n for r, n in got[t].items() if r not in want[t])
            lost, duplicated, wrong = lost + t_lost, duplicated + t_dup, wrong + t_wrong
            if t_lost or t_dup or t_wrong:
                missing = [r for r in want[t] if got[t][r] < want[t][r]][:3]
                extra = [r for r in got[t] if got[t][r] > want[t].get(r, 0)][:3]
                report.append(f"{t}: {sum(got[t].values())} rows, oracle "
                              f"{sum(want[t].values())}: lost={t_lost} duplicated={t_dup} "
                              f"wrong={t_wrong}; missing e.g. {missing}; extra e.g. {extra}")
        return lost, duplicated, wrong, report

    def check_leftovers(self):
        temps = []
        # (Delta logs, the checkpoint's own auto_cdc_state table's included, may keep temporary
        # files: readers skip them and Delta's protocol leaves them to VACUUM.)
        for root, _, files in os.walk(os.path.join(self.work, "wh", "_checkpoints")):
            if os.path.basename(root) == "_delta_log":
                continue
            temps += [os.path.join(root, f) for f in files if f.startswith(".") and f.endswith(".tmp")]
        left = os.listdir(os.path.join(self.work, "tmp"))
        # On S3 the RocksDB working copies of the stateful operators live in the local cache,
        # under <cache>/s3/<bucket>/<checkpoint>/_work: the next owner of each checkpoint empties
        # it, and a clean run removes its own, so after the final clean run none may be left.
        work = []
        work_dirs = 0
        for root, subdirs, _ in os.walk(os.path.join(self.work, "cache")):
            if os.path.basename(root) == "_work":
                work_dirs += 1
                work += [os.path.join(root, d) for d in os.listdir(root)]
                subdirs[:] = []
        problems = []
        if temps:
            problems.append(f"{len(temps)} temporary files left in the checkpoints, e.g. {temps[:3]}")
        if work:
            problems.append(f"{len(work)} working directories left in the local cache, "
                            f"e.g. {work[:3]}")
        if self.args.s3 and work_dirs == 0:  # the stateful operators made none: look elsewhere
            problems.append("no _work directory in the local cache " +
                            os.path.join(self.work, "cache") + ": the check above looked in the "
                            "wrong place")
        if left:
            problems.append(f"{len(left)} entries left in TMPDIR, e.g. {left[:3]}")
        return problems

    def play(self):
        os.makedirs(os.path.join(self.work, "landing"))
        os.makedirs(os.path.join(self.work, "staging"))
        os.makedirs(os.path.join(self.work, "tmp"))
        self.start_kafka()
        landing = "landing/"
        if self.args.s3:
            self.start_s3()
            landing = os.path.join(self.work, "landing") + "/"
        with open(os.path.join(self.work, "pipeline.sql"), "w") as f:
            f.write(pipeline_sql(self.bootstrap, "pay", "changes", landing))
        faults = schedule_faults(self.args)
        first = 1 if self.args.clean_first_run else 0
        # Every round with the ENOSPC library has an ENOSPC step (finding 15).
        forced = self.rng.randrange(first, self.steps) if (
            "enospc" in faults and self.steps > first) else -1
        for step in range(self.steps):
            self.add_inputs(step)
            fault = self.rng.choice(faults)
            if step == forced:
                fault = "enospc"
            self.run_step("clean" if step < first else fault, step)
        self.add_inputs(self.steps, final=True)
        p = self.start({}, "run.log")
        self.check_exit(self.wait(p, "final clean run"), p, "final clean run", {0})
        self.events.append("final clean run")
        result = self.compare()
        return result, self.check_leftovers()

    def cleanup(self, keep):
        self.stop_kafka()
        if not keep:
            shutil.rmtree(self.work, ignore_errors=True)


def schedule_faults(args):
    """The fault kinds a round draws from (with repeats as weights)."""
    faults = list(FAULTS)
    if not args.enospc_preload:
        faults.remove("enospc")
    if args.s3:
        faults.remove("torn")  # the checkpoints are objects on S3, not local files
        faults += S3_FAULTS
    if os.environ.get("SLUICE_KAFKA_DIR"):
        faults += BROKER_FAULTS
    if not os.environ.get("SLUICE_KAFKA_BOOTSTRAP"):
        faults += MOCK_FAULTS
    faults += CLOCK_FAULTS
    if args.only:
        faults = [f for f in faults if f in args.only]
    return faults


def write_atomically(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def ts_text(epoch):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def tail(path, n=40):
    return "\n".join(read(path).splitlines()[-n:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--mock-kafka", required=True, help="the sluice_mock_kafka binary")
    ap.add_argument("--enospc-preload", default="",
                    help="the ENOSPC LD_PRELOAD library (test/faults/enospc_preload.c); without "
                         "it the schedule has no ENOSPC faults")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--seed", type=int, default=None, help="the schedule's seed (random, printed)")
    ap.add_argument("--round-seed", type=int, default=None,
                    help="run the one round of this seed (a failure prints it)")
    ap.add_argument("--steps", type=int, default=8, help="faulty runs per round (default 8)")
    ap.add_argument("--work-root", default=None, help="where round directories go (TMPDIR)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory of failed rounds")
    ap.add_argument("--verbose", action="store_true", help="print each round's schedule")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="start no round after this many seconds (0: no limit); the summary "
                         "says how many rounds ran")
    ap.add_argument("--only", default="",
                    help="comma-separated fault kinds to draw from (of: " + ", ".join(ALL_FAULTS)
                         + "); default: every kind the environment allows")
    ap.add_argument("--s3", action="store_true",
                    help="the warehouse on moto's S3 server (AWS_ENDPOINT_URL_S3 and "
                         "SLUICE_MOTO_DIR, as test/interop/s3/with_moto.sh sets them), with the "
                         "S3 faults")
    ap.add_argument("--clean-first-run", action="store_true",
                    help="make each round's first run fault-free (the tables' creation is then "
                         "not under faults; see docs/reliability.md, finding 13)")
    args = ap.parse_args()
    args.sluice = os.path.realpath(args.sluice)
    args.mock_kafka = os.path.realpath(args.mock_kafka)
    if args.enospc_preload:
        args.enospc_preload = os.path.realpath(args.enospc_preload)
    if shutil.which("kcat") is None:
        print("faults: FAIL: kcat is not installed (apt install kcat)")
        return 1
    args.only = [f for f in args.only.split(",") if f]
    unknown = [f for f in args.only if f not in ALL_FAULTS]
    if unknown:
        print(f"faults: FAIL: unknown fault kinds {unknown} (known: {', '.join(ALL_FAULTS)})")
        return 2
    if args.s3 and not (os.environ.get("AWS_ENDPOINT_URL_S3") and os.environ.get("SLUICE_MOTO_DIR")):
        print("faults: FAIL: --s3 needs moto's S3 server: run through test/interop/s3/with_moto.sh")
        return 2
    if "broker" in args.only and not (os.environ.get("SLUICE_KAFKA_DIR")
                                      and os.environ.get("SLUICE_KAFKA_BOOTSTRAP")):
        print("faults: FAIL: the broker fault needs a real broker: run through "
              "test/interop/kafka/with_broker.sh")
        return 2
    kinds = schedule_faults(args)
    if any(f in args.only for f in MOCK_FAULTS) and os.environ.get("SLUICE_KAFKA_BOOTSTRAP"):
        print("faults: FAIL: the netcut and leader faults need the mock cluster (they are played "
              "by it): run without SLUICE_KAFKA_BOOTSTRAP")
        return 2
    if not kinds:
        print("faults: FAIL: --only leaves no fault kind this environment allows")
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    if args.round_seed is not None:
        round_seeds = [args.round_seed]
    else:
        master = random.Random(seed)
        round_seeds = [master.randrange(1, 2**31) for _ in range(args.rounds)]
    base_cmd = [sys.argv[0], "--sluice", args.sluice, "--mock-kafka", args.mock_kafka,
                "--steps", str(args.steps)]
    if args.only:
        base_cmd += ["--only", ",".join(args.only)]
    if args.s3:
        base_cmd += ["--s3"]
    if args.clean_first_run:
        base_cmd += ["--clean-first-run"]
    if args.enospc_preload:
        base_cmd += ["--enospc-preload", args.enospc_preload]
    totals = collections.Counter()
    failed = 0
    started = time.time()
    done = 0
    for rs in round_seeds:
        if args.max_seconds and time.time() - started > args.max_seconds:
            break
        done += 1
        r = Round(args, rs, args.steps)
        ok = False
        try:
            (lost, dup, wrong, report), leftovers = r.play()
            totals.update(lost=lost, duplicated=dup, wrong=wrong, leftovers=int(len(leftovers) > 0))
            ok = not (lost or dup or wrong or leftovers)
            problems = report + leftovers
        except RoundFailure as e:
            problems = [str(e)]
            totals.update(errors=1)
        except subprocess.TimeoutExpired as e:
            problems = [f"timed out: {e}"]
            totals.update(errors=1)
        except OSError as e:  # e.g. the binary being relinked by a build meanwhile
            problems = [f"could not run a program: {e}"]
            totals.update(errors=1)
        totals.update(runs=r.runs, faults=r.faults)
        if args.verbose:
            print(f"faults: round seed={rs} runs={r.runs} faults={r.faults}: {'; '.join(r.events)}")
        if not ok:
            failed += 1
            print(f"faults: round seed={rs} FAILED after: {'; '.join(r.events) or 'nothing'}")
            for p in problems:
                print("  " + p.replace("\n", "\n  "))
            print("  reproduce: " + shlex.join(base_cmd + ["--round-seed", str(rs), "--keep"]))
            if args.keep:
                print(f"  work directory kept: {r.work}")
        r.cleanup(keep=args.keep and not ok)
    rounds = done
    shown_seed = args.round_seed if args.round_seed is not None else seed
    detail = ""
    if failed:
        detail = (f" FAILED={failed} (rounds with a run that failed or hung: {totals['errors']}, "
                  f"with files left behind: {totals['leftovers']})")
    print(f"faults: rounds={rounds} runs={totals['runs']} faults={totals['faults']} "
          f"lost={totals['lost']} duplicated={totals['duplicated']} wrong={totals['wrong']} "
          f"seed={shown_seed}{detail} ({time.time() - started:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
