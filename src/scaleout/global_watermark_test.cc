#include "scaleout/global_watermark.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fs/test_util.h"

namespace sluice::scaleout {
namespace {

using ::testing::HasSubstr;

PublishedWatermark At(int64_t wm, int64_t updated = 1000) { return {wm, 1, updated}; }

TEST(CombineWatermarksTest, MinOverEveryPartitionWithTheOwnValue) {
  const WatermarkPolicy min{false, 0};
  std::map<int32_t, PublishedWatermark> pub = {{0, At(500)}, {1, At(300)}, {2, At(900)}};
  EXPECT_EQ(CombineWatermarks(min, 3, pub, 0, 700, 2000), 300);
  // The own value counts as max(own, published): an own value below its file does not pull back.
  EXPECT_EQ(CombineWatermarks(min, 3, pub, 1, 100, 2000), 300);
  EXPECT_EQ(CombineWatermarks(min, 3, pub, 1, 400, 2000), 400);
}

TEST(CombineWatermarksTest, APartitionThatNeverPublishedHoldsTheMinBack) {
  const WatermarkPolicy min{false, 0};
  std::map<int32_t, PublishedWatermark> pub = {{0, At(500)}, {2, At(900)}};
  EXPECT_EQ(CombineWatermarks(min, 3, pub, 0, 700, 2000), 0);
  // Even with an idle timeout: nothing is left out until every partition has reported once.
  const WatermarkPolicy idle{false, 10};
  EXPECT_EQ(CombineWatermarks(idle, 3, pub, 0, 700, 1'000'000), 0);
}

TEST(CombineWatermarksTest, MaxPolicyTakesTheLargestAndIgnoresTheSilent) {
  const WatermarkPolicy max{true, 0};
  std::map<int32_t, PublishedWatermark> pub = {{0, At(500)}, {2, At(900)}};
  EXPECT_EQ(CombineWatermarks(max, 3, pub, 0, 700, 2000), 900);
  EXPECT_EQ(CombineWatermarks(max, 3, pub, 1, 1200, 2000), 1200);
}

TEST(CombineWatermarksTest, TheIdleTimeoutLeavesOutStalePartitionsButNotTheOwn) {
  std::map<int32_t, PublishedWatermark> pub = {
      {0, At(500, 9000)}, {1, At(100, 1000)}, {2, At(900, 9500)}};
  const WatermarkPolicy off{false, 0};
  EXPECT_EQ(CombineWatermarks(off, 3, pub, 0, 500, 10'000), 100);
  const WatermarkPolicy idle{false, 5000};
  // Partition 1 was last updated 9 s ago: left out.
  EXPECT_EQ(CombineWatermarks(idle, 3, pub, 0, 500, 10'000), 500);
  // The own partition counts however old its file is.
  EXPECT_EQ(CombineWatermarks(idle, 3, pub, 1, 100, 10'000), 100);
  // Within the timeout it still counts.
  EXPECT_EQ(CombineWatermarks(idle, 3, pub, 0, 500, 5'500), 100);
}

TEST(CombineWatermarksTest, PolicyNamesAreCheckedAndCaseInsensitive) {
  EXPECT_TRUE(MakeWatermarkPolicy("MAX", 0).ValueOrDie().use_max);
  EXPECT_FALSE(MakeWatermarkPolicy("min", 0).ValueOrDie().use_max);
  Result<WatermarkPolicy> bad = MakeWatermarkPolicy("avg", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'min' or 'max'"));
  EXPECT_FALSE(MakeWatermarkPolicy("min", -1).ok());
}

TEST(PublishedWatermarkTest, RoundTripsAndRefusesOtherBytes) {
  PublishedWatermark w{1234, 7, 99};
  EXPECT_EQ(SerializePublishedWatermark(w), R"({"watermarkMs":1234,"batchId":7,"updatedMs":99})");
  EXPECT_EQ(ParsePublishedWatermark(SerializePublishedWatermark(w)).ValueOrDie(), w);
  EXPECT_TRUE(ParsePublishedWatermark("{\"watermarkMs\":1}").status().IsCorruption());
  EXPECT_TRUE(ParsePublishedWatermark("nope").status().IsCorruption());
}

TEST(GlobalWatermarkTest, TasksPublishAndCombineThroughTheCheckpoint) {
  fs::ScopedTempDir dir;
  std::shared_ptr<fs::FileSystem> fs = fs::LocalFileSystem();
  const std::string root = dir.Join("cp");
  const WatermarkPolicy min{false, 0};
  GlobalWatermark t0(fs, root, 0, 2, min);
  GlobalWatermark t1(fs, root, 1, 2, min);
  // Partition 1 has not published: the global watermark is held at 0.
  EXPECT_EQ(t0.Combine(5000).ValueOrDie(), 0);
  ASSERT_TRUE(t0.Publish(BatchId(0), 5000).ok());
  ASSERT_TRUE(t1.Publish(BatchId(3), 2000).ok());
  EXPECT_EQ(t1.Combine(2000).ValueOrDie(), 2000);
  PublishedWatermark w =
      ParsePublishedWatermark(fs->ReadFile(WatermarkPath(root, 1)).ValueOrDie()).ValueOrDie();
  EXPECT_EQ(w.watermark_ms, 2000);
  EXPECT_EQ(w.batch_id, 3);
  // Never moves back, also for a new owner of the partition (a fresh GlobalWatermark).
  GlobalWatermark moved(fs, root, 1, 2, min);
  ASSERT_TRUE(moved.Publish(BatchId(4), 1500).ok());
  EXPECT_EQ(ParsePublishedWatermark(fs->ReadFile(WatermarkPath(root, 1)).ValueOrDie())
                .ValueOrDie()
                .watermark_ms,
            2000);
  auto all = ReadPublishedWatermarks(*fs, root).ValueOrDie();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all.at(0).watermark_ms, 5000);
  // A damaged file is an error naming it.
  ASSERT_TRUE(fs->AtomicReplace(WatermarkPath(root, 0), "{").ok());
  Result<std::map<int32_t, PublishedWatermark>> bad = ReadPublishedWatermarks(*fs, root);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().ToString(), HasSubstr("watermarks/0"));
}

}  // namespace
}  // namespace sluice::scaleout
