"""Windowed and keyed aggregations: tumbling and sliding windows with a watermark in append and
update mode, global and keyed aggregates in complete and update mode, late rows, the confs."""

from case_model import batches

EV = "k STRING, v BIGINT, ts TIMESTAMP"
WM10 = "STREAM ev WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS e"
# Event times in seconds after 2024-01-01: out of order, a row late at run 3 and 4.
R1 = [("a", 1, 1), ("b", 2, 5), ("a", 3, 12)]
R2 = [("a", 4, 25), ("b", 5, 3), ("c", 6, 14)]
R3 = [("b", 7, 61), ("a", 8, 9), ("c", 9, 55)]
R4 = [("a", 10, 40), ("d", 11, 130)]
RUNS = (R1, R2, R3, R4)


def agg(name, query, mode="append", runs=RUNS, **kw):
    return dict(name=name, sources={"ev": EV}, query=query, mode=mode,
                steps=batches("ev", *runs), **kw)


TUMBLE = f"SELECT window.start AS ws, k, count(*) AS n FROM {WM10} GROUP BY window(ts, '10 seconds'), k"
TUMBLE_ALL = (f"SELECT window.start AS ws, window.end AS we, count(*) AS n, sum(v) AS s, "
              f"min(v) AS lo, max(v) AS hi, avg(v) AS mean FROM {WM10} "
              f"GROUP BY window(ts, '10 seconds')")
SLIDE = (f"SELECT window.start AS ws, count(*) AS n, sum(v) AS s FROM {WM10} "
         f"GROUP BY window(ts, '20 seconds', '10 seconds')")

CASES = [
    agg("window_tumbling_append", TUMBLE),
    agg("window_tumbling_append_aggs", TUMBLE_ALL),
    agg("window_tumbling_update", TUMBLE, "update"),
    agg("window_tumbling_update_aggs", TUMBLE_ALL, "update"),
    agg("window_sliding_append", SLIDE),
    agg("window_sliding_update", SLIDE, "update"),
    agg("window_tumbling_complete", TUMBLE, "complete"),
    agg("window_minute_delay_zero",
        "SELECT window.start AS ws, count(*) AS n FROM STREAM ev WATERMARK ts DELAY OF "
        "INTERVAL 0 SECONDS AS e GROUP BY window(ts, '1 minute')"),
    agg("window_having",
        f"SELECT window.start AS ws, k, count(*) AS n FROM {WM10} "
        f"GROUP BY window(ts, '10 seconds'), k HAVING count(*) >= 1 AND k <> 'c'"),
    agg("window_filter_before",
        f"SELECT window.start AS ws, sum(v) AS s FROM {WM10} WHERE k <> 'b' "
        f"GROUP BY window(ts, '10 seconds')"),
    agg("window_interval_literal",
        f"SELECT window.end AS we, count(*) AS n FROM {WM10} "
        f"GROUP BY window(ts, INTERVAL 30 SECONDS)"),
    agg("group_by_event_time_column_append",
        f"SELECT ts, count(*) AS n FROM {WM10} GROUP BY ts"),
    agg("window_late_rows_dropped", TUMBLE,
        runs=([("a", 1, 1), ("a", 1, 100)], [("a", 2, 5), ("b", 3, 95), ("c", 4, 150)],
              [("a", 5, 89), ("a", 6, 200)])),
    agg("window_late_rows_dropped_update", TUMBLE, "update",
        runs=([("a", 1, 1), ("a", 1, 100)], [("a", 2, 5), ("b", 3, 95), ("c", 4, 150)],
              [("a", 5, 89), ("a", 6, 200)])),
    agg("window_all_rows_one_run", TUMBLE, runs=(R1 + R2 + R3 + R4,)),
    dict(name="window_no_data_batches_off", sources={"ev": EV}, query=TUMBLE,
         steps=[("conf", "noDataBatches", "false")] + batches("ev", *RUNS)),
    # Several batches in one run (one commit each): each batch drops as late what is at or
    # below the watermark the batch before it ran with, and evicts by its own.
    dict(name="window_max_files_per_trigger", sources={"ev": EV},
         query=TUMBLE.replace("STREAM ev ", "STREAM ev WITH (maxFilesPerTrigger = 1) "),
         steps=[("append", "ev", R1), ("append", "ev", R2), ("append", "ev", R3), ("run",),
                ("append", "ev", R4), ("run",)]),
    dict(name="window_max_files_no_data_batches_off", sources={"ev": EV},
         query=TUMBLE.replace("STREAM ev ", "STREAM ev WITH (maxFilesPerTrigger = 1) "),
         steps=[("conf", "noDataBatches", "false"), ("append", "ev", R1), ("append", "ev", R2),
                ("append", "ev", R3), ("append", "ev", R4), ("run",)]),
    agg("session_window_append",
        f"SELECT session_window.start AS ss, session_window.end AS se, k, count(*) AS n "
        f"FROM {WM10} GROUP BY session_window(ts, '5 seconds'), k"),
    agg("session_window_complete",
        "SELECT session_window.start AS ss, session_window.end AS se, k, count(*) AS n "
        "FROM STREAM ev GROUP BY session_window(ts, '5 seconds'), k", "complete"),
    agg("window_update_nulls_avg", f"SELECT window.start AS ws, count(v) AS nv, avg(v) AS mean "
        f"FROM {WM10} GROUP BY window(ts, '20 seconds')", "update",
        runs=([("a", None, 1), ("a", 2, 3)], [("b", None, 25), ("b", 4, 30)],
              [("c", 6, 70)])),
    # Keyed and global aggregates without a watermark.
    agg("keyed_update", "SELECT k, count(*) AS n, sum(v) AS s FROM STREAM ev GROUP BY k",
        "update"),
    agg("keyed_complete", "SELECT k, count(*) AS n, max(v) AS hi FROM STREAM ev GROUP BY k",
        "complete"),
    agg("keyed_complete_avg_min", "SELECT k, avg(v) AS mean, min(ts) AS first_ts FROM STREAM ev "
        "GROUP BY k", "complete"),
    agg("keyed_expression_update", "SELECT upper(k) AS uk, count(*) AS n FROM STREAM ev "
        "GROUP BY upper(k)", "update"),
    agg("global_complete", "SELECT count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi "
        "FROM STREAM ev", "complete"),
    agg("global_complete_avg", "SELECT avg(v) AS mean, count(v) AS nv FROM STREAM ev",
        "complete"),
    agg("global_complete_with_watermark", f"SELECT count(*) AS n FROM {WM10}", "complete"),
    # avg and sum of a DECIMAL(p, s): Spark's DECIMAL(p + 4, s + 4) mean and DECIMAL(p + 10, s)
    # sum, the state's partial sum a DECIMAL too.
    agg("keyed_update_avg_decimal", "SELECT k, avg(CAST(v AS DECIMAL(10, 2))) AS mean, "
        "sum(CAST(v AS DECIMAL(10, 2))) AS total FROM STREAM ev GROUP BY k", "update"),
    agg("global_complete_avg_decimal", "SELECT avg(CAST(v AS DECIMAL(5, 1))) AS mean, "
        "count(*) AS n FROM STREAM ev", "complete"),
    agg("global_update", "SELECT count(*) AS n, sum(v) AS s FROM STREAM ev", "update"),
    agg("keyed_complete_filtered", "SELECT k, count(*) AS n FROM STREAM ev WHERE v > 2 "
        "GROUP BY k", "complete"),
    agg("window_complete_no_watermark",
        "SELECT window.start AS ws, count(*) AS n FROM STREAM ev GROUP BY window(ts, '10 seconds')",
        "complete"),
    # Two watermarked streams under UNION ALL: the global watermark is their min (or max).
    dict(name="union_two_watermarks_min",
         sources={"l": EV, "r": EV},
         query="SELECT window.start AS ws, count(*) AS n FROM (SELECT ts FROM STREAM l WATERMARK "
               "ts DELAY OF INTERVAL 10 SECONDS AS a UNION ALL SELECT ts FROM STREAM r WATERMARK "
               "ts DELAY OF INTERVAL 30 SECONDS AS b) AS u GROUP BY window(ts, '10 seconds')",
         steps=[("append", "l", R1), ("append", "r", R2), ("run",), ("append", "l", R3),
                ("run",), ("append", "r", R4), ("run",)]),
    dict(name="union_two_watermarks_max",
         sources={"l": EV, "r": EV},
         query="SELECT window.start AS ws, count(*) AS n FROM (SELECT ts FROM STREAM l WATERMARK "
               "ts DELAY OF INTERVAL 10 SECONDS AS a UNION ALL SELECT ts FROM STREAM r WATERMARK "
               "ts DELAY OF INTERVAL 30 SECONDS AS b) AS u GROUP BY window(ts, '10 seconds')",
         steps=[("conf", "multipleWatermarkPolicy", "max"), ("append", "l", R1),
                ("append", "r", R2), ("run",), ("append", "l", R3), ("run",),
                ("append", "r", R4), ("run",)]),
    # Files feeding a window.
    dict(name="json_window_append", sources={"f": {"format": "json", "schema": EV}},
         query="SELECT window.start AS ws, count(*) AS n FROM STREAM f WATERMARK ts DELAY OF "
               "INTERVAL 10 SECONDS AS e GROUP BY window(ts, '10 seconds')",
         steps=batches("f", *RUNS)),
    dict(name="parquet_keyed_complete", sources={"f": {"format": "parquet", "schema": EV}},
         query="SELECT k, sum(v) AS s FROM STREAM f GROUP BY k", mode="complete",
         steps=batches("f", *RUNS)),
]
