"""kill -9 of `sluice connect` in the middle of the headline PySpark job
(examples/pyspark/kafka_orders_medallion.py: Kafka -> from_json -> withWatermark ->
dropDuplicatesWithinWatermark -> foreachBatch MERGE into silver with the txn confs, dead letters,
silver's change feed -> foreachBatch MERGE into gold), against a real broker (run by
with_broker.sh, which sets SLUICE_KAFKA_BOOTSTRAP).

Events are produced in rounds between the runs (examples/pyspark/produce_orders.py: out of order,
duplicated, malformed). Each killed run is killed with SIGKILL at one of these moments, in turn:
when the foreachBatch worker has started a batch (its "Started batch" line) plus a random delay
of up to 0.5 s, or as soon as the silver or the gold table has a new commit (a MERGE committed:
the query's own checkpoint commit of that batch may not be written yet). The script, whose
client would retry against the dead server, is killed too; the server and the unmodified script
are then started again on the same warehouse and checkpoints. After a final
clean run (and one more with nothing new), silver must be the latest valid event of every order,
gold the per-customer totals of silver, the dead letters each malformed record once, and no
batch's MERGE may be committed twice (each txn version once in each table's log).

SLUICE_MEDALLION_KILLS (default 4) is the number of killed runs; SLUICE_MEDALLION_SEED the random
seed (default: time-based, printed)."""

import glob
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

import connect_server
import peers

REPO = peers.REPO
JOB = os.path.join(REPO, "examples", "pyspark", "kafka_orders_medallion.py")
sys.path.insert(0, os.path.join(REPO, "examples", "pyspark"))
import produce_orders  # noqa: E402

ORDERS = 30                  # orders per round
MAX_OFFSETS = "25"           # records per silver batch: many batches per run
RUN_TIMEOUT = 300            # seconds for one run of the job
POLL = 0.002                 # seconds between looks for a new commit


def _log_versions(table_dir):
    return {os.path.basename(p) for p in glob.glob(os.path.join(table_dir, "_delta_log",
                                                                "*.json"))}


def _commits(table_dir):
    """(operation, txn versions) of each commit of the table's log."""
    out = []
    for path in sorted(glob.glob(os.path.join(table_dir, "_delta_log", "*.json"))):
        op, txns = None, []
        with open(path) as f:
            for line in f:
                action = json.loads(line)
                if "commitInfo" in action:
                    op = action["commitInfo"].get("operation")
                if "txn" in action:
                    txns.append((action["txn"]["appId"], action["txn"]["version"]))
        out.append((op, txns))
    return out


def _run_job(server, bootstrap, base, kill=None, rng=None):
    """Runs the job script once against `server`. kill: None (the run must succeed), or
    ("started", n) / ("commit", table_dir): SIGKILL the server at that moment. Returns what
    happened: "finished", "killed" or "ended before its kill"."""
    env = dict(os.environ, SPARK_REMOTE=server.url, TZ="UTC", PYTHONDONTWRITEBYTECODE="1")
    job = subprocess.Popen([sys.executable, JOB, bootstrap, "orders", base, MAX_OFFSETS],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out = {}
    reader = threading.Thread(target=lambda: out.update(zip(("stdout", "stderr"),
                                                            job.communicate())), daemon=True)
    reader.start()
    deadline = time.monotonic() + RUN_TIMEOUT
    killed = False
    if kill is not None:
        if kill[0] == "started":
            seen_before = server.stderr_text().count("Started batch")
        else:
            before = _log_versions(kill[1])
        while job.poll() is None and time.monotonic() < deadline:
            if kill[0] == "started":
                if server.stderr_text().count("Started batch") - seen_before >= kill[1]:
                    time.sleep(rng.uniform(0, 0.5))
                    server.kill()
                    killed = True
                    break
                time.sleep(0.02)
            else:
                if _log_versions(kill[1]) - before:
                    server.kill()
                    killed = True
                    break
                time.sleep(POLL)
    if killed:
        # The client would retry its calls to the dead server for minutes: a user restarts the
        # script, so the test ends it too.
        job.kill()
    reader.join(timeout=max(1.0, deadline - time.monotonic()) if not killed else 30)
    if reader.is_alive():
        job.kill()
        reader.join(timeout=30)
        raise AssertionError(f"the job did not end within its time (kill={kill}); server "
                             f"stderr: {server.stderr_text()[-3000:]}")
    if killed:
        return "killed"
    assert job.returncode == 0, (f"job failed (exit {job.returncode}): "
                                 f"{out.get('stderr', '')[-4000:]}\nserver: "
                                 f"{server.stderr_text()[-3000:]}")
    return "finished" if kill is None else "ended before its kill"


def _expected(valid_file):
    latest = {}
    with open(valid_file) as f:
        for line in f:
            e = json.loads(line)
            if e["order_id"] not in latest or e["ts"] > latest[e["order_id"]]["ts"]:
                latest[e["order_id"]] = e
    silver = sorted([e["order_id"], e["customer"], e["status"], e["amount"], e["ts"]]
                    for e in latest.values())
    gold = {}
    for e in latest.values():
        orders, paid = gold.get(e["customer"], (0, 0.0))
        gold[e["customer"]] = (orders + 1, paid + (e["amount"] if e["status"] == "paid" else 0))
    return silver, sorted([c, n, p] for c, (n, p) in gold.items())


def test_kill_9_mid_job_keeps_silver_and_gold_exact():
    bootstrap = os.environ.get("SLUICE_KAFKA_BOOTSTRAP")
    assert bootstrap, "SLUICE_KAFKA_BOOTSTRAP is not set: run through with_broker.sh"
    kills = int(os.environ.get("SLUICE_MEDALLION_KILLS", "4"))
    seed = int(os.environ.get("SLUICE_MEDALLION_SEED", str(int(time.time()))))
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="sluice-medallion-")
    warehouse, base = os.path.join(work, "wh"), os.path.join(work, "job")
    valid = os.path.join(work, "valid.jsonl")
    silver_dir = os.path.join(warehouse, "orders_silver")
    gold_dir = os.path.join(warehouse, "customer_gold")
    rounds = 0

    def produce(n):
        nonlocal rounds
        produce_orders.produce(bootstrap, "orders", rounds, ORDERS, n, valid)
        rounds += n

    produce(3)
    modes = [("started", 3), ("commit", gold_dir), ("started", 1), ("commit", silver_dir)]
    outcomes = []
    for i in range(kills):
        if i in (1, 3):
            produce(2)  # mid-stream: new events between restarts
        mode = modes[i % len(modes)]
        if mode[0] == "commit" and mode[1] == gold_dir and not os.path.isdir(gold_dir):
            mode = ("commit", silver_dir)
        server = connect_server.start(warehouse, env={"PYTHONUNBUFFERED": "1"})
        outcome = _run_job(server, bootstrap, base, kill=mode, rng=rng)
        if outcome != "killed":
            server.stop()
        outcomes.append((mode[0], os.path.basename(mode[1]) if mode[0] == "commit" else mode[1],
                         outcome))
    produce(1)
    for _ in range(2):  # a clean run over what is left, then one with nothing new
        server = connect_server.start(warehouse)
        assert _run_job(server, bootstrap, base) == "finished"
        server.stop()
    print(f"seed={seed} rounds={rounds} runs={outcomes}")
    assert any(o[2] == "killed" for o in outcomes), f"no run was killed: {outcomes}"

    want_silver, want_gold = _expected(valid)
    got_silver = peers.sluice_sql(
        warehouse, "SELECT order_id, customer, status, amount, "
        "date_format(ts, \"yyyy-MM-dd'T'HH:mm:ss'Z'\") AS ts FROM orders_silver").rows
    assert sorted([r["order_id"], r["customer"], r["status"], r["amount"], r["ts"]]
                  for r in got_silver) == want_silver
    got_gold = peers.sluice_sql(warehouse, "SELECT * FROM customer_gold").rows
    assert sorted([r["customer"], r["orders"], r["paid_revenue"]] for r in got_gold) == want_gold
    dead = peers.sluice_sql(warehouse, "SELECT `partition`, `offset`, payload, error "
                            "FROM orders_dead_letters").rows
    assert len(dead) == 4 * rounds, dead
    assert len({(r["partition"], r["offset"]) for r in dead}) == len(dead), dead
    assert sorted({r["error"] for r in dead}) == ["malformed JSON", "missing order_id"], dead
    # None twice: each batch's MERGE committed once (one txn version per commit, never again).
    for table_dir, app in ((silver_dir, "orders-silver"), (gold_dir, "customer-gold")):
        versions = [v for op, txns in _commits(table_dir) if op == "MERGE"
                    for a, v in txns if a == app]
        assert len(versions) == len(set(versions)), (table_dir, versions)
        assert all(op != "MERGE" or txns for op, txns in _commits(table_dir)), table_dir
