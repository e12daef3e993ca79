#include "sources/kafka/kafka_offsets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sluice::sources::kafka {
namespace {

using ::testing::HasSubstr;

TEST(KafkaOffsetsTest, JsonIsSparksWithSortedTopicsAndNumericPartitions) {
  PartitionOffsets o = {{{"orders", 10}, 5}, {{"orders", 2}, 7}, {{"a\"b", 0}, 1}};
  EXPECT_EQ(OffsetsToJson(o), R"({"a\"b":{"0":1},"orders":{"2":7,"10":5}})");
  EXPECT_EQ(OffsetsToJson({}), "{}");
  auto back = OffsetsFromJson(OffsetsToJson(o), "x", false);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, o);
}

TEST(KafkaOffsetsTest, ParsingRejectsWhatSparkRejects) {
  EXPECT_TRUE(OffsetsFromJson(R"({"t":{"0":-2,"1":-1}})", "startingOffsets", true).ok());
  auto special = OffsetsFromJson(R"({"t":{"0":-2}})", "the offset", false);
  EXPECT_THAT(special.status().message(), HasSubstr("offset -2 of t-0 is not valid"));
  for (const char* bad :
       {"", "[]", R"({"t":[0]})", R"({"t":{"x":1}})", R"({"t":{"0":"1"}})", R"({"t":{"-1":1}})"}) {
    auto r = OffsetsFromJson(bad, "option 'startingOffsets'", true);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("startingOffsets")) << bad;
  }
  auto assign = AssignmentFromJson(R"({"a":[0,1],"b":[2]})");
  ASSERT_TRUE(assign.ok());
  EXPECT_EQ(assign->size(), 3u);
  EXPECT_FALSE(AssignmentFromJson(R"({"a":0})").ok());
  EXPECT_FALSE(AssignmentFromJson("{}").ok());
}

TEST(KafkaOffsetsTest, RateLimitSplitsByBacklogAsSparkDoes) {
  TopicPartition a{"t", 0}, b{"t", 1}, c{"t", 2};
  // Backlogs 100, 300, 0 and a limit of 40: 10 and 30; c has nothing to read.
  PartitionOffsets from = {{a, 0}, {b, 0}, {c, 5}};
  PartitionOffsets until = {{a, 100}, {b, 300}, {c, 5}};
  PartitionOffsets r = RateLimit(40, from, until, {});
  EXPECT_EQ(r[a], 10);
  EXPECT_EQ(r[b], 30);
  EXPECT_EQ(r[c], 5);
  // A share below one is rounded up (no starvation); shares above one are rounded down.
  PartitionOffsets r2 = RateLimit(10, {{a, 0}, {b, 0}}, {{a, 1}, {b, 1000}}, {});
  EXPECT_EQ(r2[a], 1);
  EXPECT_EQ(r2[b], 9);
  // Never past until; a limit above the backlog reads everything.
  PartitionOffsets r3 = RateLimit(1000000, from, until, {});
  EXPECT_EQ(r3, until);
  // A new partition starts at its given start.
  PartitionOffsets r4 = RateLimit(20, {{a, 0}}, {{a, 10}, {b, 30}}, {{b, 20}});
  EXPECT_EQ(r4[a], 10);
  EXPECT_EQ(r4[b], 30);
}

}  // namespace
}  // namespace sluice::sources::kafka
