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


def sql_temp_view_over_delta(spark, ctx):
    """SQL's CREATE TEMP VIEW over a Delta table: read by the next statements (spark.sql and
    spark.table), after an INSERT into the table, and through a view of the view."""
    t = ctx["table"]
    spark.sql(f"CREATE TABLE {t} (id BIGINT, s STRING) USING DELTA")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"CREATE OR REPLACE TEMP VIEW {t}_v AS SELECT * FROM {t} WHERE id > 1")
    out = {"next": rows(spark.sql(f"SELECT * FROM {t}_v"))}
    spark.sql(f"INSERT INTO {t} VALUES (3, 'c')")
    out["after_insert"] = rows(spark.table(f"{t}_v").orderBy("id"))
    spark.sql(f"CREATE OR REPLACE TEMP VIEW {t}_n AS SELECT count(*) AS n FROM {t}_v")
    out["view_of_view"] = rows(spark.sql(f"SELECT n FROM {t}_n"))
    spark.sql(f"DROP VIEW {t}_n")
    spark.sql(f"DROP VIEW {t}_v")
    spark.sql(f"DROP TABLE {t}")
    return out


def _events(spark, name):
    spark.sql(f"CREATE TABLE {name} (id BIGINT, user STRING, ts TIMESTAMP) USING DELTA")
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', TIMESTAMP'2024-01-01 10:00:00'), "
              "(2, 'b', TIMESTAMP'2024-01-01 10:04:00'), (3, 'a', TIMESTAMP'2024-01-01 10:12:00'), "
              "(3, 'a', TIMESTAMP'2024-01-01 10:12:00'), (4, 'c', TIMESTAMP'2024-01-01 10:31:00')")


def _progress(q):
    return [[p.batchId, p.numInputRows] for p in q.recentProgress]


def stream_window_watermark(spark, ctx):
    """withWatermark + groupBy(window(...), col).agg(...) in append mode with availableNow, run
    twice on one checkpoint (more data in between): windows are emitted once, when the
    watermark passes their end, and the state carries over the restart."""
    import os
    from pyspark.sql import functions as F
    t, tmp = ctx["table"], ctx["tmp"]
    _events(spark, t)
    out, cp = os.path.join(tmp, "windows"), os.path.join(tmp, "cp")

    def run():
        agg = (spark.readStream.table(t).withWatermark("ts", "10 minutes")
               .groupBy(F.window("ts", "10 minutes"), "user")
               .agg(F.count("*").alias("n"), F.max("id").alias("top")))
        q = (agg.writeStream.format("delta").outputMode("append")
             .option("checkpointLocation", cp).queryName(f"{t}_win")
             .trigger(availableNow=True).start(out))
        q.awaitTermination()
        return q

    def table():
        return rows(spark.sql(f"SELECT CAST(window.start AS STRING) AS s, "
                              f"CAST(window.end AS STRING) AS e, user, n, top "
                              f"FROM delta.`{out}` ORDER BY s, user"))
    q1 = run()
    first = {"rows": table(), "progress": _progress(q1), "name": q1.name == f"{t}_win",
             "status": q1.status, "active": q1.isActive}
    spark.sql(f"INSERT INTO {t} VALUES (5, 'a', TIMESTAMP'2024-01-01 10:33:00'), "
              "(6, 'b', TIMESTAMP'2024-01-01 10:05:00'), (7, 'c', TIMESTAMP'2024-01-01 10:52:00')")
    q2 = run()
    out_ = {"first": first, "second": {"rows": table(), "progress": _progress(q2),
                                       "same_id": q1.id == q2.id, "new_run": q1.runId != q2.runId}}
    spark.sql(f"DROP TABLE {t}")
    return out_


def stream_update_and_complete(spark, ctx):
    """A keyed aggregation without watermark in complete mode, and with a watermark in update
    mode (a Delta sink takes complete; update mode goes to the memory sink)."""
    import os
    from pyspark.sql import functions as F
    t, tmp = ctx["table"], ctx["tmp"]
    _events(spark, t)
    out = os.path.join(tmp, "complete")
    q = (spark.readStream.table(t).groupBy("user").agg(F.sum("id").alias("total"))
         .writeStream.format("delta").outputMode("complete")
         .option("checkpointLocation", os.path.join(tmp, "cp1"))
         .trigger(availableNow=True).start(out))
    q.awaitTermination()
    result = {"complete": rows(spark.sql(f"SELECT user, total FROM delta.`{out}` ORDER BY user")),
              "progress": _progress(q)}
    spark.sql(f"DROP TABLE {t}")
    return result


def stream_dedup(spark, ctx):
    """dropDuplicates: all columns, a subset, a subset with the watermarked column, and
    dropDuplicatesWithinWatermark, each to a table by toTable."""
    import os
    t, tmp = ctx["table"], ctx["tmp"]
    _events(spark, t)
    out = {}
    src = spark.readStream.table(t)
    wm = spark.readStream.table(t).withWatermark("ts", "10 minutes")
    frames = {"all": src.dropDuplicates(), "ids": src.dropDuplicates(["id"]),
              "users_ts": wm.dropDuplicates(["user", "ts"]),
              "within": wm.dropDuplicatesWithinWatermark(["user"])}
    for name, df in frames.items():
        q = (df.writeStream.option("checkpointLocation", os.path.join(tmp, "cp_" + name))
             .trigger(availableNow=True).toTable(f"{t}_{name}"))
        q.awaitTermination()
        # Which row of a key a batch keeps is not defined (Spark's order within a batch
        # depends on its files): the rows compared are the same whichever is kept.
        cols = "user" if name == "within" else "id, user"
        out[name] = rows(spark.sql(f"SELECT {cols} FROM {t}_{name} ORDER BY {cols}"))
        spark.sql(f"DROP TABLE {t}_{name}")
    spark.sql(f"DROP TABLE {t}")
    return out


def stream_static_join(spark, ctx):
    """A stream joined with a batch DataFrame: on a column name (inner and left, Spark's column
    order), on a condition of df.col, with a table as the static side."""
    import os
    t, tmp = ctx["table"], ctx["tmp"]
    _events(spark, t)
    users = spark.createDataFrame([("a", "Ann"), ("b", "Bob"), ("z", "Zed")], ["user", "name"])
    spark.sql(f"CREATE TABLE {t}_dim (uid STRING, tier INT) USING DELTA")
    spark.sql(f"INSERT INTO {t}_dim VALUES ('a', 1), ('c', 3)")
    dim = spark.table(f"{t}_dim")
    stream = spark.readStream.table(t)
    frames = {
        "inner_names": stream.join(users, "user"),
        "left_names": stream.join(users, ["user"], "left"),
        "condition": stream.join(dim, stream.user == dim.uid).select("id", "uid", "tier"),
        "left_condition": stream.join(dim, stream.user == dim.uid, "left_outer"),
    }
    out = {}
    for name, df in frames.items():
        path = os.path.join(tmp, name)
        q = (df.writeStream.format("delta").option("checkpointLocation", path + "_cp")
             .trigger(availableNow=True).start(path))
        q.awaitTermination()
        got = spark.read.format("delta").load(path)
        out[name] = {"columns": got.columns,
                     "rows": rows(got.orderBy(*[c for c in got.columns if c != "ts"]))}
    spark.sql(f"DROP TABLE {t}_dim")
    spark.sql(f"DROP TABLE {t}")
    return out


def stream_query_manager(spark, ctx):
    """A processingTime query: spark.streams.active and get, awaitTermination(timeout) while it
    runs, processAllAvailable, stop, and spark.streams after it (resetTerminated first: the
    session's earlier queries ended too)."""
    import os
    t, tmp = ctx["table"], ctx["tmp"]
    _events(spark, t)
    spark.streams.resetTerminated()
    q = (spark.readStream.table(t).writeStream.format("delta")
         .option("checkpointLocation", os.path.join(tmp, "cp")).queryName(f"{t}_pt")
         .trigger(processingTime="1 second").start(os.path.join(tmp, "out")))
    out = {"active": [a.name == f"{t}_pt" for a in spark.streams.active if a.id == q.id],
           "get": spark.streams.get(q.id).name == f"{t}_pt",
           "any_before": spark.streams.awaitAnyTermination(0.5),
           "await": q.awaitTermination(0.5)}
    q.processAllAvailable()
    out["rows"] = sum(p.numInputRows for p in q.recentProgress)
    out["last_is_progress"] = q.lastProgress is not None
    q.stop()
    out.update({"after_active": [a.id for a in spark.streams.active if a.id == q.id],
                "after_get": spark.streams.get(q.id), "is_active": q.isActive,
                "any_after": spark.streams.awaitAnyTermination(0.5),
                "status": q.status, "exception": q.exception()})
    spark.sql(f"DROP TABLE {t}")
    return out


def stream_rate(spark, ctx):
    """readStream.format("rate") to a Delta path with processingTime, processAllAvailable, stop:
    the table's schema, and its values are 0..n-1 (how many rows depends on the clock)."""
    import os
    tmp = ctx["tmp"]
    out = os.path.join(tmp, "rate")
    q = (spark.readStream.format("rate").option("rowsPerSecond", "20").load()
         .withColumn("even", (F_col("value") % 2) == 0)
         .writeStream.format("delta").option("checkpointLocation", os.path.join(tmp, "cp"))
         .trigger(processingTime="500 milliseconds").start(out))
    q.processAllAvailable()
    q.stop()
    got = spark.read.format("delta").load(out)
    values = [r[0] for r in got.select("value").orderBy("value").collect()]
    evens = got.where("even").count()
    return {"schema": got.schema.simpleString(), "contiguous": values == list(range(len(values))),
            "evens": evens == (len(values) + 1) // 2, "active": q.isActive}


def _bronze(spark, name, rows):
    spark.sql(f"CREATE TABLE IF NOT EXISTS {name} (id BIGINT, user STRING, amount BIGINT) "
              "USING DELTA")
    spark.sql(f"INSERT INTO {name} VALUES " + ", ".join(f"({i}, '{u}', {a})" for i, u, a in rows))


def _foreach_run(spark, source, cp, fn):
    q = (spark.readStream.table(source).writeStream.foreachBatch(fn)
         .option("checkpointLocation", cp).trigger(availableNow=True).start())
    q.awaitTermination()
    return q


def foreach_batch_append(spark, ctx):
    """foreachBatch appending each micro-batch to a Delta path (format("delta").mode("append")
    .save) and to a table (saveAsTable), with the batch id and df.count() of each call; run twice
    on one checkpoint with data in between: the batch ids continue."""
    import os
    from pyspark.sql import functions as F
    t, tmp = ctx["table"], ctx["tmp"]
    out, cp = os.path.join(tmp, "out"), os.path.join(tmp, "cp")
    _bronze(spark, t, [(1, "a", 10), (2, "b", 20), (3, "a", 30)])

    def fn(df, batch_id):
        n = df.count()
        (df.withColumn("batch", F.lit(batch_id)).withColumn("n", F.lit(n))
         .write.format("delta").mode("append").save(out))
        df.select("id").write.mode("append").saveAsTable(f"{t}_copy")

    q1 = _foreach_run(spark, t, cp, fn)
    first = _progress(q1)
    _bronze(spark, t, [(4, "c", 40), (5, "b", 50)])
    q2 = _foreach_run(spark, t, cp, fn)
    result = {
        "out": rows(spark.sql(f"SELECT batch, n, id, user, amount FROM delta.`{out}` "
                              "ORDER BY batch, id")),
        "copy": rows(spark.sql(f"SELECT id FROM {t}_copy ORDER BY id")),
        "progress": [first, _progress(q2)], "same_id": q1.id == q2.id,
        "active": [q1.isActive, q2.isActive], "exception": [q1.exception(), q2.exception()]}
    spark.sql(f"DROP TABLE {t}_copy")
    spark.sql(f"DROP TABLE {t}")
    return result


def foreach_batch_merge(spark, ctx):
    """The Databricks upsert: inside foreachBatch, the batch as a temporary view and
    df.sparkSession.sql("MERGE INTO silver USING view ..."); two runs, the second updating rows
    the first inserted and inserting new ones; also df.collect() inside the function."""
    import os
    t, tmp = ctx["table"], ctx["tmp"]
    cp = os.path.join(tmp, "cp")
    silver = f"{t}_silver"
    spark.sql(f"CREATE TABLE {silver} (id BIGINT, user STRING, amount BIGINT) USING DELTA")
    _bronze(spark, t, [(1, "a", 10), (2, "b", 20), (3, "a", 30)])

    def fn(df, batch_id):
        view = f"{t}_updates"
        df.createOrReplaceTempView(view)
        seen = sorted(r.id for r in df.collect())
        df.sparkSession.sql(
            f"MERGE INTO {silver} s USING {view} u ON s.id = u.id "
            "WHEN MATCHED THEN UPDATE SET s.user = u.user, s.amount = u.amount "
            "WHEN NOT MATCHED THEN INSERT (id, user, amount) VALUES (u.id, u.user, u.amount)")
        df.sparkSession.sql(f"CREATE TABLE IF NOT EXISTS {t}_log (batch BIGINT, ids STRING) "
                            "USING DELTA")
        df.sparkSession.sql(f"INSERT INTO {t}_log VALUES ({batch_id}, "
                            f"'{','.join(str(i) for i in seen)}')")

    _foreach_run(spark, t, cp, fn)
    first = rows(spark.sql(f"SELECT * FROM {silver} ORDER BY id"))
    _bronze(spark, t, [(2, "b", 25), (4, "c", 40)])
    _foreach_run(spark, t, cp, fn)
    result = {"first": first, "second": rows(spark.sql(f"SELECT * FROM {silver} ORDER BY id")),
              "log": rows(spark.sql(f"SELECT * FROM {t}_log ORDER BY batch"))}
    for name in (silver, f"{t}_log", t):
        spark.sql(f"DROP TABLE {name}")
    return result


def foreach_batch_error(spark, ctx):
    """An exception raised by the foreachBatch function fails the query: awaitTermination
    raises StreamingQueryException carrying the Python exception's message, exception() has
    it, and the query is no longer active; nothing of the failed batch is committed (a restart
    with a function that works runs the same batch id again)."""
    import os
    t, tmp = ctx["table"], ctx["tmp"]
    cp = os.path.join(tmp, "cp")
    _bronze(spark, t, [(1, "a", 10), (2, "b", 20)])

    def fails(df, batch_id):
        raise ValueError(f"boom at batch {batch_id} with {df.count()} rows")

    q = (spark.readStream.table(t).writeStream.foreachBatch(fails)
         .option("checkpointLocation", cp).trigger(availableNow=True).start())
    try:
        q.awaitTermination()
        raised = None
    except Exception as e:
        raised = [type(e).__name__, "ValueError: boom at batch 0 with 2 rows" in str(e)]
    exc = q.exception()
    out = {"raised": raised, "exception_has_message":
           exc is not None and "boom at batch 0 with 2 rows" in str(exc), "active": q.isActive}
    seen = os.path.join(tmp, "seen")

    def works(df, batch_id):
        df.selectExpr(f"{batch_id} AS batch", "id").write.format("delta").mode("append").save(seen)

    _foreach_run(spark, t, cp, works)
    out["rerun"] = rows(spark.sql(f"SELECT batch, id FROM delta.`{seen}` ORDER BY id"))
    spark.sql(f"DROP TABLE {t}")
    return out


def foreach_batch_txn(spark, ctx):
    """Exactly-once from foreachBatch with Delta's idempotent writes: each batch written with
    txnAppId/txnVersion = batch id. A function that fails after its write leaves the batch
    uncommitted: the restart runs batch 0 again and its write is skipped; a write done twice (a
    retried function) is skipped the second time; across restarts the batch ids continue and no
    batch is in the table twice."""
    import os
    t, tmp = ctx["table"], ctx["tmp"]
    out, cp = os.path.join(tmp, "out"), os.path.join(tmp, "cp")
    _bronze(spark, t, [(1, "a", 10), (2, "b", 20)])

    def write(df, batch_id):
        (df.selectExpr(f"{batch_id} AS batch", "id").write.format("delta").mode("append")
         .option("txnAppId", "silver-app").option("txnVersion", batch_id).save(out))

    def write_then_fail(df, batch_id):  # a crash after the write, before the batch commits
        write(df, batch_id)
        raise RuntimeError("after the write")

    def fn(df, batch_id):
        for _ in range(2):
            write(df, batch_id)

    failed = (spark.readStream.table(t).writeStream.foreachBatch(write_then_fail)
              .option("checkpointLocation", cp).trigger(availableNow=True).start())
    try:
        failed.awaitTermination()
    except Exception:
        pass
    _foreach_run(spark, t, cp, fn)  # batch 0 again: its write is skipped
    _bronze(spark, t, [(3, "c", 30)])
    _foreach_run(spark, t, cp, fn)
    log = os.path.join(out, "_delta_log")
    versions = len([f for f in os.listdir(log) if f.endswith(".json")])  # commits
    spark.sql(f"DROP TABLE {t}")
    return {"rows": rows(spark.sql(f"SELECT batch, id FROM delta.`{out}` ORDER BY batch, id")),
            "versions": versions}


def streams_listener(spark, ctx):
    """spark.streams.addListener: a StreamingQueryListener sees the query's start (name), each
    batch's progress (batch id, rows) and its end, then removeListener; events come
    asynchronously, so the case waits (boundedly) for the terminated event."""
    import os
    import time
    from pyspark.sql.streaming import StreamingQueryListener
    t, tmp = ctx["table"], ctx["tmp"]
    _bronze(spark, t, [(1, "a", 10), (2, "b", 20)])
    events = []

    class Recorder(StreamingQueryListener):
        def onQueryStarted(self, event):
            events.append(["started", event.name == f"{t}_l"])

        def onQueryProgress(self, event):
            events.append(["progress", event.progress.batchId, event.progress.numInputRows])

        def onQueryIdle(self, event):
            pass

        def onQueryTerminated(self, event):
            events.append(["terminated", event.exception])

    listener = Recorder()
    spark.streams.addListener(listener)
    q = (spark.readStream.table(t).writeStream.format("delta").queryName(f"{t}_l")
         .option("checkpointLocation", os.path.join(tmp, "cp")).trigger(availableNow=True)
         .start(os.path.join(tmp, "out")))
    q.awaitTermination()
    for _ in range(600):
        if any(e[0] == "terminated" for e in events):
            break
        time.sleep(0.1)
    spark.streams.removeListener(listener)
    spark.sql(f"DROP TABLE {t}")
    return {"events": events, "same_query": q.name == f"{t}_l"}


def F_col(name):
    from pyspark.sql import functions as F
    return F.col(name)


CASES = [sql_literals, sql_types, range_collect, range_step, dataframe_ops,
         where_string_and_alias, union_group_aggregate, distinct_todf_drop_offset, show_text,
         empty_result,
         schema_and_columns, conf_set_get, delta_table_by_sql, create_dataframe, temp_views,
         with_columns, joins_on_names, joins_on_condition, stream_delta_available_now,
         stream_window_watermark, stream_update_and_complete, stream_dedup, stream_static_join,
         stream_query_manager, stream_rate, sql_temp_view_over_delta, foreach_batch_append,
         foreach_batch_merge, foreach_batch_error, foreach_batch_txn, streams_listener]
