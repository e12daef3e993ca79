#include "sources/file_source_log.h"

#include <gtest/gtest.h>

#include "sources/test_util.h"

namespace sluice::sources {
namespace {

TEST(FileSourceLogTest, WritesSparkFormatAndReadsItBack) {
  testing::TempDir dir;
  FileSourceLog log(fs::LocalFileSystem(), dir.path() + "/sources/0");
  EXPECT_TRUE(log.ListIds()->empty());
  std::vector<FileEntry> entries = {{"file:///in/a.json", 10, 0}, {"file:///in/b%20c.json", 11, 0}};
  ASSERT_TRUE(log.Add(0, entries).ok());
  auto text = fs::LocalFileSystem()->ReadFile(dir.path() + "/sources/0/0");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text,
            "v1\n{\"path\":\"file:///in/a.json\",\"timestamp\":10,\"batchId\":0,\"numFiles\":2}\n"
            "{\"path\":\"file:///in/b%20c.json\",\"timestamp\":11,\"batchId\":0,\"numFiles\":2}");
  auto back = log.Get(0);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[1].path, "file:///in/b%20c.json");
  EXPECT_EQ((*back)[1].timestamp, 11);
  auto again = log.Add(0, entries);
  EXPECT_TRUE(again.IsConflict());
  EXPECT_NE(again.message().find("another query"), std::string::npos);
  EXPECT_TRUE(log.Add(1, {}).IsInvalidArgument());  // an entry is only written for new files
  ASSERT_TRUE(log.Add(1, {{"file:///in/d.json", 12, 1}}).ok());
  ASSERT_TRUE(fs::LocalFileSystem()->CreateIfAbsent(dir.path() + "/sources/0/007", "x").ok());
  EXPECT_EQ(*log.ListIds(), (std::vector<int64_t>{0, 1}));
}

// Issue 24 #2: with entry 1 of 0..2 deleted, the files it recorded looked new and were read
// again (duplicates). A gap is refused naming the missing entry; so is a missing entry 0.
TEST(FileSourceLogTest, AGapInTheLogIsCorruptionNamingTheMissingEntry) {
  testing::TempDir dir;
  std::string d = dir.path() + "/sources/0";
  FileSourceLog log(fs::LocalFileSystem(), d);
  for (int64_t id : {0, 1, 2}) ASSERT_TRUE(log.Add(id, {{"file:///in/x.json", 1, id}}).ok());
  ASSERT_EQ(*log.ListIds(), (std::vector<int64_t>{0, 1, 2}));
  for (const char* missing : {"1", "0"}) {
    ASSERT_TRUE(fs::LocalFileSystem()->DeleteFile(d + "/" + missing).ok());
    auto ids = log.ListIds();
    ASSERT_FALSE(ids.ok()) << missing;
    EXPECT_TRUE(ids.status().IsCorruption()) << ids.status().ToString();
    EXPECT_NE(ids.status().message().find("entry " + d + "/" + missing + " is missing"),
              std::string::npos)
        << ids.status().ToString();
  }
}

TEST(FileSourceLogTest, MalformedEntriesAreCorruption) {
  EXPECT_TRUE(FileSourceLog::Parse("v1\nnot json", "/x/3").status().IsCorruption());
  EXPECT_TRUE(FileSourceLog::Parse("", "/x/3").status().IsCorruption());
  EXPECT_TRUE(FileSourceLog::Parse("v2\n", "/x/3").status().IsNotSupported());
  EXPECT_NE(FileSourceLog::Parse("v1\n{\"path\":1}", "/x/3").status().message().find("/x/3"),
            std::string::npos);
  // An entry with no files is never written: one is an entry cut after its version line.
  for (const char* cut : {"v1", "v1\n", "v1\r\n"}) {
    auto r = FileSourceLog::Parse(cut, "/x/3");
    EXPECT_TRUE(r.status().IsCorruption()) << cut;
    EXPECT_NE(r.status().message().find("lists no files"), std::string::npos);
  }
  auto wrong_batch =
      FileSourceLog::Parse("v1\n{\"path\":\"file:///a\",\"timestamp\":1,\"batchId\":2}", "/x/3", 3);
  EXPECT_TRUE(wrong_batch.status().IsCorruption());
  EXPECT_NE(wrong_batch.status().message().find("batchId 2, expected 3"), std::string::npos);
}

// numFiles makes every proper prefix of an entry Corruption, line boundaries included (without
// it, a cut at a line boundary read as a shorter entry: its lost files were read again).
TEST(FileSourceLogTest, EveryProperPrefixOfAnEntryIsCorruption) {
  std::vector<FileEntry> entries = {
      {"file:///in/a.json", 10, 4}, {"file:///in/b.json", 11, 4}, {"file:///in/c.json", 12, 4}};
  const std::string text = FileSourceLog::Serialize(entries);
  ASSERT_EQ(FileSourceLog::Parse(text, "/x/4", 4)->size(), 3u);
  ASSERT_EQ(FileSourceLog::Parse(text + "\n", "/x/4", 4)->size(), 3u);  // a final newline
  for (size_t cut = 0; cut < text.size(); ++cut) {
    auto r = FileSourceLog::Parse(text.substr(0, cut), "/x/4", 4);
    ASSERT_FALSE(r.ok()) << "cut at " << cut;
    EXPECT_TRUE(r.status().IsCorruption()) << "cut at " << cut << ": " << r.status().ToString();
    EXPECT_NE(r.status().message().find("/x/4"), std::string::npos);
  }
  auto two = FileSourceLog::Parse(text.substr(0, text.rfind('\n')), "/x/4", 4);
  EXPECT_NE(two.status().message().find("lists 2 of its 3 files"), std::string::npos)
      << two.status().ToString();
}

// Spark's entries (and Sluice's before numFiles) have no count: read as before.
TEST(FileSourceLogTest, EntriesWithoutNumFilesAreReadAsSparkWritesThem) {
  auto spark = FileSourceLog::Parse(
      "v1\n{\"path\":\"file:///a\",\"timestamp\":1,\"batchId\":0}\n"
      "{\"path\":\"file:///b\",\"timestamp\":2,\"batchId\":0}",
      "/x/0", 0);
  ASSERT_TRUE(spark.ok()) << spark.status().ToString();
  EXPECT_EQ(spark->size(), 2u);
  auto mixed = FileSourceLog::Parse(
      "v1\n{\"path\":\"file:///a\",\"timestamp\":1,\"batchId\":0,\"numFiles\":2}\n"
      "{\"path\":\"file:///b\",\"timestamp\":2,\"batchId\":0}",
      "/x/0", 0);
  EXPECT_TRUE(mixed.status().IsCorruption());
  for (const char* bad : {"0", "-1", "\"2\"", "1.5"}) {
    auto r = FileSourceLog::Parse(
        std::string("v1\n{\"path\":\"file:///a\",\"timestamp\":1,\"batchId\":0,\"numFiles\":") +
            bad + "}",
        "/x/0", 0);
    EXPECT_TRUE(r.status().IsCorruption()) << bad;
  }
}

TEST(FileSourceLogTest, FileUris) {
  EXPECT_EQ(PathToFileUri("/a b/c%.json"), "file:///a%20b/c%25.json");
  EXPECT_EQ(*FileUriToPath("file:///a%20b/c%25.json"), "/a b/c%.json");
  EXPECT_EQ(*FileUriToPath("file:/x/y"), "/x/y");
  EXPECT_FALSE(FileUriToPath("s3://b/k").ok());
}

}  // namespace
}  // namespace sluice::sources
