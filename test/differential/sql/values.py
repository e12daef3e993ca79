"""Type-aware values of the SQL differential: both engines' answers become the same canonical form.

A canonical value is a tuple (kind, payload):
  ("null",)            SQL NULL
  ("bool", b)          BOOLEAN
  ("int", n)           every integer type (widths are not compared: INT 1 equals BIGINT 1)
  ("float", x)         FLOAT / DOUBLE (compared with a relative tolerance; NaN equals NaN)
  ("dec", Decimal)     DECIMAL, the scale kept (1.50 is not 1.5)
  ("str", s)           STRING
  ("bin", bytes)       BINARY
  ("date", date)       DATE
  ("ts", datetime)     TIMESTAMP / TIMESTAMP_NTZ: a naive datetime of the UTC wall clock
  ("array", [v...])    ARRAY
  ("map", {key: v})    MAP; keys rendered as text (Sluice's JSON rendering keeps nothing else)
  ("struct", [(name, v)...])  STRUCT, fields in order
  ("other", text)      anything else (intervals, variants): compared as text

Spark's side comes from DataFrame.collect() with its schema; Sluice's side from DuckDB's
to_json(row) of the result row and typeof(row), the row's STRUCT type (see run.py).
"""

import datetime as dt
import json
import math
import re
from decimal import Decimal

FLOAT_REL_TOL = 1e-9
FLOAT32_REL_TOL = 1e-6


# ---------------------------------------------------------------------------------------------
# Spark: Python values of collect() plus the DataFrame's DataType.

def from_spark(value, dtype):
    from pyspark.sql import types as T
    if value is None:
        return ("null",)
    if isinstance(dtype, T.BooleanType):
        return ("bool", bool(value))
    if isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return ("int", int(value))
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        return ("float", float(value))
    if isinstance(dtype, T.DecimalType):
        return ("dec", Decimal(value))
    if isinstance(dtype, (T.StringType, T.VarcharType, T.CharType)):
        return ("str", str(value))
    if isinstance(dtype, T.BinaryType):
        return ("bin", bytes(value))
    if isinstance(dtype, T.TimestampType) or type(dtype).__name__ == "TimestampNTZType":
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return ("ts", value)
    if isinstance(dtype, T.DateType):
        return ("date", value)
    if isinstance(dtype, T.ArrayType):
        return ("array", [from_spark(v, dtype.elementType) for v in value])
    if isinstance(dtype, T.MapType):
        return ("map", {key_text(from_spark(k, dtype.keyType)): from_spark(v, dtype.valueType)
                        for k, v in value.items()})
    if isinstance(dtype, T.StructType):
        return ("struct", [(f.name, from_spark(value[i], f.dataType))
                           for i, f in enumerate(dtype.fields)])
    return ("other", str(value))


def key_text(canon):
    """A map key as Sluice's JSON shows it (object keys are text)."""
    kind = canon[0]
    if kind == "null":
        return "null"
    if kind == "bool":
        return "true" if canon[1] else "false"
    if kind in ("str", "other"):
        return canon[1]
    if kind == "date":
        return canon[1].isoformat()
    if kind == "ts":
        return canon[1].isoformat(sep=" ")
    return str(canon[1])


# ---------------------------------------------------------------------------------------------
# Sluice: DuckDB type strings, e.g. STRUCT(v DECIMAL(10,2), "a b" INTEGER[], m MAP(VARCHAR, INTEGER))

class DuckType:
    """A parsed DuckDB type: name (upper case), args (numbers), children [(name, DuckType)]."""

    def __init__(self, name, args=(), children=()):
        self.name, self.args, self.children = name, tuple(args), list(children)

    def __repr__(self):
        return f"DuckType({self.name}, {self.args}, {self.children})"


def _tokens(text):
    out, pos = [], 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        if text[pos] == '"':
            end = pos + 1
            buf = []
            while end < len(text):
                if text[end] == '"':
                    if end + 1 < len(text) and text[end + 1] == '"':
                        buf.append('"')
                        end += 2
                        continue
                    break
                buf.append(text[end])
                end += 1
            out.append(("qname", "".join(buf)))
            pos = end + 1
        elif text.startswith("[]", pos):
            out.append(("list", "[]"))
            pos += 2
        elif text[pos] == "[":
            end = text.index("]", pos)
            out.append(("list", text[pos:end + 1]))
            pos = end + 1
        elif text[pos] in "(),":
            out.append(("punct", text[pos]))
            pos += 1
        else:
            m = re.match(r"[A-Za-z0-9_]+", text[pos:])
            if not m:
                raise ValueError(f"cannot read the DuckDB type {text!r} at {pos}")
            out.append(("word", m.group(0)))
            pos += len(m.group(0))
    return out


def parse_duck_type(text):
    toks = _tokens(text)
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else (None, None)

    def take():
        tok = toks[pos[0]]
        pos[0] += 1
        return tok

    def type_():
        kind, word = take()
        name = word.upper()
        # Multi-word names: TIMESTAMP WITH TIME ZONE, DOUBLE PRECISION ...
        while peek()[0] == "word" and peek()[1].upper() in ("WITH", "TIME", "ZONE", "PRECISION"):
            name += " " + take()[1].upper()
        t = DuckType(name)
        if peek() == ("punct", "("):
            take()
            if name in ("STRUCT", "UNION"):
                children = []
                while True:
                    fk, fname = take()
                    children.append((fname, type_()))
                    if take() == ("punct", ")"):
                        break
                t = DuckType(name, children=children)
            elif name == "MAP":
                k = type_()
                take()  # ,
                v = type_()
                take()  # )
                t = DuckType(name, children=[("key", k), ("value", v)])
            else:
                args = []
                while True:
                    args.append(int(take()[1]))
                    if take() == ("punct", ")"):
                        break
                t = DuckType(name, args=args)
        while peek()[0] == "list":
            take()
            t = DuckType("LIST", children=[("element", t)])
        return t

    result = type_()
    if pos[0] != len(toks):
        raise ValueError(f"cannot read the DuckDB type {text!r}: trailing {toks[pos[0]:]}")
    return result


_INT_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
              "UINTEGER", "UBIGINT", "UHUGEINT", "INT1", "INT2", "INT4", "INT8"}
_TS_TYPES = {"TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ", "TIMESTAMP_NS",
             "TIMESTAMP_MS", "TIMESTAMP_S", "DATETIME"}


def _blob(text):
    out = bytearray()
    i = 0
    while i < len(text):
        if text.startswith("\\x", i) and i + 4 <= len(text):
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        else:
            out.extend(text[i].encode("utf-8"))
            i += 1
    return bytes(out)


def _timestamp(text):
    m = re.fullmatch(r"(-?\d{4,})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"
                     r"(?:([+-])(\d\d)(?::?(\d\d))?(?::(\d\d))?)?", text)
    if not m:
        raise ValueError(f"not a timestamp: {text!r}")
    y, mo, d, h, mi, s, frac, sign, oh, om, _os = m.groups()
    micros = int((frac or "0").ljust(6, "0")[:6])
    value = dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), micros)
    if sign:
        offset = dt.timedelta(hours=int(oh), minutes=int(om or 0))
        value = value - offset if sign == "+" else value + offset
    return value


def from_sluice(value, t):
    """`value` is the parsed JSON of DuckDB's to_json (numbers as Decimal), `t` its DuckType."""
    if value is None:
        return ("null",)
    name = t.name
    if name == "BOOLEAN":
        return ("bool", bool(value))
    if name in _INT_TYPES:
        return ("int", int(value))
    if name in ("FLOAT", "DOUBLE", "REAL", "FLOAT4", "FLOAT8", "DOUBLE PRECISION"):
        return ("float", float(value))
    if name in ("DECIMAL", "NUMERIC"):
        scale = t.args[1] if len(t.args) > 1 else 0
        return ("dec", Decimal(value).quantize(Decimal(1).scaleb(-scale)))
    if name in ("VARCHAR", "STRING", "TEXT"):
        return ("str", str(value))
    if name == "JSON":
        # to_json embeds a JSON value as JSON, not as its text: render it back compactly.
        return ("str", value if isinstance(value, str) else
                json.dumps(value, separators=(",", ":"), default=str))
    if name == "BLOB":
        return ("bin", _blob(value))
    if name == "DATE":
        return ("date", dt.date.fromisoformat(value))
    if name in _TS_TYPES:
        return ("ts", _timestamp(value))
    if name in ("LIST", "ARRAY"):
        return ("array", [from_sluice(v, t.children[0][1]) for v in value])
    if name == "MAP":
        vt = t.children[1][1]
        return ("map", {k: from_sluice(v, vt) for k, v in value.items()})
    if name == "STRUCT":
        return ("struct", [(fname, from_sluice(value.get(fname), ft)) for fname, ft in t.children])
    return ("other", value if isinstance(value, str) else json.dumps(value, default=str))


def sluice_row(json_text, type_text):
    """One Sluice result row (the to_json text and the typeof text): a list of canonical values."""
    row = json.loads(json_text, parse_float=Decimal, parse_int=int,
                     parse_constant=lambda c: float(c))
    t = parse_duck_type(type_text)
    if t.name != "STRUCT":
        raise ValueError(f"the row type is not a STRUCT: {type_text}")
    # to_json renames duplicate keys (a, a_1): read the row by position.
    values = list(row.values())
    return [from_sluice(values[i] if i < len(values) else None, ft)
            for i, (_, ft) in enumerate(t.children)]


# ---------------------------------------------------------------------------------------------
# Equality

def equal(a, b, float32=False):
    """Type-aware equality of two canonical values; top-level struct field names are compared
    too (named_struct, struct), column names are not (the caller passes row values)."""
    if a[0] != b[0]:
        return False
    kind = a[0]
    if kind == "null":
        return True
    if kind == "float":
        x, y = a[1], b[1]
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        if math.isinf(x) or math.isinf(y):
            return x == y
        return math.isclose(x, y, rel_tol=FLOAT32_REL_TOL if float32 else FLOAT_REL_TOL,
                            abs_tol=1e-12)
    if kind == "dec":
        return a[1] == b[1] and a[1].as_tuple().exponent == b[1].as_tuple().exponent
    if kind == "array":
        return len(a[1]) == len(b[1]) and all(equal(x, y) for x, y in zip(a[1], b[1]))
    if kind == "map":
        return a[1].keys() == b[1].keys() and all(equal(a[1][k], b[1][k]) for k in a[1])
    if kind == "struct":
        return len(a[1]) == len(b[1]) and all(
            na.lower() == nb.lower() and equal(x, y) for (na, x), (nb, y) in zip(a[1], b[1]))
    return a[1] == b[1]


def rows_equal(rows_a, rows_b, ordered):
    if len(rows_a) != len(rows_b):
        return False
    if ordered:
        return all(_row_eq(x, y) for x, y in zip(rows_a, rows_b))
    remaining = list(rows_b)
    for x in rows_a:
        for i, y in enumerate(remaining):
            if _row_eq(x, y):
                del remaining[i]
                break
        else:
            return False
    return True


def _row_eq(x, y):
    return len(x) == len(y) and all(equal(a, b) for a, b in zip(x, y))


def show(canon):
    """A short SQL-ish rendering for the report."""
    kind = canon[0]
    if kind == "null":
        return "NULL"
    if kind == "bool":
        return "true" if canon[1] else "false"
    if kind == "str":
        return json.dumps(canon[1], ensure_ascii=False)
    if kind == "bin":
        return "X'" + canon[1].hex().upper() + "'"
    if kind == "date":
        return "DATE " + canon[1].isoformat()
    if kind == "ts":
        return "TS " + canon[1].isoformat(sep=" ")
    if kind == "dec":
        return str(canon[1]) + "BD"
    if kind == "float":
        return repr(canon[1]) + "D"
    if kind == "array":
        return "[" + ", ".join(show(v) for v in canon[1]) + "]"
    if kind == "map":
        return "map{" + ", ".join(f"{k}: {show(v)}" for k, v in canon[1].items()) + "}"
    if kind == "struct":
        return "{" + ", ".join(f"{n}: {show(v)}" for n, v in canon[1]) + "}"
    return str(canon[1])
