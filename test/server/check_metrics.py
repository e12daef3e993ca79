#!/usr/bin/env python3
"""Checks a /metrics scrape of `sluice run --ui` against the server's progress JSON.

Usage: check_metrics.py METRICS_FILE BASE_URL
METRICS_FILE is the scrape (curl output); BASE_URL the server ("http://127.0.0.1:PORT").
The scrape must parse (prom_text.py), and for every query the samples must equal the figures
of the batch the scrape reports as sluice_query_last_batch_id, read from
BASE_URL/api/v1/queries/<id>/progress: rates, durations per phase, state rows and memory,
watermark lag; the counters must equal the sums over the batches up to that one.
Prints "PASS ..." or the mismatches (exit 1).
"""
import json
import os
import sys
import urllib.request
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prom_text  # noqa: E402


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read().decode("utf-8"))


def epoch_seconds(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=__import__("datetime").timezone.utc).timestamp()


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    metrics_file, base = argv[1], argv[2].rstrip("/")
    with open(metrics_file, encoding="utf-8") as f:
        text = f.read()
    try:
        _, samples = prom_text.parse(text)
    except prom_text.ParseError as e:
        print(f"FAIL: {metrics_file} does not parse: {e}")
        return 1
    errors = []

    def one(name, qid, **labels):
        found = [s["value"] for s in samples if s["name"] == name and s["labels"].get("query_id") == qid
                 and all(s["labels"].get(k) == v for k, v in labels.items())]
        if len(found) != 1:
            errors.append(f"{name}{{query_id={qid},{labels}}}: {len(found)} samples")
            return None
        return found[0]

    def expect(what, got, want):
        if got is None:
            return
        if want is None or abs(got - want) > 1e-6 * max(1.0, abs(want)):
            errors.append(f"{what}: /metrics has {got}, the progress JSON {want}")

    queries = get_json(base + "/api/v1/queries")
    if not queries:
        print("FAIL: no query in /api/v1/queries")
        return 1
    checked = 0
    for q in queries:
        qid = q["id"]
        last = one("sluice_query_last_batch_id", qid)
        if last is None:
            continue
        progress = get_json(f"{base}/api/v1/queries/{qid}/progress?limit=300")
        upto = [p for p in progress if p["batchId"] <= last]
        batch = [p for p in upto if p["batchId"] == last]
        if len(batch) != 1:
            errors.append(f"batch {last} of {qid} is not in its progress")
            continue
        b = batch[0]
        name = q["name"] or ""
        if one("sluice_query_status", qid, status=q["status"]) is None:
            pass
        for s in samples:
            if s["labels"].get("query_id") == qid and s["labels"].get("query_name") != name:
                errors.append(f"{s['name']}: query_name {s['labels'].get('query_name')!r}, not {name!r}")
                break
        if "inputRowsPerSecond" in b:
            expect("input_rows_per_second", one("sluice_query_input_rows_per_second", qid),
                   b["inputRowsPerSecond"])
        expect("processed_rows_per_second", one("sluice_query_processed_rows_per_second", qid),
               b["processedRowsPerSecond"])
        expect("batch_duration_ms", one("sluice_query_batch_duration_ms", qid), b["batchDuration"])
        for phase, ms in b.get("durationMs", {}).items():
            expect(f"phase {phase}", one("sluice_query_batch_phase_duration_ms", qid, phase=phase), ms)
        for i, op in enumerate(b["stateOperators"]):
            labels = {"operator": op["operatorName"], "operator_index": str(i)}
            expect(f"state rows of operator {i}", one("sluice_state_rows", qid, **labels),
                   op["numRowsTotal"])
            expect(f"state memory of operator {i}", one("sluice_state_memory_bytes", qid, **labels),
                   op["memoryUsedBytes"])
            expect(f"rows dropped by operator {i}",
                   one("sluice_state_rows_dropped_by_watermark_total", qid, **labels),
                   sum(p["stateOperators"][i]["numRowsDroppedByWatermark"] for p in upto
                       if len(p["stateOperators"]) > i))
        # Lag: the newest max event time (of the latest batch that had one) minus the watermark of
        # the last batch.
        maxes = [p["eventTime"]["max"] for p in upto if "max" in p.get("eventTime", {})]
        et = b.get("eventTime", {})
        if maxes and "watermark" in et:
            expect("watermark_lag_seconds", one("sluice_query_watermark_lag_seconds", qid),
                   epoch_seconds(maxes[-1]) - epoch_seconds(et["watermark"]))
            expect("max_event_time_seconds", one("sluice_query_max_event_time_seconds", qid),
                   epoch_seconds(maxes[-1]))
            expect("watermark_timestamp_seconds",
                   one("sluice_query_watermark_timestamp_seconds", qid),
                   epoch_seconds(et["watermark"]))
        batches_total = one("sluice_query_batches_total", qid)
        if batches_total is not None and batches_total == len(upto):
            expect("num_input_rows_total", one("sluice_query_num_input_rows_total", qid),
                   sum(p["numInputRows"] for p in upto))
            written = [p["sink"]["numOutputRows"] for p in upto
                       if p.get("sink", {}).get("numOutputRows", -1) >= 0]
            if written:
                expect("num_output_rows_total", one("sluice_query_num_output_rows_total", qid),
                       sum(written))
            elif one("sluice_query_num_output_rows_total", qid) is not None:
                errors.append("num_output_rows_total has a sample, but no batch's sink reported "
                              "numOutputRows")
        elif batches_total is not None:
            errors.append(f"batches_total {batches_total} but {len(upto)} batches up to {last} "
                          "in the progress (more than the ring holds?)")
        checked += 1
    if errors:
        print("FAIL:\n  " + "\n  ".join(errors))
        return 1
    if checked == 0:
        print("FAIL: no query had a batch in the scrape")
        return 1
    print(f"PASS: {len(samples)} samples parse; {checked} queries match their progress JSON")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
