"""What the streaming differential compares after each run step, in one form for both engines.

An observation is a dict:
  {"error": text}                       the query was refused or failed in this run
  {"cols": [name, ...],                 the sink's column names (lower case)
   "rows": [[value, ...], ...],         the sink's rows (append, complete): canonical values of
                                        ../sql/values.py
   "emitted": [[[value, ...], ...]],    update mode: the rows each batch emitted, one list per
                                        batch that emitted any, oldest first
   "batches": [batch, ...],             the run's batches, from the progress JSON
   "idle": [batchId, ...]}              Spark only, not compared: its idle triggers (below)

A batch is {"id": batchId, "in": numInputRows, "wm": watermark text or None,
"ops": [[operatorName, numRowsTotal, numRowsDroppedByWatermark], ...]}.

Spark's idle triggers: a trigger that finds no new data (the one run of a restart without new
input, Once or AvailableNow) constructs no batch, but Spark's recentProgress still holds a progress
event for it (its progress of a trigger without execution, at most one per
spark.sql.streaming.noDataProgressEventInterval): the next batch id, 0 input rows, no state
operators, and a durationMs without addBatch. Sluice's
streaming_progress lists the batches it ran, and an idle trigger runs none (its C++ API reports
idle progress in recentProgress as Spark does). What is compared is the batches constructed, so
split_idle() moves exactly those events out of "batches" into "idle": an event without
durationMs.addBatch whose batch id has no offsets/<id> in the checkpoint and whose numInputRows
is 0. An event that meets one test and not the other (a batch planned but not run, or run
without an offset log entry) is no idle trigger and stops the run (HarnessError): the model is
wrong then, and nothing is dropped silently.

Observations are cached as JSON: encode() / decode() turn canonical values to JSON and back.
"""

import datetime as dt
from decimal import Decimal


def batch_of(progress):
    """A batch from one StreamingQueryProgress JSON object (Spark's or Sluice's)."""
    wm = (progress.get("eventTime") or {}).get("watermark")
    ops = [[op.get("operatorName"), op.get("numRowsTotal"), op.get("numRowsDroppedByWatermark")]
           for op in progress.get("stateOperators") or []]
    return {"id": progress.get("batchId"), "in": progress.get("numInputRows"), "wm": wm,
            "ops": ops}


class HarnessError(Exception):
    """The harness's model of an engine's output does not hold: the run stops, no answer."""


def is_idle_event(progress):
    """True for Spark's progress of a trigger that ran no batch (no addBatch in durationMs)."""
    return "addBatch" not in (progress.get("durationMs") or {})


def split_idle(progress_events, planned_ids):
    """(batches, idle batch ids) of a run's progress events (JSON objects, oldest first);
    planned_ids: the batch ids of the checkpoint's offsets/ after the run."""
    batches, idle = [], []
    for p in progress_events:
        b = batch_of(p)
        idle_event, planned = is_idle_event(p), b["id"] in planned_ids
        if idle_event == planned or (idle_event and b["in"] != 0):
            raise HarnessError(
                f"progress of batch {b['id']}: " +
                ("no addBatch" if idle_event else "addBatch") +
                (" but offsets/" if planned else " and no offsets/") + f"{b['id']}" +
                f", numInputRows {b['in']}: neither a batch nor an idle trigger")
        if idle_event:
            idle.append(b["id"])
        else:
            batches.append(b)
    return batches, idle


def _enc(v):
    kind = v[0]
    if kind == "null":
        return ["null"]
    if kind in ("ts", "date"):
        return [kind, v[1].isoformat()]
    if kind == "dec":
        return ["dec", str(v[1])]
    if kind == "bin":
        return ["bin", v[1].hex()]
    if kind == "array":
        return ["array", [_enc(x) for x in v[1]]]
    if kind == "map":
        return ["map", {k: _enc(x) for k, x in v[1].items()}]
    if kind == "struct":
        return ["struct", [[n, _enc(x)] for n, x in v[1]]]
    return [kind, v[1]]


def _dec(v):
    kind = v[0]
    if kind == "null":
        return ("null",)
    if kind == "ts":
        return ("ts", dt.datetime.fromisoformat(v[1]))
    if kind == "date":
        return ("date", dt.date.fromisoformat(v[1]))
    if kind == "dec":
        return ("dec", Decimal(v[1]))
    if kind == "bin":
        return ("bin", bytes.fromhex(v[1]))
    if kind == "array":
        return ("array", [_dec(x) for x in v[1]])
    if kind == "map":
        return ("map", {k: _dec(x) for k, x in v[1].items()})
    if kind == "struct":
        return ("struct", [(n, _dec(x)) for n, x in v[1]])
    return (kind, v[1])


def _map_rows(obs, fn):
    out = dict(obs)
    if "rows" in obs:
        out["rows"] = [[fn(v) for v in row] for row in obs["rows"]]
    if "emitted" in obs:
        out["emitted"] = [[[fn(v) for v in row] for row in rows] for rows in obs["emitted"]]
    return out


def encode(observations):
    return [_map_rows(o, _enc) for o in observations]


def decode(observations):
    return [_map_rows(o, _dec) for o in observations]
