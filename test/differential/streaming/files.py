"""Writes the files a file source's case step drops into its directory, the same bytes for both
engines: JSON lines, CSV with a header, or Parquet (pyarrow). Timestamps are written as UTC
instants (ISO 8601 with Z in text, timestamp[us, UTC] in Parquet).
File n's modification time is n seconds after file 1's."""

import csv
import json
import os
import time

import case_model

EXT = {"json": "json", "csv": "csv", "parquet": "parquet"}


def _text(value, typ):
    v = case_model.python_value(value, typ)
    if v is None:
        return None
    if typ == "TIMESTAMP":
        return v.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return v


def write(directory, n, src, rows):
    path = os.path.join(directory, f"part-{n:05d}.{EXT[src.format]}")
    names = [c for c, _ in src.cols]
    if src.format == "json":
        with open(path, "w", encoding="utf-8") as f:
            for row in rows:
                obj = {c: _text(v, t) for v, (c, t) in zip(row, src.cols) if v is not None}
                f.write(json.dumps(obj) + "\n")
    elif src.format == "csv":
        with open(path, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(names)
            for row in rows:
                w.writerow(["" if v is None else _text(v, t) for v, (_, t) in zip(row, src.cols)])
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq
        types = {"STRING": pa.string(), "BIGINT": pa.int64(), "INT": pa.int32(),
                 "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(),
                 "TIMESTAMP": pa.timestamp("us", tz="UTC")}
        arrays = [pa.array([case_model.python_value(row[i], t) for row in rows], type=types[t])
                  for i, (_, t) in enumerate(src.cols)]
        pq.write_table(pa.Table.from_arrays(arrays, names=names), path)
    # File n is n seconds younger than file n-1, so that both engines, which take new files
    # oldest first, take them in the order the case wrote them.
    stamp = time.time() - 1000 + n
    os.utime(path, (stamp, stamp))
    return path
