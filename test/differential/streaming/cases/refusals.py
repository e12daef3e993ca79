"""Queries Spark refuses per output mode or as unsupported on streams, and what Sluice says."""

from case_model import batches

EV = "k STRING, v BIGINT, ts TIMESTAMP"
WM10 = "STREAM ev WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS e"
ROWS = ([("a", 1, 1), ("b", 2, 5), ("a", 3, 40)], [("c", 4, 80)])


def refused(name, query, mode="append", words=(), **kw):
    return dict(name=name, sources={"ev": EV}, query=query, mode=mode, words=list(words),
                steps=batches("ev", *ROWS), **kw)


CASES = [
    refused("append_aggregation_without_watermark",
            "SELECT k, count(*) AS n FROM STREAM ev GROUP BY k",
            words=["append", "without watermark"]),
    refused("append_global_aggregate",
            "SELECT count(*) AS n FROM STREAM ev", words=["append", "without watermark"]),
    refused("append_window_without_watermark",
            "SELECT window.start AS ws, count(*) AS n FROM STREAM ev "
            "GROUP BY window(ts, '10 seconds')", words=["append", "without watermark"]),
    refused("complete_without_aggregation", "SELECT k, v FROM STREAM ev", "complete",
            words=["complete", "no streaming aggregations"]),
    refused("order_by_append", "SELECT k, v FROM STREAM ev ORDER BY v",
            words=["sorting is not supported"]),
    refused("order_by_update_aggregate", "SELECT k, count(*) AS n FROM STREAM ev GROUP BY k "
            "ORDER BY n", "update", words=["sorting is not supported"]),
    refused("order_by_complete_aggregate", "SELECT k, count(*) AS n FROM STREAM ev GROUP BY k "
            "ORDER BY n DESC", "complete"),
    refused("limit_append", "SELECT k, v FROM STREAM ev LIMIT 2"),
    refused("window_month_refused",
            f"SELECT window.start AS ws, count(*) AS n FROM {WM10} GROUP BY window(ts, '1 month')",
            words=["month"]),
    refused("window_month_complete_refused",
            "SELECT window.start AS ws, count(*) AS n FROM STREAM ev "
            "GROUP BY window(ts, '1 month')", "complete", words=["month"]),
    refused("count_distinct_refused", "SELECT k, count(DISTINCT v) AS n FROM STREAM ev "
            "GROUP BY k", "complete"),
    refused("update_mode_stateless", "SELECT k, v FROM STREAM ev", "update"),
    refused("aggregate_then_aggregate_append",
            f"SELECT ws, count(*) AS n FROM (SELECT window.start AS ws, k, count(*) AS c "
            f"FROM {WM10} GROUP BY window(ts, '10 seconds'), k) AS w GROUP BY ws"),
    refused("aggregate_then_aggregate_complete",
            "SELECT n, count(*) AS c FROM (SELECT k, count(*) AS n FROM STREAM ev GROUP BY k) "
            "AS g GROUP BY n", "complete"),
    refused("window_then_aggregate_update",
            f"SELECT ws, count(*) AS n FROM (SELECT window.start AS ws, k, count(*) AS c "
            f"FROM {WM10} GROUP BY window(ts, '10 seconds'), k) AS w GROUP BY ws", "update",
            words=["correctness"]),
    refused("distinct_then_count_update_sql",
            "SELECT k, count(*) AS n FROM (SELECT DISTINCT k, v FROM STREAM ev) AS d GROUP BY k",
            "update"),
    refused("session_window_update",
            f"SELECT session_window.start AS ss, k, count(*) AS n FROM {WM10} "
            f"GROUP BY session_window(ts, '10 seconds'), k", "update"),
]
