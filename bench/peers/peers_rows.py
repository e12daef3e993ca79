"""Rows of a Nexmark query's output in one comparable form, for the engines of bench/peers.

Each engine's job writes its output rows (check runs only) as JSON lines through `write_rows`;
the driver compares them as multisets with `read_rows`. One value form for every engine:
integers as int, DECIMAL values as their text with the scale of the column (Decimal.quantize is
not used: each engine hands the value with its own scale, and the text of the value is what must
agree, so a trailing zero difference is normalised away by Decimal.normalize), timestamps as
milliseconds since the epoch (a naive datetime is UTC: every engine runs with its session time
zone UTC), strings as they are. Plain Python: the Spark and Flink jobs run in different venvs.
"""

import datetime
import decimal
import json

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def norm(value):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, decimal.Decimal):
        return "dec:" + format(value.normalize(), "f")
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        delta = value - _EPOCH
        return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000
    if isinstance(value, float):
        raise TypeError(f"a float in a Nexmark output row ({value!r}): no query here yields one")
    raise TypeError(f"cannot compare a {type(value).__name__} ({value!r})")


def write_rows(path, rows):
    """rows: sequences of values in the query's column order."""
    with open(path, "w") as out:
        for row in rows:
            out.write(json.dumps([norm(v) for v in row]) + "\n")


def read_rows(path):
    with open(path) as f:
        return [tuple(json.loads(line)) for line in f if line.strip()]
