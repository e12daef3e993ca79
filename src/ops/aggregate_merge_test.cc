#include "ops/aggregate_merge.h"

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/row_codec.h"
#include "engine/test_util.h"

namespace sluice::ops {
namespace {

using engine::TypeId;

class AggregateMergeTest : public engine::testing::EngineTest {
 protected:
  // The row codec's bytes of every column of the query's single row, without the version byte.
  std::string Encoded(const std::string& sql) {
    auto b = conn_->Query(sql);
    EXPECT_TRUE(b.ok()) << b.status().ToString() << " in " << sql;
    if (!b.ok()) return "";
    EXPECT_EQ(b->num_rows(), 1) << sql;
    std::vector<size_t> cols;
    for (size_t c = 0; c < b->num_columns(); ++c) cols.push_back(c);
    auto rows = engine::EncodeRows(*b, cols);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? (*rows)[0].substr(engine::kRowHeaderBytes) : "";
  }
  // Checks that merging state row `s` with batch row `b` (SQL values of `types`, one per
  // partial) gives the bytes of the merge SQL `CAST(fn(p) AS type)` over both rows.
  void ExpectSqlMerge(const std::vector<PartialMergeSpec>& specs, const std::string& s,
                      const std::string& b) {
    auto merger = AggregateMerger::Make(specs);
    ASSERT_TRUE(merger.has_value());
    std::string cols, merged;
    for (size_t i = 0; i < specs.size(); ++i) {
      const std::string p = "p" + std::to_string(i);
      const std::string type = engine::DataType{specs[i].type}.ToSql();
      cols += (i ? ", " : "") + p;
      merged +=
          std::string(i ? ", " : "") + "CAST(" + specs[i].merge_fn + "(" + p + ") AS " + type + ")";
    }
    const std::string values = "(VALUES " + s + ", " + b + ") t(" + cols + ")";
    std::string got;
    Status st = merger->Merge(Encoded("SELECT * FROM (VALUES " + s + ") t(" + cols + ")"),
                              Encoded("SELECT * FROM (VALUES " + b + ") t(" + cols + ")"), &got);
    if (!conn_->Query("SELECT " + merged + " FROM " + values).ok()) {  // e.g. a sum overflow
      EXPECT_TRUE(st.IsInvalidArgument()) << s << " + " << b << ": " << st.ToString();
      return;
    }
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(got, Encoded("SELECT " + merged + " FROM " + values)) << s << " + " << b;
  }
};

TEST_F(AggregateMergeTest, SupportsSumOfBigintAndDoubleAndMinMaxOfFixedWidthTypesOnly) {
  EXPECT_TRUE(AggregateMerger::Make({{"sum", TypeId::kBigInt, "count(*)"},
                                     {"sum", TypeId::kDouble, "sum(d)"},
                                     {"min", TypeId::kTimestampTz, "min(t)"},
                                     {"max", TypeId::kInteger, "max(i)"}})
                  .has_value());
  EXPECT_TRUE(AggregateMerger::Make({}).has_value());
  EXPECT_FALSE(AggregateMerger::Make({{"sum", TypeId::kHugeInt, "sum(h)"}}).has_value());
  EXPECT_FALSE(AggregateMerger::Make({{"sum", TypeId::kDecimal, "sum(d)"}}).has_value());
  EXPECT_FALSE(AggregateMerger::Make({{"min", TypeId::kVarchar, "min(s)"}}).has_value());
  EXPECT_FALSE(AggregateMerger::Make({{"first", TypeId::kBigInt, "first(x)"}}).has_value());
  EXPECT_FALSE(
      AggregateMerger::Make({{"", TypeId::kList, "approx_count_distinct(x)"}}).has_value());
}

TEST_F(AggregateMergeTest, MatchesTheMergeSqlIncludingNulls) {
  const std::vector<PartialMergeSpec> specs = {
      {"sum", TypeId::kBigInt, "sum(a)"}, {"min", TypeId::kBigInt, "min(a)"},
      {"max", TypeId::kBigInt, "max(a)"}, {"sum", TypeId::kDouble, "sum(d)"},
      {"min", TypeId::kDouble, "min(d)"}, {"max", TypeId::kDouble, "max(d)"}};
  const std::vector<std::string> rows = {
      "(5::BIGINT, -3::BIGINT, 7::BIGINT, 1.5::DOUBLE, -2.5::DOUBLE, 0.25::DOUBLE)",
      "(-9::BIGINT, 4::BIGINT, -1::BIGINT, -0.0::DOUBLE, 'nan'::DOUBLE, 'inf'::DOUBLE)",
      "(NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::DOUBLE, NULL::DOUBLE, NULL::DOUBLE)",
      "(0::BIGINT, 9223372036854775807::BIGINT, '-9223372036854775808'::BIGINT, '-inf'::DOUBLE, "
      "0.0::DOUBLE, 'nan'::DOUBLE)",
      "(9223372036854775807::BIGINT, 0::BIGINT, 0::BIGINT, 1e308::DOUBLE, 1e-308::DOUBLE, "
      "-1e308::DOUBLE)"};
  for (const auto& s : rows) {
    for (const auto& b : rows) ExpectSqlMerge(specs, s, b);  // some sums overflow: both fail
  }
}

TEST_F(AggregateMergeTest, MinMaxOfOtherFixedWidthTypesMatchTheSql) {
  ExpectSqlMerge({{"min", TypeId::kInteger, "min(i)"},
                  {"max", TypeId::kTimestampTz, "max(t)"},
                  {"max", TypeId::kBoolean, "max(b)"},
                  {"min", TypeId::kDate, "min(d)"},
                  {"max", TypeId::kFloat, "max(f)"}},
                 "(-4::INTEGER, TIMESTAMPTZ '2024-01-01 00:00:00+00', false, DATE '1960-01-01', "
                 "'nan'::FLOAT)",
                 "(3::INTEGER, TIMESTAMPTZ '1969-12-31 23:59:59+00', true, DATE '2030-05-06', "
                 "-1.5::FLOAT)");
}

TEST_F(AggregateMergeTest, BigintSumOverflowFailsAsTheSqlCastDoes) {
  const std::vector<PartialMergeSpec> specs = {{"sum", TypeId::kBigInt, "count(*)"}};
  auto merger = AggregateMerger::Make(specs);
  ASSERT_TRUE(merger.has_value());
  std::string out;
  Status st = merger->Merge(Encoded("SELECT 9223372036854775807::BIGINT"),
                            Encoded("SELECT 1::BIGINT"), &out);
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.ToString().find("count(*)"), std::string::npos) << st.ToString();
  EXPECT_FALSE(conn_
                   ->Query("SELECT CAST(sum(x) AS BIGINT) FROM (VALUES "
                           "(9223372036854775807::BIGINT), (1::BIGINT)) t(x)")
                   .ok());
  out.clear();
  ASSERT_TRUE(
      merger
          ->Merge(Encoded("SELECT 9223372036854775807::BIGINT"), Encoded("SELECT -1::BIGINT"), &out)
          .ok());
  EXPECT_EQ(out, Encoded("SELECT 9223372036854775806::BIGINT"));
}

TEST_F(AggregateMergeTest, MalformedBytesAreCorruption) {
  auto merger = AggregateMerger::Make({{"sum", TypeId::kBigInt, "count(*)"}});
  ASSERT_TRUE(merger.has_value());
  const std::string one = Encoded("SELECT 1::BIGINT");
  std::string out;
  EXPECT_TRUE(merger->Merge(one.substr(0, 5), one, &out).IsCorruption());
  EXPECT_TRUE(merger->Merge(one, one + "x", &out).IsCorruption());
  EXPECT_TRUE(merger->Merge(std::string("\x02", 1), one, &out).IsCorruption());
  EXPECT_TRUE(merger->Merge("", one, &out).IsCorruption());
}

}  // namespace
}  // namespace sluice::ops
