#include "sources/memory_source.h"

#include "sources/source_factory.h"
#include "sources/test_util.h"

namespace sluice::sources {
namespace {

using testing::Rows;

class MemorySourceTest : public testing::SourceTest {};

TEST_F(MemorySourceTest, OffsetsCountBatchesAndGetBatchConcatenatesRange) {
  engine::Batch b1 = Sql("SELECT 1::BIGINT AS id, 'a' AS s UNION ALL SELECT 2, 'b'");
  engine::Batch b2 = Sql("SELECT 3::BIGINT AS id, 'c' AS s");
  engine::Batch b3 = Sql("SELECT 4::BIGINT AS id, 'd' AS s");
  MemorySource src(b1.schema());
  EXPECT_EQ(Latest(&src, std::nullopt), std::nullopt);
  ASSERT_EQ(*src.AddData(b1), "1");
  EXPECT_EQ(Latest(&src, std::nullopt), "1");
  EXPECT_EQ(Latest(&src, "1"), "1");  // nothing new
  ASSERT_EQ(*src.AddData(b2), "2");
  ASSERT_EQ(*src.AddData(b3), "3");
  EXPECT_EQ(Latest(&src, "1"), "3");
  EXPECT_EQ(Get(&src, std::nullopt, "1"), (std::vector<std::string>{"1|a", "2|b"}));
  EXPECT_EQ(Get(&src, "1", "3"), (std::vector<std::string>{"3|c", "4|d"}));
  EXPECT_EQ(Get(&src, "1", "3"), Get(&src, "1", "3"));  // deterministic
  EXPECT_EQ(Get(&src, "3", "3"), std::vector<std::string>{});
  EXPECT_EQ(Get(&src, std::nullopt, "3").size(), 4u);
  ASSERT_TRUE(src.Commit("3").ok());
  EXPECT_EQ(src.last_committed(), 3);
}

TEST_F(MemorySourceTest, RejectsWrongSchemaAndBadOffsets) {
  engine::Batch b1 = Sql("SELECT 1::BIGINT AS id");
  MemorySource src(b1.schema());
  auto bad = src.AddData(Sql("SELECT 'x' AS id"));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsInvalidArgument());
  EXPECT_NE(bad.status().message().find("expected (id BIGINT)"), std::string::npos)
      << bad.status().ToString();
  ASSERT_TRUE(src.AddData(b1).ok());
  EXPECT_FALSE(src.GetBatch(std::nullopt, "2").ok());          // beyond what was added
  EXPECT_FALSE(src.GetBatch(std::nullopt, "{\"x\":1}").ok());  // not a LongOffset
  EXPECT_FALSE(src.GetBatch("1", "0").ok());                   // end before start
  EXPECT_FALSE(src.LatestOffset("5", {}).ok());
}

TEST_F(MemorySourceTest, AvailableNowStopsAtSnapshot) {
  engine::Batch b1 = Sql("SELECT 1::BIGINT AS id");
  MemorySource src(b1.schema());
  ASSERT_TRUE(src.AddData(b1).ok());
  ASSERT_TRUE(src.PrepareForAvailableNow().ok());
  ASSERT_TRUE(src.AddData(b1).ok());
  EXPECT_EQ(Latest(&src, std::nullopt), "1");
  EXPECT_EQ(Latest(&src, "1"), "1");
}

TEST_F(MemorySourceTest, FactoryCreatesMemorySourceFromSchemaOption) {
  auto s = CreateSource("memory", Ctx("", {{"schema", "id BIGINT, ts TIMESTAMP"}}));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto* mem = dynamic_cast<MemorySource*>(s->get());
  ASSERT_NE(mem, nullptr);
  ASSERT_EQ((*s)->schema().size(), 2u);
  EXPECT_EQ((*s)->schema()[1].type.id, engine::TypeId::kTimestampTz);
  ASSERT_TRUE(
      mem->AddData(Sql("SELECT 7::BIGINT AS id, TIMESTAMPTZ '2024-01-01 00:00:00+00' AS ts")).ok());
  EXPECT_EQ(Get(mem, std::nullopt, "1"), std::vector<std::string>{"7|2024-01-01 00:00:00+00"});
}

}  // namespace
}  // namespace sluice::sources
