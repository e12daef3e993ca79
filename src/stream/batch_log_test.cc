#include "stream/batch_log.h"

#include <gtest/gtest.h>

#include "fs/fault_injection_file_system.h"
#include "fs/test_util.h"

namespace sluice::stream {
namespace {

using fs::LocalFileSystem;
using fs::ScopedTempDir;

TEST(BatchLogTest, ParseBatchFileName) {
  EXPECT_EQ(ParseBatchFileName("0"), BatchId(0));
  EXPECT_EQ(ParseBatchFileName("17"), BatchId(17));
  EXPECT_EQ(ParseBatchFileName("9223372036854775807"), BatchId(INT64_MAX));
  for (std::string_view bad :
       {"", "-1", "+5", "007", "00", "5.json", ".5.crc", "5 ", "a", ".5.123-456-abc.tmp",
        "9223372036854775808", "99999999999999999999"}) {
    EXPECT_FALSE(ParseBatchFileName(bad).has_value()) << bad;
  }
}

TEST(BatchLogTest, PurgeThresholdFollowsSpark) {
  EXPECT_FALSE(PurgeThreshold(BatchId(0), 100).has_value());
  EXPECT_FALSE(PurgeThreshold(BatchId(100), 100).has_value());
  EXPECT_EQ(PurgeThreshold(BatchId(101), 100), BatchId(1));
  EXPECT_EQ(PurgeThreshold(BatchId(250), 100), BatchId(150));
  EXPECT_EQ(PurgeThreshold(BatchId(5), 1), BatchId(4));
}

TEST(BatchLogTest, ParseLogVersion) {
  EXPECT_EQ(*ParseLogVersion("v1", 1), 1);
  EXPECT_EQ(*ParseLogVersion("v2", 2), 2);
  for (std::string_view bad : {"", "v", "1", "v0", "v-1", "V1", "v1x", "x1", "v99999999999"}) {
    auto v = ParseLogVersion(bad, 2);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_TRUE(v.status().IsCorruption()) << bad;
  }
  auto newer = ParseLogVersion("v3", 2);
  ASSERT_FALSE(newer.ok());
  EXPECT_TRUE(newer.status().IsNotSupported());
  EXPECT_NE(newer.status().message().find("maximum supported log version is v2"),
            std::string::npos);
  EXPECT_NE(newer.status().message().find("encountered v3"), std::string::npos);
}

TEST(BatchLogTest, SplitLogLines) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(SplitLogLines(""), V{});
  EXPECT_EQ(SplitLogLines("v1"), V{"v1"});
  EXPECT_EQ(SplitLogLines("v1\n"), V{"v1"});
  EXPECT_EQ(SplitLogLines("v1\n\n5"), (V{"v1", "", "5"}));
  EXPECT_EQ(SplitLogLines("v1\r\n{}\r\n5"), (V{"v1", "{}", "5"}));
  EXPECT_EQ(SplitLogLines("a\n\n"), (V{"a", ""}));
}

TEST(BatchLogTest, AddReadListAndConflict) {
  ScopedTempDir dir;
  BatchLog log(LocalFileSystem(), dir.Join("ckpt/offsets"), dir.Join("ckpt"));
  auto empty = log.ListIds();
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();  // missing directory: empty log
  EXPECT_TRUE(empty->empty());

  ASSERT_TRUE(log.Add(BatchId(0), "zero").ok());
  ASSERT_TRUE(log.Add(BatchId(2), "two").ok());
  ASSERT_TRUE(log.Add(BatchId(10), "ten").ok());
  EXPECT_EQ(*log.Read(BatchId(2)), "two");
  EXPECT_TRUE(log.Read(BatchId(1)).status().IsNotFound());
  EXPECT_EQ(log.PathFor(BatchId(10)), dir.Join("ckpt/offsets/10"));

  Status again = log.Add(BatchId(2), "other");
  ASSERT_TRUE(again.IsConflict()) << again.ToString();
  EXPECT_NE(again.message().find("another query is using the checkpoint"), std::string::npos);
  EXPECT_NE(again.message().find(dir.Join("ckpt/offsets/2")), std::string::npos);
  EXPECT_EQ(*log.Read(BatchId(2)), "two");  // never overwritten
  EXPECT_TRUE(log.Add(BatchId(-1), "x").IsInvalidArgument());

  // Noise that is not a batch file.
  auto fs = LocalFileSystem();
  ASSERT_TRUE(fs->CreateIfAbsent(dir.Join("ckpt/offsets/.11.4-5-abc.tmp"), "partial").ok());
  ASSERT_TRUE(fs->CreateIfAbsent(dir.Join("ckpt/offsets/.2.crc"), "crc").ok());
  ASSERT_TRUE(fs->CreateIfAbsent(dir.Join("ckpt/offsets/12.json"), "x").ok());
  ASSERT_TRUE(fs->CreateIfAbsent(dir.Join("ckpt/offsets/013"), "x").ok());
  ASSERT_TRUE(fs->CreateDirectories(dir.Join("ckpt/offsets/14")).ok());
  auto ids = log.ListIds();
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<BatchId>{BatchId(0), BatchId(2), BatchId(10)}));
}

TEST(BatchLogTest, PurgeDeletesOnlyOlderEntries) {
  ScopedTempDir dir;
  BatchLog log(LocalFileSystem(), dir.Join("offsets"), dir.path());
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(log.Add(BatchId(i), "x").ok());
  auto deleted = log.Purge(BatchId(5));
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 5);
  EXPECT_EQ(*log.ListIds(), (std::vector<BatchId>{BatchId(5), BatchId(6), BatchId(7)}));
  EXPECT_EQ(*log.Purge(BatchId(5)), 0);
}

TEST(BatchLogTest, PurgeReportsDeleteErrors) {
  ScopedTempDir dir;
  auto faulty = std::make_shared<fs::FaultInjectingFileSystem>(LocalFileSystem());
  BatchLog log(faulty, dir.Join("offsets"), dir.path());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(log.Add(BatchId(i), "x").ok());
  fs::Fault fault;
  fault.ops = fs::OpBit(fs::FileOp::kDeleteFile);
  fault.error = EACCES;
  ASSERT_TRUE(faulty->InjectFault(fault).ok());
  auto deleted = log.Purge(BatchId(3));
  ASSERT_FALSE(deleted.ok());
  EXPECT_TRUE(deleted.status().IsIOError());
  EXPECT_NE(deleted.status().message().find("purging log"), std::string::npos);
}

}  // namespace
}  // namespace sluice::stream
