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
    "variantType": (
        """CREATE TABLE delta.`{p}` (id INT, v VARIANT) USING delta;
           INSERT INTO delta.`{p}` SELECT 1, parse_json('{{"a": 1}}')""",
        "the variant encoding is not decoded"),
}
