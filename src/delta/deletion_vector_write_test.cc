// DML with deletion vectors (docs/delta-dml.md, "Deletion vectors"), on tables Spark wrote with
// DVs (test/fixtures/delta/spark/deletion-vectors*) and on tables Sluice creates: appends keep
// the DVs; DELETE/UPDATE/MERGE mark rows in DVs instead of rewriting files (a file that had a DV
// gets the union, the commit removes the old entry and adds the same path with the new DV); the
// change data feed, checkpoints, VACUUM and OPTIMIZE handle them; rewrites never resurrect rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "delta/commit.h"
#include "delta/deletion_vector.h"
#include "delta/dml_delete.h"
#include "delta/dml_merge.h"
#include "delta/dml_test_util.h"
#include "delta/dml_update.h"
#include "delta/optimize.h"
#include "delta/test_util.h"
#include "delta/vacuum.h"
#include "delta/write_util.h"

namespace sluice::delta {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace sfs = std::filesystem;

class DeletionVectorWriteTest : public testing::DmlTestBase {
 protected:
  // Opens the writer on a copy of the Spark fixture `name`.
  void UseFixture(const std::string& name) {
    table_ = testing::CopyFixture("spark/" + name, dir_);
    writer_ = Writer();
    ASSERT_TRUE(writer_);
  }

  // The one line of commit `version` holding `action` (and nothing when there are several).
  nlohmann::json OnlyAction(int64_t version, const std::string& action) {
    nlohmann::json found;
    int n = 0;
    for (const auto& line : CommitLines(version)) {
      if (line.contains(action)) {
        found = line[action];
        ++n;
      }
    }
    EXPECT_EQ(n, 1) << action << " in commit " << version;
    return found;
  }

  // Every add of commit `version` names a file of its size holding numRecords rows (the
  // fixtures' Spark commits fail WriterTestBase::ValidateLog's engineInfo check).
  void ValidateAdds(int64_t version) {
    for (const auto& line : CommitLines(version)) {
      if (!line.contains("add")) continue;
      const std::string path = table_ + "/" + line["add"]["path"].get<std::string>();
      ASSERT_TRUE(sfs::exists(path)) << path;
      EXPECT_EQ(static_cast<int64_t>(sfs::file_size(path)), line["add"]["size"].get<int64_t>());
      auto stats = nlohmann::json::parse(line["add"]["stats"].get<std::string>());
      auto count = conn_->Query("SELECT count(*) FROM read_parquet('" + path + "')");
      ASSERT_TRUE(count.ok()) << count.status().ToString();
      EXPECT_EQ(*count->GetInt64(0, 0), stats["numRecords"].get<int64_t>()) << path;
    }
  }

  // Files under the table (not _delta_log) whose name starts with `prefix`.
  int CountFiles(const std::string& prefix) {
    int n = 0;
    for (const auto& e : sfs::recursive_directory_iterator(table_)) {
      if (e.is_regular_file() && e.path().filename().string().rfind(prefix, 0) == 0 &&
          e.path().string().find("_delta_log") == std::string::npos) {
        ++n;
      }
    }
    return n;
  }

  // "0".."49" without the ids in `gone`, plus `more`, sorted as Rows() sorts.
  static std::vector<std::string> Ids(int end, const std::set<int>& gone,
                                      const std::vector<std::string>& more = {}) {
    std::vector<std::string> out = more;
    for (int i = 0; i < end; ++i) {
      if (!gone.count(i)) out.push_back(std::to_string(i));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  static constexpr const char* kDvFile = "deletion_vector_faa9a331-7067-4729-b46d-a6043d8e37ab.bin";
  static constexpr const char* kSparkDv = "}L*kAAa.V&V#8Vyj=RF4";  // ids 0, 7, 14 deleted
};

TEST_F(DeletionVectorWriteTest, AppendKeepsTheDeletionVectors) {
  UseFixture("deletion-vectors");
  auto r = writer_->Write(Sql("SELECT 99::BIGINT AS id"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(CountActions(3, "add"), 1);
  EXPECT_EQ(CountActions(3, "remove"), 0);
  EXPECT_EQ(ReadRows(), Ids(50, {0, 7, 14}, {"99"}));
  EXPECT_TRUE(sfs::exists(table_ + "/" + kDvFile));
}

TEST_F(DeletionVectorWriteTest, DeleteMarksRowsInTheFilesDeletionVector) {
  UseFixture("deletion-vectors");
  auto r = DeleteRows(Table(), std::string("id IN (1, 2) OR id = 49 OR id = 7"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->version, Version(3));
  EXPECT_EQ(ReadRows(), Ids(50, {0, 1, 2, 7, 14, 49}));
  auto add = OnlyAction(3, "add");
  auto remove = OnlyAction(3, "remove");
  EXPECT_EQ(add["path"], remove["path"]);
  EXPECT_EQ(add["deletionVector"]["storageType"], "u");
  EXPECT_EQ(add["deletionVector"]["cardinality"], 6);
  EXPECT_EQ(add["deletionVector"]["offset"], 1);
  EXPECT_EQ(remove["deletionVector"]["pathOrInlineDv"], kSparkDv);
  EXPECT_EQ(remove["deletionVector"]["cardinality"], 3);
  EXPECT_EQ(remove["dataChange"], true);
  auto stats = nlohmann::json::parse(add["stats"].get<std::string>());
  EXPECT_EQ(stats["numRecords"], 50);
  EXPECT_EQ(stats["tightBounds"], false);
  EXPECT_EQ(stats["minValues"]["id"], 0);
  EXPECT_EQ(Metric(3, "numDeletedRows"), "3");
  EXPECT_EQ(Metric(3, "numDeletionVectorsAdded"), "1");
  EXPECT_EQ(Metric(3, "numDeletionVectorsUpdated"), "1");
  EXPECT_EQ(Metric(3, "numDeletionVectorsRemoved"), "1");
  EXPECT_EQ(Metric(3, "numAddedFiles"), "0");
  EXPECT_EQ(Metric(3, "numRemovedFiles"), "0");
  EXPECT_EQ(Metric(3, "numCopiedRows"), "0");
  EXPECT_EQ(CountFiles("part-"), 1);  // nothing rewritten
  EXPECT_EQ(CountFiles("deletion_vector_"), 2);
  ValidateAdds(3);
  // The old version still reads its own DV.
  EXPECT_EQ(ReadRows(2), Ids(50, {0, 7, 14}));
  // Nothing matches: no commit.
  auto none = DeleteRows(Table(), std::string("id = 1"));
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->version);
}

TEST_F(DeletionVectorWriteTest, DeletingEveryLiveRowRemovesTheFile) {
  UseFixture("deletion-vectors");
  auto r = DeleteRows(Table(), std::string("id >= 0"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(ReadRows().empty());
  EXPECT_EQ(CountActions(3, "add"), 0);
  EXPECT_EQ(OnlyAction(3, "remove")["deletionVector"]["pathOrInlineDv"], kSparkDv);
  EXPECT_EQ(Metric(3, "numDeletedRows"), "47");
  EXPECT_EQ(Metric(3, "numRemovedFiles"), "1");
  EXPECT_EQ(CountFiles("deletion_vector_"), 1);  // no DV file without a DV in it
}

TEST_F(DeletionVectorWriteTest, UpdateWritesTheNewRowsAndADeletionVector) {
  UseFixture("deletion-vectors");
  auto r = UpdateRows(Table(), {{"id", "id + 1000"}}, std::string("id < 5"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadRows(), Ids(50, {0, 1, 2, 3, 4, 7, 14}, {"1001", "1002", "1003", "1004"}));
  EXPECT_EQ(CountActions(3, "add"), 2);
  EXPECT_EQ(CountActions(3, "remove"), 1);
  EXPECT_EQ(Metric(3, "numUpdatedRows"), "4");
  EXPECT_EQ(Metric(3, "numCopiedRows"), "0");
  EXPECT_EQ(Metric(3, "numDeletionVectorsAdded"), "1");
  for (const auto& line : CommitLines(3)) {
    if (!line.contains("add")) continue;
    auto stats = nlohmann::json::parse(line["add"]["stats"].get<std::string>());
    if (line["add"].contains("deletionVector")) {
      EXPECT_EQ(line["add"]["deletionVector"]["cardinality"], 7);
    } else {
      EXPECT_EQ(stats["numRecords"], 4);  // only the updated rows are written
    }
  }
  ValidateAdds(3);
}

TEST_F(DeletionVectorWriteTest, MergeMarksUpdatedAndDeletedRowsAndWritesOnlyNewRows) {
  UseFixture("deletion-vectors");
  MergeSpec spec;
  spec.source_sql = "SELECT * FROM (VALUES (1, 'u'), (2, 'd'), (7, 'u'), (500, 'i')) AS v(id, op)";
  spec.on = "t.id = s.id";
  spec.clauses = {
      {MergeClauseKind::kMatched, std::string("s.op = 'd'"), MergeActionKind::kDelete},
      {MergeClauseKind::kMatched, std::nullopt, MergeActionKind::kUpdate, {{"id", "s.id + 1000"}}},
      {MergeClauseKind::kNotMatched, std::nullopt, MergeActionKind::kInsert, {{"id", "s.id"}}}};
  auto r = MergeInto(Table(), spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // 7 is already deleted by Spark's DV: it does not match, so it is inserted.
  EXPECT_EQ(ReadRows(), Ids(50, {0, 1, 2, 14}, {"1001", "500"}));
  EXPECT_EQ(Metric(3, "numTargetRowsUpdated"), "1");
  EXPECT_EQ(Metric(3, "numTargetRowsDeleted"), "1");
  EXPECT_EQ(Metric(3, "numTargetRowsInserted"), "2");
  EXPECT_EQ(Metric(3, "numTargetRowsCopied"), "0");
  EXPECT_EQ(Metric(3, "numTargetDeletionVectorsAdded"), "1");
  EXPECT_EQ(Metric(3, "numTargetDeletionVectorsUpdated"), "1");
  EXPECT_EQ(Metric(3, "numOutputRows"), "3");
  ValidateAdds(3);
}

TEST_F(DeletionVectorWriteTest, ChangeDataFeedOfDeleteUpdateAndMergeWithDvs) {
  UseFixture("deletion-vectors-dml");  // CDF on; part-00000-474e... has a DV of ids 1-4
  auto d = DeleteRows(Table(), std::string("id = 5 OR id = 19"));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(CountActions(5, "cdc"), 0);  // as Spark: the feed derives deletes from the DV
  EXPECT_THAT(ChangeRows(5, 5, {"id", "v", "_change_type"}),
              ElementsAre("19|19|delete", "5|5|delete"));
  auto u = UpdateRows(Table(), {{"v", "'x'"}}, std::string("id = 6"));
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(CountActions(6, "cdc"), 1);
  EXPECT_THAT(ChangeRows(6, 6, {"id", "v", "_change_type"}),
              ElementsAre("6|6|update_preimage", "6|x|update_postimage"));
  MergeSpec spec;
  spec.source_sql = "SELECT * FROM (VALUES (7, 'm'), (8, 'd'), (300, 'n')) AS v(id, v)";
  spec.on = "t.id = s.id";
  spec.clauses = {{MergeClauseKind::kMatched, std::string("s.v = 'd'"), MergeActionKind::kDelete},
                  {MergeClauseKind::kMatched, std::nullopt, MergeActionKind::kUpdateAll},
                  {MergeClauseKind::kNotMatched, std::nullopt, MergeActionKind::kInsertAll}};
  auto m = MergeInto(Table(), spec);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_THAT(
      ChangeRows(7, 7, {"id", "v", "_change_type"}),
      ElementsAre("300|n|insert", "7|7|update_preimage", "7|m|update_postimage", "8|8|delete"));
  EXPECT_THAT(ReadRows(-1, {"id", "v"}),
              ::testing::UnorderedElementsAre("0|0", "10|10", "100|new", "11|11", "12|12", "13|13",
                                              "14|14", "15|15", "16|16", "17|17", "18|18", "3|u",
                                              "300|n", "4|m", "6|x", "7|m", "9|9"));
}

TEST_F(DeletionVectorWriteTest, CheckpointCarriesTheDeletionVectors) {
  UseFixture("deletion-vectors");
  ASSERT_TRUE(DeleteRows(Table(), std::string("id = 1")).ok());
  auto cp = writer_->Checkpoint();
  ASSERT_TRUE(cp.ok()) << cp.status().ToString();
  // A copy under another path is read from the checkpoint (no process cache for it).
  const std::string copy = dir_.path() + "/copy";
  sfs::copy(table_, copy, sfs::copy_options::recursive);
  ASSERT_TRUE(sfs::exists(copy + "/_delta_log/00000000000000000003.checkpoint.parquet"));
  table_ = copy;
  auto t = Reader();
  ASSERT_TRUE(t);
  auto snap = t->Latest();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_EQ((*snap)->files.size(), 1u);
  ASSERT_TRUE((*snap)->files[0].deletion_vector);
  EXPECT_EQ((*snap)->files[0].deletion_vector->cardinality, 4);
  EXPECT_EQ(ReadRows(), Ids(50, {0, 1, 7, 14}));
}

TEST_F(DeletionVectorWriteTest, VacuumKeepsReferencedDvFilesAndRemovesExpiredOnes) {
  UseFixture("deletion-vectors");
  ASSERT_TRUE(DeleteRows(Table(), std::string("id = 1")).ok());
  std::string new_dv;
  for (const auto& e : sfs::directory_iterator(table_)) {
    std::string n = e.path().filename().string();
    if (n.rfind("deletion_vector_", 0) == 0 && n != kDvFile) new_dv = n;
  }
  ASSERT_FALSE(new_dv.empty());
  VacuumOptions options;
  options.retain_hours = 0;
  options.retention_duration_check = false;
  const int64_t later = NowMillis() + 60'000;
  options.now_ms = [later] { return later; };
  options.dry_run = true;
  auto dry = Vacuum(Table(), options);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  EXPECT_THAT(dry->files, ElementsAre(table_ + "/" + kDvFile));  // only the old DV's entry expired
  options.dry_run = false;
  auto run = Vacuum(Table(), options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_FALSE(sfs::exists(table_ + "/" + kDvFile));
  EXPECT_TRUE(sfs::exists(table_ + "/" + new_dv));
  EXPECT_EQ(ReadRows(), Ids(50, {0, 1, 7, 14}));
}

TEST_F(DeletionVectorWriteTest, OptimizeAndRewritesApplyTheDvs) {
  UseFixture("deletion-vectors");
  ASSERT_TRUE(writer_->Write(Sql("SELECT 99::BIGINT AS id")).ok());  // version 3
  auto o = Optimize(Table());
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  ASSERT_EQ(o->version, Version(4));
  auto add = OnlyAction(4, "add");
  EXPECT_FALSE(add.contains("deletionVector"));
  EXPECT_EQ(nlohmann::json::parse(add["stats"].get<std::string>())["numRecords"], 48);
  EXPECT_EQ(ReadRows(), Ids(50, {0, 7, 14}, {"99"}));
}

TEST_F(DeletionVectorWriteTest, ReorgPurgeRewritesOnlyTheFilesWithDvs) {
  UseFixture("deletion-vectors");
  ASSERT_TRUE(writer_->Write(Sql("SELECT 99::BIGINT AS id")).ok());  // version 3, no DV
  OptimizeOptions purge;
  purge.purge = true;
  auto r = Optimize(Table(), purge);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->version, Version(4));
  // The Spark file with its DV is rewritten alone (a bin of one file); the new file is left.
  auto remove = OnlyAction(4, "remove");
  EXPECT_EQ(remove["deletionVector"]["pathOrInlineDv"], kSparkDv);
  EXPECT_EQ(remove["dataChange"], false);
  auto add = OnlyAction(4, "add");
  EXPECT_FALSE(add.contains("deletionVector"));
  EXPECT_EQ(add["dataChange"], false);
  EXPECT_EQ(nlohmann::json::parse(add["stats"].get<std::string>())["numRecords"], 47);
  auto info = OnlyAction(4, "commitInfo");
  EXPECT_EQ(info["operation"], "REORG");
  EXPECT_EQ(info["operationParameters"]["applyPurge"], true);
  EXPECT_EQ(info["operationParameters"]["predicate"], "[]");
  EXPECT_EQ(info["operationMetrics"]["numDeletionVectorsRemoved"], "1");
  EXPECT_EQ(info["isolationLevel"], "SnapshotIsolation");
  std::vector<std::string> keys;
  for (const auto& [k, v] : info["operationMetrics"].items()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"maxFileSize", "minFileSize", "numAddedBytes",
                                            "numAddedFiles", "numDeletionVectorsRemoved",
                                            "numRemovedBytes", "numRemovedFiles", "p25FileSize",
                                            "p50FileSize", "p75FileSize"}));  // Spark's
  ValidateAdds(4);
  EXPECT_EQ(ReadRows(), Ids(50, {0, 7, 14}, {"99"}));
  // Nothing has a DV any more: no commit.
  auto again = Optimize(Table(), purge);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->version.has_value());
}

// Plain OPTIMIZE also compacts files of any size whose DV deletes at least 5 % of their rows
// (Delta's maxDeletedRowsRatio): Spark 4.2 / Delta 4.4, asked with minFileSize below every file,
// rewrote two files with 5 % (and with 5.2 %, 8 %, 12 %) deleted into one and left a file with
// 4 % deleted; a single such file (a bin of one) was left alone.
TEST_F(DeletionVectorWriteTest, OptimizePicksFilesByDeletedRowsRatio) {
  UseFixture("deletion-vectors");  // v2: 50 rows, 3 deleted by Spark's DV (6 %)
  ASSERT_TRUE(writer_->Write(Sql("SELECT range + 100 AS id FROM range(0, 100)")).ok());  // v3
  ASSERT_TRUE(writer_->Write(Sql("SELECT range + 300 AS id FROM range(0, 100)")).ok());  // v4
  auto d1 = DeleteRows(Table(), std::string("id BETWEEN 100 AND 104"));                  // v5: 5 %
  ASSERT_TRUE(d1.ok()) << d1.status().ToString();
  auto d2 = DeleteRows(Table(), std::string("id BETWEEN 300 AND 303"));  // v6: 4 %
  ASSERT_TRUE(d2.ok()) << d2.status().ToString();
  ASSERT_TRUE(OnlyAction(6, "add").contains("deletionVector"));
  OptimizeOptions big;
  big.min_file_size = 1;  // no file is small: only the ratio picks
  // Above every file's ratio: nothing to compact, no commit.
  OptimizeOptions strict = big;
  strict.max_deleted_rows_ratio = 0.5;
  auto none = Optimize(Table(), strict);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->version.has_value());
  auto r = Optimize(Table(), big);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->version, Version(7));
  std::set<std::string> removed_dvs;
  int removes = 0;
  for (const auto& line : CommitLines(7)) {
    if (!line.contains("remove")) continue;
    ++removes;
    removed_dvs.insert(line["remove"]["deletionVector"]["cardinality"].dump());
  }
  EXPECT_EQ(removes, 2);
  EXPECT_EQ(removed_dvs, (std::set<std::string>{"3", "5"}));  // not the 4 % file
  EXPECT_EQ(OnlyAction(7, "commitInfo")["isolationLevel"], "SnapshotIsolation");
  ValidateAdds(7);
  std::vector<std::string> expected = Ids(50, {0, 7, 14});
  for (int i = 105; i < 200; ++i) expected.push_back(std::to_string(i));
  for (int i = 304; i < 400; ++i) expected.push_back(std::to_string(i));
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> got = ReadRows();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
  // A file over the ratio alone in its bin is left alone (its bin has one file).
  auto again = Optimize(Table(), big);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->version.has_value());
}

TEST_F(DeletionVectorWriteTest, WithThePropertyOffDmlRewritesWithoutTheDeletedRows) {
  UseFixture("deletion-vectors");
  ASSERT_TRUE(writer_->SetProperties({{"delta.enableDeletionVectors", "false"}}).ok());
  auto d = DeleteRows(Table(), std::string("id = 1"));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(OnlyAction(4, "add").contains("deletionVector"));
  EXPECT_EQ(OnlyAction(4, "remove")["deletionVector"]["pathOrInlineDv"], kSparkDv);
  EXPECT_EQ(ReadRows(), Ids(50, {0, 1, 7, 14}));
  ValidateAdds(4);
}

TEST_F(DeletionVectorWriteTest, NewTableWithDeletionVectorsHasSparksProtocol) {
  table_ = dir_.path() + "/new";
  writer_ = Writer();
  CreateTableOptions create;
  create.configuration = {{"delta.enableDeletionVectors", "true"},
                          {"delta.enableChangeDataFeed", "true"}};
  ASSERT_TRUE(writer_->CreateTable(Sql("SELECT 1::BIGINT AS id").schema(), create).ok());
  auto protocol = OnlyAction(0, "protocol");
  EXPECT_EQ(protocol["minReaderVersion"], 3);
  EXPECT_EQ(protocol["minWriterVersion"], 7);
  EXPECT_EQ(protocol["readerFeatures"], nlohmann::json::parse(R"(["deletionVectors"])"));
  EXPECT_EQ(
      protocol["writerFeatures"],
      nlohmann::json::parse(R"(["deletionVectors","changeDataFeed","invariants","appendOnly"])"));
  Append("SELECT range::BIGINT AS id FROM range(10)");
  ASSERT_TRUE(DeleteRows(Table(), std::string("id = 3")).ok());
  EXPECT_EQ(OnlyAction(2, "add")["deletionVector"]["cardinality"], 1);
  EXPECT_THAT(ChangeRows(2, 2, {"id", "_change_type"}), ElementsAre("3|delete"));
  EXPECT_EQ(ReadRows(), Ids(10, {3}));
}

TEST_F(DeletionVectorWriteTest, EnablingDeletionVectorsUpgradesTheProtocol) {
  table_ = dir_.path() + "/legacy";
  writer_ = Writer();
  Append("SELECT range::BIGINT AS id FROM range(10)");
  ASSERT_TRUE(writer_->SetProperties({{"delta.enableDeletionVectors", "true"}}).ok());
  auto protocol = OnlyAction(1, "protocol");
  EXPECT_EQ(protocol["minReaderVersion"], 3);
  EXPECT_EQ(protocol["minWriterVersion"], 7);
  EXPECT_EQ(protocol["readerFeatures"], nlohmann::json::parse(R"(["deletionVectors"])"));
  EXPECT_EQ(protocol["writerFeatures"],
            nlohmann::json::parse(R"(["appendOnly","invariants","deletionVectors"])"));
  ASSERT_TRUE(DeleteRows(Table(), std::string("id < 2")).ok());
  EXPECT_EQ(OnlyAction(2, "add")["deletionVector"]["cardinality"], 2);
  EXPECT_EQ(ReadRows(), Ids(10, {0, 1}));
}

TEST_F(DeletionVectorWriteTest, RemoveWithoutTheLiveDvIsRefused) {
  UseFixture("deletion-vectors");
  auto txn = writer_->StartTransaction();
  ASSERT_TRUE(txn.ok());
  RemoveFile r;
  r.path = (*txn)->read_snapshot()->files[0].path;
  r.deletion_timestamp = NowMillis();
  (*txn)->Add(r);
  auto c = (*txn)->Commit();
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().IsInternal()) << c.status().ToString();
  EXPECT_THAT(c.status().message(), HasSubstr("does not carry the deletion vector"));
  EXPECT_FALSE(sfs::exists(table_ + "/_delta_log/" + CommitFileName(Version(3))));
}

TEST_F(DeletionVectorWriteTest, LostRaceDeletesItsDvFile) {
  UseFixture("deletion-vectors");
  auto other = Writer();
  ASSERT_TRUE(other);
  auto c = engine_->Connect();
  ASSERT_TRUE(c.ok());
  auto other_conn = c.MoveValueUnsafe();
  DmlOptions options;
  options.before_commit = [&]() -> Status {
    DmlTable t{other.get(), fs::LocalFileSystem(), engine_, other_conn.get()};
    return DeleteRows(t, std::string("id = 2")).status();
  };
  auto r = DeleteRows(Table(), std::string("id = 1"), options);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsConflict()) << r.status().ToString();
  EXPECT_EQ(CountFiles("deletion_vector_"), 2);  // Spark's and the winner's
  EXPECT_EQ(ReadRows(), Ids(50, {0, 2, 7, 14}));
}

}  // namespace
}  // namespace sluice::delta
