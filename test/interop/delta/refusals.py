"""The Delta table features Sluice does not read yet: the one list of expected refusals.

Each entry is a table Spark (Delta 4.4) writes with the feature, and the feature name that
Sluice's error must name (src/delta/protocol_check.cc: "Unsupported Delta reader feature
'<name>': <why>"). test_peers_write.py::test_expected_refusal makes each table and checks that
Sluice refuses to read it and to write into it, naming the feature; when Sluice learns a feature,
that test fails and says to move the feature out of this list and into the compared tables, so
the list shrinks visibly. docs/interop.md ("What Sluice refuses") mirrors this list.
"""

# feature -> (Spark SQL making a table at {p} that needs it, why Sluice refuses it today)
EXPECTED_REFUSALS = {
    "v2Checkpoint": (
        """CREATE TABLE delta.`{p}` (id INT) USING delta
             TBLPROPERTIES ('delta.checkpointPolicy' = 'v2', 'delta.checkpointInterval' = '2');
           INSERT INTO delta.`{p}` VALUES (1);
           INSERT INTO delta.`{p}` VALUES (2)""",
        "UUID-named checkpoints with sidecar files are not read"),
    "timestampNtz": (
        """CREATE TABLE delta.`{p}` (id INT, ts TIMESTAMP_NTZ) USING delta;
           INSERT INTO delta.`{p}` VALUES (1, TIMESTAMP_NTZ'2024-01-01 10:00:00')""",
        "timestamp without time zone columns are not mapped yet"),
    "typeWidening": (
        """CREATE TABLE delta.`{p}` (id INT, n SMALLINT) USING delta
             TBLPROPERTIES ('delta.enableTypeWidening' = 'true');
           INSERT INTO delta.`{p}` VALUES (1, 1);
           ALTER TABLE delta.`{p}` CHANGE COLUMN n TYPE INT;
           INSERT INTO delta.`{p}` VALUES (2, 100000)""",
        "files written before a widening hold the narrower type"),
    "variantType": (
        """CREATE TABLE delta.`{p}` (id INT, v VARIANT) USING delta;
           INSERT INTO delta.`{p}` SELECT 1, parse_json('{{"a": 1}}')""",
        "the variant encoding is not decoded"),
}
