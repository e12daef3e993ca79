"""`sluice bench peers`: one Nexmark query over the same events on Sluice, Spark and Flink.

    nexmark_peers.py --sluice BIN --query qN [--events N] [--rate R] [--batch-events M] [--partitions P]
                     [--engines sluice,spark,flink] [--bootstrap HOST:PORT] [--check] [--json]
                     [--work DIR]

Run with the peers' Python (scripts/peers/run-python.sh; `sluice bench peers` does so). Steps:
 1. The broker: a real Apache Kafka broker started with scripts/kafka.sh (stopped at the end),
    or --bootstrap's. Topics nexmark-person, nexmark-auction, nexmark-bid are (re)created with P
    partitions.
 2. The events: the project's generator (nexmark_emit, beside BIN in the build tree) writes the
    first N events as JSON lines; each becomes a record of its kind's topic exactly as Sluice's
    Kafka feed writes them (docs/nexmark.md "Kafka-fed runs"): value = the line, timestamp = the
    event's dateTime, partition j mod P for the j-th event of the kind. Not timed.
 3. Each engine in turn, alone on the machine, reads the query's topic from the earliest offset
    to the end and writes to its blackhole (Sluice's blackhole sink, Spark's noop, Flink's
    blackhole connector): `sluice bench nexmark --source kafka --kafka-bootstrap`,
    spark_nexmark.py (the peers' venv), flink_nexmark.py (Flink's venv, scripts/peers/flink.sh).
 4. Measured from outside for every engine, over its process tree (every descendant, the JVMs
    included), from /proc: CPU seconds (utime + stime, children included) and the peak of the
    summed RSS (sampled every 100 ms). The measured span: Spark and Flink print PEERS-READY once
    their session is up (JVM started, tables declared) and PEERS-DONE when the job has ended;
    Sluice's span is its own (`bench nexmark` reports the run's wall and getrusage CPU, the
    session opened before it). The whole process (start to exit, JVM start included) is
    reported too. events/s and events per CPU second count the events of the kinds the query
    reads (its topic's records), as `sluice bench nexmark` does.
 5. With --check (a small run, N = 20 000 at an event-time rate R = 500/s unless given, so that
    q5's windows close): each engine writes its output rows instead (Sluice: its Delta sink;
    Spark: the memory sink; Flink: the collected changelog, materialized), and the driver
    compares them as multisets; a difference is exit 1 naming the engine and rows, and so is an
    empty output. Windowed queries (q5): Flink fires every open window at the end of its bounded
    input, Sluice only those ending at or below its final watermark (max dateTime - 4 s); Flink's
    windows past that watermark are left out of the comparison (WINDOW_END).
 An engine that cannot run a query (CANNOT: Spark and q5) is left out of its runs, with a note.

Prints a table, or with --json one object per engine per line: engine, query, events,
source_events, events_per_s, events_per_cpu_s, p99_ms (null: latency at a fixed rate is not
measured here yet), peak_rss_mb, output_rows, wall_s, cpu_s, process_wall_s, process_cpu_s,
version. Errors: exit 1 with the failing step's message; exit 2 for bad arguments.
"""

import argparse
import collections
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "test", "interop"))
import peers  # noqa: E402
import peers_rows  # noqa: E402

KINDS = ["person", "auction", "bid"]  # event_type 0, 1, 2
# The kinds each query reads (bench/peers knows these queries on every engine).
QUERY_KINDS = {"q0": ["bid"], "q1": ["bid"], "q2": ["bid"], "q5": ["bid"]}
ENGINES = ["sluice", "spark", "flink"]
# The queries an engine cannot run, and why (the engine is left out of their runs).
CANNOT = {("q5", "spark"): "Spark Structured Streaming refuses the per-window rank of q5 "
                           "(non-time-based window functions are not supported on streaming "
                           "DataFrames), and the reference's form joins two aggregations"}
# Windowed queries: the index of the window-end column. At the end of a bounded input Flink
# fires every open window (its final watermark is +inf), while Sluice (as Spark) closes only the
# windows that end at or below its final watermark, max(dateTime) - 4 s; the check leaves Flink's
# extra windows out (and only those: another engine's window past that watermark is a difference).
WINDOW_END = {"q5": 3}
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


# A failed step (the broker, the topics, an engine's run): exit 1 with its message.
Fail = peers.PeerFailed


# --- /proc measurement -------------------------------------------------------------------------

def _proc_stats():
    """pid -> (ppid, cpu seconds incl. reaped children, rss KiB) for every readable process."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                s = f.read()
        except OSError:
            continue
        fields = s[s.rindex(")") + 2:].split()  # fields from 3 (state) on
        ppid = int(fields[1])
        ticks = int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        out[int(name)] = (ppid, ticks / CLK_TCK, int(fields[21]) * PAGE_KB)
    return out


def tree_sample(root):
    """(cpu seconds, rss KiB) summed over root and its descendants."""
    stats = _proc_stats()
    children = collections.defaultdict(list)
    for pid, (ppid, _, _) in stats.items():
        children[ppid].append(pid)
    cpu = rss = 0
    todo = [root] if root in stats else []
    while todo:
        pid = todo.pop()
        cpu += stats[pid][1]
        rss += stats[pid][2]
        todo.extend(children.get(pid, []))
    return cpu, rss


def run_measured(name, argv, env=None, timeout=3600):
    """Runs argv, sampling its process tree; returns a dict of the figures and its stdout lines.
    The span is PEERS-READY .. PEERS-DONE when the process prints them."""
    t_start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TZ": "UTC", **(env or {})})
    marks, lines, err_lines = {}, [], []
    state = {"cpu": 0.0, "peak_rss": 0}

    def read_out():
        for line in proc.stdout:
            line = line.rstrip("\n")
            if line.startswith("PEERS-READY") or line.startswith("PEERS-DONE"):
                cpu, _ = tree_sample(proc.pid)
                marks[line.split()[0]] = (time.monotonic(), max(cpu, state["cpu"]))
            lines.append(line)

    def read_err():
        for line in proc.stderr:
            err_lines.append(line.rstrip("\n"))
            del err_lines[:-200]

    threads = [threading.Thread(target=read_out, daemon=True),
               threading.Thread(target=read_err, daemon=True)]
    for t in threads:
        t.start()
    while proc.poll() is None:
        cpu, rss = tree_sample(proc.pid)
        state["cpu"] = max(state["cpu"], cpu)
        state["peak_rss"] = max(state["peak_rss"], rss)
        if time.monotonic() - t_start > timeout:
            proc.kill()
            raise Fail(f"{name}: no end within {timeout} s")
        time.sleep(0.1)
    t_end = time.monotonic()
    for t in threads:
        t.join(10)
    if proc.returncode != 0:
        raise Fail(f"{name} failed (exit {proc.returncode}): {' '.join(argv)}\n" +
                   "\n".join(err_lines[-40:]))
    r = {"lines": lines, "process_wall_s": t_end - t_start, "process_cpu_s": state["cpu"],
         "peak_rss_mb": state["peak_rss"] / 1024.0}
    if "PEERS-READY" in marks and "PEERS-DONE" in marks:
        (t0, c0), (t1, c1) = marks["PEERS-READY"], marks["PEERS-DONE"]
        r["wall_s"], r["cpu_s"] = t1 - t0, c1 - c0
    return r


# --- the events (the broker and its topics: test/interop/peers.py) -----------------------------

def produce_events(bootstrap, emit, events, rate, partitions):
    """Writes the first `events` events into the topics; returns the count of each kind."""
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20,
                         "batch.num.messages": 10000, "queue.buffering.max.messages": 500000,
                         "queue.buffering.max.kbytes": 1048576, "acks": "all"})
    errors = []

    def on_delivery(err, _msg):
        if err is not None and len(errors) < 5:
            errors.append(str(err))

    topics = [f"nexmark-{k}" for k in KINDS]
    counts = [0, 0, 0]
    max_ts = [0, 0, 0]
    seconds = {}
    utc = datetime.timezone.utc
    emitter = subprocess.Popen([emit, str(events), f"--rate={rate}"], stdout=subprocess.PIPE)
    for line in emitter.stdout:
        line = line.rstrip(b"\n")
        kind = line[14] - 48  # {"event_type":K
        at = line.find(b'"dateTime":"') + 12  # the kind's own object comes first (others null)
        sec = line[at:at + 19]
        base = seconds.get(sec)
        if base is None:
            base = int(datetime.datetime.strptime(sec.decode(), "%Y-%m-%d %H:%M:%S")
                       .replace(tzinfo=utc).timestamp()) * 1000
            seconds[sec] = base
        ts = base + int(line[at + 20:at + 23])
        while True:
            try:
                producer.produce(topics[kind], value=line, partition=counts[kind] % partitions,
                                 timestamp=ts, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
        counts[kind] += 1
        max_ts[kind] = max(max_ts[kind], ts)
        if (counts[0] + counts[1] + counts[2]) % 10000 == 0:
            producer.poll(0)
    if emitter.wait() != 0:
        raise Fail(f"{emit} failed (exit {emitter.returncode})")
    if producer.flush(120) != 0:
        raise Fail("producing the events: records not acknowledged within 120 s")
    if errors:
        raise Fail("producing the events: " + "; ".join(errors))
    if sum(counts) != events:
        raise Fail(f"nexmark_emit wrote {sum(counts)} events, not {events}")
    return dict(zip(KINDS, counts)), dict(zip(KINDS, max_ts))


# --- the engines -------------------------------------------------------------------------------

def run_sluice(a, bootstrap, work, out):
    argv = [a.sluice, "bench", "nexmark", "--query", a.query, "--events", str(a.events),
            "--rate", str(a.rate), "--batch-events", str(a.batch_events), "--source", "kafka",
            "--kafka-bootstrap", bootstrap, "--no-batch", "--json",
            "--queries", os.path.join(REPO, "bench", "nexmark"), "--work-dir", work]
    if out:
        argv += ["--sink", "delta"]
    r = run_measured("sluice", argv)
    report = json.loads([ln for ln in r["lines"] if ln.startswith("{")][-1])
    r["wall_s"], r["cpu_s"] = report["wallSeconds"], report["cpuSeconds"]
    r["output_rows"] = report["outputRows"] if not out else -1
    if out:
        import deltalake
        table = deltalake.DeltaTable(os.path.join(work, "warehouse", f"nexmark_{a.query}"))
        rows = table.to_pyarrow_table().to_pylist()
        peers_rows.write_rows(out, [tuple(row.values()) for row in rows])
        r["output_rows"] = len(rows)
    p = subprocess.run([a.sluice, "--version"], capture_output=True, text=True)
    r["version"] = (p.stdout.strip() or "sluice").splitlines()[0]
    return r


def run_spark(a, bootstrap, work, out):
    argv = [os.path.join(REPO, "scripts", "peers", "run-python.sh"),
            os.path.join(HERE, "spark_nexmark.py"), "--bootstrap", bootstrap, "--query", a.query,
            "--batch-events", str(a.batch_events), "--work", work]
    if out:
        argv += ["--out", out]
    r = run_measured("spark", argv)
    import pyspark
    r["version"] = f"Spark {pyspark.__version__}"
    return r


def run_flink(a, bootstrap, work, out):
    python = os.path.join(peers.CACHE, "flink-venv", "bin", "python")
    check = subprocess.run([os.path.join(REPO, "scripts", "peers", "flink.sh"), "--check"],
                           capture_output=True, text=True)
    if check.returncode != 0:
        raise Fail(f"flink: {check.stderr.strip()}")
    argv = [python, os.path.join(HERE, "flink_nexmark.py"), "--bootstrap", bootstrap,
            "--query", a.query, "--work", work]
    if out:
        argv += ["--out", out]
    r = run_measured("flink", argv)
    p = subprocess.run([python, "-c", "import importlib.metadata as m; "
                        "print(m.version('apache-flink'))"], capture_output=True, text=True)
    r["version"] = f"Flink {p.stdout.strip()}"
    return r


RUNNERS = {"sluice": run_sluice, "spark": run_spark, "flink": run_flink}


def main():
    ap = argparse.ArgumentParser(description="Nexmark on Sluice, Spark and Flink (bench/peers)")
    ap.add_argument("--sluice", required=True, help="the sluice binary")
    ap.add_argument("--query", required=True)
    ap.add_argument("--events", type=int, default=0)
    ap.add_argument("--rate", type=int, default=0)
    ap.add_argument("--batch-events", type=int, default=100000)
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--bootstrap")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--work")
    a = ap.parse_args()
    if a.query not in QUERY_KINDS:
        print(f"Error: --query {a.query}: bench/peers runs {', '.join(sorted(QUERY_KINDS))}",
              file=sys.stderr)
        return 2
    engines = [e for e in a.engines.split(",") if e]
    bad = [e for e in engines if e not in ENGINES]
    if bad or not engines:
        print(f"Error: --engines {a.engines}: a subset of {','.join(ENGINES)}", file=sys.stderr)
        return 2
    for e in list(engines):
        if (a.query, e) in CANNOT:
            print(f"note: {e} does not run {a.query}: {CANNOT[(a.query, e)]}", file=sys.stderr)
            engines.remove(e)
    if not engines or (a.check and len(engines) < 2):
        print(f"Error: {a.query}: too few engines to run ({', '.join(engines) or 'none'})",
              file=sys.stderr)
        return 2
    if a.events <= 0:
        a.events = 20000 if a.check else 2000000
    if a.rate <= 0:  # event-time rate; a check's 20 000 events span 40 s, so q5's windows close
        a.rate = 500 if a.check else 100000
    if a.check:
        a.batch_events = min(a.batch_events, max(1, a.events // 6))
    emit = os.path.join(os.path.dirname(os.path.abspath(a.sluice)), "src", "sources", "nexmark",
                        "nexmark_emit")
    if not os.access(emit, os.X_OK):
        print(f"Error: {emit} not found (build the nexmark_emit target)", file=sys.stderr)
        return 2
    work = a.work or tempfile.mkdtemp(prefix="sluice-peers-")
    os.makedirs(work, exist_ok=True)
    try:
        with peers.kafka_broker(work, a.bootstrap) as bootstrap:
            peers.recreate_topics(bootstrap, [f"nexmark-{k}" for k in KINDS], a.partitions)
            t0 = time.monotonic()
            counts, max_ts = produce_events(bootstrap, emit, a.events, a.rate, a.partitions)
            produce_s = time.monotonic() - t0
            source_events = sum(counts[k] for k in QUERY_KINDS[a.query])
            if not a.json:
                print(f"nexmark {a.query} on {', '.join(engines)}: {a.events} events "
                      f"({source_events} of the kinds it reads) in topics of {a.partitions} "
                      f"partitions at {bootstrap}; producing took {produce_s:.1f} s (not counted)")
            results, outputs = [], {}
            for e in engines:
                out = os.path.join(work, f"{e}.rows.jsonl") if a.check else None
                shutil.rmtree(os.path.join(work, e), ignore_errors=True)  # a rerun starts afresh
                r = RUNNERS[e](a, bootstrap, os.path.join(work, e), out)
                with open(os.path.join(work, f"{e}.stdout"), "w") as f:  # kept with --work
                    f.write("\n".join(r["lines"]) + "\n")
                if out:
                    rows = peers_rows.read_rows(out)
                    if e == "flink" and a.query in WINDOW_END:
                        final_wm = max_ts["bid"] - 4000
                        rows = [row for row in rows if row[WINDOW_END[a.query]] <= final_wm]
                    outputs[e] = collections.Counter(rows)
                    r["output_rows"] = sum(outputs[e].values())
                obj = {"engine": e, "query": a.query, "events": a.events,
                       "source_events": source_events,
                       "events_per_s": source_events / r["wall_s"],
                       "events_per_cpu_s": source_events / r["cpu_s"] if r["cpu_s"] > 0 else None,
                       "p99_ms": None, "peak_rss_mb": round(r["peak_rss_mb"], 1),
                       "output_rows": r.get("output_rows", -1),
                       "wall_s": round(r["wall_s"], 3), "cpu_s": round(r["cpu_s"], 3),
                       "process_wall_s": round(r["process_wall_s"], 3),
                       "process_cpu_s": round(r["process_cpu_s"], 3), "version": r["version"]}
                results.append(obj)
                if a.json:
                    print(json.dumps(obj), flush=True)
                else:
                    print(f"  {e:6s} {obj['events_per_s']:12.0f} events/s "
                          f"{obj['events_per_cpu_s'] or 0:12.0f} events/cpu-s  "
                          f"wall {obj['wall_s']:.2f} s cpu {obj['cpu_s']:.2f} s  "
                          f"peak RSS {obj['peak_rss_mb']:.0f} MB  "
                          f"(whole process {obj['process_wall_s']:.1f} s, cpu "
                          f"{obj['process_cpu_s']:.1f} s)  {obj['version']}", flush=True)
            if a.check:
                first = engines[0]
                failed = False
                for e in engines[1:]:
                    missing = outputs[first] - outputs[e]
                    extra = outputs[e] - outputs[first]
                    if missing or extra:
                        failed = True
                        print(f"Error: {a.query}: {e}'s output differs from {first}'s: "
                              f"{sum(missing.values())} rows of {first} missing, e.g. "
                              f"{list(missing)[:3]}; {sum(extra.values())} extra, e.g. "
                              f"{list(extra)[:3]}", file=sys.stderr)
                if not failed and not a.json:
                    print(f"  check: the {len(engines)} outputs are equal "
                          f"({sum(outputs[first].values())} rows)")
                if not failed and sum(outputs[first].values()) == 0:
                    print(f"Error: {a.query}: no engine wrote a row; the check compares nothing",
                          file=sys.stderr)
                    failed = True
                return 1 if failed else 0
            if not a.json and "sluice" in engines:
                s = results[engines.index("sluice")]
                for r in results:
                    if r["engine"] != "sluice" and r["events_per_cpu_s"]:
                        cpu_ratio = s["events_per_cpu_s"] / r["events_per_cpu_s"]
                        print(f"  sluice / {r['engine']}: {cpu_ratio:.1f}x events per CPU second, "
                              f"{s['events_per_s'] / r['events_per_s']:.1f}x events/s")
            return 0
    except Fail as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
