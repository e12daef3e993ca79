// Spark's casts, types and type-dependent functions of the engine (spark_casts.h), run as the
// SQL the dialect writes (dialect/casts.cc). The expected values are Spark 4's (ANSI, UTC), as
// the SQL differential (test/differential/sql) saw them.
#include "engine/spark_casts.h"

#include <gtest/gtest.h>

#include "engine/test_util.h"

namespace sluice::engine {
namespace {

class SparkCastsTest : public testing::EngineTest {
 protected:
  std::string Error(const std::string& sql) {
    auto r = conn_->Query(sql);
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? std::string() : r.status().message();
  }
  std::string Cast(const std::string& x, const std::string& type) {
    return Scalar("SELECT CAST(spark_cast_input(" + x + ", '" + type + "') AS " + type + ")");
  }
};

TEST(SparkDoubleTextTest, PrintsAsJava) {
  using internal::SparkDoubleText;
  EXPECT_EQ(SparkDoubleText(1e20), "1.0E20");
  EXPECT_EQ(SparkDoubleText(0.0001), "1.0E-4");
  EXPECT_EQ(SparkDoubleText(1.5), "1.5");
  EXPECT_EQ(SparkDoubleText(100.0), "100.0");
  EXPECT_EQ(SparkDoubleText(1234567.0), "1234567.0");
  EXPECT_EQ(SparkDoubleText(1e7), "1.0E7");
  EXPECT_EQ(SparkDoubleText(0.001), "0.001");
  EXPECT_EQ(SparkDoubleText(-2.25), "-2.25");
  EXPECT_EQ(SparkDoubleText(1.2345e-10), "1.2345E-10");
  EXPECT_EQ(SparkDoubleText(0.0), "0.0");
  EXPECT_EQ(SparkDoubleText(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(internal::SparkFloatText(1.25f), "1.25");
}

TEST_F(SparkCastsTest, IntegralCastsTruncate) {
  EXPECT_EQ(Cast("CAST(7.9 AS DOUBLE)", "INT"), "7");
  EXPECT_EQ(Cast("CAST(-7.9 AS DOUBLE)", "INT"), "-7");
  EXPECT_EQ(Cast("12.99", "INT"), "12");
  EXPECT_EQ(Cast("-12.99", "BIGINT"), "-12");
  EXPECT_EQ(Cast("' 42 '", "INT"), "42");
  EXPECT_EQ(Cast("'+5'", "INT"), "5");
  EXPECT_EQ(Cast("NULL", "INT"), "NULL");
  for (const char* bad : {"'1.5'", "'1e3'", "'0x10'", "'1_000'", "''", "'abc'"}) {
    EXPECT_NE(Error(std::string("SELECT CAST(spark_cast_input(") + bad + ", 'INT') AS INT)")
                  .find("CAST_INVALID_INPUT"),
              std::string::npos)
        << bad;
    EXPECT_EQ(
        Scalar(std::string("SELECT TRY_CAST(spark_try_cast_input(") + bad + ", 'INT') AS INT)"),
        "NULL");
  }
  EXPECT_FALSE(conn_->Query("SELECT CAST(spark_cast_input(1e10, 'INT') AS INT)").ok());
}

TEST_F(SparkCastsTest, TextToDateAndTimestamp) {
  EXPECT_EQ(Cast("'2024'", "DATE"), "2024-01-01");
  EXPECT_EQ(Cast("'2024-01'", "DATE"), "2024-01-01");
  EXPECT_EQ(Cast("'2024-1-5'", "DATE"), "2024-01-05");
  EXPECT_EQ(Cast("' 2024-01-15 10:30:00'", "DATE"), "2024-01-15");
  EXPECT_EQ(Cast("'2024-01-15 10'", "TIMESTAMP"), "2024-01-15 10:00:00");
  EXPECT_EQ(Cast("'2024-01'", "TIMESTAMP"), "2024-01-01 00:00:00");
  EXPECT_EQ(Cast("'2024-01-15T10:30:45+02:00'", "TIMESTAMP"), "2024-01-15 08:30:45");
  EXPECT_EQ(Cast("'2024-01-15T10:30:45Z'", "TIMESTAMP"), "2024-01-15 10:30:45");
  EXPECT_EQ(Cast("'2024-01-15 10:30:45.123456789'", "TIMESTAMP"), "2024-01-15 10:30:45.123456");
  EXPECT_EQ(Cast("'2024-01-15 10:30:45 UTC-01:30'", "TIMESTAMP"), "2024-01-15 12:00:45");
  EXPECT_NE(Error("SELECT CAST(spark_cast_input('2024-13-01', 'DATE') AS DATE)")
                .find("CAST_INVALID_INPUT"),
            std::string::npos);
  EXPECT_NE(Error("SELECT CAST(spark_cast_input('15/01/2024', 'TIMESTAMP') AS TIMESTAMP)")
                .find("CAST_INVALID_INPUT"),
            std::string::npos);
  EXPECT_NE(Error("SELECT CAST(spark_cast_input('2024-01-15 10:00 Europe/Paris', 'TIMESTAMP') "
                  "AS TIMESTAMP)")
                .find("zone names"),
            std::string::npos);
  EXPECT_EQ(Scalar("SELECT TRY_CAST(spark_try_cast_input('2024-02-30', 'DATE') AS DATE)"), "NULL");
  ASSERT_TRUE(conn_->Query("SET TimeZone = 'Europe/Paris'").ok());
  EXPECT_NE(Error("SELECT CAST(spark_cast_input('2024-01-15 10:00+02:00', 'TIMESTAMP') AS "
                  "TIMESTAMP)")
                .find("UTC"),
            std::string::npos);
}

TEST_F(SparkCastsTest, NoStringBecomesAnArrayMapOrStruct) {
  for (const char* type : {"INT[]", "MAP(VARCHAR, INT)", "STRUCT(a INT)"}) {
    EXPECT_NE(
        Error(std::string("SELECT CAST(spark_cast_input('[1,2]', '") + type + "') AS " + type + ")")
            .find("DATATYPE_MISMATCH"),
        std::string::npos)
        << type;
  }
  EXPECT_NE(Error("SELECT TRY_CAST(spark_try_cast_input('[1]', 'INT[]') AS INT[])")
                .find("DATATYPE_MISMATCH"),
            std::string::npos);
  EXPECT_EQ(Cast("[1, 2]", "BIGINT[]"), "[1, 2]");
  EXPECT_EQ(Cast("NULL", "INT[]"), "NULL");
}

TEST_F(SparkCastsTest, TimestampsAndSeconds) {
  EXPECT_EQ(Cast("TIMESTAMP '2024-01-15 10:30:45'", "BIGINT"), "1705314645");
  EXPECT_EQ(Cast("TIMESTAMP '1969-12-31 23:59:59.5'", "BIGINT"), "-1");
  EXPECT_EQ(Cast("TIMESTAMP '1970-01-01 00:00:01.5'", "DOUBLE"), "1.5");
  EXPECT_EQ(Cast("1705314645", "TIMESTAMP"), "2024-01-15 10:30:45");
  EXPECT_EQ(Cast("1.5", "TIMESTAMP"), "1970-01-01 00:00:01.5");
  EXPECT_EQ(Cast("'2.5d'", "DOUBLE"), "2.5");
}

TEST_F(SparkCastsTest, TypeNamesAndRounding) {
  EXPECT_EQ(Scalar("SELECT spark_typeof(1)"), "int");
  EXPECT_EQ(Scalar("SELECT spark_typeof(1.50)"), "decimal(3,2)");
  EXPECT_EQ(Scalar("SELECT spark_typeof([1, 2])"), "array<int>");
  EXPECT_EQ(Scalar("SELECT spark_typeof(MAP {'a': 1})"), "map<string,int>");
  EXPECT_EQ(Scalar("SELECT spark_typeof(struct_pack(a := 1, b := 'x'))"), "struct<a:int,b:string>");
  EXPECT_EQ(Scalar("SELECT spark_typeof(current_date)"), "date");
  EXPECT_EQ(Scalar("SELECT spark_typeof(NULL)"), "void");
  EXPECT_EQ(Scalar("SELECT spark_typeof(spark_ceil(CAST(1.2 AS DOUBLE)))"), "bigint");
  EXPECT_EQ(Scalar("SELECT spark_ceil(CAST(1.2 AS DOUBLE))"), "2");
  EXPECT_EQ(Scalar("SELECT spark_floor(-1.2)"), "-2");
  EXPECT_EQ(Scalar("SELECT spark_conv('ff', 16, 10)"), "255");
  EXPECT_EQ(Scalar("SELECT spark_conv('-1', 10, 16)"), "FFFFFFFFFFFFFFFF");
  EXPECT_EQ(Scalar("SELECT spark_conv('-15', 10, -16)"), "-F");
}

TEST_F(SparkCastsTest, SparkStringOfDoublesMapsAndTimestamps) {
  EXPECT_EQ(Scalar("SELECT spark_string(CAST(1e20 AS DOUBLE))"), "1.0E20");
  EXPECT_EQ(Scalar("SELECT spark_string(MAP {'a': 1})"), "{a -> 1}");
  EXPECT_EQ(Scalar("SELECT spark_string(struct_pack(a := 1, b := 'x'))"), "{1, x}");
  EXPECT_EQ(Scalar("SELECT spark_string([1, NULL, 3])"), "[1, null, 3]");
  EXPECT_EQ(Scalar("SELECT spark_string(TIMESTAMPTZ '2024-03-01 12:00:05+00')"),
            "2024-03-01 12:00:05");
}

}  // namespace
}  // namespace sluice::engine
