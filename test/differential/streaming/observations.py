"""What the streaming differential compares after each run step, in one form for both engines.

An observation is a dict:
  {"error": text}                       the query was refused or failed in this run
  {"cols": [name, ...],                 the sink's column names (lower case)
   "rows": [[value, ...], ...],         the sink's rows (append, complete): canonical values of
                                        ../sql/values.py
   "emitted": [[[value, ...], ...]],    update mode: the rows each batch emitted, one list per
                                        batch that emitted any, oldest first
   "batches": [batch, ...]}             the run's batches, from the progress JSON

A batch is {"id": batchId, "in": numInputRows, "wm": watermark text or None,
"ops": [[operatorName, numRowsTotal, numRowsDroppedByWatermark], ...]}.

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
