"""A second probe of Spark 4.2 / Delta 4.4, not a test (pytest does not collect it): the reader
options that unblock a stream with schemaTrackingLocation after a RENAME / DROP COLUMN
(allowSourceColumnRename / allowSourceColumnDrop = always or a version), an ADD COLUMN with a
schema log, a stream started at version 0 across a rename, and the offsets Spark records at
the schema change. docs/delta.md ("Streaming across RENAME / DROP COLUMN") reports what it
printed. Run under the peer lock:
  flock /tmp/sluice-peer.lock scripts/peers/run-python.sh test/interop/delta/spark_schema_tracking_probe2.py
"""
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import peers  # noqa: E402
s = peers.spark()


def sql(x):
    for st in [y.strip() for y in x.split(";") if y.strip()]:
        s.sql(st)


def scenario(name):
    w = tempfile.mkdtemp(prefix=f"t19-probe2-{name}-")
    p, ck, out = f"{w}/src", f"{w}/ck", f"{w}/out"
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
            print(f"== {name} / {tag}: OK")
        except Exception as e:  # noqa: BLE001
            print(f"== {name} / {tag}: ERROR {str(e)[:3000]}")
        rows = []
        for f in sorted(glob.glob(out + "/*.json")):
            rows += [line.strip() for line in open(f) if line.strip()]
        print("   rows:", sorted(rows))
        for f in sorted(glob.glob(ck + "/offsets/*")):
            if not f.endswith(".crc"):
                print("   offset", os.path.basename(f), open(f).read().splitlines()[-1])
        for f in sorted(glob.glob(ck + "/commits/*")):
            if not f.endswith(".crc"):
                print("   commit", os.path.basename(f))
        for f in sorted(glob.glob(ck + "/_schema_log/**", recursive=True)):
            if os.path.isfile(f) and not f.endswith(".crc"):
                print("   schema log", os.path.relpath(f, ck),
                      open(f).read().split('"dataSchemaJson"')[0][-120:])
    return p, run


p, run = scenario("rename-always")
run("first")
sql(f"ALTER TABLE delta.`{p}` RENAME COLUMN s TO s2; INSERT INTO delta.`{p}` VALUES (3, 'c', 'z')")
run("after rename")
run("option allowSourceColumnDrop=always", allowSourceColumnDrop="always")
run("option allowSourceColumnRename=always", allowSourceColumnRename="always")
sql(f"INSERT INTO delta.`{p}` VALUES (4, 'd', 'w')")
run("append, no option")

p, run = scenario("rename-version")
run("first")
sql(f"ALTER TABLE delta.`{p}` RENAME COLUMN s TO s2; INSERT INTO delta.`{p}` VALUES (3, 'c', 'z')")
run("after rename")
run("option allowSourceColumnRename=3", allowSourceColumnRename="3")
run("option allowSourceColumnRename=2", allowSourceColumnRename="2")

p, run = scenario("drop")
run("first")
sql(f"ALTER TABLE delta.`{p}` DROP COLUMN t; INSERT INTO delta.`{p}` VALUES (3, 'c')")
run("after drop")
run("option allowSourceColumnRename=always", allowSourceColumnRename="always")
run("option allowSourceColumnDrop=always", allowSourceColumnDrop="always")

p, run = scenario("rename-then-drop")
run("first")
sql(f"ALTER TABLE delta.`{p}` RENAME COLUMN s TO s2; ALTER TABLE delta.`{p}` DROP COLUMN t; "
    f"INSERT INTO delta.`{p}` VALUES (3, 'c')")
run("after rename and drop")
run("option rename=always", allowSourceColumnRename="always")
run("options rename+drop=always", allowSourceColumnRename="always", allowSourceColumnDrop="always")
run("options rename+drop=always again", allowSourceColumnRename="always",
    allowSourceColumnDrop="always")

p, run = scenario("add-column")
run("first")
sql(f"ALTER TABLE delta.`{p}` ADD COLUMNS (u STRING); INSERT INTO delta.`{p}` VALUES (3, 'c', 'z', 'n')")
run("after add")
run("after add 2")

p, run = scenario("from-version-0")
sql(f"ALTER TABLE delta.`{p}` RENAME COLUMN s TO s2; INSERT INTO delta.`{p}` VALUES (3, 'c', 'z')")
run("first from 0", startingVersion="0")
run("second from 0", startingVersion="0")
run("third, rename=always", startingVersion="0", allowSourceColumnRename="always")

p, run = scenario("rename-between-runs-no-data")
run("first")
sql(f"ALTER TABLE delta.`{p}` RENAME COLUMN s TO s2")
run("after rename only")
run("rename=always", allowSourceColumnRename="always")
run("rename=always again", allowSourceColumnRename="always")
os._exit(0)
