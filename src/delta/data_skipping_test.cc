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

}  // namespace
}  // namespace sluice::delta
