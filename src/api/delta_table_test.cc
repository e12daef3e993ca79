// Tests of sluice::DeltaTable (include/sluice/delta_table.h). Tables are set up with the internal
// Delta writer; everything else goes through the public header.
#include "sluice/delta_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "delta/table_writer.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "fs/test_util.h"
#include "sluice/session.h"

namespace sluice {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Sorted(const Rows& rows) {
  std::vector<std::string> out = rows.RowStrings();
  std::sort(out.begin(), out.end());
  return out;
}

class DeltaTableApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Join("events");
    auto engine = engine::Engine::Open();
    ASSERT_TRUE(engine.ok());
    engine_ = std::move(*engine);
    // v0: ids 1..4 in one file.
    Write("SELECT range::BIGINT AS id, 'v' || range AS v FROM range(1, 5)");
  }

  void Write(const std::string& sql) {
    delta::TableWriterOptions o;
    o.commit.sync = false;
    auto w = delta::DeltaTableWriter::Open(fs::LocalFileSystem(), engine_.get(), path_, o);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto conn = engine_->Connect();
    ASSERT_TRUE(conn.ok());
    auto rows = (*conn)->Query(sql);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    auto r = (*w)->Write(*rows);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  std::unique_ptr<DeltaTable> Open() {
    auto t = DeltaTable::ForPath(path_, {.engine_threads = 1, .sync = false});
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(*t) : nullptr;
  }

  std::vector<std::string> All(DeltaTable* t, std::optional<int64_t> version = std::nullopt) {
    auto rows = t->Scan("", version);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? Sorted(*rows) : std::vector<std::string>{"<error>"};
  }

  std::vector<std::string> Operations(DeltaTable* t) {
    auto h = t->History();
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    std::vector<std::string> out;
    if (!h.ok()) return out;
    auto col = h->ColumnIndex("operation");
    EXPECT_TRUE(col.has_value());
    for (int64_t r = 0; col && r < h->num_rows(); ++r) out.push_back(*h->GetString(r, *col));
    return out;
  }

  fs::ScopedTempDir dir_{"sluice-delta-api"};
  std::string path_;
  std::unique_ptr<engine::Engine> engine_;
};

TEST_F(DeltaTableApiTest, ForPathOfNoTableIsNotFound) {
  auto t = DeltaTable::ForPath(dir_.Join("nothing"));
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(t.status().IsNotFound()) << t.status().ToString();
}

TEST_F(DeltaTableApiTest, ScanWithConditionAndTimeTravel) {
  auto t = Open();
  ASSERT_TRUE(t);
  EXPECT_EQ(*t->Version(), 0);
  EXPECT_THAT(All(t.get()), ElementsAre("1,v1", "2,v2", "3,v3", "4,v4"));
  auto some = t->Scan("id >= 3 AND v <> 'v4'");
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_THAT(Sorted(*some), ElementsAre("3,v3"));
  EXPECT_EQ(some->columns()[0].name, "id");
  auto bad = t->Scan("no_such_column = 1");
  EXPECT_FALSE(bad.ok());
  auto missing = t->Scan("", 7);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
}

TEST_F(DeltaTableApiTest, DeleteUpdateRestoreHistory) {
  auto t = Open();
  ASSERT_TRUE(t);
  auto d = t->Delete("id = 1");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->version, 1);
  EXPECT_EQ(d->metrics.at("numDeletedRows"), 1);
  auto nothing = t->Delete("id = 100");
  ASSERT_TRUE(nothing.ok());
  EXPECT_FALSE(nothing->version.has_value());  // no commit

  auto u = t->Update({{"v", "upper(t.v) || '!'"}}, "id >= 3");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->version, 2);
  EXPECT_EQ(u->metrics.at("numUpdatedRows"), 2);
  EXPECT_THAT(All(t.get()), ElementsAre("2,v2", "3,V3!", "4,V4!"));
  auto bad = t->Update({{"nope", "1"}});
  EXPECT_FALSE(bad.ok());

  auto r = t->RestoreToVersion(0);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 3);
  EXPECT_THAT(All(t.get()), ElementsAre("1,v1", "2,v2", "3,v3", "4,v4"));
  EXPECT_THAT(All(t.get(), 2), ElementsAre("2,v2", "3,V3!", "4,V4!"));
  EXPECT_THAT(Operations(t.get()), ElementsAre("RESTORE", "UPDATE", "DELETE", "WRITE"));
  auto limited = t->History(1);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->num_rows(), 1);

  auto detail = t->DetailAsJson();
  ASSERT_TRUE(detail.ok()) << detail.status().ToString();
  EXPECT_THAT(*detail, HasSubstr("\"format\":\"delta\""));
  EXPECT_THAT(*detail, HasSubstr("\"numFiles\":1"));
}

TEST_F(DeltaTableApiTest, MergeWithTxnIsExactlyOnce) {
  auto t = Open();
  ASSERT_TRUE(t);
  auto run = [&](int64_t batch_id) {
    return t
        ->MergeSql("SELECT 2::BIGINT AS id, 'new2' AS v UNION ALL SELECT 9, 'new9'", "s",
                   "t.id = s.id")
        .WhenMatchedUpdateAll()
        .WhenNotMatchedInsertAll()
        .Execute({.txn_app_id = "upserts", .txn_version = batch_id});
  };
  auto first = run(5);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->version, 1);
  EXPECT_FALSE(first->skipped);
  EXPECT_EQ(first->metrics.at("numTargetRowsUpdated"), 1);
  EXPECT_EQ(first->metrics.at("numTargetRowsInserted"), 1);
  EXPECT_EQ(*t->LatestTxnVersion("upserts"), 5);
  // The same batch again (a foreachBatch re-run after a crash): skipped, nothing committed.
  auto again = run(5);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->skipped);
  EXPECT_FALSE(again->version.has_value());
  EXPECT_EQ(*t->Version(), 1);
  EXPECT_THAT(All(t.get()), ElementsAre("1,v1", "2,new2", "3,v3", "4,v4", "9,new9"));

  // Clauses with conditions and explicit assignments; the source as Rows.
  auto source = t->Scan("id IN (1, 9)");
  ASSERT_TRUE(source.ok());
  auto m = t->Merge(*source, "src", "tgt.id = src.id")
               .TargetAlias("tgt")
               .WhenMatchedDelete("src.id = 9")
               .WhenMatchedUpdate({{"v", "'m' || src.v"}})
               .Execute();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_THAT(All(t.get()), ElementsAre("1,mv1", "2,new2", "3,v3", "4,v4"));

  // Several source rows for one target row: Spark's error, nothing committed.
  auto dup = t->MergeSql("SELECT 1::BIGINT AS id UNION ALL SELECT 1", "s", "t.id = s.id")
                 .WhenMatchedUpdate({{"v", "'x'"}})
                 .Execute();
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(dup.status().ToString(), HasSubstr("multiple source rows matched"));
  auto half = t->MergeSql("SELECT 1 AS id", "s", "t.id = s.id")
                  .Execute({.txn_app_id = "a", .txn_version = std::nullopt});
  EXPECT_FALSE(half.ok());
}

TEST_F(DeltaTableApiTest, OptimizeAndVacuum) {
  Write("SELECT 5::BIGINT AS id, 'v5' AS v");
  Write("SELECT 6::BIGINT AS id, 'v6' AS v");
  auto t = Open();
  ASSERT_TRUE(t);
  auto o = t->Optimize();
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->metrics.at("numRemovedFiles"), 3);
  EXPECT_EQ(o->metrics.at("numAddedFiles"), 1);
  EXPECT_EQ(All(t.get()).size(), 6u);
  auto refused = t->Vacuum(0.0);
  ASSERT_FALSE(refused.ok());
  auto dry = t->Vacuum(0.0, /*dry_run=*/true, /*retention_check=*/false);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  EXPECT_EQ(dry->size(), 3u);  // the three compacted files
  for (const std::string& f : *dry) EXPECT_TRUE(std::filesystem::exists(f)) << f;
  auto done = t->Vacuum(0.0, false, false);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  for (const std::string& f : *done) EXPECT_FALSE(std::filesystem::exists(f)) << f;
  EXPECT_EQ(All(t.get()).size(), 6u);
}

TEST_F(DeltaTableApiTest, ThroughASession) {
  auto session = Session::Open({.warehouse = dir_.Join("wh")});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto t = DeltaTable::ForPath(session->get(), path_);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto rows = (*t)->ToDF().Where("id > 2").Collect();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_THAT(Sorted(*rows), ElementsAre("3,v3", "4,v4"));
  // A DataFrame of the session as the merge source.
  DataFrame src = (*session)->Sql("SELECT 4::BIGINT AS id, 'four' AS v");
  auto m = (*t)->Merge(src, "s", "t.id = s.id").WhenMatchedUpdateAll().Execute();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->metrics.at("numTargetRowsUpdated"), 1);
  EXPECT_THAT(All(t->get()), ElementsAre("1,v1", "2,v2", "3,v3", "4,four"));
  auto missing = DeltaTable::ForName(session->get(), "no_table");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().ToString(), HasSubstr("does not exist"));
  auto standalone = Open();
  ASSERT_TRUE(standalone);
  EXPECT_FALSE(standalone->ToDF().status().ok());
}

}  // namespace
}  // namespace sluice
