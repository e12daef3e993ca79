"""A probe of Spark 4.2 / Delta 4.4, not a test (pytest does not collect it): a stream with
schemaTrackingLocation across a RENAME and a DROP COLUMN, restarted after each stop, printing
each run's error, the rows of its json sink and the schema log. docs/delta.md ("Streaming
across RENAME / DROP COLUMN") reports what it printed. Run under the peer lock:
  flock /tmp/sluice-peer.lock scripts/peers/run-python.sh test/interop/delta/spark_schema_tracking_probe.py
"""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import peers  # noqa: E402
s = peers.spark()
w = tempfile.mkdtemp(prefix="t19-schema-log-")
p, ck, out = f"{w}/src", f"{w}/ck", f"{w}/out"
def sql(x):
    for st in [y.strip() for y in x.split(";") if y.strip()]:
        s.sql(st)
sql(f"""CREATE TABLE delta.`{p}` (id BIGINT, s STRING, t STRING) USING delta
  TBLPROPERTIES ('delta.columnMapping.mode' = 'name');
INSERT INTO delta.`{p}` VALUES (1, 'a', 'x'), (2, 'b', 'y')""")
def run(tag, **opts):
    r = s.readStream.format("delta").option("schemaTrackingLocation", ck + "/_schema_log")
    for k, v in opts.items():
        r = r.option(k, v)
    q = (r.load(p).writeStream.format("json").option("checkpointLocation", ck)
         .trigger(availableNow=True).start(out))
    try:
        q.awaitTermination(600)
        print(f"== {tag}: OK")
    except Exception as e:
        print(f"== {tag}: ERROR {str(e)[:1500]}")
    rows = []
    for f in sorted(glob.glob(out + "/*.json")):
        rows += [l.strip() for l in open(f) if l.strip()]
    print("   rows:", sorted(rows))
    for f in sorted(glob.glob(ck + "/_schema_log/**", recursive=True)):
        if os.path.isfile(f) and not f.endswith(".crc"):
            print("   schema log", os.path.relpath(f, ck), open(f).read()[:600].replace("\n", " | "))
run("first")
sql(f"ALTER TABLE delta.`{p}` RENAME COLUMN s TO s2; INSERT INTO delta.`{p}` VALUES (3, 'c', 'z')")
run("after rename 1")
run("after rename 2")
run("after rename allow option", allowSourceColumnRenameAndDrop="always")
run("after rename allow option again", allowSourceColumnRenameAndDrop="always")
s.conf.set("spark.databricks.delta.streaming.allowSourceColumnRenameAndDrop", "always")
run("after rename allow conf")
sql(f"ALTER TABLE delta.`{p}` DROP COLUMN t; INSERT INTO delta.`{p}` VALUES (4, 'd')")
run("after drop 1 (conf always)")
run("after drop 2 (conf always)")
sql(f"INSERT INTO delta.`{p}` VALUES (5, 'e')")
run("append after drop")
os._exit(0)
