// Spark's division and remainder of the engine (spark_arithmetic.h), run as the SQL
// the dialect writes (dialect/arithmetic.cc). The expected values and types are Spark 4's (ANSI),
// as the SQL differential (test/differential/sql) saw them.
#include "engine/spark_arithmetic.h"

#include <gtest/gtest.h>

#include "engine/test_util.h"

namespace sluice::engine {
namespace {

class SparkArithmeticTest : public testing::EngineTest {
 protected:
  std::string Error(const std::string& sql) {
    auto r = conn_->Query(sql);
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? std::string() : r.status().message();
  }
  // "value type" of one expression.
  std::string Typed(const std::string& expr) {
    return Scalar("SELECT CAST(" + expr + " AS VARCHAR) || ' ' || spark_typeof(" + expr + ")");
  }
};

TEST_F(SparkArithmeticTest, DivisionOfIntegersAndDoublesIsDouble) {
  EXPECT_EQ(Typed("spark_divide(7, 2)"), "3.5 double");
  EXPECT_EQ(Typed("spark_divide(CAST(7 AS BIGINT), CAST(2 AS SMALLINT))"), "3.5 double");
  EXPECT_EQ(Typed("spark_divide(CAST(1.5 AS FLOAT), 2)"), "0.75 double");
  EXPECT_EQ(Typed("spark_divide(1.5, CAST(2 AS DOUBLE))"), "0.75 double");
  EXPECT_EQ(Scalar("SELECT spark_divide(NULL, 2)"), "NULL");
  EXPECT_EQ(Scalar("SELECT spark_divide(2, NULL)"), "NULL");
}

TEST_F(SparkArithmeticTest, DivisionByZeroFails) {
  for (const char* q : {"SELECT spark_divide(1, 0)", "SELECT spark_divide(CAST(1.0 AS DOUBLE), 0)",
                        "SELECT spark_divide(1.0, 0)", "SELECT spark_divide(1, -0.0::DOUBLE)",
                        "SELECT spark_divide(x, x) FROM range(3) t(x)"}) {
    EXPECT_NE(Error(q).find("[DIVIDE_BY_ZERO]"), std::string::npos) << q;
  }
  for (const char* q : {"SELECT spark_remainder(7, 0)", "SELECT spark_remainder(7.5, 0)",
                        "SELECT spark_remainder(CAST(7 AS DOUBLE), 0)"}) {
    EXPECT_NE(Error(q).find("[REMAINDER_BY_ZERO]"), std::string::npos) << q;
  }
}

TEST_F(SparkArithmeticTest, DecimalDivisionHasSparksType) {
  // 1.0 is DECIMAL(2,1), the literal 3 DECIMAL(1,0): scale max(6, 1 + 1 + 1), precision 7.
  EXPECT_EQ(Typed("spark_divide(1.0, 3)"), "0.333333 decimal(7,6)");
  // DECIMAL(10,2) / DECIMAL(10,2): scale 13, precision 23.
  EXPECT_EQ(Typed("spark_divide(CAST(10 AS DECIMAL(10,2)), CAST(3 AS DECIMAL(10,2)))"),
            "3.3333333333333 decimal(23,13)");
  // A column of INT counts as DECIMAL(10,0): scale max(6, 2 + 10 + 1).
  EXPECT_EQ(Typed("spark_divide(CAST(2 AS DECIMAL(4,2)), CAST(3 AS INT))"),
            "0.6666666666667 decimal(15,13)");
  // Half up, away from zero.
  EXPECT_EQ(Scalar("SELECT spark_divide(2.0, 3)"), "0.666667");
  EXPECT_EQ(Scalar("SELECT spark_divide(-2.0, 3)"), "-0.666667");
  EXPECT_EQ(Scalar("SELECT spark_divide(1.0, -8)"), "-0.125000");
  // Over 38 digits: precision 38, the scale cut down to no less than 6.
  EXPECT_EQ(Typed("spark_divide(CAST(1 AS DECIMAL(38,0)), CAST(3 AS DECIMAL(38,0)))"),
            "0.333333 decimal(38,6)");
  EXPECT_EQ(Typed("spark_divide(CAST(1 AS DECIMAL(30,20)), CAST(8 AS DECIMAL(20,0)))"),
            "0.1250000000000000000000000000 decimal(38,28)");
  EXPECT_NE(Error("SELECT spark_divide(CAST('99999999999999999999999999999999' AS DECIMAL(38,0)), "
                  "0.001)")
                .find("NUMERIC_VALUE_OUT_OF_RANGE"),
            std::string::npos);
  // A DOUBLE operand makes it a DOUBLE division.
  EXPECT_EQ(Typed("spark_divide(1.0, CAST(4 AS DOUBLE))"), "0.25 double");
}

TEST_F(SparkArithmeticTest, Remainder) {
  EXPECT_EQ(Typed("spark_remainder(-7, 3)"), "-1 int");
  EXPECT_EQ(Typed("spark_remainder(CAST(7 AS BIGINT), 3)"), "1 bigint");
  EXPECT_EQ(Scalar("SELECT spark_remainder(CAST(-9223372036854775808 AS BIGINT), -1)"), "0");
  EXPECT_EQ(Typed("spark_remainder(CAST(5.5 AS DOUBLE), 2)"), "1.5 double");
  EXPECT_EQ(Typed("spark_remainder(CAST(5.5 AS FLOAT), CAST(2 AS FLOAT))"), "1.5 float");
  // DECIMAL(3,2) % DECIMAL(2,1): scale 2, precision min(1, 1) + 2.
  EXPECT_EQ(Typed("spark_remainder(7.25, -2.0)"), "1.25 decimal(3,2)");
  EXPECT_EQ(Scalar("SELECT spark_remainder(-7.25, 2.0)"), "-1.25");
  EXPECT_EQ(Scalar("SELECT spark_remainder(NULL, 2)"), "NULL");
}

TEST_F(SparkArithmeticTest, OtherTypesKeepTheEnginesOperator) {
  EXPECT_EQ(Scalar("SELECT spark_divide(INTERVAL 10 DAY, 2)"), "5 days");
}

}  // namespace
}  // namespace sluice::engine
