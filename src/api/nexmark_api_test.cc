// The Nexmark source through the public C++ API: ReadStream().Format("nexmark") reaches the
// source factory (src/sources/nexmark/nexmark_source.h) with its options.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fs/test_util.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

class NexmarkApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Session::Open({.warehouse = dir_.Join("wh")});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(*s);
  }
  std::vector<std::string> Rows(const std::string& sql) {
    auto rows = session_->Sql(sql).Collect();
    EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
    return rows.ok() ? rows->RowStrings() : std::vector<std::string>{};
  }
  fs::ScopedTempDir dir_{"sluice-nexmark-api"};
  std::unique_ptr<Session> session_;
};

TEST_F(NexmarkApiTest, ReadStreamFormatNexmarkRunsToTheEndOfABoundedStream) {
  DataFrame bids = session_->ReadStream()
                       .Format("nexmark")
                       .Option("kind", "bid")
                       .Option("numEvents", "5000")
                       .Option("maxEventsPerTrigger", "2000")
                       .Load();
  ASSERT_TRUE(bids.status().ok()) << bids.status().ToString();
  auto q = bids.WriteStream()
               .Format("memory")
               .QueryName("bids")
               .Option("checkpointLocation", dir_.Join("cp"))
               .Trigger(Trigger::AvailableNow())
               .Start();
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_TRUE((*q)->AwaitTermination().ok());
  EXPECT_EQ((*q)->LastBatchId(), 2);  // (0, 2000], (2000, 4000], (4000, 5000]
  // The reference generator's 5,000 events hold 4,600 bids
  // (test/sql/streaming/nexmark_source.test).
  EXPECT_EQ(Rows("SELECT count(*), sum(price), max(dateTime) FROM bids"),
            (std::vector<std::string>{"4600,34413437620,2024-01-01 00:00:00.049+00"}));
}

TEST_F(NexmarkApiTest, TransformationsBeforeStart) {
  DataFrame dear = session_->ReadStream()
                       .Format("nexmark")
                       .Option("kind", "bid")
                       .Option("numEvents", "5000")
                       .Load()
                       .Where("price > 99000000")
                       .Select({"auction", "price"});
  ASSERT_TRUE(dear.status().ok()) << dear.status().ToString();
  auto q = dear.WriteStream()
               .Format("memory")
               .QueryName("dear")
               .Option("checkpointLocation", dir_.Join("cp_dear"))
               .Trigger(Trigger::AvailableNow())
               .Start();
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_TRUE((*q)->AwaitTermination().ok());
  EXPECT_EQ(Rows("SELECT auction, price FROM dear ORDER BY price"),
            (std::vector<std::string>{"1100,99296475", "1100,99350781", "1200,99517975"}));
}

TEST_F(NexmarkApiTest, BadOptionIsAnError) {
  auto q = session_->ReadStream()
               .Format("nexmark")
               .Option("kind", "trade")
               .Load()
               .WriteStream()
               .Format("memory")
               .QueryName("x")
               .Option("checkpointLocation", dir_.Join("cp_bad"))
               .Trigger(Trigger::AvailableNow())
               .Start();
  Status st = q.ok() ? (*q)->AwaitTermination() : q.status();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("option 'kind'"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace sluice
