#include "stream/checkpoint_metadata.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/uuid.h"
#include "fs/fault_injection_file_system.h"
#include "fs/test_util.h"
#include "stream/checkpoint_layout.h"
#include "stream/test_util.h"

namespace sluice::stream {
namespace {

using fs::LocalFileSystem;
using fs::ScopedTempDir;

TEST(StreamMetadataTest, SerializeIsExactlySparksForm) {
  StreamMetadata md{"9f3c2b1a-0e4d-4c5b-8a6f-7e8d9c0b1a2f"};
  EXPECT_EQ(SerializeStreamMetadata(md), R"({"id":"9f3c2b1a-0e4d-4c5b-8a6f-7e8d9c0b1a2f"})");
}

TEST(StreamMetadataTest, ParseAcceptsWhitespaceAndUnknownFields) {
  auto md =
      ParseStreamMetadata(" {\"other\":1, \"id\" : \"9f3c2b1a-0e4d-4c5b-8a6f-7e8d9c0b1a2f\"}\n");
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  EXPECT_EQ(md->id, "9f3c2b1a-0e4d-4c5b-8a6f-7e8d9c0b1a2f");
}

TEST(StreamMetadataTest, ParseRejectsBadInput) {
  for (std::string_view bad :
       {"", "{", "[]", "{}", R"({"id":5})", R"({"id":"not-a-uuid"})", R"({"id":"9f3c2b1a-0e4d)"}) {
    auto md = ParseStreamMetadata(bad);
    ASSERT_FALSE(md.ok()) << bad;
    EXPECT_TRUE(md.status().IsCorruption()) << bad << ": " << md.status().ToString();
  }
}

TEST(StreamMetadataTest, CreatedOnFirstStartAndKeptOnRestart) {
  ScopedTempDir dir;
  auto fs = LocalFileSystem();
  const std::string root = dir.Join("ckpt");
  EXPECT_TRUE(ReadStreamMetadata(*fs, root).status().IsNotFound());

  bool created = false;
  auto first = LoadOrCreateStreamMetadata(*fs, root, {}, &created);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(created);
  EXPECT_TRUE(IsCanonicalUuid(first->id));
  auto bytes = fs->ReadFile(root + "/metadata");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, "{\"id\":\"" + first->id + "\"}");

  auto again = LoadOrCreateStreamMetadata(*fs, root, {}, &created);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(created);
  EXPECT_EQ(again->id, first->id);
  auto read = ReadStreamMetadata(*fs, root);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->id, first->id);
}

// Issue 24 #3: with `metadata` deleted and offsets/commits present, a new query id was made, so
// the uncommitted batch was written to Delta again under a new txn appId (duplicates). Spark
// does the same; Sluice refuses the damaged checkpoint and leaves it as it is.
TEST(StreamMetadataTest, MissingFileWithLogEntriesIsCorruption) {
  ScopedTempDir dir;
  auto fs = LocalFileSystem();
  const std::string root = dir.Join("ckpt");
  // Hidden temporary files are not entries: a first start that crashed early starts afresh.
  ASSERT_TRUE(fs->CreateIfAbsent(root + "/offsets/.0.abc.tmp", "v1").ok());
  ASSERT_TRUE(fs->CreateIfAbsent(root + "/commits/.0.crc", "x").ok());
  auto fresh = LoadOrCreateStreamMetadata(*fs, root);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  for (const char* entry : {"/commits/0", "/offsets/1"}) {
    ASSERT_TRUE(fs->DeleteFile(MetadataPath(root)).ok());
    ASSERT_TRUE(fs->CreateIfAbsent(root + entry, "v1\n{}").ok());
    auto md = LoadOrCreateStreamMetadata(*fs, root);
    ASSERT_FALSE(md.ok()) << entry;
    EXPECT_TRUE(md.status().IsCorruption()) << md.status().ToString();
    EXPECT_NE(md.status().message().find(MetadataPath(root) + " is missing"), std::string::npos)
        << md.status().ToString();
    EXPECT_NE(md.status().message().find(root + "/"), std::string::npos);
    EXPECT_TRUE(fs->ReadFile(MetadataPath(root)).status().IsNotFound());  // no new id
    ASSERT_TRUE(fs->CreateIfAbsent(MetadataPath(root), SerializeStreamMetadata(*fresh)).ok());
    EXPECT_EQ(LoadOrCreateStreamMetadata(*fs, root)->id, fresh->id);  // restored: runs again
  }
}

TEST(StreamMetadataTest, CorruptFileIsCorruptionNamingTheFile) {
  ScopedTempDir dir;
  auto fs = LocalFileSystem();
  const std::string root = dir.Join("ckpt");
  // A torn write (non-atomic store) leaves a prefix.
  ASSERT_TRUE(fs->CreateIfAbsent(MetadataPath(root), R"({"id":"9f3c2b1a-0e4d-4c)").ok());
  auto md = LoadOrCreateStreamMetadata(*fs, root);
  ASSERT_FALSE(md.ok());
  EXPECT_TRUE(md.status().IsCorruption()) << md.status().ToString();
  EXPECT_NE(md.status().message().find(MetadataPath(root)), std::string::npos)
      << md.status().ToString();
  // The corrupt file is left alone: no silent new id.
  EXPECT_EQ(*fs->ReadFile(MetadataPath(root)), R"({"id":"9f3c2b1a-0e4d-4c)");
}

TEST(StreamMetadataTest, TornPublishIsDetected) {
  ScopedTempDir dir;
  auto faulty = std::make_shared<fs::FaultInjectingFileSystem>(LocalFileSystem());
  faulty->TearNthWrite(1, "metadata", /*publish=*/true);
  const std::string root = dir.Join("ckpt");
  auto md = LoadOrCreateStreamMetadata(*faulty, root);
  EXPECT_FALSE(md.ok());  // the crash
  faulty->Restart();
  auto after = ReadStreamMetadata(*faulty, root);
  ASSERT_FALSE(after.ok());
  EXPECT_TRUE(after.status().IsCorruption()) << after.status().ToString();
  EXPECT_NE(after.status().message().find("metadata"), std::string::npos);
}

TEST(StreamMetadataTest, WriteErrorIsReported) {
  ScopedTempDir dir;
  auto faulty = std::make_shared<fs::FaultInjectingFileSystem>(LocalFileSystem());
  faulty->FailNthWrite(1, ENOSPC);
  auto md = LoadOrCreateStreamMetadata(*faulty, dir.Join("ckpt"));
  ASSERT_FALSE(md.ok());
  EXPECT_TRUE(md.status().IsIOError()) << md.status().ToString();
  EXPECT_NE(md.status().message().find("metadata"), std::string::npos);
}

TEST(StreamMetadataTest, ConcurrentCreatorsIdWins) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  const std::string winner = "11111111-2222-4333-8444-555555555555";
  // The competitor creates the file right between our failed read and our create.
  auto racing = std::make_shared<testing::InterposingFileSystem>(
      LocalFileSystem(), [&](const std::string& path) {
        Status st = LocalFileSystem()->CreateIfAbsent(path, SerializeStreamMetadata({winner}));
        (void)st;
      });
  bool created = true;
  auto md = LoadOrCreateStreamMetadata(*racing, root, {}, &created);
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  EXPECT_EQ(md->id, winner);
  EXPECT_FALSE(created);
}

TEST(StreamMetadataTest, ManyThreadsAgreeOnOneId) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  std::vector<std::string> ids(8);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (ready.load() < 8) std::this_thread::yield();
      auto md = LoadOrCreateStreamMetadata(*LocalFileSystem(), root);
      ids[static_cast<size_t>(i)] = md.ok() ? md->id : md.status().ToString();
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& id : ids) EXPECT_EQ(id, ids[0]);
  EXPECT_TRUE(IsCanonicalUuid(ids[0])) << ids[0];
}

}  // namespace
}  // namespace sluice::stream
