"""Spark 4.2's answers where earlier Spark versions (and Sluice's reading of them) differed: a
stream-stream join in update and complete mode, LIMIT in each output mode, SQL SELECT DISTINCT
(an aggregation, not dropDuplicates) with and without a watermark, window() with an INTERVAL,
update mode with a grouping key (or the window) that is not selected (Nexmark q4's shape).
docs/differences.md "Streaming differential" says what each decided."""

from case_model import batches

EV = "k STRING, v BIGINT, ts TIMESTAMP"
WM10 = "STREAM ev WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS e"
L = "k STRING, lv BIGINT, lts TIMESTAMP"
R = "k STRING, rv BIGINT, rts TIMESTAMP"
LW = "STREAM l WATERMARK lts DELAY OF INTERVAL 10 SECONDS AS a"
RW = "STREAM r WATERMARK rts DELAY OF INTERVAL 10 SECONDS AS b"
BOUND = "a.k = b.k AND b.rts BETWEEN a.lts AND a.lts + INTERVAL 10 SECONDS"
JOIN_STEPS = [("append", "l", [("a", 1, 10), ("b", 2, 20), ("c", 3, 30)]),
              ("append", "r", [("a", 10, 15), ("b", 20, 60), ("x", 0, 12)]), ("run",),
              ("append", "l", [("a", 4, 70), ("d", 5, 75)]),
              ("append", "r", [("c", 30, 35), ("a", 40, 72), ("d", 50, 200)]), ("run",)]
RUNS = ([("a", 1, 1), ("b", 2, 5), ("a", 1, 1)], [("c", 3, 30), ("a", 1, 1), ("b", 2, 50)],
        [("d", 4, 90)])


# Groups (k, g) whose g repeats across k: the selected g identifies no group.
KG = "k STRING, g STRING, v BIGINT"
KG_RUNS = ([("a", "x", 1), ("b", "x", 2), ("a", "y", 3)], [("a", "x", 4), ("c", "y", 5)],
           [("b", "x", 6)])


def join(name, query, mode, **kw):
    return dict(name=name, sources={"l": L, "r": R}, query=query, mode=mode, steps=JOIN_STEPS,
                **kw)


def ev(name, query, mode="append", **kw):
    return dict(name=name, sources={"ev": EV}, query=query, mode=mode,
                steps=batches("ev", *RUNS), **kw)


CASES = [
    join("join_inner_time_bound_update", f"SELECT a.k, a.lv, b.rv FROM {LW} JOIN {RW} ON {BOUND}",
         "update"),
    join("join_left_outer_update", f"SELECT a.k, a.lv, b.rv FROM {LW} LEFT JOIN {RW} ON {BOUND}",
         "update"),
    join("join_inner_complete_refused", "SELECT a.k, b.rv FROM STREAM l AS a JOIN STREAM r AS b "
         "ON a.k = b.k", "complete", words=["complete", "no streaming aggregations"]),
    join("join_then_count_update", "SELECT a.k, count(*) AS n FROM STREAM l AS a JOIN STREAM r "
         "AS b ON a.k = b.k GROUP BY a.k", "update"),
    join("join_time_bound_then_count_update", f"SELECT a.k, count(*) AS n FROM {LW} JOIN {RW} "
         f"ON {BOUND} GROUP BY a.k", "update"),
    join("join_watermarks_then_count_update", f"SELECT a.k, count(*) AS n FROM {LW} JOIN {RW} "
         f"ON a.k = b.k GROUP BY a.k", "update"),
    ev("limit_append_across_runs", "SELECT k, v FROM STREAM ev LIMIT 4"),
    ev("limit_update_refused", "SELECT k, v FROM STREAM ev LIMIT 2", "update"),
    ev("distinct_sql_watermark_append", f"SELECT DISTINCT k, ts FROM {WM10}"),
    # SQL SELECT DISTINCT in append mode is an aggregation: the watermarked column must be among
    # the selected ones (else "without watermark"), and `*` is every input column.
    ev("distinct_sql_expression_watermark_append",
       f"SELECT DISTINCT k, v + 1 AS w, ts FROM {WM10}"),
    ev("distinct_sql_watermark_not_selected_append", f"SELECT DISTINCT k, v FROM {WM10}",
       words=["append", "without watermark"]),
    ev("distinct_sql_star_append_refused", "SELECT DISTINCT * FROM STREAM ev",
       words=["append", "without watermark"]),
    ev("distinct_sql_star_watermark_append", f"SELECT DISTINCT * FROM {WM10}"),
    ev("distinct_sql_then_count_append", "SELECT k, count(*) AS n FROM (SELECT DISTINCT k, v "
       "FROM STREAM ev) AS d GROUP BY k", words=["append", "without watermark"]),
    # Dataset.distinct() is dropDuplicates() (Spark's Deduplicate, operator dedupe), with and
    # without a watermark: Sluice's DISTINCT ON (every column).
    ev("df_distinct_append", "SELECT DISTINCT ON (k, v) k, v FROM STREAM ev",
       spark="ev.select('k', 'v').distinct()"),
    ev("df_distinct_watermark_append", f"SELECT DISTINCT ON (k, v, ts) * FROM {WM10}",
       spark="ev.distinct()"),
    ev("distinct_sql_complete", "SELECT DISTINCT k, v FROM STREAM ev", "complete"),
    ev("distinct_sql_expression_update", "SELECT DISTINCT k, v + 1 AS w FROM STREAM ev",
       "update"),
    ev("distinct_sql_star_update", "SELECT DISTINCT * FROM STREAM ev", "update"),
    ev("distinct_sql_star_complete", "SELECT DISTINCT * FROM STREAM ev", "complete"),
    ev("distinct_sql_star_filtered_watermark_append",
       f"SELECT DISTINCT * FROM {WM10} WHERE v > 1"),
    # An aggregation without an event-time key under a watermark (update mode): whether a
    # no-data batch runs when the watermark moves (Spark's shouldRunAnotherBatch).
    ev("keyed_update_watermark_not_key", f"SELECT k, count(*) AS n FROM {WM10} GROUP BY k",
       "update"),
    ev("global_update_watermark", f"SELECT count(*) AS n, max(v) AS m FROM {WM10}", "update"),
    # A global aggregate over a batch whose rows the WHERE removes: the aggregation's input is
    # empty (before any row, and after), and an aggregation without grouping keys of an empty
    # input is its initial row. The filter is one Spark cannot push into its Parquet scan (whose
    # numInputRows would then count only the rows the scan returns: delta_filter).
    ev("global_update_filtered_empty", "SELECT count(*) AS n, max(v) AS m FROM STREAM ev "
       "WHERE v % 10 > 2", "update"),
    ev("global_complete_filtered_empty", "SELECT count(*) AS n, max(v) AS m FROM STREAM ev "
       "WHERE v % 10 > 2", "complete"),
    ev("global_update_first_filtered_empty", "SELECT first(v) AS f, count(*) AS n FROM STREAM ev "
       "WHERE v % 10 > 2", "update"),
    # Update mode emits the changed groups' rows as they are selected, also without a key.
    dict(name="update_key_not_selected", sources={"ev": KG}, mode="update",
         query="SELECT g, max(v) AS m FROM STREAM ev GROUP BY k, g",
         steps=batches("ev", *KG_RUNS)),
    ev("update_window_not_selected", f"SELECT k, count(*) AS n FROM {WM10} "
       f"GROUP BY window(ts, '10 seconds'), k", "update"),
    join("join_then_max_key_not_selected_update", f"SELECT a.k, max(b.rv) AS m FROM {LW} JOIN "
         f"{RW} ON {BOUND} GROUP BY a.k, a.lts", "update"),
]
