// Spark's types of sum and avg in the engine (spark_aggregates.h). The expected values and
// types are Spark 4's (ANSI), as the SQL differential (test/differential/sql) saw them.
#include "engine/spark_aggregates.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/test_util.h"

namespace sluice::engine {
namespace {

class SparkAggregatesTest : public testing::EngineTest {
 protected:
  std::string Error(const std::string& sql) {
    auto r = conn_->Query(sql);
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? std::string() : r.status().message();
  }
};

TEST_F(SparkAggregatesTest, AvgOfDecimalIsDecimal) {
  Q("CREATE TABLE prices AS SELECT * FROM (VALUES ('a', 1.50::DECIMAL(10,2)), ('a', 2.90), "
    "('b', 0.50), ('c', NULL::DECIMAL(10,2))) t(g, p)");
  auto b =
      Q("SELECT g, CAST(avg(p) AS VARCHAR), spark_typeof(avg(p)) FROM prices GROUP BY g "
        "ORDER BY g");
  ASSERT_EQ(b.num_rows(), 3u);
  EXPECT_EQ(b.GetString(0, 1).value_or("NULL"), "2.200000");  // (row, column)
  EXPECT_EQ(b.GetString(0, 2).value_or("NULL"), "decimal(14,6)");
  EXPECT_EQ(b.GetString(1, 1).value_or("NULL"), "0.500000");
  EXPECT_EQ(b.GetString(2, 1).value_or("NULL"), "NULL");
  // Half up on the exact mean; mean is avg.
  EXPECT_EQ(Scalar("SELECT CAST(mean(x) AS VARCHAR) FROM (VALUES (0.00001), (0.00002)) t(x)"),
            "0.000015000");
  EXPECT_EQ(Scalar("SELECT CAST(avg(x) AS VARCHAR) FROM (VALUES (1.0), (1.0), (2.0)) t(x)"),
            "1.33333");
  EXPECT_EQ(Scalar("SELECT CAST(avg(x) AS VARCHAR) FROM (VALUES (-1.0), (-1.0), (-2.0)) t(x)"),
            "-1.33333");
  // A window over it, and the other types keep DuckDB's avg.
  EXPECT_EQ(Scalar("SELECT CAST(max(a) AS VARCHAR) FROM (SELECT avg(p) OVER (PARTITION BY g) AS a "
                   "FROM prices)"),
            "2.200000");
  EXPECT_EQ(Scalar("SELECT spark_typeof(avg(x)) FROM range(3) t(x)"), "double");
}

TEST_F(SparkAggregatesTest, SumOfIntegersIsABigintThatFailsPastItsRange) {
  EXPECT_NE(Error("SELECT sum(x) FROM (VALUES (9223372036854775807), (10)) t(x)")
                .find("[ARITHMETIC_OVERFLOW]"),
            std::string::npos);
  EXPECT_NE(Error("SELECT sum(x) OVER () FROM (VALUES (-9223372036854775807), (-10)) t(x)")
                .find("[ARITHMETIC_OVERFLOW]"),
            std::string::npos);
  // Within the range: the exact sum (a large sum of INTs too), a BIGINT.
  EXPECT_EQ(Scalar("SELECT sum(x) FROM (VALUES (9223372036854775807), (-10)) t(x)"),
            "9223372036854775797");
  EXPECT_EQ(Scalar("SELECT sum(CAST(x AS INT)) FROM range(3) t(x)"), "3");
  EXPECT_EQ(Scalar("SELECT sum(CAST(2147483647 AS INT)) FROM range(4)"), "8589934588");
}

TEST_F(SparkAggregatesTest, SumOfIntegersIsABigint) {
  for (const char* type : {"TINYINT", "SMALLINT", "INT", "BIGINT"}) {
    const std::string x = std::string("CAST(x AS ") + type + ")";
    EXPECT_EQ(Scalar("SELECT CAST(sum(" + x + ") AS VARCHAR) || ' ' || spark_typeof(sum(" + x +
                     ")) FROM range(5) t(x)"),
              "10 bigint")
        << type;
  }
  // No row, only NULLs: NULL; NULLs are skipped; DISTINCT; a constant over many rows; a window
  // frame (the engine's segment tree combines partial sums); GROUP BY.
  EXPECT_EQ(Scalar("SELECT sum(x) FROM range(0) t(x)"), "NULL");
  EXPECT_EQ(Scalar("SELECT sum(CAST(NULL AS INT)) FROM range(3)"), "NULL");
  EXPECT_EQ(Scalar("SELECT sum(x) FROM (VALUES (1), (NULL), (2)) t(x)"), "3");
  EXPECT_EQ(Scalar("SELECT sum(DISTINCT x % 3) FROM range(10) t(x)"), "3");
  EXPECT_EQ(Scalar("SELECT sum(7) FROM range(3000)"), "21000");
  EXPECT_EQ(
      Scalar("SELECT string_agg(s::VARCHAR, ',' ORDER BY x) FROM (SELECT x, sum(x) OVER "
             "(ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM range(4) t(x))"),
      "0,1,3,5");
  EXPECT_EQ(Scalar("SELECT string_agg(s::VARCHAR, ',' ORDER BY k) FROM (SELECT x % 2 AS k, sum(x) "
                   "AS s FROM range(5) t(x) GROUP BY k)"),
            "6,4");
  // The engine's rewrite of sum(x + c) into sum(x) + c * count(x) keeps the type.
  EXPECT_EQ(Scalar("SELECT CAST(sum(x + 1) AS VARCHAR) || ' ' || spark_typeof(sum(x + 1)) FROM "
                   "range(4) t(x)"),
            "10 bigint");
  // A table created from it holds a BIGINT.
  Q("CREATE TABLE sums AS SELECT x % 2 AS k, sum(x) AS s FROM range(5) t(x) GROUP BY k");
  EXPECT_EQ(Scalar("SELECT data_type FROM information_schema.columns WHERE table_name = 'sums' "
                   "AND column_name = 's'"),
            "BIGINT");
}

TEST_F(SparkAggregatesTest, SumOfIntegersIsCheckedAtItsEnd) {
  // A constant past the range over many rows fails; a partial sum past it does not when the
  // whole fits (Spark's answer: its partitions' partial sums decide whether it fails on the way).
  EXPECT_NE(Error("SELECT sum(4611686018427387904) FROM range(2)").find("[ARITHMETIC_OVERFLOW]"),
            std::string::npos);
  EXPECT_EQ(Scalar("SELECT sum(x ORDER BY i) FROM (VALUES (1, 9223372036854775807), (2, 1), "
                   "(3, -5)) t(i, x)"),
            "9223372036854775803");
}

TEST_F(SparkAggregatesTest, SumOfDecimalHasTenMoreDigits) {
  EXPECT_EQ(Scalar("SELECT CAST(sum(x) AS VARCHAR) || ' ' || spark_typeof(sum(x)) FROM (VALUES "
                   "(1.50::DECIMAL(5,2)), (2.25), (NULL)) t(x)"),
            "3.75 decimal(15,2)");
  EXPECT_EQ(Scalar("SELECT spark_typeof(sum(x)) FROM (VALUES (1.5::DECIMAL(30,1))) t(x)"),
            "decimal(38,1)");
  EXPECT_EQ(Scalar("SELECT sum(x) FROM (SELECT 1.5::DECIMAL(5,2) AS x LIMIT 0)"), "NULL");
  EXPECT_EQ(Scalar("SELECT CAST(sum(-0.01::DECIMAL(3,2)) AS VARCHAR) FROM range(3000)"), "-30.00");
  EXPECT_EQ(Scalar("SELECT CAST(max(s) AS VARCHAR) FROM (SELECT sum(x) OVER (ORDER BY x) AS s FROM "
                   "(VALUES (1.5::DECIMAL(4,1)), (2.5)) t(x))"),
            "4.0");
  // Past 38 digits: NUMERIC_VALUE_OUT_OF_RANGE, as Spark's.
  const std::string big = "CAST('9" + std::string(37, '0') + "' AS DECIMAL(38,0))";
  EXPECT_NE(Error("SELECT sum(" + big + ") FROM range(2)").find("[NUMERIC_VALUE_OUT_OF_RANGE]"),
            std::string::npos);
  EXPECT_NE(Error("SELECT sum(x) FROM (SELECT " + big + " AS x FROM range(2) UNION ALL SELECT " +
                  big + ")")
                .find("[NUMERIC_VALUE_OUT_OF_RANGE]"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice::engine
