#include "delta/values.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/paths.h"

namespace sluice::delta {
namespace {

using engine::DataType;
using engine::TypeId;

DataType T(TypeId id) {
  DataType t;
  t.id = id;
  return t;
}

TEST(ValuesTest, TimestampEncodings) {
  // Spark legacy (writer-local, read as UTC) and ISO-8601 forms.
  EXPECT_EQ(*ParseTimestampMicros("2021-09-08 11:11:11"), 1631099471000000);
  EXPECT_EQ(*ParseTimestampMicros("2024-01-01T10:00:00.000000Z"), 1704103200000000);
  EXPECT_EQ(*ParseTimestampMicros("2020-01-01 08:09:10.001"), 1577866150001000);
  EXPECT_EQ(*ParseTimestampMicros("2000-01-01T00:00:00.000-08:00"), 946713600000000);
  EXPECT_EQ(*ParseTimestampMicros("1969-01-01"), -31536000000000);
  EXPECT_FALSE(ParseTimestampMicros("yesterday").ok());
  EXPECT_FALSE(ParseTimestampMicros("2021-13-01").ok());
  EXPECT_EQ(FormatTimestampMicros(1577866150001000), "2020-01-01 08:09:10.001000+00");
  EXPECT_EQ(FormatTimestampMicros(-1), "1969-12-31 23:59:59.999999+00");
  EXPECT_EQ(FormatMillisIso(1540415658000), "2018-10-24T21:14:18.000Z");
  EXPECT_EQ(*ParseDateDays("1970-01-02"), 1);
}

TEST(ValuesTest, PartitionValueSql) {
  EXPECT_EQ(*PartitionValueSql(std::nullopt, T(TypeId::kInteger)), "CAST(NULL AS INTEGER)");
  EXPECT_EQ(*PartitionValueSql(std::string(""), T(TypeId::kVarchar)), "CAST(NULL AS VARCHAR)");
  EXPECT_EQ(*PartitionValueSql(std::string("null"), T(TypeId::kVarchar)),
            "'null'");  // a string, not NULL
  EXPECT_EQ(*PartitionValueSql(std::string("it's"), T(TypeId::kVarchar)), "'it''s'");
  EXPECT_EQ(*PartitionValueSql(std::string("2021-09-08 11:11:11"), T(TypeId::kTimestampTz)),
            "CAST('2021-09-08 11:11:11.000000+00' AS TIMESTAMP WITH TIME ZONE)");
  EXPECT_EQ(*PartitionValueSql(std::string("true"), T(TypeId::kBoolean)), "true");
  EXPECT_EQ(*PartitionValueSql(std::string("-1.5"), T(TypeId::kDouble)), "CAST('-1.5' AS DOUBLE)");
  EXPECT_FALSE(PartitionValueSql(std::string("1; DROP TABLE x"), T(TypeId::kInteger)).ok());
  EXPECT_FALSE(PartitionValueSql(std::string("maybe"), T(TypeId::kBoolean)).ok());
  EXPECT_FALSE(PartitionValueSql(std::string("2021-02-30x"), T(TypeId::kDate)).ok());
}

TEST(ValuesTest, Comparables) {
  EXPECT_EQ(CompareValues(*ParseComparable("10", T(TypeId::kInteger)),
                          *ParseComparable("9", T(TypeId::kInteger))),
            1);
  EXPECT_EQ(CompareValues(*ParseComparable("10", T(TypeId::kVarchar)),
                          *ParseComparable("9", T(TypeId::kVarchar))),
            -1);
  EXPECT_EQ(
      CompareValues(*ParseComparable("2000-01-01T08:00:00Z", T(TypeId::kTimestampTz)),
                    *ParseComparable("2000-01-01T00:00:00.000-08:00", T(TypeId::kTimestampTz))),
      0);
  EXPECT_FALSE(CompareValues(Comparable(std::string("a")), Comparable(true)).has_value());
}

TEST(PathsTest, DecodesExactlyOnce) {
  EXPECT_EQ(*PercentDecode("_2=bar+%252521/part.parquet"), "_2=bar+%2521/part.parquet");
  EXPECT_EQ(*PercentDecode("a%20b"), "a b");
  EXPECT_TRUE(PercentDecode("bad%2").status().IsCorruption());
  EXPECT_EQ(*ResolveLogPath("/t", "x=A%252FA/f.parquet"), "/t/x=A%2FA/f.parquet");
  EXPECT_EQ(*ResolveLogPath("/t", "file:/data/f.parquet"), "/data/f.parquet");
  EXPECT_EQ(*ResolveLogPath("/t", "file:///data/a%20b.parquet"), "/data/a b.parquet");
  EXPECT_EQ(*ResolveLogPath("/t", "s3://bucket/k%3Dv/f.parquet"), "s3://bucket/k=v/f.parquet");
  EXPECT_EQ(*ResolveLogPath("/t", "as_timestamp=2021-09-08%2011%253A11%253A11/f"),
            "/t/as_timestamp=2021-09-08 11%3A11%3A11/f");
}

}  // namespace
}  // namespace sluice::delta
