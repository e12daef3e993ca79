"""The PySpark programs the Spark Connect interop test runs twice: on local Spark (the classic
SparkSession of peers.spark()) and on Sluice through the unmodified Spark Connect client. Each
case is a function of (spark, ctx) that returns plain data: rows as lists of values, types as
Spark's simpleString. ctx has `table`, a table name unique to the run.

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


CASES = [sql_literals, sql_types, range_collect, range_step, dataframe_ops,
         where_string_and_alias, union_group_aggregate, distinct_todf_drop_offset, show_text,
         empty_result,
         schema_and_columns, conf_set_get, delta_table_by_sql]
