"""Deduplication (with and without a watermark, within the watermark), stream-static joins,
stream-stream joins (inner with and without a time bound, outer and semi with a watermark)."""

from case_model import batches

EV = "k STRING, v BIGINT, ts TIMESTAMP"
WM10 = "WATERMARK ts DELAY OF INTERVAL 10 SECONDS"
# Duplicates across runs and within a run (equal rows within a run, so that which one is kept
# does not depend on the order of arrival).
D1 = [("a", 1, 1), ("a", 1, 1), ("b", 2, 5)]
D2 = [("a", 1, 1), ("a", 3, 2), ("c", 4, 30)]
D3 = [("b", 2, 5), ("d", 5, 60), ("a", 1, 1), ("c", 4, 30)]
D4 = [("a", 6, 100), ("b", 2, 95)]
DRUNS = (D1, D2, D3, D4)


def dedup(name, query, spark=None, runs=DRUNS, **kw):
    d = dict(name=name, sources={"ev": EV}, query=query, steps=batches("ev", *runs), **kw)
    if spark:
        d["spark"] = spark
    return d


DIM = ("k STRING, label STRING", [("a", "alpha"), ("b", "beta"), ("z", "zeta")])
L = "k STRING, lv BIGINT, lts TIMESTAMP"
R = "k STRING, rv BIGINT, rts TIMESTAMP"
L1 = [("a", 1, 10), ("b", 2, 20), ("c", 3, 30)]
R1 = [("a", 10, 15), ("b", 20, 60), ("x", 0, 12)]
L2 = [("a", 4, 70), ("d", 5, 75)]
R2 = [("c", 30, 35), ("a", 40, 72), ("d", 50, 200)]
L3 = [("e", 6, 300)]
R3 = [("e", 60, 301)]
JOIN_STEPS = [("append", "l", L1), ("append", "r", R1), ("run",),
              ("append", "l", L2), ("append", "r", R2), ("run",),
              ("append", "l", L3), ("append", "r", R3), ("run",)]
LW = f"STREAM l {WM10.replace('ts', 'lts')} AS a"
RW = f"STREAM r {WM10.replace('ts', 'rts')} AS b"
BOUND = "a.k = b.k AND b.rts BETWEEN a.lts AND a.lts + INTERVAL 10 SECONDS"


def join(name, query, mode="append", steps=JOIN_STEPS, **kw):
    return dict(name=name, sources={"l": L, "r": R}, query=query, mode=mode, steps=steps, **kw)


def static_join(name, query, **kw):
    return dict(name=name, sources={"ev": EV}, static={"dim": DIM}, query=query,
                steps=batches("ev", [("a", 1, 1), ("b", 2, 2), ("c", 3, 3)],
                              [("z", 4, 4), ("a", 5, 5)]), **kw)


CASES = [
    # dropDuplicates() is Sluice's DISTINCT ON (every column); SQL's SELECT DISTINCT is Spark's
    # Distinct, an aggregation (cases/semantics.py).
    dedup("dedup_all_columns_df", "SELECT DISTINCT ON (k, v, ts) * FROM STREAM ev",
          "ev.dropDuplicates()"),
    dedup("dedup_columns_df", "SELECT DISTINCT ON (k, v) k, v FROM STREAM ev",
          "ev.select('k', 'v').dropDuplicates()"),
    dedup("dedup_sql_distinct_append", "SELECT DISTINCT k, v FROM STREAM ev",
          words=["append", "without watermark"]),
    dedup("dedup_sql_distinct_update", "SELECT DISTINCT k, v FROM STREAM ev", mode="update"),
    dedup("dedup_on_key", "SELECT DISTINCT ON (k) k, v FROM STREAM ev",
          "ev.dropDuplicates(['k']).select('k', 'v')",
          runs=([("a", 1, 1), ("b", 2, 5)], [("a", 3, 2), ("c", 4, 30)], [("b", 5, 9)])),
    dedup("dedup_all_columns_watermark",
          f"SELECT DISTINCT ON (k, v, ts) * FROM STREAM ev {WM10} AS e", "ev.dropDuplicates()"),
    dedup("dedup_key_and_time_watermark", f"SELECT DISTINCT ON (k, ts) k, ts FROM STREAM ev "
          f"{WM10} AS e", "ev.dropDuplicates(['k', 'ts']).select('k', 'ts')"),
    dedup("dedup_key_watermark_not_in_key", f"SELECT DISTINCT ON (k) k, v, ts FROM STREAM ev "
          f"{WM10} AS e", "ev.dropDuplicates(['k'])",
          runs=([("a", 1, 1), ("b", 2, 5)], [("a", 3, 2), ("c", 4, 30)], [("b", 5, 9)],
                [("e", 6, 100), ("a", 7, 101)])),
    dedup("dedup_within_watermark", f"SELECT * FROM STREAM ev {WM10} AS e QUALIFY "
          f"row_number() OVER (PARTITION BY k ORDER BY ts) = 1",
          "ev.dropDuplicatesWithinWatermark(['k'])",
          runs=([("a", 1, 1), ("b", 2, 5)], [("a", 3, 8), ("c", 4, 30)], [("a", 5, 40)],
                [("c", 6, 35), ("b", 7, 80)])),
    dedup("dedup_within_watermark_late", f"SELECT * FROM STREAM ev {WM10} AS e QUALIFY "
          f"row_number() OVER (PARTITION BY k ORDER BY ts) = 1",
          "ev.dropDuplicatesWithinWatermark(['k'])",
          runs=([("a", 1, 100)], [("b", 2, 50), ("a", 3, 101)], [("c", 4, 200)])),
    dedup("dedup_then_count_update", "SELECT k, count(*) AS n FROM (SELECT DISTINCT ON (k, v) k, v "
          "FROM STREAM ev) AS d GROUP BY k",
          "ev.dropDuplicates(['k', 'v']).groupBy('k').agg(F.count(F.lit(1)).alias('n'))",
          mode="update"),
    dedup("dedup_then_window_append",
          f"SELECT window.start AS ws, count(*) AS n FROM (SELECT * FROM STREAM ev {WM10} AS e "
          f"QUALIFY row_number() OVER (PARTITION BY k ORDER BY ts) = 1) AS d "
          f"GROUP BY window(ts, '10 seconds')",
          "ev.dropDuplicatesWithinWatermark(['k']).groupBy(F.window('ts', '10 seconds'))"
          ".agg(F.count(F.lit(1)).alias('n')).select(F.col('window.start').alias('ws'), 'n')"),
    dedup("dedup_within_watermark_then_count_update",
          f"SELECT k, count(*) AS n FROM (SELECT * FROM STREAM ev {WM10} AS e QUALIFY "
          f"row_number() OVER (PARTITION BY k ORDER BY ts) = 1) AS d GROUP BY k",
          "ev.dropDuplicatesWithinWatermark(['k']).groupBy('k')"
          ".agg(F.count(F.lit(1)).alias('n'))", mode="update"),
    # Stream-static joins.
    static_join("stream_static_inner", "SELECT e.k, e.v, d.label FROM STREAM ev AS e "
                "JOIN dim AS d ON e.k = d.k"),
    static_join("stream_static_left", "SELECT e.k, e.v, d.label FROM STREAM ev AS e "
                "LEFT JOIN dim AS d ON e.k = d.k"),
    static_join("stream_static_then_count", "SELECT d.label, count(*) AS n FROM STREAM ev AS e "
                "JOIN dim AS d ON e.k = d.k GROUP BY d.label", mode="complete"),
    dict(name="stream_static_dim_changes", sources={"ev": EV}, static={"dim": DIM},
         query="SELECT e.k, e.v, d.label FROM STREAM ev AS e LEFT JOIN dim AS d ON e.k = d.k",
         steps=[("append", "ev", [("a", 1, 1), ("c", 3, 3)]), ("run",),
                ("sql", "dim", "INSERT INTO {t} VALUES ('c', 'gamma')"),
                ("sql", "dim", "UPDATE {t} SET label = 'ALPHA' WHERE k = 'a'"),
                ("append", "ev", [("a", 5, 5), ("c", 6, 6)]), ("run",)]),
    static_join("static_left_join_stream_refused", "SELECT e.k, d.label FROM dim AS d "
                "LEFT JOIN STREAM ev AS e ON e.k = d.k", words=["left"]),
    static_join("stream_static_full_refused", "SELECT e.k, d.label FROM STREAM ev AS e "
                "FULL OUTER JOIN dim AS d ON e.k = d.k", words=["full"]),
    # Stream-stream joins.
    join("join_inner_no_watermark", "SELECT a.k, a.lv, b.rv FROM STREAM l AS a "
         "JOIN STREAM r AS b ON a.k = b.k"),
    join("join_inner_time_bound", f"SELECT a.k, a.lv, b.rv FROM {LW} JOIN {RW} ON {BOUND}"),
    join("join_inner_one_watermark", f"SELECT a.k, a.lv, b.rv FROM {LW} JOIN STREAM r AS b "
         f"ON a.k = b.k"),
    join("join_left_outer_time_bound", f"SELECT a.k, a.lv, b.rv FROM {LW} LEFT JOIN {RW} "
         f"ON {BOUND}"),
    join("join_right_outer_time_bound", f"SELECT b.k, a.lv, b.rv FROM {LW} RIGHT JOIN {RW} "
         f"ON {BOUND}"),
    join("join_full_outer_time_bound", f"SELECT a.k AS lk, b.k AS rk, a.lv, b.rv FROM {LW} "
         f"FULL OUTER JOIN {RW} ON {BOUND}"),
    join("join_left_semi_time_bound", f"SELECT a.k, a.lv FROM {LW} LEFT SEMI JOIN {RW} "
         f"ON {BOUND}"),
    join("join_inner_strict_bound", f"SELECT a.k, a.lv, b.rv FROM {LW} JOIN {RW} ON a.k = b.k "
         f"AND b.rts > a.lts AND b.rts < a.lts + INTERVAL 20 SECONDS"),
    join("join_left_outer_window_key",
         f"SELECT a.k, a.w.start AS ws, a.lv, b.rv FROM "
         f"(SELECT k, lv, window(lts, '10 seconds') AS w FROM {LW}) AS a LEFT JOIN "
         f"(SELECT k, rv, window(rts, '10 seconds') AS w FROM {RW}) AS b "
         f"ON a.k = b.k AND a.w = b.w"),
    join("join_then_window_count", f"SELECT window.start AS ws, count(*) AS n FROM {LW} "
         f"JOIN {RW} ON {BOUND} GROUP BY window(a.lts, '60 seconds')"),
    join("join_left_outer_no_watermark_refused", "SELECT a.k, b.rv FROM STREAM l AS a "
         "LEFT JOIN STREAM r AS b ON a.k = b.k", words=["leftouter", "watermark"]),
    join("join_full_outer_no_watermark_refused", "SELECT a.k, b.rv FROM STREAM l AS a "
         "FULL OUTER JOIN STREAM r AS b ON a.k = b.k", words=["watermark"]),
    join("join_right_outer_no_watermark_refused", "SELECT b.k, a.lv FROM STREAM l AS a "
         "RIGHT JOIN STREAM r AS b ON a.k = b.k", words=["rightouter", "watermark"]),
    join("join_left_semi_no_watermark_refused", "SELECT a.k, a.lv FROM STREAM l AS a "
         "LEFT SEMI JOIN STREAM r AS b ON a.k = b.k", words=["watermark"]),
    join("join_left_outer_right_watermark_only", f"SELECT a.k, a.lv, b.rv FROM STREAM l AS a "
         f"LEFT JOIN {RW} ON {BOUND.replace('a.lts', 'a.lts')}"),
    join("join_update_mode_refused", "SELECT a.k, b.rv FROM STREAM l AS a JOIN STREAM r AS b "
         "ON a.k = b.k", mode="update", words=["update output mode"]),
    join("join_without_equality_refused", f"SELECT a.k, b.rv FROM {LW} JOIN {RW} "
         f"ON b.rts BETWEEN a.lts AND a.lts + INTERVAL 10 SECONDS"),
]
