// VACUUM: retention check, dry run, what is deleted and what is never touched.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "delta/dml_delete.h"
#include "delta/dml_test_util.h"
#include "delta/dml_update.h"
#include "delta/vacuum.h"

namespace sluice::delta {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Rows;

constexpr int64_t kDayMs = 24LL * 3600 * 1000;

class VacuumTest : public testing::DmlTestBase {
 protected:
  void Touch(const std::string& rel, const std::string& content = "x") {
    std::filesystem::create_directories(std::filesystem::path(table_ + "/" + rel).parent_path());
    std::ofstream(table_ + "/" + rel) << content;
  }
  void SetOld(const std::string& rel, int64_t mtime_ms) {
    ASSERT_TRUE(fs::LocalFileSystem()->SetModificationTime(table_ + "/" + rel, mtime_ms).ok());
  }
  std::vector<std::string> Relative(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const auto& p : paths) out.push_back(p.substr(table_.size() + 1));
    return out;
  }
  // Makes every file under the table (data, logs, everything) 30 days old.
  void AgeEverything(int64_t now) {
    for (auto& e : std::filesystem::recursive_directory_iterator(table_)) {
      if (e.is_regular_file()) {
        ASSERT_TRUE(
            fs::LocalFileSystem()->SetModificationTime(e.path().string(), now - 30 * kDayMs).ok());
      }
    }
  }
};

TEST_F(VacuumTest, RetentionCheckRefusesShortRetention) {
  Append("SELECT 1 AS id");
  VacuumOptions o;
  o.retain_hours = 0;
  auto r = Vacuum(Table(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().ToString(),
              HasSubstr("Are you sure you would like to vacuum files with such a low retention"));
  EXPECT_THAT(r.status().ToString(), HasSubstr("sluice.delta.retentionDurationCheck = false"));
  EXPECT_THAT(r.status().ToString(), HasSubstr("\"168 hours\""));
  o.retain_hours = -1;
  o.retention_duration_check = false;
  EXPECT_FALSE(Vacuum(Table(), o).ok());
  o.retain_hours = 200;  // longer than the default is always fine
  o.retention_duration_check = true;
  EXPECT_TRUE(Vacuum(Table(), o).ok());
}

TEST_F(VacuumTest, DeletesOnlyUnreferencedOldFilesAndNeverHiddenOnes) {
  WriteOptions wo;
  wo.configuration["delta.enableChangeDataFeed"] = "true";
  Append("SELECT range AS id, 0 AS n FROM range(10)", wo);                     // v0: file A
  ASSERT_TRUE(UpdateRows(Table(), {{"n", "1"}}, std::string("id = 3")).ok());  // v1: A -> B, cdc C
  ASSERT_TRUE(writer_->Checkpoint().ok());  // _delta_log checkpoint
  Touch("_checkpoints/query1/offsets/0", "{}");
  Touch("_other/file.parquet");
  Touch(".hidden.parquet");
  Touch("stray/untracked.parquet");
  const int64_t now = NowMillis() + 10 * kDayMs;  // 10 days later: A's tombstone has expired
  AgeEverything(now);
  Touch("fresh-untracked.parquet");  // too new to delete: 1 day old
  SetOld("fresh-untracked.parquet", now - kDayMs);

  auto live = LiveFiles();
  ASSERT_EQ(live.size(), 1u);
  auto files_before = DataFiles();

  VacuumOptions o;
  o.dry_run = true;
  o.now_ms = [now] { return now; };
  auto dry = Vacuum(Table(), o);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  auto rel = Relative(dry->files);
  // A (removed 10 days ago), the cdc file (older than retention) and the untracked stray file.
  ASSERT_EQ(rel.size(), 3u) << ::testing::PrintToString(rel);
  int cdc = 0, stray = 0;
  for (const auto& f : rel) {
    EXPECT_NE(f, live[0]);
    EXPECT_EQ(f.find("_delta_log"), std::string::npos);
    EXPECT_EQ(f.find("_checkpoints"), std::string::npos);
    cdc += f.rfind("_change_data/", 0) == 0;
    stray += f == "stray/untracked.parquet";
  }
  EXPECT_EQ(cdc, 1);
  EXPECT_EQ(stray, 1);
  EXPECT_EQ(DataFiles(), files_before);  // a dry run deletes nothing
  const int64_t log_version = ValidateLog();

  o.dry_run = false;
  auto real = Vacuum(Table(), o);
  ASSERT_TRUE(real.ok()) << real.status().ToString();
  EXPECT_EQ(real->files, dry->files);
  for (const auto& f : real->files) EXPECT_FALSE(std::filesystem::exists(f)) << f;
  EXPECT_TRUE(std::filesystem::exists(table_ + "/" + live[0]));
  EXPECT_TRUE(std::filesystem::exists(table_ + "/_checkpoints/query1/offsets/0"));
  EXPECT_TRUE(std::filesystem::exists(table_ + "/_other/file.parquet"));
  EXPECT_TRUE(std::filesystem::exists(table_ + "/.hidden.parquet"));
  EXPECT_TRUE(std::filesystem::exists(table_ + "/fresh-untracked.parquet"));
  EXPECT_TRUE(std::filesystem::exists(table_ + "/_delta_log/00000000000000000000.json"));
  EXPECT_TRUE(
      std::filesystem::exists(table_ + "/_delta_log/00000000000000000001.checkpoint.parquet"));
  EXPECT_TRUE(std::filesystem::exists(table_ + "/_delta_log/_last_checkpoint"));
  // VACUUM START / VACUUM END commits.
  ASSERT_EQ(real->start_version, Version(log_version + 1));
  ASSERT_EQ(real->end_version, Version(log_version + 2));
  EXPECT_EQ(CommitInfo(log_version + 1)["operation"], "VACUUM START");
  EXPECT_EQ(Metric(log_version + 1, "numFilesToDelete"), "3");
  EXPECT_EQ(CommitInfo(log_version + 2)["operation"], "VACUUM END");
  EXPECT_EQ(Metric(log_version + 2, "numDeletedFiles"), "3");
  EXPECT_EQ(ReadRows(),
            Expected("SELECT range, CASE WHEN range = 3 THEN 1 ELSE 0 END FROM range(10)"));
}

TEST_F(VacuumTest, RecentTombstonesAreKept) {
  Append("SELECT range AS id FROM range(10)");
  ASSERT_TRUE(DeleteRows(Table(), std::string("id = 1")).ok());
  const int64_t now = NowMillis() + 2 * kDayMs;  // the tombstone is 2 days old: within 7 days
  AgeEverything(now);
  VacuumOptions o;
  o.dry_run = true;
  o.now_ms = [now] { return now; };
  auto r = Vacuum(Table(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->files.empty()) << ::testing::PrintToString(r->files);
  // With RETAIN 24 HOURS (check off) the removed file goes.
  o.retain_hours = 24;
  o.retention_duration_check = false;
  auto r2 = Vacuum(Table(), o);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->files.size(), 1u);
}

}  // namespace
}  // namespace sluice::delta
