#include "delta/log_segment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/test_util.h"

namespace sluice::delta {
namespace {

using ::testing::HasSubstr;

TEST(LogSegmentTest, ParsesLogFileNames) {
  auto c = ParseLogFileName("00000000000000000042.json");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, LogFileKind::kCommit);
  EXPECT_EQ(c->version, Version(42));
  auto cp = ParseLogFileName("00000000000000000010.checkpoint.parquet");
  ASSERT_TRUE(cp);
  EXPECT_EQ(cp->kind, LogFileKind::kCheckpoint);
  auto part = ParseLogFileName("00000000000000000001.checkpoint.0000000002.0000000003.parquet");
  ASSERT_TRUE(part);
  EXPECT_EQ(part->kind, LogFileKind::kCheckpointPart);
  EXPECT_EQ(part->part, 2);
  EXPECT_EQ(part->num_parts, 3);
  auto v2 =
      ParseLogFileName("00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json");
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->kind, LogFileKind::kCheckpointV2);
  EXPECT_EQ(v2->version, Version(2));
  EXPECT_TRUE(v2->json);
  auto v2p = ParseLogFileName(
      "00000000000000000003.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.parquet");
  ASSERT_TRUE(v2p);
  EXPECT_EQ(v2p->kind, LogFileKind::kCheckpointV2);
  EXPECT_FALSE(v2p->json);
  for (const char* ignored :
       {"00000000000000000000.crc", ".00000000000000000000.json.crc",
        "00000000000000000000.json.123.tmp",
        "00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b.json",
        "00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.orc",
        "00000000000000000002.checkpoint.6374b053xdf23-479b-b2cf-c9c550132b49.json",
        "00000000000000000000.checkpoint.parquet.tmpXYZ",
        "00000000000000000000.00000000000000000003.compacted.json", "_last_checkpoint",
        "0000000000000000001.json",
        "00000000000000000001.checkpoint.0000000004.0000000003.parquet"}) {
    EXPECT_FALSE(ParseLogFileName(ignored)) << ignored;
  }
  EXPECT_EQ(CommitFileName(Version(7)), "00000000000000000007.json");
  EXPECT_EQ(CheckpointFileName(Version(10)), "00000000000000000010.checkpoint.parquet");
}

LogFile Commit(int64_t v) {
  LogFile f;
  f.info.path = "/t/_delta_log/" + CommitFileName(Version(v));
  f.name.kind = LogFileKind::kCommit;
  f.name.version = Version(v);
  return f;
}

LogListing Listing(std::vector<int64_t> commits, std::vector<int64_t> checkpoints) {
  LogListing l;
  l.table_root = "/t";
  l.log_dir = "/t/_delta_log";
  for (int64_t v : commits) l.commits[Version(v)] = Commit(v);
  for (int64_t v : checkpoints) {
    LogFile f;
    f.info.path = "/t/_delta_log/" + CheckpointFileName(Version(v));
    f.name.kind = LogFileKind::kCheckpoint;
    f.name.version = Version(v);
    l.checkpoints[Version(v)] = Checkpoint{Version(v), {f}};
  }
  return l;
}

TEST(LogSegmentTest, UsesNewestCheckpointAtOrBeforeVersion) {
  LogListing l = Listing({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {5, 10});
  auto latest = BuildLogSegment(l, std::nullopt);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->version, Version(12));
  EXPECT_EQ(latest->checkpoint->version, Version(10));
  ASSERT_EQ(latest->commits.size(), 2u);
  EXPECT_EQ(latest->commits[0].name.version, Version(11));
  auto v7 = *BuildLogSegment(l, Version(7));
  EXPECT_EQ(v7.checkpoint->version, Version(5));
  EXPECT_EQ(v7.commits.size(), 2u);
  auto v3 = *BuildLogSegment(l, Version(3));
  EXPECT_FALSE(v3.checkpoint);
  EXPECT_EQ(v3.commits.size(), 4u);
  EXPECT_EQ(*l.EarliestRecreatableVersion(), Version(0));
}

TEST(LogSegmentTest, NonContiguousVersionsAreCorruption) {
  LogListing l = Listing({0, 2}, {});
  auto seg = BuildLogSegment(l, std::nullopt);
  ASSERT_FALSE(seg.ok());
  EXPECT_TRUE(seg.status().IsCorruption());
  EXPECT_THAT(seg.status().message(), HasSubstr("versions are not contiguous: [0, 2]"));
  // A gap after the checkpoint is also an error; a gap before it is not.
  EXPECT_TRUE(BuildLogSegment(Listing({5, 6, 8}, {5}), std::nullopt).status().IsCorruption());
  EXPECT_TRUE(BuildLogSegment(Listing({1, 3, 4, 5}, {3}), std::nullopt).ok());
}

TEST(LogSegmentTest, CleanedLogLimitsTimeTravel) {
  LogListing l = Listing({5, 6, 7, 8, 9, 10, 11, 12}, {5, 10});
  EXPECT_EQ(*l.EarliestRecreatableVersion(), Version(5));
  auto v4 = BuildLogSegment(l, Version(4));
  ASSERT_FALSE(v4.ok());
  EXPECT_TRUE(v4.status().IsNotFound());
  EXPECT_THAT(
      v4.status().message(),
      HasSubstr("Cannot time travel Delta table to version 4. Available versions: [5, 12]"));
  auto v13 = BuildLogSegment(l, Version(13));
  EXPECT_THAT(v13.status().message(), HasSubstr("Available versions: [5, 12]"));
}

TEST(LogSegmentTest, ListLogIgnoresJunkAndIncompleteMultiPart) {
  testing::TempDir tmp;
  auto fs = fs::LocalFileSystem();
  std::string log = tmp.path() + "/_delta_log/";
  for (const char* name :
       {"00000000000000000000.json", "00000000000000000001.json", "00000000000000000002.json",
        "00000000000000000001.checkpoint.0000000001.0000000002.parquet",  // part 2 missing
        "00000000000000000000.crc", "_last_checkpoint", ".tmp/00000000000000000003.json",
        "00000000000000000003.json.abc.tmp"}) {
    ASSERT_TRUE(fs->CreateIfAbsent(log + name, "x").ok()) << name;
  }
  auto listing = ListLog(fs.get(), tmp.path());
  ASSERT_TRUE(listing.ok()) << listing.status().ToString();
  EXPECT_EQ(listing->commits.size(), 3u);
  EXPECT_TRUE(listing->checkpoints.empty());
  EXPECT_EQ(*listing->LatestVersion(), Version(2));
  // Completing the multi-part checkpoint makes it usable.
  ASSERT_TRUE(
      fs->CreateIfAbsent(log + "00000000000000000001.checkpoint.0000000002.0000000002.parquet", "x")
          .ok());
  listing = ListLog(fs.get(), tmp.path());
  ASSERT_EQ(listing->checkpoints.size(), 1u);
  EXPECT_EQ(listing->checkpoints.begin()->second.files.size(), 2u);
  // Not a table.
  auto missing = ListLog(fs.get(), tmp.path() + "/nope");
  EXPECT_TRUE(missing.status().IsNotFound());
  EXPECT_THAT(missing.status().message(), HasSubstr("not a Delta table"));
}

// A log of commits 0..last with classic checkpoints at `checkpoints` (file contents are not read
// by the listing).
void MakeLog(fs::FileSystem* fs, const std::string& root, int64_t last,
             std::initializer_list<int64_t> checkpoints) {
  std::string log = root + "/_delta_log/";
  for (int64_t v = 0; v <= last; ++v) {
    Status st = fs->CreateIfAbsent(log + CommitFileName(Version(v)), "x");
    ASSERT_TRUE(st.ok() || st.IsAlreadyExists()) << st.ToString();
  }
  for (int64_t v : checkpoints) {
    ASSERT_TRUE(fs->CreateIfAbsent(log + CheckpointFileName(Version(v)), "x").ok());
  }
}

void WriteHint(fs::FileSystem* fs, const std::string& root, std::string_view text) {
  ASSERT_TRUE(fs->AtomicReplace(root + "/_delta_log/_last_checkpoint", text).ok());
}

TEST(LogSegmentTest, ListLogForLatestStartsAtTheHintedCheckpoint) {
  testing::TempDir tmp;
  auto fs = fs::LocalFileSystem();
  MakeLog(fs.get(), tmp.path(), 1234, {1000, 1200});
  WriteHint(fs.get(), tmp.path(), R"({"version":1200,"size":5})");
  auto listing = ListLogForLatest(fs.get(), tmp.path());
  ASSERT_TRUE(listing.ok()) << listing.status().ToString();
  ASSERT_TRUE(listing->listed_from);
  EXPECT_EQ(*listing->listed_from, Version(1200));
  EXPECT_EQ(listing->commits.begin()->first, Version(1200));
  EXPECT_EQ(*listing->LatestVersion(), Version(1234));
  EXPECT_EQ(listing->commits.size(), 35u);
  EXPECT_EQ(listing->checkpoints.size(), 1u);
  auto seg = BuildLogSegment(*listing, std::nullopt);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  EXPECT_EQ(seg->checkpoint->version, Version(1200));
  EXPECT_EQ(seg->commits.size(), 34u);
}

TEST(LogSegmentTest, ListLogForLatestCrossesRangesAndFindsNewerCheckpoints) {
  testing::TempDir tmp;
  auto fs = fs::LocalFileSystem();
  // Stale hint (90); the log goes on through 99, 100..199 (full) into 200..203, with a newer
  // checkpoint at 200.
  MakeLog(fs.get(), tmp.path(), 203, {90, 200});
  WriteHint(fs.get(), tmp.path(), R"({"version":90})");
  auto listing = ListLogForLatest(fs.get(), tmp.path());
  ASSERT_TRUE(listing.ok()) << listing.status().ToString();
  EXPECT_EQ(*listing->LatestVersion(), Version(203));
  EXPECT_EQ(listing->checkpoints.rbegin()->first, Version(200));
  auto seg = BuildLogSegment(*listing, std::nullopt);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  EXPECT_EQ(seg->checkpoint->version, Version(200));
  EXPECT_EQ(seg->commits.size(), 3u);
  // Log ending exactly at the end of a decade and of a hundred.
  MakeLog(fs.get(), tmp.path(), 299, {});
  listing = ListLogForLatest(fs.get(), tmp.path(), Version(203));
  ASSERT_TRUE(listing.ok());
  EXPECT_EQ(*listing->LatestVersion(), Version(299));
  EXPECT_EQ(*listing->listed_from, Version(203));
}

TEST(LogSegmentTest, ListLogForLatestFallsBackToAFullListing) {
  testing::TempDir tmp;
  auto fs = fs::LocalFileSystem();
  MakeLog(fs.get(), tmp.path(), 25, {10, 20});
  for (std::string_view bad :
       {"", "{", "[]", R"({"version":"20"})", R"({"version":-1})", R"({"size":3})",
        R"({"version":15})" /* no such checkpoint */, R"({"version":500})" /* past the end */}) {
    WriteHint(fs.get(), tmp.path(), bad);
    auto listing = ListLogForLatest(fs.get(), tmp.path());
    ASSERT_TRUE(listing.ok()) << bad << ": " << listing.status().ToString();
    EXPECT_FALSE(listing->listed_from) << bad;
    EXPECT_EQ(listing->commits.size(), 26u) << bad;
    EXPECT_EQ(*listing->LatestVersion(), Version(25)) << bad;
  }
  ASSERT_TRUE(fs->DeleteFile(tmp.path() + "/_delta_log/_last_checkpoint").ok());
  auto listing = ListLogForLatest(fs.get(), tmp.path());
  ASSERT_TRUE(listing.ok());
  EXPECT_FALSE(listing->listed_from);
  // A known version that is gone (a re-created table with fewer versions) lists everything.
  listing = ListLogForLatest(fs.get(), tmp.path(), Version(40));
  ASSERT_TRUE(listing.ok());
  EXPECT_FALSE(listing->listed_from);
  EXPECT_EQ(*listing->LatestVersion(), Version(25));
  // Not a table.
  auto missing = ListLogForLatest(fs.get(), tmp.path() + "/nope");
  EXPECT_TRUE(missing.status().IsNotFound());
}

}  // namespace
}  // namespace sluice::delta
