"""The PySpark programs the Spark Connect interop test runs twice: on local Spark (the classic
SparkSession of peers.spark()) and on Sluice through the unmodified Spark Connect client. Each
case is a function of (spark, ctx) that returns plain data: rows as lists of values, types as
Spark's simpleString. ctx has `table`, a table name unique to the run, and `tmp`, a new empty
directory of the case's own (the same machine runs the server, the client and local Spark).

Values are made comparable by `plain`: datetimes as ISO text, decimals as text, bytes as hex.
"""

import datetime
import decimal


def plain(value):
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def rows(df):
    return [[plain(v) for v in r] for r in df.collect()]


def frame(df):
    return {"schema": df.schema.simpleString(), "rows": rows(df)}


def sql_literals(spark, ctx):
    return frame(spark.sql("SELECT 1 AS a, 'x' AS b"))


def sql_types(spark, ctx):
    return frame(spark.sql(
        "SELECT CAST(1 AS TINYINT) AS i8, CAST(2 AS SMALLINT) AS i16, 3 AS i32, 4L AS i64, "
        "CAST(1.5 AS FLOAT) AS f32, 2.5D AS f64, TRUE AS b, 'héllo' AS s, X'00FF' AS bin, "
        "DATE'2024-01-02' AS d, TIMESTAMP'2024-01-02 03:04:05.5' AS ts, "
        "CAST(12.34 AS DECIMAL(10,2)) AS dec, CAST(NULL AS STRING) AS n"))


def range_collect(spark, ctx):
    return frame(spark.range(5))


def range_step(spark, ctx):
    return frame(spark.range(2, 11, 3))


def dataframe_ops(spark, ctx):
    from pyspark.sql import functions as F
    df = (spark.range(10).filter(F.col("id") > 3).select((F.col("id") * 2).alias("x"))
          .orderBy(F.col("x").desc()).limit(3))
    return frame(df)


def where_string_and_alias(spark, ctx):
    df = spark.range(6).alias("t").where("id % 2 = 0").selectExpr("t.id AS even", "id + 1 AS odd")
    return frame(df)


def union_group_aggregate(spark, ctx):
    from pyspark.sql import functions as F
    df = (spark.range(6).union(spark.range(3)).groupBy((F.col("id") % 2).alias("k"))
          .agg(F.count("*").alias("n"), F.max("id").alias("top")).orderBy("k"))
    return frame(df)


def distinct_todf_drop_offset(spark, ctx):
    return {
        "distinct": rows(spark.range(4).union(spark.range(2)).distinct().toDF("x").orderBy("x")),
        "drop": frame(spark.sql("SELECT 1 AS a, 2 AS b").drop("a")),
        "offset": rows(spark.range(10).orderBy("id").offset(7)),
    }


def show_text(spark, ctx):
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        spark.range(3).selectExpr("id", "CAST(id * 1.5 AS DOUBLE) AS half",
                                  "'row ' || id AS label").show(2)
    return {"text": out.getvalue()}


def empty_result(spark, ctx):
    return frame(spark.sql("SELECT 1 AS a WHERE 1 = 0"))


def schema_and_columns(spark, ctx):
    df = spark.sql("SELECT 1 AS a, 'x' AS b, DATE'2024-01-01' AS d")
    return {"columns": df.columns, "schema": df.schema.simpleString()}


def conf_set_get(spark, ctx):
    spark.conf.set("spark.sql.shuffle.partitions", "4")
    return {"value": spark.conf.get("spark.sql.shuffle.partitions")}


def delta_table_by_sql(spark, ctx):
    t = ctx["table"]
    spark.sql(f"CREATE TABLE {t} (id BIGINT, s STRING) USING DELTA")
    spark.sql(f"INSERT INTO {t} VALUES (2, 'b'), (1, 'a')")
    out = {
        "sql": rows(spark.sql(f"SELECT * FROM {t} ORDER BY id")),
        "table": rows(spark.table(t).orderBy("id")),
        "count": spark.sql(f"SELECT count(*) AS n FROM {t}").collect()[0][0],
    }
    spark.sql(f"DROP TABLE {t}")
    return out


def create_dataframe(spark, ctx):
    from pyspark.sql import types as T
    rows_in = [(1, "a", 1.5, True, datetime.date(2024, 1, 2),
                datetime.datetime(2024, 1, 2, 3, 4, 5, 250000), decimal.Decimal("12.34"),
                b"\x00\xff"),
               (None, None, None, None, None, None, None, None),
               (-3, "héllo", float("-inf"), False, datetime.date(1969, 12, 31),
                datetime.datetime(1969, 12, 31, 23, 59, 59), decimal.Decimal("-0.05"), b"")]
    inferred = spark.createDataFrame(rows_in, ["id", "s", "f", "b", "d", "ts", "m", "bin"])
    schema = T.StructType([T.StructField("k", T.IntegerType()),
                           T.StructField("v", T.StringType())])
    typed = spark.createDataFrame([(2, "y"), (1, "x")], schema)
    empty = spark.createDataFrame([], schema)
    return {
        "inferred": frame(inferred.orderBy("id")),
        "typed": frame(typed.orderBy("k")),
        "empty": frame(empty),
        "filtered": rows(typed.where("k > 1")),
    }


def temp_views(spark, ctx):
    people = spark.createDataFrame([(1, "ann", 31), (2, "bob", 17), (3, "cy", 45)],
                                   ["id", "name", "age"])
    people.createOrReplaceTempView("people")
    spark.range(3).createOrReplaceTempView("nums")
    adults = spark.sql("SELECT name FROM people WHERE age >= 18 ORDER BY name")
    adults.createOrReplaceTempView("adults")
    out = {
        "table": frame(spark.table("people").orderBy("id")),
        "sql": frame(spark.sql("SELECT p.name, n.id FROM people p JOIN nums n ON p.id = n.id "
                               "ORDER BY n.id")),
        "view_of_view": rows(spark.table("adults")),
        "with": rows(spark.sql("WITH old AS (SELECT * FROM people WHERE age > 40) "
                               "SELECT name FROM old")),
    }
    spark.createDataFrame([(9, "zed", 99)], ["id", "name", "age"]).createOrReplaceTempView(
        "people")
    out["replaced"] = rows(spark.sql("SELECT name FROM people"))
    try:
        spark.range(1).createTempView("people")
        out["exists"] = None
    except Exception as e:
        out["exists"] = type(e).__name__
    return out


def with_columns(spark, ctx):
    from pyspark.sql import functions as F
    df = spark.range(3).withColumn("sq", F.col("id") * F.col("id"))
    df = df.withColumns({"id": F.col("id") + 10, "label": F.concat(F.lit("n"), F.col("sq"))})
    df = df.withColumnRenamed("sq", "square").withColumnRenamed("nope", "x")
    return frame(df.orderBy("id"))


def joins_on_names(spark, ctx):
    left = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], ["id", "l"])
    right = spark.createDataFrame([(2, "x"), (3, "y"), (4, "z")], ["id", "r"])
    out = {}
    for how in ["inner", "left", "right", "full", "left_semi", "left_anti"]:
        out[how] = frame(left.join(right, "id", how).orderBy("id"))
    out["list"] = frame(left.join(right, ["id"]).orderBy("id"))
    return out


def joins_on_condition(spark, ctx):
    from pyspark.sql import functions as F
    left = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], ["id", "l"])
    right = spark.createDataFrame([(2, "x"), (3, "y"), (4, "z")], ["rid", "r"])
    out = {}
    for how in ["inner", "left", "right", "full", "semi", "anti"]:
        out[how] = frame(left.join(right, left.id == right.rid, how)
                         .orderBy(F.col("id").asc_nulls_last()))
    same = spark.createDataFrame([(2, "x"), (5, "q")], ["id", "r"])
    out["same_names"] = frame(left.join(same, left.id == same.id, "left")
                              .select(left.id, same.id.alias("other"), "r").orderBy(left.id))
    a, b = left.alias("a"), same.alias("b")
    out["aliases"] = rows(a.join(b, F.col("a.id") == F.col("b.id")).select("a.l", "b.r"))
    out["cross"] = rows(left.crossJoin(same).select("l", "r").orderBy("l", "r"))
    return out


def stream_delta_available_now(spark, ctx):
    """readStream of a Delta table (by name, then by path) to Delta paths with availableNow."""
    import os
    t, tmp = ctx["table"], ctx["tmp"]
    spark.sql(f"CREATE TABLE {t}_src (id BIGINT, kind STRING) USING DELTA")
    spark.sql(f"INSERT INTO {t}_src VALUES (1, 'click'), (2, 'view'), (3, 'click')")
    first, second = os.path.join(tmp, "clicks"), os.path.join(tmp, "doubled")
    q = (spark.readStream.table(f"{t}_src").where("kind = 'click'")
         .writeStream.format("delta").option("checkpointLocation", os.path.join(tmp, "cp1"))
         .trigger(availableNow=True).start(first))
    q.awaitTermination()
    q2 = (spark.readStream.format("delta").load(first).selectExpr("id * 2 AS id2")
          .writeStream.format("delta").option("checkpointLocation", os.path.join(tmp, "cp2"))
          .trigger(availableNow=True).start(second))
    q2.awaitTermination()
    out = {
        "first": rows(spark.sql(f"SELECT * FROM delta.`{first}` ORDER BY id")),
        "second": rows(spark.sql(f"SELECT * FROM delta.`{second}` ORDER BY id2")),
        "active": q2.isActive,
        "last_rows": q2.lastProgress.numInputRows,
    }
    spark.sql(f"DROP TABLE {t}_src")
    return out


CASES = [sql_literals, sql_types, range_collect, range_step, dataframe_ops,
         where_string_and_alias, union_group_aggregate, distinct_todf_drop_offset, show_text,
         empty_result,
         schema_and_columns, conf_set_get, delta_table_by_sql, create_dataframe, temp_views,
         with_columns, joins_on_names, joins_on_condition, stream_delta_available_now]
