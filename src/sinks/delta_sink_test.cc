// Tests of DeltaSink: txn idempotency, append/complete/update, commitInfo, empty batches.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "delta/table.h"
#include "engine/test_util.h"
#include "fs/test_util.h"
#include "sinks/delta_sink.h"
#include "sinks/memory_sink.h"

namespace sluice::sinks {
namespace {

class DeltaSinkTest : public engine::testing::EngineTest {
 protected:
  std::unique_ptr<DeltaSink> Open(const std::string& query_id = "q-1") {
    DeltaSinkOptions o;
    o.path = dir_.Join("t");
    o.query_id = query_id;
    o.writer.commit.sync = false;
    auto s = DeltaSink::Open(fs::LocalFileSystem(), engine_.get(), o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? s.MoveValueUnsafe() : nullptr;
  }
  std::vector<std::string> TableRows() {
    auto t = delta::DeltaTable::Open(fs::LocalFileSystem(), engine_.get(), dir_.Join("t"));
    EXPECT_TRUE(t.ok());
    auto snap = (*t)->Latest();
    EXPECT_TRUE(snap.ok());
    auto b = (*t)->Scan(**snap);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    std::vector<std::string> out;
    for (int64_t r = 0; r < b->num_rows(); ++r) out.push_back(RowToString(*b, r));
    std::sort(out.begin(), out.end());
    return out;
  }
  int64_t NumCommits() {
    auto l = fs::LocalFileSystem()->List(dir_.Join("t/_delta_log"));
    int64_t n = 0;
    if (!l.ok()) return 0;
    for (const auto& f : *l) n += f.path.ends_with(".json") ? 1 : 0;
    return n;
  }
  fs::ScopedTempDir dir_;
};

TEST_F(DeltaSinkTest, AppendIsIdempotentPerBatchId) {
  auto sink = Open();
  ASSERT_NE(sink, nullptr);
  EXPECT_EQ(sink->Description(), "DeltaSink[" + dir_.Join("t") + "]");
  ASSERT_TRUE(
      sink->AddBatch(BatchId(0), Q("SELECT 1 AS a UNION ALL SELECT 2"), OutputMode::kAppend).ok());
  ASSERT_TRUE(sink->AddBatch(BatchId(1), Q("SELECT 3 AS a"), OutputMode::kAppend).ok());
  EXPECT_EQ(sink->LastNumOutputRows(), 1);
  // Re-run of batch 1 by a new sink object (a restarted process): nothing written.
  auto again = Open();
  ASSERT_TRUE(again->AddBatch(BatchId(1), Q("SELECT 3 AS a"), OutputMode::kAppend).ok());
  EXPECT_EQ(again->LastNumOutputRows(), 0);
  EXPECT_EQ(again->Metrics().at("skipped"), "true");
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(NumCommits(), 2);
  // A new checkpoint = a new query id: batch 0 of it is written.
  auto other = Open("q-2");
  ASSERT_TRUE(other->AddBatch(BatchId(0), Q("SELECT 4 AS a"), OutputMode::kAppend).ok());
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"1", "2", "3", "4"}));
}

TEST_F(DeltaSinkTest, CommitCarriesTxnAndStreamingUpdate) {
  auto sink = Open("qid");
  ASSERT_TRUE(sink->AddBatch(BatchId(0), Q("SELECT 1 AS a"), OutputMode::kAppend).ok());
  auto text = fs::LocalFileSystem()->ReadFile(dir_.Join("t/_delta_log/00000000000000000000.json"));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  bool saw_txn = false, saw_info = false;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("txn")) {
      saw_txn = true;
      EXPECT_EQ(j["txn"]["appId"], "qid");
      EXPECT_EQ(j["txn"]["version"], 0);
    }
    if (j.contains("commitInfo")) {
      saw_info = true;
      EXPECT_EQ(j["commitInfo"]["operation"], "STREAMING UPDATE");
      EXPECT_EQ(j["commitInfo"]["operationParameters"]["outputMode"], "Append");
      EXPECT_EQ(j["commitInfo"]["operationParameters"]["queryId"], "qid");
      EXPECT_EQ(j["commitInfo"]["operationParameters"]["epochId"], "0");
    }
  }
  EXPECT_TRUE(saw_txn);
  EXPECT_TRUE(saw_info);
}

TEST_F(DeltaSinkTest, CompleteOverwrites) {
  auto sink = Open();
  ASSERT_TRUE(sink->AddBatch(BatchId(0), Q("SELECT 'a' AS k, 1 AS n"), OutputMode::kComplete).ok());
  ASSERT_TRUE(sink->AddBatch(BatchId(1), Q("SELECT 'a' AS k, 2 AS n UNION ALL SELECT 'b', 1"),
                             OutputMode::kComplete)
                  .ok());
  ASSERT_TRUE(
      sink->AddBatch(BatchId(1), Q("SELECT 'zzz' AS k, 9 AS n"), OutputMode::kComplete).ok());
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"a,2", "b,1"}));
}

TEST_F(DeltaSinkTest, UpdateModeWithoutKeysAppendsAndBadOptionsRefused) {
  auto sink = Open();
  ASSERT_TRUE(sink->AddBatch(BatchId(0), Q("SELECT 1 AS a"), OutputMode::kUpdate).ok());
  ASSERT_TRUE(sink->AddBatch(BatchId(1), Q("SELECT 1 AS a"), OutputMode::kUpdate).ok());
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"1", "1"}));
  EXPECT_TRUE(DeltaSink::SupportsOutputMode(OutputMode::kUpdate));
  DeltaSinkOptions o;
  o.path = dir_.Join("t");
  EXPECT_TRUE(
      DeltaSink::Open(fs::LocalFileSystem(), engine_.get(), o).status().IsInvalidArgument());
}

TEST_F(DeltaSinkTest, UpdateModeMergesByKeyOncePerBatch) {
  DeltaSinkOptions o;
  o.path = dir_.Join("t");
  o.query_id = "q-u";
  o.writer.commit.sync = false;
  o.update_keys = {"k"};
  o.configuration = {{"delta.enableChangeDataFeed", "true"}};
  auto opened = DeltaSink::Open(fs::LocalFileSystem(), engine_.get(), o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto sink = opened.MoveValueUnsafe();
  ASSERT_TRUE(sink->AddBatch(BatchId(0), Q("SELECT 'a' AS k, 1 AS n UNION ALL SELECT 'b', 1"),
                             OutputMode::kUpdate)
                  .ok());
  Status st = sink->AddBatch(BatchId(1), Q("SELECT 'a' AS k, 5 AS n UNION ALL SELECT 'c', 1"),
                             OutputMode::kUpdate);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"a,5", "b,1", "c,1"}));
  const int64_t commits = NumCommits();
  // A re-run of batch 1 writes nothing; an empty batch makes no commit.
  ASSERT_TRUE(sink->AddBatch(BatchId(1), Q("SELECT 'a' AS k, 9 AS n"), OutputMode::kUpdate).ok());
  EXPECT_EQ(sink->Metrics().at("skipped"), "true");
  ASSERT_TRUE(
      sink->AddBatch(BatchId(2), Q("SELECT 'a' AS k, 9 AS n LIMIT 0"), OutputMode::kUpdate).ok());
  EXPECT_EQ(NumCommits(), commits);
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"a,5", "b,1", "c,1"}));
  // The MERGE commit carries the txn and the change data feed has the update images.
  auto t = delta::DeltaTable::Open(fs::LocalFileSystem(), engine_.get(), dir_.Join("t"));
  ASSERT_TRUE(t.ok());
  auto txn = (*t)->LatestTxnVersion("q-u");
  ASSERT_TRUE(txn.ok());
  EXPECT_EQ(*txn, std::optional<int64_t>(1));
  auto changes = (*t)->Changes(Version(1), std::nullopt);
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  int pre = 0, post = 0;
  for (int64_t r = 0; r < changes->num_rows(); ++r) {
    std::string row = RowToString(*changes, r);
    pre += row.find("update_preimage") != std::string::npos;
    post += row.find("update_postimage") != std::string::npos;
  }
  EXPECT_EQ(pre, 1);
  EXPECT_EQ(post, 1);
}

TEST_F(DeltaSinkTest, UpdateModeSingleRowReplacesTheRowOncePerBatch) {
  DeltaSinkOptions o;
  o.path = dir_.Join("t");
  o.query_id = "q-g";
  o.writer.commit.sync = false;
  o.update_single_row = true;
  o.configuration = {{"delta.enableChangeDataFeed", "true"}};
  auto open = [&]() {
    auto opened = DeltaSink::Open(fs::LocalFileSystem(), engine_.get(), o);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? opened.MoveValueUnsafe() : nullptr;
  };
  auto sink = open();
  ASSERT_NE(sink, nullptr);
  // A first batch without rows creates the (empty) table; the next row is inserted into it.
  Status st = sink->AddBatch(BatchId(0), Q("SELECT 0::BIGINT AS n, NULL::BIGINT AS s LIMIT 0"),
                             OutputMode::kUpdate);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(TableRows().empty());
  st = sink->AddBatch(BatchId(1), Q("SELECT 2::BIGINT AS n, NULL::BIGINT AS s"),
                      OutputMode::kUpdate);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"2,NULL"}));
  st = sink->AddBatch(BatchId(2), Q("SELECT 5::BIGINT AS n, 7::BIGINT AS s"), OutputMode::kUpdate);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"5,7"}));
  EXPECT_EQ(sink->LastNumOutputRows(), 1);
  const int64_t commits = NumCommits();
  // A re-run of batch 2 by a new sink (a restart after a crash) writes nothing, whatever its row.
  auto again = open();
  ASSERT_NE(again, nullptr);
  st = again->AddBatch(BatchId(2), Q("SELECT 9::BIGINT AS n, 9::BIGINT AS s"), OutputMode::kUpdate);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(again->Metrics().at("skipped"), "true");
  EXPECT_EQ(again->LastNumOutputRows(), 0);
  // A batch without rows (the group did not change) makes no commit and keeps the row.
  st = again->AddBatch(BatchId(3), Q("SELECT 9::BIGINT AS n, 9::BIGINT AS s LIMIT 0"),
                       OutputMode::kUpdate);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(NumCommits(), commits);
  EXPECT_EQ(TableRows(), (std::vector<std::string>{"5,7"}));
  // More than one row cannot be the row of a global aggregation: refused, nothing written.
  st = again->AddBatch(BatchId(4), Q("SELECT 1::BIGINT AS n, 1::BIGINT AS s UNION ALL SELECT 2, 2"),
                       OutputMode::kUpdate);
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.ToString().find("holds one row"), std::string::npos) << st.ToString();
  EXPECT_EQ(NumCommits(), commits);
  // The replacing commit carries the txn; the feed shows it as an update of the one row.
  auto t = delta::DeltaTable::Open(fs::LocalFileSystem(), engine_.get(), dir_.Join("t"));
  ASSERT_TRUE(t.ok());
  auto txn = (*t)->LatestTxnVersion("q-g");
  ASSERT_TRUE(txn.ok());
  EXPECT_EQ(*txn, std::optional<int64_t>(2));
  auto changes = (*t)->Changes(Version(2), std::nullopt);
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  std::vector<std::string> rows;
  for (int64_t r = 0; r < changes->num_rows(); ++r) rows.push_back(RowToString(*changes, r));
  ASSERT_EQ(rows.size(), 2u);
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows[0].rfind("2,NULL,update_preimage", 0), 0u) << rows[0];
  EXPECT_EQ(rows[1].rfind("5,7,update_postimage", 0), 0u) << rows[1];
  // update_keys and update_single_row together are refused.
  o.update_keys = {"n"};
  EXPECT_TRUE(
      DeltaSink::Open(fs::LocalFileSystem(), engine_.get(), o).status().IsInvalidArgument());
}

TEST_F(DeltaSinkTest, AppendOfNoRowsMakesNoCommit) {
  auto sink = Open();
  ASSERT_TRUE(sink->AddBatch(BatchId(0), Q("SELECT 1 AS a"), OutputMode::kAppend).ok());
  ASSERT_TRUE(sink->AddBatch(BatchId(1), Q("SELECT 1 AS a LIMIT 0"), OutputMode::kAppend).ok());
  EXPECT_EQ(NumCommits(), 1);
}

}  // namespace
}  // namespace sluice::sinks
