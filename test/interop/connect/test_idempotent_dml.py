"""Delta's idempotent DML by SQL conf over Spark Connect: spark.databricks.delta.write.txnAppId /
txnVersion make MERGE, DELETE, INSERT and df.write skip a version the table already records, as
Spark 4.2 + Delta 4.4 do. The expected answers are what local Spark answered for the same
statements (asked 2026-12-03, docs/pyspark.md "foreachBatch"): the second MERGE at version 0 and
every write at version 1 after the MERGE at version 1 change nothing and commit nothing; one conf
without the other is DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS; each MERGE commit carries its txn."""

import glob
import json
import os
import subprocess
import sys
import tempfile

import connect_server

SCRIPT = r'''
import json, sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
out = {}
spark.sql("CREATE TABLE t (id BIGINT, v STRING) USING DELTA")
spark.sql("SELECT CAST(1 AS BIGINT) AS id, 'a' AS v").createOrReplaceTempView("u")
def merge(tag):
    spark.sql(f"MERGE INTO t USING (SELECT id, v || '{tag}' AS v FROM u) x ON t.id = x.id "
              "WHEN MATCHED THEN UPDATE SET t.v = x.v "
              "WHEN NOT MATCHED THEN INSERT (id, v) VALUES (x.id, x.v)")
def rows():
    return [list(r) for r in spark.sql("SELECT * FROM t ORDER BY id").collect()]
spark.conf.set("spark.databricks.delta.write.txnAppId", "app1")
spark.conf.set("spark.databricks.delta.write.txnVersion", "0")
merge("1"); out["v0"] = rows()
merge("2"); out["v0_again"] = rows()
spark.conf.set("spark.databricks.delta.write.txnVersion", "1")
merge("3"); out["v1"] = rows()
spark.sql("DELETE FROM t WHERE id = 1"); out["delete_v1"] = rows()
spark.sql("INSERT INTO t VALUES (9, 'z')"); out["insert_v1"] = rows()
(spark.sql("SELECT CAST(8 AS BIGINT) AS id, 'y' AS v").write.format("delta").mode("append")
 .saveAsTable("t")); out["write_v1"] = rows()
spark.conf.unset("spark.databricks.delta.write.txnVersion")
try:
    merge("4"); out["app_only"] = "ran"
except Exception as e:
    out["app_only"] = str(e)
spark.conf.unset("spark.databricks.delta.write.txnAppId")
merge("5"); out["no_confs"] = rows()
print(json.dumps(out))
'''


def test_txn_confs_make_dml_idempotent():
    work = tempfile.mkdtemp(prefix="sluice-txn-dml-")
    warehouse = os.path.join(work, "wh")
    server = connect_server.start(warehouse)
    try:
        proc = subprocess.run([sys.executable, "-c", SCRIPT, server.url], capture_output=True,
                              text=True, timeout=300, env=dict(os.environ, TZ="UTC"))
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["v0"] == [[1, "a1"]] and got["v0_again"] == [[1, "a1"]], got
    assert got["v1"] == got["delete_v1"] == got["insert_v1"] == got["write_v1"] == [[1, "a3"]]
    assert "DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS" in got["app_only"], got
    assert got["no_confs"] == [[1, "a5"]], got
    commits = []
    for path in sorted(glob.glob(os.path.join(warehouse, "t", "_delta_log", "*.json"))):
        actions = [json.loads(line) for line in open(path)]
        commits.append(([a["commitInfo"]["operation"] for a in actions if "commitInfo" in a],
                        [[a["txn"]["appId"], a["txn"]["version"]] for a in actions
                         if "txn" in a]))
    assert commits == [(["CREATE TABLE"], []), (["MERGE"], [["app1", 0]]),
                       (["MERGE"], [["app1", 1]]), (["MERGE"], [])], commits
