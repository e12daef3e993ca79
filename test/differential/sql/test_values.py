"""The SQL differential's own checks: type-aware equality (values.py) tells apart what it must,
and run.py reads case files and ORDER BY as documented. No Spark session: pyspark's types only.

    scripts/peers/run-python.sh -m pytest -q -p no:cacheprovider test/differential/sql/test_values.py
"""

import datetime as dt
import os
import sys
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import run  # noqa: E402
import values  # noqa: E402
from pyspark.sql import types as T  # noqa: E402


def spark(value, ddl_type):
    return values.from_spark(value, ddl_type)


def sluice(json_text, type_text):
    return values.sluice_row(json_text, type_text)


def test_integers_exact_and_not_floats():
    assert values.equal(spark(7, T.IntegerType()), sluice('{"v":7}', "STRUCT(v BIGINT)")[0])
    assert not values.equal(spark(7, T.IntegerType()), sluice('{"v":8}', "STRUCT(v INTEGER)")[0])
    # 7 and 7.0: an integer is not a double.
    assert not values.equal(spark(7, T.LongType()), sluice('{"v":7.0}', "STRUCT(v DOUBLE)")[0])


def test_floats_with_tolerance_and_nan():
    assert values.equal(spark(0.30000000000000004, T.DoubleType()),
                        sluice('{"v":0.3}', "STRUCT(v DOUBLE)")[0])
    assert not values.equal(spark(0.3, T.DoubleType()), sluice('{"v":0.31}', "STRUCT(v DOUBLE)")[0])
    assert values.equal(spark(float("nan"), T.DoubleType()),
                        sluice('{"v":NaN}', "STRUCT(v DOUBLE)")[0])
    assert not values.equal(spark(float("inf"), T.DoubleType()),
                            sluice('{"v":-Infinity}', "STRUCT(v DOUBLE)")[0])


def test_decimals_keep_their_scale():
    d = spark(Decimal("1.50"), T.DecimalType(10, 2))
    assert values.equal(d, sluice('{"v":1.5}', "STRUCT(v DECIMAL(10,2))")[0])
    assert not values.equal(d, sluice('{"v":1.5}', "STRUCT(v DECIMAL(10,1))")[0])
    assert not values.equal(d, sluice('{"v":1.5}', "STRUCT(v DOUBLE)")[0])


def test_null_is_not_a_value_and_strings_are_exact():
    assert values.equal(spark(None, T.StringType()), sluice('{"v":null}', "STRUCT(v VARCHAR)")[0])
    assert not values.equal(spark("", T.StringType()), sluice('{"v":null}', "STRUCT(v VARCHAR)")[0])
    assert not values.equal(spark("a ", T.StringType()), sluice('{"v":"a"}', "STRUCT(v VARCHAR)")[0])
    assert not values.equal(spark("1", T.StringType()), sluice('{"v":1}', "STRUCT(v INTEGER)")[0])


def test_timestamps_in_utc_and_dates():
    ts = spark(dt.datetime(2024, 1, 15, 8, 30), T.TimestampType())
    assert values.equal(ts, sluice('{"v":"2024-01-15 10:30:00+02"}',
                                   "STRUCT(v TIMESTAMP WITH TIME ZONE)")[0])
    assert values.equal(ts, sluice('{"v":"2024-01-15 08:30:00"}', "STRUCT(v TIMESTAMP)")[0])
    assert not values.equal(ts, sluice('{"v":"2024-01-15"}', "STRUCT(v DATE)")[0])
    assert values.equal(spark(dt.date(2024, 1, 15), T.DateType()),
                        sluice('{"v":"2024-01-15"}', "STRUCT(v DATE)")[0])


def test_binary_nested_types():
    assert values.equal(spark(bytearray(b"\x00A"), T.BinaryType()),
                        sluice('{"v":"\\\\x00A"}', "STRUCT(v BLOB)")[0])
    arr = T.ArrayType(T.IntegerType())
    assert values.equal(spark([1, None], arr), sluice('{"v":[1,null]}', "STRUCT(v INTEGER[])")[0])
    assert not values.equal(spark([1, 2], arr), sluice('{"v":[2,1]}', "STRUCT(v INTEGER[])")[0])
    m = T.MapType(T.StringType(), T.IntegerType())
    assert values.equal(spark({"a": 1, "b": 2}, m),
                        sluice('{"v":{"b":2,"a":1}}', "STRUCT(v MAP(VARCHAR, INTEGER))")[0])
    st = T.StructType([T.StructField("x", T.IntegerType()), T.StructField("y", T.StringType())])
    row = (1, "a")
    assert values.equal(spark(row, st), sluice('{"v":{"x":1,"y":"a"}}',
                                               'STRUCT(v STRUCT(x INTEGER, y VARCHAR))')[0])
    assert not values.equal(spark(row, st), sluice('{"v":{"x":1,"z":"a"}}',
                                                   'STRUCT(v STRUCT(x INTEGER, z VARCHAR))')[0])


def test_duck_type_names_with_quotes_and_nesting():
    t = values.parse_duck_type('STRUCT("a b" DECIMAL(10,2)[], m MAP(VARCHAR, STRUCT(x INTEGER)))')
    assert t.children[0][0] == "a b"
    assert t.children[0][1].name == "LIST" and t.children[0][1].children[0][1].args == (10, 2)
    assert t.children[1][1].name == "MAP"


def test_rows_as_multiset_or_in_order():
    a = [[("int", 1)], [("int", 2)]]
    b = [[("int", 2)], [("int", 1)]]
    assert values.rows_equal(a, b, ordered=False)
    assert not values.rows_equal(a, b, ordered=True)
    assert not values.rows_equal(a, a + a, ordered=False)


def test_order_by_detection():
    assert run.ends_with_order_by("SELECT a FROM t ORDER BY a")
    assert run.ends_with_order_by("SELECT a FROM t ORDER BY a LIMIT 2")
    assert not run.ends_with_order_by("SELECT row_number() OVER (ORDER BY a) FROM t")
    assert not run.ends_with_order_by("SELECT * FROM (SELECT a FROM t ORDER BY a) WHERE a > 1")
    assert not run.ends_with_order_by("SELECT 'ORDER BY' AS s FROM t")


def test_queries_and_expressions():
    assert run.Case("x", "SELECT 1", "f", 1).is_query
    assert run.Case("x", "(SELECT 1)", "f", 1).is_query
    assert not run.Case("x", "from_json(j, 'a INT')", "f", 1).is_query
    assert run.Case("x", "1 + 1", "f", 1).query == "SELECT 1 + 1 AS v"


def test_outcomes():
    case = run.Case("x", "1", "f", 1)
    rows = ("rows", [[("int", 1)]])
    assert run.outcome(rows, rows, case) == "pass"
    assert run.outcome(rows, ("rows", [[("int", 2)]]), case) == "silent"
    assert run.outcome(rows, ("error", "Conversion Error: x"), case) == "refuses"
    assert run.outcome(("error", "[DIVIDE_BY_ZERO] x"), rows, case) == "accepts"
    assert run.outcome(("error", "[CAST_INVALID_INPUT] x"), ("error", "Conversion Error: x"),
                       case) == "pass"
    assert run.outcome(("error", "[CAST_INVALID_INPUT] x"),
                       ("error", "Parser Error: syntax error at or near"), case) == "unclear"
    assert run.outcome(("error", "[PARSE_SYNTAX_ERROR] x"),
                       ("error", "Parser Error: syntax error at or near"), case) == "pass"
    assert run.outcome(rows, ("crash", "INTERNAL Error"), case) == "crash"
