#include "engine/batch_builder.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace sluice::engine
