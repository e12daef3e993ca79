#include "sql/streaming_progress_store.h"

#include <gtest/gtest.h>

#include "fs/test_util.h"

namespace sluice::sql {
namespace {

TEST(StreamingProgressStoreTest, WriteReadInBatchOrder) {
  fs::ScopedTempDir dir;
  auto fs = fs::LocalFileSystem();
  auto none = ReadBatchProgress(*fs, dir.path());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  for (int64_t id : {10, 2, 1}) {
    stream::StreamingQueryProgress p;
    p.id = "q";
    p.run_id = "r";
    p.batch_id = id;
    p.timestamp = "2026-01-01T00:00:00.000Z";
    ASSERT_TRUE(WriteBatchProgress(*fs, dir.path(), p).ok());
  }
  auto all = ReadBatchProgress(*fs, dir.path());
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_NE((*all)[0].find("\"batchId\":1"), std::string::npos);
  EXPECT_NE((*all)[2].find("\"batchId\":10"), std::string::npos);
  auto sql = ProgressRowsSql(*all, "x");
  ASSERT_TRUE(sql.ok());
  EXPECT_NE(sql->find("CAST("), std::string::npos);
  EXPECT_TRUE(ProgressRowsSql({"[1]"}, "x").status().IsCorruption());
  auto empty = ProgressRowsSql({}, "x");
  ASSERT_TRUE(empty.ok());
  EXPECT_NE(empty->find("LIMIT 0"), std::string::npos);
}

// A group-mode root (docs/scale-out.md): the tasks' progress, task by task in partition order.
TEST(StreamingProgressStoreTest, AGroupRootShowsItsTasksProgress) {
  fs::ScopedTempDir dir;
  auto fs = fs::LocalFileSystem();
  auto write = [&](const std::string& root, const std::string& name, int64_t id) {
    stream::StreamingQueryProgress p;
    p.id = "q";
    p.run_id = "r";
    p.name = name;
    p.batch_id = id;
    p.timestamp = "2026-01-01T00:00:00.000Z";
    ASSERT_TRUE(WriteBatchProgress(*fs, root, p).ok());
  };
  write(dir.Join("tasks/10"), "t[10]", 0);
  write(dir.Join("tasks/2"), "t[2]", 1);
  write(dir.Join("tasks/2"), "t[2]", 0);
  ASSERT_TRUE(fs->CreateDirectories(dir.Join("tasks/not-a-task")).ok());
  auto all = ReadBatchProgress(*fs, dir.path());
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_NE((*all)[0].find("\"t[2]\""), std::string::npos) << (*all)[0];
  EXPECT_NE((*all)[0].find("\"batchId\":0"), std::string::npos);
  EXPECT_NE((*all)[1].find("\"batchId\":1"), std::string::npos);
  EXPECT_NE((*all)[2].find("\"t[10]\""), std::string::npos);
}

TEST(StreamingProgressStoreTest, RewritesCallsOutsideStrings) {
  auto r = RewriteStreamingProgress(
      "SELECT 'streaming_progress(''x'')', batch_id FROM streaming_progress('q') WHERE "
      "batch_id > (SELECT 0 FROM STREAMING_PROGRESS('Other'))");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sql,
            "SELECT 'streaming_progress(''x'')', batch_id FROM \"progress:q\" WHERE "
            "batch_id > (SELECT 0 FROM \"progress:Other\")");
  ASSERT_EQ(r->references.size(), 2u);
  EXPECT_EQ(r->references[1].name, "Other");
  EXPECT_TRUE(
      RewriteStreamingProgress("SELECT * FROM streaming_progress(q)").status().IsInvalidArgument());
}

// Issue 24: an empty or torn progress/N.json failed SHOW STREAMING TABLES and
// streaming_progress() for every table. Each kind of damage is skipped with a warning naming the
// file; the good files are still read.
TEST(StreamingProgressStoreTest, DamagedFilesAreSkippedWithAWarningNamingTheFile) {
  auto fs = fs::LocalFileSystem();
  stream::StreamingQueryProgress p;
  p.id = "q";
  p.run_id = "r";
  p.timestamp = "2026-01-01T00:00:00.000Z";
  p.batch_id = 0;
  const std::string good = stream::ProgressToJson(p) + "\n";
  struct Damage {
    const char* kind;
    std::string text;
    const char* says;
  };
  const std::vector<Damage> damages = {
      {"empty", "", "empty"},
      {"newline only", "\n", "empty"},
      {"cut short", good.substr(0, good.size() / 2), "not valid JSON"},
      {"not an object", "[1]", "not a JSON object"},
      {"missing field", "{\"id\":\"q\"}", "runId"},
      {"wrong type", "{\"id\":\"q\",\"runId\":\"r\",\"timestamp\":\"t\",\"batchId\":\"1\"}",
       "batchId"},
      {"binary", std::string("\x00\xff\xfe", 3), "JSON"},
      {"other batch", good, "batchId 0"},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.kind);
    fs::ScopedTempDir dir;
    p.batch_id = 0;
    ASSERT_TRUE(WriteBatchProgress(*fs, dir.path(), p).ok());
    p.batch_id = 2;
    ASSERT_TRUE(WriteBatchProgress(*fs, dir.path(), p).ok());
    // batch 1 is the damaged one ("other batch": a copy of batch 0's file under 1.json).
    const std::string bad = dir.path() + "/progress/1.json";
    ASSERT_TRUE(fs->AtomicReplace(bad, d.text).ok());
    std::vector<std::string> skipped;
    auto all = ReadBatchProgress(*fs, dir.path(), &skipped);
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    ASSERT_EQ(all->size(), 2u);
    EXPECT_NE((*all)[1].find("\"batchId\":2"), std::string::npos);
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_NE(skipped[0].find(bad), std::string::npos) << skipped[0];
    EXPECT_NE(skipped[0].find(d.says), std::string::npos) << skipped[0];
    EXPECT_TRUE(ProgressRowsSql(*all, "x").ok());
  }
  // The last file damaged (what SHOW STREAMING TABLES reads), a directory in a file's place, and
  // a name beyond int64 (std::stoll threw on it).
  fs::ScopedTempDir dir;
  p.batch_id = 0;
  ASSERT_TRUE(WriteBatchProgress(*fs, dir.path(), p).ok());
  ASSERT_TRUE(fs->AtomicReplace(dir.path() + "/progress/7.json", "{\"id\"").ok());
  ASSERT_TRUE(fs->CreateDirectories(dir.path() + "/progress/5.json").ok());
  ASSERT_TRUE(fs->AtomicReplace(dir.path() + "/progress/99999999999999999999.json", good).ok());
  std::vector<std::string> skipped;
  auto all = ReadBatchProgress(*fs, dir.path(), &skipped);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_NE(all->back().find("\"batchId\":0"), std::string::npos);
  EXPECT_GE(skipped.size(), 1u);
}

}  // namespace
}  // namespace sluice::sql
