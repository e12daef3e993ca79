// spark_string(x) (spark_string.h): Spark's CAST(x AS STRING). The Spark answers in the comments
// were seen with PySpark 4.2 by hand:
//   SELECT CAST(X'7B2261223A317D' AS STRING)             -> '{"a":1}'
//   SELECT hex(CAST(X'FF41' AS STRING)), length(...)     -> 'FF41', 2 (the bad byte is kept)
//   SELECT CAST(X'' AS STRING), CAST(CAST(NULL AS BINARY) AS STRING) -> '', NULL
#include <gtest/gtest.h>

#include "engine/test_util.h"

namespace sluice::engine {
namespace {

class SparkStringTest : public testing::EngineTest {};

TEST_F(SparkStringTest, BlobsAreReadAsUtf8) {
  EXPECT_EQ(Scalar("SELECT spark_string(unhex('7B2261223A317D'))"), "{\"a\":1}");
  // DuckDB's own cast escapes the quotes: what the rewrite of CAST(x AS STRING) avoids.
  EXPECT_EQ(Scalar("SELECT CAST(unhex('7B2261223A317D') AS VARCHAR)"), "{\\x22a\\x22:1}");
  EXPECT_EQ(Scalar("SELECT spark_string(encode('h\u00e9llo \u20ac \U0001F600'))"),
            "h\u00e9llo \u20ac \U0001F600");
  EXPECT_EQ(Scalar("SELECT spark_string(unhex(''))"), "");
  EXPECT_EQ(Scalar("SELECT spark_string(CAST(NULL AS BLOB))"), "NULL");
  EXPECT_EQ(Scalar("SELECT typeof(spark_string(unhex('41')))"), "VARCHAR");
}

TEST_F(SparkStringTest, ABlobColumnWithNullsAndManyRows) {
  Batch b =
      Q("SELECT count(*), count(s), min(s), max(s) FROM (SELECT spark_string(CASE WHEN i % "
        "3 = 0 THEN NULL ELSE encode('v' || i) END) AS s FROM range(5000) t(i))");
  ASSERT_EQ(b.num_rows(), 1);
  EXPECT_EQ(b.GetString(0, 0), "5000");
  EXPECT_EQ(b.GetString(0, 1), "3333");
  EXPECT_EQ(b.GetString(0, 2), "v1");
  EXPECT_EQ(b.GetString(0, 3), "v998");
}

TEST_F(SparkStringTest, InvalidUtf8IsAnErrorNamingTheBytes) {
  auto r = conn_->Query("SELECT spark_string(unhex('41FF42'))");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("CAST(binary AS STRING): the value X'41FF42' is not valid "
                                      "UTF-8 (byte 1)"),
            std::string::npos)
      << r.status().ToString();
  // A truncated sequence at the end, an overlong form, a surrogate.
  for (const char* bad : {"'41E282'", "'C0AF'", "'EDA080'"}) {
    auto e = conn_->Query(std::string("SELECT spark_string(unhex(") + bad + "))");
    EXPECT_FALSE(e.ok()) << bad;
  }
}

// Spark: CAST(CAST('h\u00e9llo' AS BINARY) AS STRING) is 'h\u00e9llo' (the UTF-8 bytes and back).
TEST_F(SparkStringTest, SparkBinaryEncodesTextAsUtf8) {
  EXPECT_EQ(Scalar("SELECT hex(spark_binary('h\u00e9'))"), "68C3A9");
  EXPECT_EQ(Scalar("SELECT spark_string(spark_binary('h\u00e9llo \u20ac'))"), "h\u00e9llo \u20ac");
  EXPECT_EQ(Scalar("SELECT hex(spark_binary(unhex('00FF')))"), "00FF");
  EXPECT_EQ(Scalar("SELECT typeof(spark_binary('a'))"), "BLOB");
  EXPECT_EQ(Scalar("SELECT spark_binary(CAST(NULL AS VARCHAR)) IS NULL"), "true");
}

TEST_F(SparkStringTest, OtherTypesAreCastToVarchar) {
  EXPECT_EQ(Scalar("SELECT spark_string(42)"), "42");
  EXPECT_EQ(Scalar("SELECT spark_string('text')"), "text");
  EXPECT_EQ(Scalar("SELECT spark_string(DATE '2024-01-02')"), "2024-01-02");
  EXPECT_EQ(Scalar("SELECT spark_string(NULL)"), "NULL");
  EXPECT_EQ(Scalar("SELECT typeof(spark_string(1.5))"), "VARCHAR");
}

}  // namespace
}  // namespace sluice::engine
