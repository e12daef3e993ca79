// Checkpoints written by Sluice are read back by the reader; log cleanup keeps the log readable.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/checkpoint_writer.h"
#include "delta/log_cleanup.h"
#include "delta/snapshot_cache.h"
#include "delta/writer_test_util.h"

namespace sluice::delta {
namespace {

using testing::CountingFileSystem;
using ::testing::HasSubstr;

class CheckpointWriterTest : public testing::WriterTestBase {
 protected:
  bool LogHas(const std::string& name) {
    return std::filesystem::exists(table_ + "/_delta_log/" + name);
  }
};

TEST_F(CheckpointWriterTest, EveryTenCommitsAndReaderUsesIt) {
  auto w = Writer();
  WriteOptions opts;
  opts.partition_by = {"p"};
  for (int i = 0; i < 23; ++i) {
    opts.txn_app_id = "app";
    opts.txn_version = i;
    auto r =
        w->Write(Sql("SELECT " + std::to_string(i) + " AS id, " +
                     (i % 3 == 0 ? "NULL::VARCHAR" : "'p" + std::to_string(i % 3) + "'") + " AS p"),
                 opts);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  EXPECT_TRUE(LogHas(CheckpointFileName(Version(10))));
  EXPECT_TRUE(LogHas(CheckpointFileName(Version(20))));
  EXPECT_FALSE(LogHas(CheckpointFileName(Version(0))));
  EXPECT_FALSE(LogHas(CheckpointFileName(Version(22))));
  auto last = nlohmann::json::parse(
      *fs::LocalFileSystem()->ReadFile(table_ + "/_delta_log/_last_checkpoint"));
  EXPECT_EQ(last["version"], 20);
  // protocol + metaData + 1 txn + 21 adds.
  EXPECT_EQ(last["size"], 24);
  EXPECT_EQ(last["numOfAddFiles"], 21);

  // DuckDB reads the checkpoint: one non-null action column per row.
  std::string cp = table_ + "/_delta_log/" + CheckpointFileName(Version(20));
  auto counts =
      Sql("SELECT count(add), count(protocol), count(metaData), count(txn), count(remove), "
          "count(*) FILTER (WHERE (add IS NOT NULL)::INT + (protocol IS NOT NULL)::INT + "
          "(metaData IS NOT NULL)::INT + (txn IS NOT NULL)::INT + (remove IS NOT NULL)::INT <> 1) "
          "FROM read_parquet('" +
          Escape(cp) + "')");
  EXPECT_EQ(testing::Rows(counts), std::vector<std::string>{"21|1|1|1|0|0"});
  auto pv = Sql("SELECT add.partitionValues['p'] FROM read_parquet('" + Escape(cp) +
                "') WHERE add IS NOT NULL AND add.path LIKE '%HIVE_DEFAULT%' LIMIT 1");
  ASSERT_EQ(pv.num_rows(), 1);
  EXPECT_TRUE(pv.IsNull(0, 0));

  // A fresh reader reads the checkpoint and only the commits after it.
  auto counting = std::make_shared<CountingFileSystem>(fs::LocalFileSystem());
  auto t = DeltaTable::Open(counting, engine_, table_);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto snap = (*t)->Latest();
  ASSERT_TRUE(snap.ok());
  ASSERT_TRUE((*snap)->segment.checkpoint.has_value());
  EXPECT_EQ((*snap)->segment.checkpoint->version, Version(20));
  for (const auto& [path, n] : counting->reads()) {
    EXPECT_THAT(path, ::testing::Not(HasSubstr(CommitFileName(Version(20)))))
        << "read a commit before the checkpoint";
    EXPECT_THAT(path, ::testing::Not(HasSubstr(CommitFileName(Version(5)))));
  }
  EXPECT_EQ((*snap)->TxnVersion("app"), std::optional<int64_t>(22));
  auto rows = (*t)->Scan(**snap);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->num_rows(), 23);
  // The state from the checkpoint equals the state from replaying every commit.
  auto t2 = Reader();
  auto v20 = t2->SnapshotAt(Version(20));
  ASSERT_TRUE(v20.ok());
  auto listing = ListLog(fs::LocalFileSystem().get(), table_);
  ASSERT_TRUE(listing.ok());
  LogSegment all;
  all.version = Version(20);
  for (const auto& [v, f] : listing->commits) {
    if (v <= Version(20)) all.commits.push_back(f);
  }
  auto replayed = LoadSnapshot(fs::LocalFileSystem().get(), conn_.get(), *listing, all);
  ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
  EXPECT_TRUE((*v20)->segment.checkpoint.has_value());
  EXPECT_EQ((*v20)->files, (*replayed)->files);
  EXPECT_EQ((*v20)->metadata, (*replayed)->metadata);
  EXPECT_EQ((*v20)->protocol, (*replayed)->protocol);
  EXPECT_EQ((*v20)->transactions.at("app").version, 20);
  EXPECT_EQ(ValidateLog(), 22);
}

TEST_F(CheckpointWriterTest, TombstonesWithinRetentionAndCustomInterval) {
  int64_t now = NowMillis();
  TableWriterOptions o;
  o.now_ms = [&now] { return now; };
  auto w = Writer(fs::LocalFileSystem(), o);
  WriteOptions create;
  create.configuration = {{"delta.checkpointInterval", "3"}};
  ASSERT_TRUE(w->Write(Sql("SELECT 1 AS id"), create).ok());  // v0
  WriteOptions ow;
  ow.mode = SaveMode::kOverwrite;
  ASSERT_TRUE(w->Write(Sql("SELECT 2 AS id"), ow).ok());  // v1 removes the v0 file
  ASSERT_TRUE(w->Write(Sql("SELECT 3 AS id")).ok());      // v2
  ASSERT_TRUE(w->Write(Sql("SELECT 4 AS id")).ok());      // v3 -> checkpoint
  ASSERT_TRUE(LogHas(CheckpointFileName(Version(3))));
  std::string cp = table_ + "/_delta_log/" + CheckpointFileName(Version(3));
  auto counts = Sql("SELECT count(add), count(remove) FROM read_parquet('" + Escape(cp) + "')");
  EXPECT_EQ(testing::Rows(counts), std::vector<std::string>{"3|1"});
  auto t = Reader();
  auto snap = t->Latest();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->tombstones.size(), 1u);
  EXPECT_THAT(ReadRows(), ::testing::ElementsAre("2", "3", "4"));

  // Eight days later the tombstone has expired (default retention 1 week): the next
  // checkpoint (v6) leaves it out.
  now += 8LL * 24 * 3600 * 1000;
  for (int i = 5; i <= 7; ++i)
    ASSERT_TRUE(w->Write(Sql("SELECT " + std::to_string(i) + " AS id")).ok());
  ASSERT_TRUE(LogHas(CheckpointFileName(Version(6))));
  std::string cp6 = table_ + "/_delta_log/" + CheckpointFileName(Version(6));
  EXPECT_EQ(testing::Rows(
                Sql("SELECT count(add), count(remove) FROM read_parquet('" + Escape(cp6) + "')")),
            std::vector<std::string>{"6|0"});
  // Checkpointing a version that already has one keeps the existing file.
  auto twice = w->Checkpoint();
  ASSERT_TRUE(twice.ok()) << twice.status().ToString();
  EXPECT_TRUE(twice->already_existed);
  EXPECT_EQ(twice->version, 6);
  ASSERT_TRUE(w->Write(Sql("SELECT 8 AS id")).ok());  // v7: no automatic checkpoint
  auto fresh = w->Checkpoint();
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->already_existed);
  EXPECT_EQ(fresh->version, 7);
  EXPECT_EQ(fresh->num_add_files, 7);
  auto last = nlohmann::json::parse(
      *fs::LocalFileSystem()->ReadFile(table_ + "/_delta_log/_last_checkpoint"));
  EXPECT_EQ(last["version"], 7);
  EXPECT_THAT(ReadRows(), ::testing::ElementsAre("2", "3", "4", "5", "6", "7", "8"));
}

TEST_F(CheckpointWriterTest, LogCleanupKeepsTheTableReadable) {
  auto w = Writer();
  for (int i = 0; i < 25; ++i)
    ASSERT_TRUE(w->Write(Sql("SELECT " + std::to_string(i) + " AS id")).ok());
  // Nothing is old yet: cleanup deletes nothing.
  auto none = w->CleanupLogs();
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->files_deleted, 0);
  // Commits 0..15 are 40 days old.
  int64_t old = NowMillis() - 40LL * 24 * 3600 * 1000;
  for (int v = 0; v <= 15; ++v) {
    ASSERT_TRUE(fs::LocalFileSystem()
                    ->SetModificationTime(table_ + "/_delta_log/" + CommitFileName(Version(v)), old)
                    .ok());
  }
  auto cleaned = w->CleanupLogs();
  ASSERT_TRUE(cleaned.ok()) << cleaned.status().ToString();
  EXPECT_EQ(cleaned->log_start, std::optional<Version>(Version(10)));
  EXPECT_EQ(cleaned->files_deleted, 10);  // commits 0..9
  EXPECT_FALSE(LogHas(CommitFileName(Version(9))));
  EXPECT_TRUE(LogHas(CommitFileName(Version(10))));
  EXPECT_TRUE(LogHas(CheckpointFileName(Version(10))));
  EXPECT_EQ(ReadRows().size(), 25u);
  auto t = Reader();
  EXPECT_TRUE(t->SnapshotAt(Version(10)).ok());
  auto gone = t->SnapshotAt(Version(5));
  EXPECT_FALSE(gone.ok());
  EXPECT_TRUE(gone.status().IsNotFound()) << gone.status().ToString();
  // Writing on continues normally.
  ASSERT_TRUE(w->Write(Sql("SELECT 99 AS id")).ok());
  EXPECT_EQ(ReadRows().size(), 26u);

  // A table without any checkpoint before the cutoff keeps everything.
  table_ = dir_.path() + "/small";
  auto w2 = Writer();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(w2->Write(Sql("SELECT 1 AS id")).ok());
  for (int v = 0; v < 5; ++v) {
    ASSERT_TRUE(fs::LocalFileSystem()
                    ->SetModificationTime(table_ + "/_delta_log/" + CommitFileName(Version(v)), old)
                    .ok());
  }
  auto kept =
      CleanupExpiredLogs(fs::LocalFileSystem().get(), table_, kDefaultLogRetentionMs, NowMillis());
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->files_deleted, 0);
}

// Background checkpoints (post_commit.h): written after Write returns, each describing exactly
// its version although later commits land meanwhile; Checkpoint() and the destructor drain them.
TEST_F(CheckpointWriterTest, BackgroundCheckpointsDescribeTheirVersion) {
  TableWriterOptions options;
  options.background_checkpoints = true;
  auto w = Writer(fs::LocalFileSystem(), options);
  WriteOptions opts;
  opts.txn_app_id = "app";
  for (int i = 0; i < 21; ++i) {
    opts.txn_version = i;
    auto r = w->Write(Sql("SELECT " + std::to_string(i) + " AS id"), opts);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  w.reset();  // waits for the running checkpoint (20)
  EXPECT_TRUE(LogHas(CheckpointFileName(Version(20))));
  auto last = nlohmann::json::parse(
      *fs::LocalFileSystem()->ReadFile(table_ + "/_delta_log/_last_checkpoint"));
  EXPECT_EQ(last["version"], 20);
  EXPECT_EQ(last["numOfAddFiles"], 21);
  // Checkpoint 10 (if it was not replaced by 20 before it started) holds version 10's 11 adds.
  if (LogHas(CheckpointFileName(Version(10)))) {
    std::string cp = table_ + "/_delta_log/" + CheckpointFileName(Version(10));
    auto n = Sql("SELECT count(add), max(txn.version) FROM read_parquet('" + Escape(cp) + "')");
    EXPECT_EQ(testing::Rows(n), std::vector<std::string>{"11|10"});
  }
  // No temporary files are left in the log.
  for (const auto& e : std::filesystem::directory_iterator(table_ + "/_delta_log")) {
    EXPECT_FALSE(fs::IsTempFileName(e.path().filename().string())) << e.path();
  }
  // The reader uses checkpoint 20 and sees every row (read from the log, not from the
  // snapshot this process cached when the writer committed).
  ClearSnapshotCache();
  auto t = Reader();
  auto snap = t->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_TRUE((*snap)->segment.checkpoint.has_value());
  EXPECT_EQ((*snap)->segment.checkpoint->version, Version(20));
  auto rows = t->Scan(**snap);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->num_rows(), 21);

  // An explicit Checkpoint() waits for a background one and then writes the latest version.
  auto w2 = Writer(fs::LocalFileSystem(), options);
  for (int i = 21; i < 30; ++i) {
    opts.txn_version = i;
    ASSERT_TRUE(w2->Write(Sql("SELECT " + std::to_string(i) + " AS id"), opts).ok());
  }
  opts.txn_version = 30;
  ASSERT_TRUE(w2->Write(Sql("SELECT 30 AS id"), opts).ok());  // version 30: background
  auto cp = w2->Checkpoint();
  ASSERT_TRUE(cp.ok()) << cp.status().ToString();
  EXPECT_EQ(cp->version, 30);
  EXPECT_TRUE(cp->already_existed);  // the background checkpoint of 30 finished first
  EXPECT_EQ(cp->num_add_files, 31);
}

TEST_F(CheckpointWriterTest, BadIntervalIsRefused) {
  auto w = Writer();
  ASSERT_TRUE(w->Write(Sql("SELECT 1 AS id")).ok());
  auto r = w->SetProperties({{"delta.checkpointInterval", "zero"}});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("delta.checkpointInterval"));
}

}  // namespace
}  // namespace sluice::delta
