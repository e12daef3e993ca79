#include "delta/data_skipping.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/schema.h"

namespace sluice::delta {
namespace {

engine::Schema TestSchema() {
  return ParseSchemaString(R"({"type":"struct","fields":[)"
                           R"({"name":"id","type":"long","nullable":true,"metadata":{}},)"
                           R"({"name":"name","type":"string","nullable":true,"metadata":{}},)"
                           R"({"name":"ts","type":"timestamp","nullable":true,"metadata":{}},)"
                           R"({"name":"part","type":"date","nullable":true,"metadata":{}}]})")
      ->fields;
}

AddFile File(const std::string& stats, std::optional<std::string> part = "2024-01-02") {
  AddFile f;
  f.path = "f";
  f.partition_values = {{"part", part}};
  if (!stats.empty()) f.stats = stats;
  return f;
}

bool May(const AddFile& f, std::vector<ColumnPredicate> preds) {
  auto r = FileMayMatch(f, ScanFilter{std::move(preds)}, TestSchema(), {"part"});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() && *r;
}

const char* kStats =
    R"({"numRecords":10,"minValues":{"id":10,"name":"b","ts":"2024-01-01T00:00:00.000Z"},)"
    R"("maxValues":{"id":20,"name":"m","ts":"2024-01-01T10:00:00.000Z"},"nullCount":{"id":0,"name":3,"ts":0}})";

TEST(DataSkippingTest, MinMaxPruning) {
  AddFile f = File(kStats);
  EXPECT_TRUE(May(f, {{"id", CompareOp::kEq, "15"}}));
  EXPECT_TRUE(May(f, {{"id", CompareOp::kEq, "10"}}));
  EXPECT_TRUE(May(f, {{"id", CompareOp::kEq, "20"}}));
  EXPECT_FALSE(May(f, {{"id", CompareOp::kEq, "9"}}));
  EXPECT_FALSE(May(f, {{"id", CompareOp::kEq, "21"}}));
  EXPECT_FALSE(May(f, {{"id", CompareOp::kLt, "10"}}));
  EXPECT_TRUE(May(f, {{"id", CompareOp::kLe, "10"}}));
  EXPECT_FALSE(May(f, {{"id", CompareOp::kGt, "20"}}));
  EXPECT_TRUE(May(f, {{"id", CompareOp::kGe, "20"}}));
  EXPECT_TRUE(May(f, {{"id", CompareOp::kNe, "15"}}));
  EXPECT_FALSE(May(f, {{"name", CompareOp::kGt, "n"}}));
  EXPECT_TRUE(May(f, {{"name", CompareOp::kGt, "c"}}));
  // Timestamps: max is truncated to ms, so a value inside that ms still matches.
  EXPECT_TRUE(May(f, {{"ts", CompareOp::kEq, "2024-01-01T10:00:00.000500Z"}}));
  EXPECT_FALSE(May(f, {{"ts", CompareOp::kGt, "2024-01-01T10:00:01Z"}}));
  // AND: one false conjunct prunes.
  EXPECT_FALSE(May(f, {{"id", CompareOp::kEq, "15"}, {"id", CompareOp::kGt, "30"}}));
}

TEST(DataSkippingTest, NullCounts) {
  AddFile f = File(kStats);
  EXPECT_FALSE(May(f, {{"id", CompareOp::kIsNull, std::nullopt}}));
  EXPECT_TRUE(May(f, {{"name", CompareOp::kIsNull, std::nullopt}}));
  AddFile all_null = File(R"({"numRecords":3,"minValues":{},"maxValues":{},"nullCount":{"id":3}})");
  EXPECT_FALSE(May(all_null, {{"id", CompareOp::kIsNotNull, std::nullopt}}));
  EXPECT_FALSE(May(all_null, {{"id", CompareOp::kEq, "1"}}));
  EXPECT_TRUE(May(all_null, {{"id", CompareOp::kIsNull, std::nullopt}}));
}

TEST(DataSkippingTest, MissingStatsKeepFiles) {
  EXPECT_TRUE(May(File(""), {{"id", CompareOp::kEq, "1"}}));
  EXPECT_TRUE(May(File("not json"), {{"id", CompareOp::kEq, "1"}}));
  EXPECT_TRUE(May(File(R"({"numRecords":1})"), {{"id", CompareOp::kEq, "1"}}));
}

TEST(DataSkippingTest, PartitionValues) {
  EXPECT_TRUE(May(File(""), {{"part", CompareOp::kEq, "2024-01-02"}}));
  EXPECT_FALSE(May(File(""), {{"part", CompareOp::kEq, "2024-01-03"}}));
  EXPECT_FALSE(May(File(""), {{"part", CompareOp::kLt, "2024-01-02"}}));
  EXPECT_FALSE(May(File(""), {{"part", CompareOp::kIsNull, std::nullopt}}));
  AddFile null_part = File("", std::nullopt);
  EXPECT_TRUE(May(null_part, {{"part", CompareOp::kIsNull, std::nullopt}}));
  EXPECT_FALSE(May(null_part, {{"part", CompareOp::kEq, "2024-01-02"}}));
}

TEST(DataSkippingTest, FilterSql) {
  auto sql = FilterToSql(
      ScanFilter{{{"id", CompareOp::kGe, "3"}, {"name", CompareOp::kIsNull, std::nullopt}}},
      TestSchema());
  ASSERT_TRUE(sql.ok());
  EXPECT_EQ(*sql, "(\"id\" >= CAST('3' AS BIGINT)) AND (\"name\" IS NULL)");
  EXPECT_TRUE(FilterToSql(ScanFilter{{{"nope", CompareOp::kEq, "1"}}}, TestSchema())
                  .status()
                  .IsInvalidArgument());
  EXPECT_EQ(*FilterToSql(ScanFilter{}, TestSchema()), "TRUE");
}

// The engine compares a literal rounded to the column's FLOAT or DOUBLE, and decimals exactly
// (DuckDB 1.4: with d = 0.1, `d = 0.1000000000000000055` is true; with a DECIMAL(38,0) b of
// 12345678901234567890123456789012345678, `b < 12345678901234567890123456789012345679` is
// true). A literal that close to a bound decides nothing; clear cases still prune.
TEST(DataSkippingTest, NumbersTooCloseToTellApartKeepTheFile) {
  const engine::Schema schema =
      ParseSchemaString(R"({"type":"struct","fields":[)"
                        R"({"name":"f","type":"float","nullable":true,"metadata":{}},)"
                        R"({"name":"d","type":"double","nullable":true,"metadata":{}},)"
                        R"j({"name":"b","type":"decimal(38,0)","nullable":true,"metadata":{}},)j"
                        R"({"name":"id","type":"long","nullable":true,"metadata":{}},)"
                        R"({"name":"pd","type":"double","nullable":true,"metadata":{}}]})")
          ->fields;
  AddFile file;
  file.path = "f";
  file.partition_values = {{"pd", "0.1"}};
  file.stats =
      R"({"numRecords":1,"minValues":{"f":0.1,"d":0.1,"b":12345678901234567890123456789012345678,)"
      R"("id":10},"maxValues":{"f":0.1,"d":0.1,"b":12345678901234567890123456789012345678,)"
      R"("id":10},"nullCount":{"f":0,"d":0,"b":0,"id":0}})";
  auto may = [&](const std::string& column, CompareOp op, const std::string& literal) {
    auto r = FileMayMatch(file, ScanFilter{{{column, op, literal}}}, schema, {"pd"});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && *r;
  };
  EXPECT_TRUE(may("d", CompareOp::kEq, "0.1000000000000000055"));
  EXPECT_TRUE(may("d", CompareOp::kGe, "0.1000000000000000055"));
  EXPECT_TRUE(may("d", CompareOp::kLe, "0.0999999999999999945"));
  EXPECT_FALSE(may("d", CompareOp::kEq, "0.2"));
  EXPECT_FALSE(may("d", CompareOp::kGt, "0.1000001"));
  EXPECT_TRUE(may("f", CompareOp::kGe, "0.10000000149"));
  EXPECT_FALSE(may("f", CompareOp::kGe, "0.11"));
  EXPECT_TRUE(may("b", CompareOp::kLt, "12345678901234567890123456789012345679"));
  EXPECT_TRUE(may("b", CompareOp::kGt, "12345678901234567890123456789012345677"));
  EXPECT_FALSE(may("b", CompareOp::kGt, "20000000000000000000000000000000000000"));
  EXPECT_FALSE(may("id", CompareOp::kLt, "10"));  // integers are exact: still pruned
  EXPECT_TRUE(may("id", CompareOp::kLt, "10.0000000000000000001"));
  EXPECT_FALSE(may("id", CompareOp::kLt, "9.5"));
  EXPECT_TRUE(may("pd", CompareOp::kEq, "0.1000000000000000055"));  // partition values too
  EXPECT_FALSE(may("pd", CompareOp::kEq, "0.2"));
  EXPECT_FALSE(may("pd", CompareOp::kNe, "0.1"));
}

}  // namespace
}  // namespace sluice::delta
