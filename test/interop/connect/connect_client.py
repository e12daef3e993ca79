"""Runs connect_cases.CASES (or the cases named on the command line) against a Spark Connect
server with the unmodified PySpark client, and prints one JSON object: case name -> result, or
{"error": [exception class, message]}. Run in its own process by test_pyspark_connect.py, so that
the classic SparkSession of the comparison never shares a process with the Connect client.

Usage: connect_client.py PORT TABLE_PREFIX [CASE...]
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import connect_cases  # noqa: E402


def main():
    port, prefix, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    from pyspark.sql import SparkSession
    spark = SparkSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
    results = {}
    for case in connect_cases.CASES:
        if names and case.__name__ not in names:
            continue
        try:
            results[case.__name__] = case(spark, {"table": f"{prefix}_{case.__name__}",
                                                  "tmp": tempfile.mkdtemp(prefix="sluice-case-")})
        except Exception as e:  # reported to the test, which decides
            results[case.__name__] = {"error": [type(e).__name__, str(e)]}
    extra = {}
    if not names:
        extra = errors(spark)
    print(json.dumps({"cases": results, "errors": extra}))
    spark.stop()


def errors(spark):
    """What the client raises for what Sluice refuses: class name, error class, message."""
    from pyspark.sql import functions as F
    import tempfile
    out = {}
    tmp = tempfile.mkdtemp(prefix="sluice-refusals-")
    spark.sql("CREATE TABLE refusal_probe_events (id BIGINT, ts TIMESTAMP) USING DELTA")
    stream = spark.readStream.table("refusal_probe_events")
    probes = {
        "unsupported_command": lambda: spark.range(3).writeTo("refusal_probe_v2").create(),
        "unsupported_stream_relation": lambda: stream.sample(0.5).writeStream.option(
            "checkpointLocation", tmp + "/c1").start(tmp + "/o1"),
        "foreach_writer": lambda: stream.writeStream.foreach(lambda row: None).option(
            "checkpointLocation", tmp + "/c3").start(),
        "continuous_trigger": lambda: stream.writeStream.format("delta").option(
            "checkpointLocation", tmp + "/c2").trigger(continuous="1 second").start(tmp + "/o2"),
        "unsupported_relation": lambda: spark.range(3).sample(0.5).collect(),
        "missing_table": lambda: spark.sql("SELECT * FROM no_such_table_here").collect(),
        "unsupported_expression": lambda: spark.range(3).select(
            F.transform(F.array(F.col("id")), lambda x: x + 1)).collect(),
    }
    for name, probe in probes.items():
        try:
            probe()
            out[name] = None
        except Exception as e:
            cls = getattr(e, "getCondition", None)
            out[name] = [type(e).__name__, cls() if cls else None, str(e)]
    spark.sql("DROP TABLE refusal_probe_events")
    return out


if __name__ == "__main__":
    main()
