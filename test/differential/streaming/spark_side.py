"""Runs a case on Spark Structured Streaming (PySpark, the shared local[2] session of peers.py).

Delta sources are Delta tables by path, changed by Spark SQL (INSERT INTO delta.`p` VALUES ...,
the case's UPDATE / DELETE / MERGE); file sources are directories the harness writes files into.
Each STREAM of the query is a temporary view of spark.readStream (its WITH options as reader
options, its WATERMARK as withWatermark); static tables are views of their Delta path. A run
step starts the query from its checkpoint with trigger(availableNow=True) and waits for it to
end: append and complete modes write a Delta sink, update mode a foreachBatch that keeps each
batch's rows (Spark's Delta sink has no update mode). A Kafka source is format("kafka") of the
case's topic on the real broker (kafka_peer.py), subscribed by name. A crash step deletes the
checkpoint's last commits/N (and its .crc); the rows a batch gave are kept by batch id, so a
batch run again replaces its rows as an idempotent sink would. The progress events of idle
triggers (a run that finds no new data) are kept apart from the batches
(observations.split_idle(): which events, and why they are not compared).
"""

import glob
import json
import os

import case_model
import files
import kafka_peer
import observations
import values


def _rows_of(df):
    fields = df.schema.fields
    cols = [f.name.lower() for f in fields]
    rows = [[values.from_spark(r[i], f.dataType) for i, f in enumerate(fields)]
            for r in df.collect()]
    return cols, rows


def _progress(query, checkpoint):
    """(batches, idle trigger ids) of the run: observations.split_idle()."""
    events = [json.loads(p.json) if hasattr(p, "json") else dict(p)
              for p in query.recentProgress]
    offsets = os.path.join(checkpoint, "offsets")
    planned = {int(n) for n in os.listdir(offsets) if n.isdigit()} \
        if os.path.isdir(offsets) else set()
    return observations.split_idle(events, planned)


def run_case(spark, case, work, error_text):
    """The case's observations on Spark (a list, one per run step, see observations.py)."""
    base = os.path.join(work, "spark", case.name)
    paths = {n: os.path.join(base, "src", n) for n in case.sources}
    checkpoint = os.path.join(base, "checkpoint")
    for name, src in case.sources.items():
        if src.format == "delta":
            spark.sql(case_model.create_table_sql(f"delta.`{paths[name]}`", src, " USING DELTA"))
        elif src.format != "kafka":
            os.makedirs(paths[name])
    for name, (cols, rows) in case.static.items():
        p = paths[name] = os.path.join(base, "static", name)
        spark.sql(f"CREATE TABLE delta.`{p}` ({case.static_ddl[name]}) USING DELTA")
        if rows:
            spark.sql(f"INSERT INTO delta.`{p}` VALUES {case_model.values_sql(cols, rows)}")
        spark.sql(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM delta.`{p}`")
    topics = kafka_peer.create_topics("spark", case)
    views, query_text = case.spark_streams()
    obs, confs, file_count, by_batch = [], [], {}, {}
    try:
        for step in case.steps:
            kind = step[0]
            if kind == "produce":
                kafka_peer.produce(topics[step[1]], step[2])
            elif kind == "partitions":
                kafka_peer.add_partitions(topics[step[1]], step[2])
            elif kind == "crash":
                crash_before_commit(checkpoint)
            elif kind == "append":
                src = case.sources[step[1]]
                if src.format == "delta":
                    # One file per commit, as Sluice writes it (Spark would write one per
                    # task, and its Parquet scan could skip a file by a pushed filter).
                    spark.sql(f"INSERT INTO delta.`{paths[src.name]}` SELECT /*+ COALESCE(1) */"
                              f" * FROM VALUES {case_model.values_sql(src.cols, step[2])}")
                else:
                    file_count[src.name] = file_count.get(src.name, 0) + 1
                    files.write(paths[src.name], file_count[src.name], src, step[2])
            elif kind == "sql":
                spark.sql(step[2].format(t=f"delta.`{paths[step[1]]}`"))
            elif kind == "conf":
                key = case_model.CONFS[step[1]][0]
                confs.append(key)
                spark.conf.set(key, str(step[2]))
            elif kind == "run":
                o = _run(spark, case, views, query_text, paths, topics, checkpoint, by_batch,
                         error_text)
                obs.append(o)
                if "error" in o:
                    break
    finally:
        for key in confs:
            spark.conf.unset(key)
        for view, *_ in views:
            spark.catalog.dropTempView(view)
        for name in case.static:
            spark.catalog.dropTempView(name)
    return obs


def crash_before_commit(checkpoint):
    """Deletes the last commits/N of a Spark checkpoint (and Hadoop's .N.crc beside it)."""
    commits = os.path.join(checkpoint, "commits")
    ids = [int(n) for n in os.listdir(commits) if n.isdigit()] if os.path.isdir(commits) else []
    if not ids:
        raise RuntimeError(f"crash step: {commits} holds no commit")
    for path in glob.glob(os.path.join(commits, f"{max(ids)}")) + \
            glob.glob(os.path.join(commits, f".{max(ids)}.crc")):
        os.remove(path)


def _stream(spark, src, path, options, wm, topic=None):
    if src.format == "kafka":
        options = {k: v.replace("{topic}", topic) for k, v in options.items()}
        df = (spark.readStream.format("kafka")
              .option("kafka.bootstrap.servers", kafka_peer.servers())
              .option("subscribe", topic).options(**options).load())
        return df.withWatermark(*wm) if wm else df
    reader = spark.readStream.format(src.format).options(**options)
    if src.format != "delta":
        reader = reader.schema(src.ddl)
        if src.format == "csv":
            reader = reader.option("header", "true")
    df = reader.load(path)
    return df.withWatermark(*wm) if wm else df


def _run(spark, case, views, query_text, paths, topics, checkpoint, by_batch, error_text):
    from pyspark.sql import functions as F
    query = None
    try:
        bound = {}
        for view, src, options, wm in views:
            df = _stream(spark, src, paths.get(src.name), options, wm, topics.get(src.name))
            df.createOrReplaceTempView(view)
            bound[view] = df
        if case.spark_expr:
            df = eval(case.spark_expr, {"F": F}, dict(bound))  # noqa: S307 (the case's text)
        else:
            df = spark.sql(query_text)
        writer = (df.writeStream.outputMode(case.mode).option("checkpointLocation", checkpoint)
                  .trigger(**({"once": True} if case.trigger == "once"
                              else {"availableNow": True})))
        # Every mode writes through foreachBatch, which keeps each batch's rows: the Delta
        # sink's content is then the union of the batches (append) or the last batch
        # (complete), without a Delta commit and a read back per run (a third of a run's time
        # on Spark); update mode has no Delta sink on Spark.
        batch_rows = []

        def keep(batch_df, batch_id):
            batch_rows.append((batch_id, _rows_of(batch_df)[1]))
        query = writer.foreachBatch(keep).start()
        query.awaitTermination()
        batches, idle = _progress(query, checkpoint)
        out = {"batches": batches, "idle": idle,
               "cols": [f.name.lower() for f in df.schema.fields]}
        for batch_id, rows in batch_rows:
            by_batch[batch_id] = rows  # a batch run again (after a crash) replaces its rows
        ordered = [by_batch[b] for b in sorted(by_batch)]
        if case.mode == "update":
            out["emitted"] = [rows for rows in ordered if rows]
        elif case.mode == "complete":
            out["rows"] = list(ordered[-1]) if ordered else []
        else:
            out["rows"] = [r for rows in ordered for r in rows]
        return out
    except observations.HarnessError:
        raise  # not Spark's answer: the harness's model is wrong
    except Exception as e:  # noqa: BLE001 (a refusal or failure is an answer to compare)
        if query is not None and query.isActive:
            query.stop()
        return {"error": error_text(e)}
