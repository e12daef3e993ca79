#include "stream/commit_log.h"

#include <gtest/gtest.h>

#include "fs/test_util.h"
#include "stream/pending_commit.h"

namespace sluice::stream {
namespace {

using fs::LocalFileSystem;
using fs::ScopedTempDir;

TEST(CommitLogTest, SerializeIsByteExact) {
  EXPECT_EQ(*SerializeCommit(CommitMetadata{}, 1), "v1\n{\"nextBatchWatermarkMs\":0}");
  CommitMetadata md;
  md.next_batch_watermark_ms = 1700000005000;
  EXPECT_EQ(*SerializeCommit(md, 1), "v1\n{\"nextBatchWatermarkMs\":1700000005000}");
}

TEST(CommitLogTest, ParseForms) {
  auto md = ParseCommit("v1\n{\"nextBatchWatermarkMs\":42}", 1);
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  EXPECT_EQ(md->next_batch_watermark_ms, 42);
  // Spark 2.3 logs have no metadata line: read as {}, watermark 0.
  EXPECT_EQ(ParseCommit("v1", 1)->next_batch_watermark_ms, 0);
  EXPECT_EQ(ParseCommit("v1\n", 1)->next_batch_watermark_ms, 0);
  EXPECT_EQ(ParseCommit(" v1 \n{}", 1)->next_batch_watermark_ms, 0);  // version line trimmed
  EXPECT_EQ(ParseCommit("v1\r\n{\"nextBatchWatermarkMs\":3}\n", 1)->next_batch_watermark_ms, 3);
}

TEST(CommitLogTest, VersionTwoCarriesStateUniqueIds) {
  CommitMetadata md;
  md.next_batch_watermark_ms = 5;
  md.state_unique_ids = std::map<int64_t, std::vector<std::vector<std::string>>>{
      {0, {{"a1", "a2"}, {"b1"}}}, {1, {{"c"}}}};
  const std::string bytes =
      R"(v2
{"nextBatchWatermarkMs":5,"stateUniqueIds":{"0":[["a1","a2"],["b1"]],"1":[["c"]]}})";
  EXPECT_EQ(*SerializeCommit(md, 2), bytes);
  auto parsed = ParseCommit(bytes, 2);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, md);
  EXPECT_TRUE(SerializeCommit(md, 1).status().IsInvalidArgument());  // v1 cannot hold them
  EXPECT_TRUE(SerializeCommit(CommitMetadata{}, 3).status().IsInvalidArgument());
}

TEST(CommitLogTest, VersionMustMatchExactly) {
  auto v2_by_v1 = ParseCommit("v2\n{}", 1);
  ASSERT_FALSE(v2_by_v1.ok());
  EXPECT_TRUE(v2_by_v1.status().IsNotSupported());
  EXPECT_NE(v2_by_v1.status().message().find("v2 does not match the checkpoint format version v1"),
            std::string::npos)
      << v2_by_v1.status().ToString();
  EXPECT_TRUE(ParseCommit("v1\n{}", 2).status().IsNotSupported());
  auto v3 = ParseCommit("v3\n{}", 1);
  EXPECT_TRUE(v3.status().IsNotSupported());
  EXPECT_NE(v3.status().message().find("maximum supported log version is v2"), std::string::npos);
}

TEST(CommitLogTest, CorruptInputs) {
  for (std::string_view bad :
       {"", "x", "v1\n{\"nextBatchWatermarkMs\":", "v1\n{\"nextBatchWatermarkMs\":\"1\"}", "v1\n[]",
        "v1\n{\"nextBatchWatermarkMs\":99999999999999999999}",
        "v2\n{\"stateUniqueIds\":{\"x\":[]}}", "v2\n{\"stateUniqueIds\":{\"0\":[[1]]}}"}) {
    const int version = bad.substr(0, 2) == "v2" ? 2 : 1;
    auto md = ParseCommit(bad, version);
    ASSERT_FALSE(md.ok()) << bad;
    EXPECT_TRUE(md.status().IsCorruption()) << bad << " -> " << md.status().ToString();
  }
}

TEST(CommitLogTest, VersionOneEntryHoldingStateUniqueIdsIsCorruption) {
  // SerializeCommit refuses them in v1, so reading them would not round-trip (found by the
  // checkpoint_log fuzz target); null reads as absent, as Spark's json4s does.
  auto md = ParseCommit(R"(v1
{"nextBatchWatermarkMs":5,"stateUniqueIds":{"0":[["a"]]}})",
                        1);
  ASSERT_FALSE(md.ok());
  EXPECT_TRUE(md.status().IsCorruption()) << md.status().ToString();
  EXPECT_NE(md.status().message().find("v1 commit log entry holds \"stateUniqueIds\""),
            std::string::npos)
      << md.status().ToString();
  auto empty = ParseCommit(R"(v1
{"nextBatchWatermarkMs":5,"stateUniqueIds":{}})",
                           1);
  EXPECT_TRUE(empty.status().IsCorruption()) << empty.status().ToString();
  auto null_ids = ParseCommit(R"(v1
{"nextBatchWatermarkMs":5,"stateUniqueIds":null})",
                              1);
  ASSERT_TRUE(null_ids.ok()) << null_ids.status().ToString();
  EXPECT_FALSE(null_ids->state_unique_ids.has_value());
  EXPECT_EQ(*SerializeCommit(*null_ids, 1), "v1\n{\"nextBatchWatermarkMs\":5}");
}

TEST(CommitLogTest, NulByteIsCorruption) {
  const std::string bytes = std::string("v1\n{\"nextBatchWatermarkMs\":5}") + '\0' + "x";
  auto md = ParseCommit(bytes, 1);
  ASSERT_FALSE(md.ok());
  EXPECT_TRUE(md.status().IsCorruption());
  EXPECT_NE(md.status().message().find("NUL byte at byte offset 29"), std::string::npos)
      << md.status().ToString();
}

TEST(CommitLogTest, LogAddGetLatestConflict) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  CommitLog log(LocalFileSystem(), root);
  EXPECT_FALSE(log.Latest()->has_value());
  CommitMetadata md;
  md.next_batch_watermark_ms = 10;
  ASSERT_TRUE(log.Add(BatchId(0), md).ok());
  md.next_batch_watermark_ms = 20;
  ASSERT_TRUE(log.Add(BatchId(1), md).ok());
  EXPECT_EQ(*LocalFileSystem()->ReadFile(root + "/commits/1"), "v1\n{\"nextBatchWatermarkMs\":20}");
  auto latest = log.Latest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->first, BatchId(1));
  EXPECT_EQ((*latest)->second.next_batch_watermark_ms, 20);
  EXPECT_EQ(log.Get(BatchId(0))->next_batch_watermark_ms, 10);

  Status dup = log.Add(BatchId(1), md);
  EXPECT_TRUE(dup.IsConflict());
  EXPECT_NE(dup.message().find("another query is using the checkpoint"), std::string::npos);

  ASSERT_TRUE(LocalFileSystem()->CreateIfAbsent(root + "/commits/2", "v1\n{\"next").ok());
  auto corrupt = log.Latest();
  ASSERT_FALSE(corrupt.ok());
  EXPECT_TRUE(corrupt.status().IsCorruption());
  EXPECT_NE(corrupt.status().message().find(root + "/commits/2"), std::string::npos)
      << corrupt.status().ToString();

  CommitLog v2(LocalFileSystem(), root, CommitLog::Options{2});
  auto mismatch = v2.Get(BatchId(0));
  EXPECT_TRUE(mismatch.status().IsNotSupported());
  EXPECT_NE(mismatch.status().message().find(root + "/commits/0"), std::string::npos);
}

// The names in `dir`, temporary files included.
std::vector<std::string> AllNames(const std::string& dir) {
  std::vector<std::string> out;
  auto listed = LocalFileSystem()->List(dir);
  if (!listed.ok()) return out;
  for (const auto& f : *listed) out.push_back(fs::BaseName(f.path));
  return out;
}

// commits/<N> written in the background: invisible (only a temporary file) until Publish, then
// exactly Add's entry; dropped without a trace when never published; Conflict when it exists.
TEST(CommitLogTest, PendingEntryAppearsOnlyOnPublish) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  CommitLog log(LocalFileSystem(), root);
  CommitMetadata md;
  md.next_batch_watermark_ms = 7;
  {
    PendingCommitEntry pending(log, BatchId(0), md, {.sync = true});
    // Whether or not the background write has finished, no entry is visible yet.
    EXPECT_TRUE(log.ListIds()->empty());
    ASSERT_TRUE(pending.Publish().ok());
    EXPECT_TRUE(pending.Publish().IsInternal());  // once only
  }
  EXPECT_EQ(*LocalFileSystem()->ReadFile(root + "/commits/0"), "v1\n{\"nextBatchWatermarkMs\":7}");
  EXPECT_EQ(AllNames(root + "/commits"), std::vector<std::string>{"0"});

  { PendingCommitEntry abandoned(log, BatchId(1), md, {.sync = false}); }
  EXPECT_EQ(AllNames(root + "/commits"), std::vector<std::string>{"0"});  // no temp file left

  PendingCommitEntry dup(log, BatchId(0), md, {.sync = false});
  Status st = dup.Publish();
  EXPECT_TRUE(st.IsConflict()) << st.ToString();
  EXPECT_NE(st.message().find("another query is using the checkpoint"), std::string::npos);
  EXPECT_EQ(AllNames(root + "/commits"), std::vector<std::string>{"0"});
}

}  // namespace
}  // namespace sluice::stream
