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

}  // namespace
}  // namespace sluice::sql
