#include "engine/batch_builder.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "engine/test_util.h"

namespace sluice::engine {
namespace {

using BatchBuilderTest = testing::EngineTest;

Field F(std::string name, TypeId id) { return Field{std::move(name), DataType{id}, true}; }

TEST_F(BatchBuilderTest, BuildsRowsOfEveryAppendableType) {
  BatchBuilder b({F("i", TypeId::kBigInt), F("d", TypeId::kDouble), F("s", TypeId::kVarchar),
                  F("ok", TypeId::kBoolean), F("ts", TypeId::kTimestamp),
                  F("tz", TypeId::kTimestampTz), F("small", TypeId::kSmallInt),
                  F("f", TypeId::kFloat), F("blob", TypeId::kBlob)});
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(b.AppendInt64(-7 + r).ok());
    ASSERT_TRUE(b.AppendDouble(1.5).ok());
    ASSERT_TRUE(b.AppendString(r == 0 ? "short" : "a string longer than twelve bytes").ok());
    ASSERT_TRUE(b.AppendBool(r == 0).ok());
    ASSERT_TRUE(b.AppendTimestampMicros(1704164645678901).ok());
    ASSERT_TRUE(b.AppendTimestampMicros(0).ok());
    ASSERT_TRUE(b.AppendInt64(300).ok());
    ASSERT_TRUE(b.AppendDouble(0.25).ok());
    ASSERT_TRUE(b.AppendString(std::string("\0\xFF", 2)).ok());
    ASSERT_TRUE(b.EndRow().ok());
  }
  for (int c = 0; c < 9; ++c) ASSERT_TRUE(b.AppendNull().ok());
  ASSERT_TRUE(b.EndRow().ok());
  EXPECT_EQ(b.num_rows(), 3);
  auto batch = b.Finish();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_EQ(batch->num_rows(), 3);
  EXPECT_EQ(batch->schema()[0].name, "i");
  EXPECT_EQ(batch->schema()[5].type.id, TypeId::kTimestampTz);
  EXPECT_EQ(batch->GetString(0, 0), "-7");
  EXPECT_EQ(batch->GetString(1, 0), "-6");
  EXPECT_EQ(batch->GetString(0, 1), "1.5");
  EXPECT_EQ(batch->GetString(0, 2), "short");
  EXPECT_EQ(batch->GetString(1, 2), "a string longer than twelve bytes");
  EXPECT_EQ(batch->GetString(0, 3), "true");
  EXPECT_EQ(batch->GetString(1, 3), "false");
  EXPECT_EQ(batch->GetString(0, 4), "2024-01-02 03:04:05.678901");
  EXPECT_EQ(batch->GetString(0, 5), "1970-01-01 00:00:00+00");
  EXPECT_EQ(batch->GetString(0, 6), "300");
  EXPECT_EQ(batch->GetString(0, 7), "0.25");
  EXPECT_EQ(batch->GetString(0, 8), "\\x00\\xFF");
  for (size_t c = 0; c < 9; ++c) EXPECT_TRUE(batch->IsNull(2, c)) << c;

  // Usable from SQL.
  ASSERT_TRUE(conn_->RegisterBatch("built", *batch).ok());
  EXPECT_EQ(Scalar("SELECT sum(i) FROM built"), "-13");
}

TEST_F(BatchBuilderTest, TypeMismatchNamesTheColumn) {
  BatchBuilder b({F("id", TypeId::kBigInt), F("name", TypeId::kVarchar)});
  Status s = b.AppendString("x");
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("column 0 (id)"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("BIGINT"), std::string::npos) << s.ToString();
  ASSERT_TRUE(b.AppendInt64(1).ok());
  s = b.AppendBool(true);
  EXPECT_NE(s.ToString().find("column 1 (name)"), std::string::npos) << s.ToString();
  s = b.AppendTimestampMicros(1);
  EXPECT_TRUE(s.IsInvalidArgument());
  ASSERT_TRUE(b.AppendString("ok").ok());
  // Too many values.
  EXPECT_TRUE(b.AppendInt64(1).IsInvalidArgument());
  ASSERT_TRUE(b.EndRow().ok());
  auto batch = b.Finish();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->num_rows(), 1);
  EXPECT_EQ(batch->GetString(0, 1), "ok");
}

TEST_F(BatchBuilderTest, RangeAndUtf8Checks) {
  BatchBuilder b({F("t", TypeId::kTinyInt), F("s", TypeId::kVarchar)});
  Status s = b.AppendInt64(128);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("out of range"), std::string::npos) << s.ToString();
  ASSERT_TRUE(b.AppendInt64(-128).ok());
  EXPECT_TRUE(b.AppendString("\xFF").IsInvalidArgument());
  ASSERT_TRUE(b.AppendString("ü").ok());
  ASSERT_TRUE(b.EndRow().ok());
}

TEST_F(BatchBuilderTest, IncompleteRows) {
  BatchBuilder b({F("a", TypeId::kBigInt), F("b", TypeId::kBigInt)});
  ASSERT_TRUE(b.AppendNull().ok());
  Status s = b.EndRow();
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("column 1 (b)"), std::string::npos) << s.ToString();
  EXPECT_EQ(b.num_rows(), 0);
  // The partial row was discarded; its NULL does not leak into the next row.
  ASSERT_TRUE(b.AppendInt64(1).ok());
  EXPECT_TRUE(b.Finish().status().IsInvalidArgument());  // row in progress
  ASSERT_TRUE(b.AppendInt64(2).ok());
  ASSERT_TRUE(b.EndRow().ok());
  auto batch = b.Finish();
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->num_rows(), 1);
  EXPECT_EQ(batch->GetString(0, 0), "1");
}

TEST_F(BatchBuilderTest, ManyRowsAcrossChunksAndReuse) {
  BatchBuilder b({F("i", TypeId::kBigInt), F("s", TypeId::kVarchar)});
  for (int64_t i = 0; i < 5000; ++i) {
    if (i % 3 == 0) {
      ASSERT_TRUE(b.AppendNull().ok());
    } else {
      ASSERT_TRUE(b.AppendInt64(i).ok());
    }
    ASSERT_TRUE(b.AppendString("s" + std::to_string(i)).ok());
    ASSERT_TRUE(b.EndRow().ok());
  }
  auto batch = b.Finish();
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->num_rows(), 5000);
  ASSERT_TRUE(conn_->RegisterBatch("many", *batch).ok());
  // Nulls at i % 3 == 0 only (chunk reuse does not carry NULLs over).
  EXPECT_EQ(Scalar("SELECT count(i) || ',' || sum(i) || ',' || count(DISTINCT s) FROM many"),
            "3333,8331667,5000");
  // The builder is empty after Finish and builds the next batch.
  EXPECT_EQ(b.num_rows(), 0);
  auto empty = b.Finish();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->num_rows(), 0);
  EXPECT_EQ(empty->num_columns(), 2u);
  ASSERT_TRUE(b.AppendInt64(9).ok());
  ASSERT_TRUE(b.AppendString("x").ok());
  ASSERT_TRUE(b.EndRow().ok());
  auto next = b.Finish();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->num_rows(), 1);
  EXPECT_EQ(batch->num_rows(), 5000);  // the first batch is unaffected
}

TEST(BatchBuilderNoEngineTest, NestedColumnsTakeNullsAndBadTypesFail) {
  auto list = DataType::FromSql("INTEGER[]");
  ASSERT_TRUE(list.ok());
  BatchBuilder b({Field{"l", *list, true}});
  EXPECT_TRUE(b.AppendInt64(1).IsInvalidArgument());
  ASSERT_TRUE(b.AppendNull().ok());
  ASSERT_TRUE(b.EndRow().ok());
  auto batch = b.Finish();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_TRUE(batch->IsNull(0, 0));

  DataType bad;
  bad.id = TypeId::kOther;
  bad.other_sql = "NO_SUCH_TYPE";
  BatchBuilder c({Field{"x", bad, true}});
  EXPECT_FALSE(c.AppendNull().ok());
  EXPECT_FALSE(c.Finish().ok());

  BatchBuilder none({});
  ASSERT_TRUE(none.EndRow().ok());
  auto nb = none.Finish();
  ASSERT_TRUE(nb.ok());
  EXPECT_EQ(nb->num_columns(), 0u);
}

TEST_F(BatchBuilderTest, AppendColumnsBulkMixesWithRows) {
  BatchBuilder b(
      {F("i", TypeId::kBigInt), F("ts", TypeId::kTimestampTz), F("s", TypeId::kVarchar)});
  ASSERT_TRUE(b.AppendInt64(-1).ok());
  ASSERT_TRUE(b.AppendTimestampMicros(0).ok());
  ASSERT_TRUE(b.AppendString("row").ok());
  ASSERT_TRUE(b.EndRow().ok());
  // 5,000 rows: more than two DuckDB chunks, strings short (inlined) and long.
  const int64_t n = 5000;
  std::vector<int64_t> ints, ms;
  std::vector<std::string> owned;
  for (int64_t r = 0; r < n; ++r) {
    ints.push_back(r);
    ms.push_back(1704067200000 + r);
    owned.push_back(r % 2 ? "odd row, a string longer than 12 bytes " + std::to_string(r)
                          : std::to_string(r));
  }
  std::vector<std::string_view> views(owned.begin(), owned.end());
  const BulkColumn cols[] = {BulkColumn::Int64s(ints), BulkColumn::Timestamps(ms, 1000),
                             BulkColumn::Strings(views)};
  ASSERT_TRUE(b.AppendColumns(n, cols).ok());
  owned.assign(owned.size(), "overwritten");  // the batch holds its own copies
  ASSERT_TRUE(b.AppendInt64(-2).ok());
  ASSERT_TRUE(b.AppendTimestampMicros(1).ok());
  ASSERT_TRUE(b.AppendString("last").ok());
  ASSERT_TRUE(b.EndRow().ok());
  EXPECT_EQ(b.num_rows(), n + 2);
  auto batch = b.Finish();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_EQ(batch->num_rows(), n + 2);
  EXPECT_EQ(batch->GetString(0, 2), "row");
  EXPECT_EQ(batch->GetString(1, 0), "0");
  EXPECT_EQ(batch->GetString(1, 1), "2024-01-01 00:00:00+00");
  EXPECT_EQ(batch->GetString(2, 1), "2024-01-01 00:00:00.001+00");
  EXPECT_EQ(batch->GetString(1 + 4999, 0), "4999");
  EXPECT_EQ(batch->GetString(1 + 4999, 2), "odd row, a string longer than 12 bytes 4999");
  EXPECT_EQ(batch->GetString(1 + 2048, 2), "2048");
  EXPECT_EQ(batch->GetString(n + 1, 2), "last");
}

TEST_F(BatchBuilderTest, AppendColumnsErrors) {
  BatchBuilder b({F("i", TypeId::kBigInt), F("s", TypeId::kVarchar)});
  const int64_t ints[] = {1, 2};
  const std::string_view good[] = {"a", "b"};
  // Wrong count, wrong length, wrong kind: nothing appended.
  const BulkColumn one[] = {BulkColumn::Int64s(ints)};
  EXPECT_TRUE(b.AppendColumns(2, one).IsInvalidArgument());
  const BulkColumn short_col[] = {BulkColumn::Int64s(ints), BulkColumn::Strings(good)};
  EXPECT_TRUE(b.AppendColumns(3, short_col).IsInvalidArgument());
  const BulkColumn swapped[] = {BulkColumn::Strings(good), BulkColumn::Int64s(ints)};
  Status st = b.AppendColumns(2, swapped);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("column 0 (i)"), std::string::npos) << st.ToString();
  ASSERT_TRUE(b.AppendColumns(2, short_col).ok());
  EXPECT_EQ(b.num_rows(), 2);
  // A row in progress refuses bulk rows.
  ASSERT_TRUE(b.AppendInt64(3).ok());
  EXPECT_TRUE(b.AppendColumns(2, short_col).IsInvalidArgument());
  ASSERT_TRUE(b.AppendString("c").ok());
  ASSERT_TRUE(b.EndRow().ok());
  // Invalid UTF-8 empties the builder.
  const std::string bad1("\xC3", 1);
  const std::string_view bad_views[] = {"ok", bad1};
  const BulkColumn bad_cols[] = {BulkColumn::Int64s(ints), BulkColumn::Strings(bad_views)};
  st = b.AppendColumns(2, bad_cols);
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_NE(st.message().find("emptied"), std::string::npos) << st.ToString();
  EXPECT_EQ(b.num_rows(), 0);
  auto batch = b.Finish();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->num_rows(), 0);
  // Declared valid: not checked (the caller's guarantee).
  const BulkColumn trusted[] = {BulkColumn::Int64s(ints), BulkColumn::Strings(good, true)};
  ASSERT_TRUE(b.AppendColumns(2, trusted).ok());
  EXPECT_EQ(b.num_rows(), 2);
}

}  // namespace
}  // namespace sluice::engine
