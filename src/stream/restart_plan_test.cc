#include "stream/restart_plan.h"

#include <gtest/gtest.h>

#include "fs/test_util.h"

namespace sluice::stream {
namespace {

using fs::LocalFileSystem;
using fs::ScopedTempDir;
using Offsets = std::vector<std::optional<std::string>>;

OffsetSeq Seq(Offsets offsets, int64_t watermark, int64_t timestamp,
              ConfMap conf = DefaultPersistedConf()) {
  OffsetSeq seq;
  OffsetSeqMetadata md;
  md.batch_watermark_ms = watermark;
  md.batch_timestamp_ms = timestamp;
  md.conf = std::move(conf);
  seq.metadata = md;
  seq.offsets = std::move(offsets);
  return seq;
}

CommitMetadata Commit(int64_t watermark) {
  CommitMetadata c;
  c.next_batch_watermark_ms = watermark;
  return c;
}

RestartOptions Options(size_t sources) {
  RestartOptions o;
  o.num_sources = sources;
  o.checkpoint_root = "/ck";
  return o;
}

// A checkpoint on disk with offsets 0..last_offsets and commits 0..last_commit (-1: none).
struct Checkpoint {
  ScopedTempDir dir;
  OffsetSeqLog offsets{LocalFileSystem(), dir.path()};
  CommitLog commits{LocalFileSystem(), dir.path()};

  void Write(int64_t last_offsets, int64_t last_commit) {
    for (int64_t i = 0; i <= last_offsets; ++i) {
      ASSERT_TRUE(offsets
                      .Add(BatchId(i), Seq({std::to_string(i * 10),
                                            "{\"logOffset\":" + std::to_string(i) + "}"},
                                           /*watermark=*/i * 100, /*timestamp=*/1000 + i))
                      .ok());
    }
    for (int64_t i = 0; i <= last_commit; ++i) {
      ASSERT_TRUE(commits.Add(BatchId(i), Commit(i * 100 + 50)).ok());
    }
  }
};

TEST(RestartPlanTest, FreshStartWithoutOffsets) {
  Checkpoint ck;
  RestartOptions options = Options(2);
  options.session_conf[std::string(kConfShufflePartitions)] = "8";
  auto plan = PlanRestart(ck.offsets, ck.commits, options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->kind, StartKind::kFresh);
  EXPECT_EQ(plan->batch_id, BatchId(0));
  EXPECT_TRUE(plan->start_offsets.empty());
  EXPECT_TRUE(plan->end_offsets.empty());
  EXPECT_EQ(plan->batch_watermark_ms, 0);
  EXPECT_FALSE(plan->batch_timestamp_ms.has_value());
  EXPECT_EQ(plan->conf, options.session_conf);
  EXPECT_EQ(plan->offset_log_version, 1);
}

TEST(RestartPlanTest, RerunBatchZeroWithoutCommits) {
  Checkpoint ck;
  ck.Write(0, -1);
  auto plan = PlanRestart(ck.offsets, ck.commits, Options(2));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->kind, StartKind::kRerunBatch);
  EXPECT_EQ(plan->batch_id, BatchId(0));
  EXPECT_EQ(plan->start_offsets, (Offsets{std::nullopt, std::nullopt}));
  EXPECT_EQ(plan->end_offsets, (Offsets{"0", "{\"logOffset\":0}"}));
  EXPECT_EQ(plan->batch_watermark_ms, 0);
  EXPECT_EQ(plan->batch_timestamp_ms, 1000);
  EXPECT_EQ(plan->conf, DefaultPersistedConf());
  EXPECT_TRUE(plan->warnings.empty());
}

TEST(RestartPlanTest, RerunUncommittedBatchWithRecordedOffsetsWatermarkTimestamp) {
  Checkpoint ck;
  ck.Write(3, 2);
  auto plan = PlanRestart(ck.offsets, ck.commits, Options(2));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->kind, StartKind::kRerunBatch);
  EXPECT_EQ(plan->batch_id, BatchId(3));
  EXPECT_EQ(plan->start_offsets, (Offsets{"20", "{\"logOffset\":2}"}));
  EXPECT_EQ(plan->end_offsets, (Offsets{"30", "{\"logOffset\":3}"}));
  EXPECT_EQ(plan->batch_watermark_ms, 300);     // offsets[3], not commits[2]'s 250
  EXPECT_EQ(plan->previous_watermark_ms, 200);  // what batch 2 ran with: offsets[2]
  EXPECT_EQ(plan->batch_timestamp_ms, 1003);
  EXPECT_TRUE(plan->warnings.empty());
}

TEST(RestartPlanTest, CommitLagOfMoreThanOneBatchWarnsAndReruns) {
  Checkpoint ck;
  ck.Write(5, 2);
  auto plan = PlanRestart(ck.offsets, ck.commits, Options(2));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kind, StartKind::kRerunBatch);
  EXPECT_EQ(plan->batch_id, BatchId(5));
  EXPECT_EQ(plan->start_offsets, (Offsets{"40", "{\"logOffset\":4}"}));
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_NE(plan->warnings[0].find("not trailing batch id 5 by one"), std::string::npos);
}

TEST(RestartPlanTest, NoCommitsAtAllReruns) {
  Checkpoint ck;
  ck.Write(2, -1);
  auto plan = PlanRestart(ck.offsets, ck.commits, Options(2));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kind, StartKind::kRerunBatch);
  EXPECT_EQ(plan->batch_id, BatchId(2));
  EXPECT_EQ(plan->start_offsets, (Offsets{"10", "{\"logOffset\":1}"}));
}

TEST(RestartPlanTest, CommittedBatchContinuesWithNextBatch) {
  Checkpoint ck;
  ck.Write(3, 3);
  auto plan = PlanRestart(ck.offsets, ck.commits, Options(2));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->kind, StartKind::kNextBatch);
  EXPECT_EQ(plan->batch_id, BatchId(4));
  EXPECT_EQ(plan->start_offsets, (Offsets{"30", "{\"logOffset\":3}"}));
  EXPECT_TRUE(plan->end_offsets.empty());
  EXPECT_EQ(plan->batch_watermark_ms, 350);     // max(300, commit's 350)
  EXPECT_EQ(plan->previous_watermark_ms, 300);  // what batch 3 ran with: offsets[3]
  EXPECT_FALSE(plan->batch_timestamp_ms.has_value());
}

TEST(RestartPlanTest, NextBatchWatermarkIsTheMaxOfBoth) {
  const auto latest = std::make_optional(std::pair(BatchId(0), Seq({"1"}, 900, 5)));
  auto lower_commit = ComputeRestartPlan(
      latest, std::nullopt, std::make_optional(std::pair(BatchId(0), Commit(400))), Options(1));
  ASSERT_TRUE(lower_commit.ok());
  EXPECT_EQ(lower_commit->batch_watermark_ms, 900);
  auto higher_commit = ComputeRestartPlan(
      latest, std::nullopt, std::make_optional(std::pair(BatchId(0), Commit(1200))), Options(1));
  ASSERT_TRUE(higher_commit.ok());
  EXPECT_EQ(higher_commit->batch_watermark_ms, 1200);
  EXPECT_EQ(higher_commit->batch_id, BatchId(1));
}

// Issue 24 #11: with the latest offsets/<N> deleted (commits/<N> present), the batch before it
// was re-run and failed writing its commit: "another query is using the checkpoint". The true
// error names the missing entry; so does an offset log deleted whole under a commit log.
TEST(RestartPlanTest, CommitAheadOfOffsetsIsCorruptionNamingTheMissingEntry) {
  Checkpoint ck;
  ck.Write(3, 3);
  ASSERT_TRUE(LocalFileSystem()->DeleteFile(ck.offsets.log().PathFor(BatchId(3))).ok());
  auto plan = PlanRestart(ck.offsets, ck.commits, Options(2));
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(plan.status().IsCorruption()) << plan.status().ToString();
  EXPECT_NE(plan.status().message().find(
                "commits/3 exists but offsets/3 does not (the offset log ends at offsets/2)"),
            std::string::npos)
      << plan.status().ToString();
  EXPECT_EQ(plan.status().message().find("another query"), std::string::npos);
  for (int64_t i : {0, 1, 2}) {
    ASSERT_TRUE(LocalFileSystem()->DeleteFile(ck.offsets.log().PathFor(BatchId(i))).ok());
  }
  plan = PlanRestart(ck.offsets, ck.commits, Options(2));
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(plan.status().IsCorruption()) << plan.status().ToString();
  EXPECT_NE(plan.status().message().find("offsets/3 does not (the offset log is empty)"),
            std::string::npos)
      << plan.status().ToString();
}

TEST(RestartPlanTest, MissingPreviousOffsetsIsAnError) {
  Checkpoint ck;
  ck.Write(3, 2);
  ASSERT_TRUE(LocalFileSystem()->DeleteFile(ck.offsets.log().PathFor(BatchId(2))).ok());
  auto plan = PlanRestart(ck.offsets, ck.commits, Options(2));
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(plan.status().IsCorruption());
  EXPECT_NE(plan.status().message().find("offsets/2 does not exist although offsets/3 does"),
            std::string::npos)
      << plan.status().ToString();
}

TEST(RestartPlanTest, ChangedNumberOfSourcesNeedsANewCheckpoint) {
  Checkpoint ck;
  ck.Write(1, 1);
  auto plan = PlanRestart(ck.offsets, ck.commits, Options(3));
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(plan.status().IsInvalidArgument());
  const std::string msg = plan.status().message();
  EXPECT_NE(msg.find("there are 2 sources in the checkpoint offsets (offsets/1)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("now there are 3 sources"), std::string::npos) << msg;
  EXPECT_NE(msg.find("new checkpoint location"), std::string::npos) << msg;
  EXPECT_NE(msg.find("from checkpoint /ck"), std::string::npos) << msg;
}

TEST(RestartPlanTest, PersistedConfIsRestoredOverSessionDefaults) {
  ConfMap recorded = DefaultPersistedConf();
  recorded[std::string(kConfShufflePartitions)] = "200";
  const auto latest = std::make_optional(std::pair(BatchId(0), Seq({"1"}, 0, 5, recorded)));
  RestartOptions options = Options(1);  // session has the default 4, not set explicitly
  auto plan = ComputeRestartPlan(latest, std::nullopt, std::nullopt, options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->conf.at(std::string(kConfShufflePartitions)), "200");
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_NE(plan->warnings[0].find("from the session's '4' to the checkpoint's '200'"),
            std::string::npos)
      << plan->warnings[0];
}

TEST(RestartPlanTest, ExplicitlyChangedPersistedConfIsRefused) {
  ConfMap recorded = DefaultPersistedConf();
  recorded[std::string(kConfShufflePartitions)] = "4";
  const auto latest = std::make_optional(std::pair(BatchId(0), Seq({"1"}, 0, 5, recorded)));
  RestartOptions options = Options(1);
  options.session_conf[std::string(kConfShufflePartitions)] = "16";
  options.session_conf[std::string(kConfMultipleWatermarkPolicy)] = "max";
  options.explicit_keys = {std::string(kConfShufflePartitions),
                           std::string(kConfMultipleWatermarkPolicy)};
  auto plan = ComputeRestartPlan(latest, std::nullopt, std::nullopt, options);
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(plan.status().IsInvalidArgument());
  const std::string msg = plan.status().message();
  EXPECT_NE(msg.find("the persisted configuration changed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sluice.sql.shuffle.partitions is '16' in this query but '4' (recorded in "
                     "offsets/0)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("sluice.streaming.multipleWatermarkPolicy is 'max' in this query but 'min'"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("new checkpoint location"), std::string::npos) << msg;

  // The same explicit value as recorded is fine.
  options.session_conf[std::string(kConfShufflePartitions)] = "4";
  options.session_conf[std::string(kConfMultipleWatermarkPolicy)] = "min";
  EXPECT_TRUE(ComputeRestartPlan(latest, std::nullopt, std::nullopt, options).ok());
}

TEST(RestartPlanTest, MissingConfKeysGetLegacyDefaults) {
  // An old entry: no metadata line at all.
  OffsetSeq old;
  old.offsets = {"7"};
  const auto latest = std::make_optional(std::pair(BatchId(0), old));
  auto plan = ComputeRestartPlan(latest, std::nullopt, std::nullopt, Options(1));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->batch_watermark_ms, 0);
  EXPECT_EQ(plan->batch_timestamp_ms, 0);
  EXPECT_EQ(plan->conf.at(std::string(kConfMultipleWatermarkPolicy)), "min");
  EXPECT_EQ(plan->conf.at(std::string(kConfStateStoreCompressionCodec)), "lz4");
  EXPECT_EQ(plan->conf.at(std::string(kConfStatefulOperatorUseStrictDistribution)), "false");
  EXPECT_EQ(plan->conf.at(std::string(kConfAggregationStateFormatVersion)), "1");
  EXPECT_EQ(plan->conf.at(std::string(kConfJoinStateFormatVersion)), "1");
  EXPECT_EQ(plan->conf.at(std::string(kConfFlatMapGroupsWithStateFormatVersion)), "1");
  // No legacy default: the session's value prevails.
  EXPECT_EQ(plan->conf.at(std::string(kConfShufflePartitions)), "4");
  EXPECT_EQ(plan->conf.size(), PersistedConfKeys().size());
  bool warned = false;
  for (const auto& w : plan->warnings) {
    if (w.find("conf 'sluice.streaming.stateStore.compression.codec' was not found in offsets/0, "
               "using the legacy default 'lz4'") != std::string::npos) {
      warned = true;
    }
  }
  EXPECT_TRUE(warned);

  // An explicit session value that the legacy default would override is refused too.
  RestartOptions options = Options(1);
  options.session_conf[std::string(kConfAggregationStateFormatVersion)] = "2";
  options.explicit_keys = {std::string(kConfAggregationStateFormatVersion)};
  auto refused = ComputeRestartPlan(latest, std::nullopt, std::nullopt, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("legacy default"), std::string::npos);
}

TEST(RestartPlanTest, VersionTwoLogStaysVersionTwo) {
  OffsetSeq v2 = Seq({"1", std::nullopt}, 0, 5);
  v2.version = 2;  // Sluice writes a line for every source ("1:-")
  auto latest = std::make_optional(std::pair(BatchId(0), v2));
  auto plan = ComputeRestartPlan(latest, std::nullopt,
                                 std::make_optional(std::pair(BatchId(0), Commit(0))), Options(2));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->offset_log_version, 2);
  EXPECT_EQ(plan->start_offsets, (Offsets{"1", std::nullopt}));
  // Spark's v2 entries may leave out trailing sources without offsets.
  latest->second.metadata->conf = {{"spark.sql.shuffle.partitions", "200"}};
  latest->second.offsets = {"1"};
  plan = ComputeRestartPlan(latest, std::nullopt,
                            std::make_optional(std::pair(BatchId(0), Commit(0))), Options(2));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->start_offsets, (Offsets{"1", std::nullopt}));
  // One Sluice wrote that names fewer was cut (offset_seq_log.h, CheckNoSourceLineLost).
  latest->second.metadata->conf = DefaultPersistedConf();
  plan = ComputeRestartPlan(latest, std::nullopt,
                            std::make_optional(std::pair(BatchId(0), Commit(0))), Options(2));
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(plan.status().IsCorruption()) << plan.status().ToString();
  EXPECT_NE(plan.status().message().find("offsets/0: lost source lines"), std::string::npos)
      << plan.status().ToString();
}

TEST(PersistedConfTest, KeysDefaultsAndSparkNames) {
  EXPECT_EQ(PersistedConfKeys().size(), 12u);
  for (std::string_view key : PersistedConfKeys()) {
    EXPECT_TRUE(IsPersistedConfKey(key));
    EXPECT_EQ(DefaultPersistedConf().count(std::string(key)), 1u) << key;
    ASSERT_TRUE(SparkConfName(key).has_value()) << key;
  }
  EXPECT_FALSE(IsPersistedConfKey("sluice.streaming.unknown"));
  EXPECT_EQ(*SparkConfName(kConfShufflePartitions), "spark.sql.shuffle.partitions");
  EXPECT_EQ(*SparkConfName(kConfMultipleWatermarkPolicy),
            "spark.sql.streaming.multipleWatermarkPolicy");
  EXPECT_EQ(*SparkConfName(kConfPruneFiltersCanPruneStreamingSubplan),
            "spark.sql.optimizer.pruneFiltersCanPruneStreamingSubplan");
  EXPECT_FALSE(SparkConfName("other.key").has_value());
  EXPECT_EQ(LegacyConfDefault(kConfMultipleWatermarkPolicy), "min");
  EXPECT_EQ(LegacyConfDefault(kConfStateStoreCompressionCodec), "lz4");
  EXPECT_FALSE(LegacyConfDefault(kConfShufflePartitions).has_value());
  EXPECT_FALSE(LegacyConfDefault(kConfStateStoreProviderClass).has_value());
  EXPECT_FALSE(LegacyConfDefault(kConfStateStoreRocksDbFormatVersion).has_value());
}

TEST(RestartPlanTest, StartKindNames) {
  EXPECT_EQ(StartKindName(StartKind::kFresh), "fresh");
  EXPECT_EQ(StartKindName(StartKind::kRerunBatch), "rerun");
  EXPECT_EQ(StartKindName(StartKind::kNextBatch), "next");
}

}  // namespace
}  // namespace sluice::stream
