"""`sluice bench latency`: end-to-end latency on a real Kafka broker, at a fixed input rate.

    latency.py --bench BIN [--cases kafka_to_delta,stateless,stream_static_join,stateful]
               [--triggers 0,100] [--rate R]
               [--seconds S] [--warmup W] [--partitions P] [--bootstrap HOST:PORT] [--spark]
               [--json] [--work DIR]

Run with the peers' Python (scripts/peers/run-python.sh; `sluice bench latency` does so, with
BIN = the build's bench/kafka_latency_bench beside its sluice). Steps:
 1. The broker: a real Apache Kafka broker started with scripts/kafka.sh (stopped at the end),
    or --bootstrap's. A fresh broker appends slowly at first (docs/latency.md), so one short
    run of the first case (5 s, not reported) warms it before the measured runs.
 2. Sluice, for every case and trigger: BIN --case C --trigger-ms T --rate R --seconds S
    --warmup W --partitions P --json with SLUICE_KAFKA_BOOTSTRAP = the broker (the bench makes
    its topics there afresh; bench/kafka_latency_bench.cc is the reference for what it
    measures): a producer thread writes R records/s (~300 bytes, the produce time in the key)
    for S seconds; the query reads them (Trigger.ProcessingTime(T ms); 0 = the next batch as
    soon as the last one ended, Spark's processingTime 0), and a record's latency is its
    visibility time minus its produce time: kafka_to_delta, the Delta commit that added it
    (_commit_timestamp of the change feed); stateless, its arrival at a read_committed consumer
    of the output topic (the transactional Kafka sink: exactly once); stream_static_join, the
    same after a join with a static Delta table; stateful, a windowed count's update of the
    record's group (receive time - the group's newest produce time). Records produced in the
    first W seconds are left out.
 3. With --spark, the kafka_to_delta case on Apache Spark Structured Streaming for every trigger
    (spark_latency.py, the settings of bench/peers/README.md: local[2], Spark 4.2 with Delta):
    the same records at the same rate from a producer in its process, the same latency rule
    (the change feed's _commit_timestamp minus the key's produce time), after a pre-warm of
    10 s of records that is not measured (its JVM's first batches).
Prints one line per run, or with --json one object per run per line: engine, case, trigger_ms,
rate, seconds, p50_ms, p99_ms, max_ms, rows, measured, batches, durationMs {entry: {mean, p50,
p99}} and, for kafka_to_delta, append_p50_ms / append_p99_ms (from the broker's append time).
Exit 1 when a run fails (its stderr shown), 2 for bad arguments.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "test", "interop"))
import peers  # noqa: E402

Fail = peers.PeerFailed

CASES = ["kafka_to_delta", "stateless", "stream_static_join", "stateful"]


def run_sluice(a, bootstrap, case, trigger_ms, seconds, warmup):
    argv = [a.bench, "--case", case, "--trigger-ms", str(trigger_ms), "--rate", str(a.rate),
            "--seconds", str(seconds), "--warmup", str(warmup), "--partitions",
            str(a.partitions), "--json"]
    env = dict(os.environ, SLUICE_KAFKA_BOOTSTRAP=bootstrap)
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        raise Fail(f"sluice {case} trigger {trigger_ms} ms: exit {p.returncode}: "
                   f"{p.stderr.strip()[-2000:]}")
    r = json.loads(lines[-1])
    r["engine"] = "sluice"
    return r


def run_spark(a, bootstrap, trigger_ms, work):
    argv = [os.path.join(REPO, "scripts", "peers", "run-python.sh"),
            os.path.join(HERE, "spark_latency.py"), "--bootstrap", bootstrap, "--rate",
            str(a.rate), "--seconds", str(a.seconds), "--warmup", str(a.warmup),
            "--partitions", str(a.partitions), "--trigger-ms", str(trigger_ms), "--work",
            os.path.join(work, f"spark-{trigger_ms}")]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        raise Fail(f"spark kafka_to_delta trigger {trigger_ms} ms: exit {p.returncode}: "
                   f"{(p.stderr or p.stdout).strip()[-2000:]}")
    return json.loads(lines[-1])


def report(a, r, sluice_by_key):
    if a.json:
        print(json.dumps(r), flush=True)
        return
    d = r.get("durationMs", {})
    phases = " ".join(f"{k}={v['mean']:.1f}" for k, v in sorted(d.items()))
    line = (f"{r['engine']:6s} {r['case']:14s} trigger {r['trigger_ms']:>4} ms  "
            f"p50 {r['p50_ms']:8.1f} ms  p99 {r['p99_ms']:8.1f} ms  max {r['max_ms']:8.0f} ms  "
            f"rows {r['rows']} batches {r['batches']}")
    if "append_p50_ms" in r:
        line += f"  (from append p50 {r['append_p50_ms']:.1f} p99 {r['append_p99_ms']:.1f})"
    ref = sluice_by_key.get((r["case"], r["trigger_ms"]))
    if r["engine"] != "sluice" and ref and ref["p99_ms"] > 0:
        line += (f"  {r['engine']} / sluice: p50 {r['p50_ms'] / max(ref['p50_ms'], 0.1):.1f}x "
                 f"p99 {r['p99_ms'] / ref['p99_ms']:.1f}x")
    print(line, flush=True)
    if phases:
        print(f"       mean durationMs per batch: {phases}", flush=True)


def main():
    ap = argparse.ArgumentParser(description="End-to-end latency on a real Kafka broker")
    ap.add_argument("--bench", required=True, help="kafka_latency_bench of the build")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--triggers", default="0,100", help="processingTime intervals in ms")
    ap.add_argument("--rate", type=int, default=10000)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--bootstrap", default="")
    ap.add_argument("--spark", action="store_true", help="kafka_to_delta on Spark too")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--work", default="")
    a = ap.parse_args()
    cases = [c for c in a.cases.split(",") if c]
    try:
        triggers = [int(t) for t in a.triggers.split(",") if t]
    except ValueError:
        print(f"Error: --triggers must be integers (ms), got '{a.triggers}'", file=sys.stderr)
        return 2
    bad = [c for c in cases if c not in CASES]
    if bad or not cases or not triggers or min(triggers) < 0:
        print(f"Error: --cases must be a subset of {','.join(CASES)} and --triggers ms >= 0",
              file=sys.stderr)
        return 2
    if a.rate <= 0 or a.seconds <= 0 or not 0 <= a.warmup < a.seconds or a.partitions <= 0:
        print("Error: --rate, --seconds, --partitions must be positive, --warmup in "
              "[0, --seconds)", file=sys.stderr)
        return 2
    if not os.access(a.bench, os.X_OK):
        print(f"Error: {a.bench} not found (build the kafka_latency_bench target)",
              file=sys.stderr)
        return 2
    work = a.work or tempfile.mkdtemp(prefix="sluice-latency-")
    os.makedirs(work, exist_ok=True)
    try:
        with peers.kafka_broker(work, a.bootstrap) as bootstrap:
            if not a.json:
                print(f"latency at {a.rate} records/s for {a.seconds} s ({a.warmup} s warm-up left "
                      f"out), {a.partitions} partitions, broker {bootstrap}", flush=True)
            run_sluice(a, bootstrap, cases[0], triggers[0], 5, 1)  # warms the broker; not reported
            sluice_by_key = {}
            for case in cases:
                for t in triggers:
                    r = run_sluice(a, bootstrap, case, t, a.seconds, a.warmup)
                    sluice_by_key[(case, t)] = r
                    report(a, r, sluice_by_key)
            if a.spark:
                for t in triggers:
                    report(a, run_spark(a, bootstrap, t, work), sluice_by_key)
    except Fail as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
