"""Projections and filters over a Delta table and over directories of JSON, CSV and Parquet
files; Delta changes (UPDATE, DELETE, MERGE) with and without skipChangeCommits."""

from case_model import batches

EV = "k STRING, v BIGINT, ts TIMESTAMP"
B1 = [("a", 1, 1), ("b", 2, 2), ("c", None, 3)]
B2 = [("a", 4, 10), ("d", 5, 11)]
B3 = [("e", -1, 20)]


def stateless(name, query, src="ev", fmt="delta", schema=EV, rows=(B1, B2, B3)):
    spec = schema if fmt == "delta" else {"format": fmt, "schema": schema}
    return dict(name=name, sources={src: spec}, query=query, steps=batches(src, *rows))


CASES = [
    stateless("delta_select_star", "SELECT * FROM STREAM ev"),
    stateless("delta_projection_exprs",
              "SELECT upper(k) AS k, v * 10 + 1 AS v10, ts + INTERVAL 1 HOUR AS t1 FROM STREAM ev"),
    stateless("delta_filter", "SELECT k, v FROM STREAM ev WHERE v > 1"),
    stateless("delta_filter_null", "SELECT k FROM STREAM ev WHERE v IS NULL"),
    stateless("delta_filter_none_pass", "SELECT k, v FROM STREAM ev WHERE v > 100"),
    stateless("delta_case_when",
              "SELECT k, CASE WHEN v >= 2 THEN 'big' WHEN v IS NULL THEN 'none' ELSE 'small' END "
              "AS size FROM STREAM ev"),
    stateless("delta_coalesce_cast", "SELECT k, CAST(coalesce(v, 0) AS DOUBLE) / 2 AS half "
              "FROM STREAM ev"),
    stateless("delta_string_fns", "SELECT concat(k, '-', CAST(v AS STRING)) AS kv, length(k) AS n "
              "FROM STREAM ev WHERE k <> 'c'"),
    stateless("delta_alias_qualified", "SELECT e.k, e.v FROM STREAM ev AS e WHERE e.k IN ('a', 'e')"),
    stateless("delta_subquery_projection",
              "SELECT k, w FROM (SELECT k, v * 2 AS w FROM STREAM ev) AS s WHERE w >= 4"),
    stateless("delta_union_all_self",
              "SELECT k, v FROM STREAM ev WHERE v = 1 UNION ALL SELECT k, v FROM STREAM ev "
              "WHERE v = 4"),
    stateless("delta_watermark_stateless",
              "SELECT k, v FROM STREAM ev WATERMARK ts DELAY OF INTERVAL 5 SECONDS AS e"),
    stateless("delta_timestamp_fns",
              "SELECT k, date_trunc('minute', ts) AS m, hour(ts) AS h FROM STREAM ev"),
    dict(name="delta_empty_commit_between", sources={"ev": EV},
         query="SELECT k, v FROM STREAM ev",
         steps=[("append", "ev", B1), ("run",), ("run",), ("append", "ev", B2), ("run",)]),
    dict(name="delta_two_commits_one_run", sources={"ev": EV},
         query="SELECT k, v FROM STREAM ev",
         steps=[("append", "ev", B1), ("append", "ev", B2), ("run",), ("append", "ev", B3),
                ("run",)]),
    # Files
    stateless("json_select", "SELECT k, v, ts FROM STREAM f", "f", "json"),
    stateless("json_filter", "SELECT k, v * 2 AS v2 FROM STREAM f WHERE v IS NOT NULL", "f",
              "json"),
    stateless("csv_select", "SELECT k, v, ts FROM STREAM f", "f", "csv"),
    stateless("csv_filter", "SELECT k FROM STREAM f WHERE v >= 2", "f", "csv"),
    stateless("parquet_select", "SELECT k, v, ts FROM STREAM f", "f", "parquet"),
    stateless("parquet_filter", "SELECT k, v FROM STREAM f WHERE k <> 'a'", "f", "parquet"),
    stateless("json_double_bool", "SELECT id, x * 2 AS x2, NOT b AS nb FROM STREAM f", "f",
              "json", "id INT, x DOUBLE, b BOOLEAN",
              ([(1, 1.5, True), (2, None, False)], [(3, -0.25, None)])),
    dict(name="json_two_files_one_run", sources={"f": {"format": "json", "schema": EV}},
         query="SELECT k, v FROM STREAM f",
         steps=[("append", "f", B1), ("append", "f", B2), ("run",), ("append", "f", B3),
                ("run",)]),
    dict(name="json_max_files_per_trigger", sources={"f": {"format": "json", "schema": EV}},
         query="SELECT k, v FROM STREAM f WITH (maxFilesPerTrigger = 1)",
         steps=[("append", "f", B1), ("append", "f", B2), ("append", "f", B3), ("run",),
                ("append", "f", B1), ("run",)]),
    dict(name="delta_max_files_per_trigger", sources={"ev": EV},
         query="SELECT k, v FROM STREAM ev WITH (maxFilesPerTrigger = 1)",
         steps=[("append", "ev", B1), ("append", "ev", B2), ("append", "ev", B3), ("run",),
                ("append", "ev", B1), ("run",)]),
    # Delta changes
    dict(name="delta_update_stops_stream", sources={"ev": EV},
         query="SELECT k, v FROM STREAM ev", words=["update", "skipchangecommits"],
         steps=[("append", "ev", B1), ("run",), ("sql", "ev", "UPDATE {t} SET v = 0 WHERE k = 'a'"),
                ("run",)]),
    dict(name="delta_delete_stops_stream", sources={"ev": EV},
         query="SELECT k, v FROM STREAM ev", words=["skipchangecommits"],
         steps=[("append", "ev", B1), ("run",), ("sql", "ev", "DELETE FROM {t} WHERE k = 'b'"),
                ("run",)]),
    dict(name="delta_update_skip_change_commits", sources={"ev": EV},
         query="SELECT k, v FROM STREAM ev WITH (skipChangeCommits = true)",
         steps=[("append", "ev", B1), ("run",), ("sql", "ev", "UPDATE {t} SET v = 0 WHERE k = 'a'"),
                ("append", "ev", B2), ("run",)]),
    dict(name="delta_delete_skip_change_commits", sources={"ev": EV},
         query="SELECT k, v FROM STREAM ev WITH (skipChangeCommits = true)",
         steps=[("append", "ev", B1), ("run",), ("sql", "ev", "DELETE FROM {t} WHERE v IS NULL"),
                ("append", "ev", B3), ("run",)]),
    dict(name="delta_merge_skip_change_commits", sources={"ev": EV},
         query="SELECT k, v FROM STREAM ev WITH (skipChangeCommits = true)",
         steps=[("append", "ev", B1), ("run",),
                ("sql", "ev", "MERGE INTO {t} AS t USING (SELECT 'a' AS k, 9 AS v) AS s "
                 "ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v "
                 "WHEN NOT MATCHED THEN INSERT (k, v, ts) VALUES (s.k, s.v, NULL)"),
                ("append", "ev", B2), ("run",)]),
    dict(name="delta_starting_version", sources={"ev": EV},
         query="SELECT k, v FROM STREAM ev WITH (startingVersion = 2)",
         steps=[("append", "ev", B1), ("append", "ev", B2), ("run",), ("append", "ev", B3),
                ("run",)]),
    dict(name="delta_delete_whole_file_skip", sources={"ev": EV},
         query="SELECT k, v FROM STREAM ev WITH (skipChangeCommits = true)",
         steps=[("append", "ev", B1), ("append", "ev", B3), ("run",),
                ("sql", "ev", "DELETE FROM {t} WHERE k = 'e'"), ("append", "ev", B2), ("run",)]),
]
