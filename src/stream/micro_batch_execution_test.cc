// Tests of MicroBatchExecution: batches, ids, restart, lock, changed sources, progress, observe.
#include "stream/micro_batch_execution.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "sinks/foreach_batch_sink.h"
#include "stream/checkpoint_layout.h"
#include "stream/commit_log.h"
#include "stream/loop_test_util.h"
#include "stream/offset_seq_log.h"
#include "stream/watermark_tracker.h"

namespace sluice::stream {
namespace {

using testing::LoopTest;
using testing::TestSourceSpec;
using testing::TestStream;

class MicroBatchExecutionTest : public LoopTest {};

TEST_F(MicroBatchExecutionTest, RunsBatchesWithDenseIdsAndIdleTriggersUseNoId) {
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({1, 2, 3});
  auto q = StartQuery(Options(), FixedSink(sink));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ(sink->RowStrings(), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ((*q)->NextBatchId(), BatchId(1));
  // Idle triggers for a while: no batch, no id.
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ((*q)->NextBatchId(), BatchId(1));
  AddInts({4});
  AddInts({5});
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ(Sorted(sink->RowStrings()), Range(1, 6));
  EXPECT_EQ(Ids(root_ + "/offsets"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(Ids(root_ + "/commits"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(stream_->committed, (std::vector<std::string>{"1", "3"}));
  EXPECT_TRUE((*q)->IsActive());
  ASSERT_TRUE((*q)->Stop().ok());
  EXPECT_FALSE((*q)->IsActive());
  EXPECT_FALSE((*q)->Exception().has_value());
  EXPECT_EQ((*q)->CurrentStatus().message, "Stopped");
  // offsets/1 records the end offset and the batch metadata.
  OffsetSeqLog log(fs::LocalFileSystem(), root_);
  auto seq = log.Get(BatchId(1));
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(seq->offsets, (std::vector<std::optional<std::string>>{"3"}));
  ASSERT_TRUE(seq->metadata.has_value());
  EXPECT_GT(seq->metadata->batch_timestamp_ms, 0);
  EXPECT_EQ(seq->metadata->conf, DefaultPersistedConf());
}

TEST_F(MicroBatchExecutionTest, RestartAfterCleanStopContinuesAtNextBatch) {
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({1});
  std::string id, run;
  {
    auto q = StartQuery(Options(), FixedSink(sink));
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
    AddInts({2});
    ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
    id = (*q)->id();
    run = (*q)->run_id();
    ASSERT_TRUE((*q)->Stop().ok());
  }
  AddInts({3});
  auto q = StartQuery(Options(), FixedSink(sink));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ((*q)->restart_plan().kind, StartKind::kNextBatch);
  EXPECT_EQ((*q)->restart_plan().batch_id, BatchId(2));
  EXPECT_EQ((*q)->id(), id);
  EXPECT_NE((*q)->run_id(), run);
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ(Sorted(sink->RowStrings()), Range(1, 4));
  EXPECT_EQ(Ids(root_ + "/offsets"), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(sink->LatestBatchId(), BatchId(2));
}

TEST_F(MicroBatchExecutionTest, SecondQueryOnOneCheckpointIsRefusedNamingTheHolder) {
  auto sink = std::make_shared<sinks::MemorySink>();
  auto a = StartQuery(Options(), FixedSink(sink));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = StartQuery(Options(), FixedSink(sink));
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(b.status().IsConflict()) << b.status().ToString();
  EXPECT_NE(b.status().message().find("pid " + std::to_string(getpid())), std::string::npos)
      << b.status().ToString();
  EXPECT_NE(b.status().message().find((*a)->run_id()), std::string::npos);
  ASSERT_TRUE((*a)->Stop().ok());
  // Released on stop.
  auto c = StartQuery(Options(), FixedSink(sink));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
}

TEST_F(MicroBatchExecutionTest, ChangedSourceOrSourceCountIsRefused) {
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({1});
  {
    auto q = StartQuery(Options(), FixedSink(sink));
    ASSERT_TRUE(q.ok());
    ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  }
  auto other = std::make_shared<TestStream>("t");
  other->schema = stream_->schema;
  std::vector<SourceSpec> specs;
  specs.push_back(TestSourceSpec(other));
  auto q = MicroBatchExecution::Start(Options(), std::move(specs),
                                      std::make_unique<SqlPlan>("SELECT * FROM __source_0", 1),
                                      FixedSink(sink));
  ASSERT_FALSE(q.ok());
  EXPECT_TRUE(q.status().IsInvalidArgument());
  EXPECT_NE(q.status().message().find(
                "streaming source 0 changed from 'TestSource[s]' to 'TestSource[t]'"),
            std::string::npos)
      << q.status().ToString();
  EXPECT_NE(q.status().message().find("new checkpoint"), std::string::npos);

  std::vector<SourceSpec> two;
  two.push_back(TestSourceSpec(stream_));
  two.push_back(TestSourceSpec(other));
  q = MicroBatchExecution::Start(
      Options(), std::move(two),
      std::make_unique<SqlPlan>("SELECT * FROM __source_0 UNION ALL SELECT * FROM __source_1", 2),
      FixedSink(sink));
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("number of streaming sources changed from 1 to 2"),
            std::string::npos)
      << q.status().ToString();
  // The refused starts left the checkpoint usable.
  auto ok = StartQuery(Options(), FixedSink(sink));
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

TEST_F(MicroBatchExecutionTest, ChangedPersistedConfIsRefused) {
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({1});
  {
    auto q = StartQuery(Options(), FixedSink(sink));
    ASSERT_TRUE(q.ok());
    ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  }
  auto o = Options();
  o.session_conf[std::string(kConfShufflePartitions)] = "7";
  o.explicit_conf_keys.insert(std::string(kConfShufflePartitions));
  auto q = StartQuery(o, FixedSink(sink));
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find(std::string(kConfShufflePartitions)), std::string::npos)
      << q.status().ToString();
}

TEST_F(MicroBatchExecutionTest, ContinuousTriggerIsRefusedWithAdvice) {
  auto o = Options();
  o.trigger = *Trigger::Continuous(1000);
  auto q = StartQuery(o, FixedSink(std::make_shared<sinks::MemorySink>()));
  ASSERT_FALSE(q.ok());
  EXPECT_TRUE(q.status().IsNotSupported());
  EXPECT_NE(q.status().message().find("AvailableNow"), std::string::npos);
}

// A group-mode query's root (sluice run --group) holds its batches under tasks/: a run of it
// without the group would read its sources again from the start and write their rows twice.
TEST_F(MicroBatchExecutionTest, CheckpointOfAGroupModeQueryIsRefused) {
  ASSERT_TRUE(fs::LocalFileSystem()->CreateDirectories(root_).ok());
  ASSERT_TRUE(fs::LocalFileSystem()
                  ->CreateIfAbsent(fs::JoinPath(root_, kGroupRecordFileName),
                                   R"({"version":1,"group":"g","topic":"t"})")
                  .ok());
  auto q = StartQuery(Options(), FixedSink(std::make_shared<sinks::MemorySink>()));
  ASSERT_FALSE(q.ok());
  EXPECT_TRUE(q.status().IsInvalidArgument());
  EXPECT_NE(q.status().message().find("--group"), std::string::npos) << q.status().ToString();
  EXPECT_FALSE(fs::LocalFileSystem()->Exists(MetadataPath(root_)).ValueOr(true));
}

TEST_F(MicroBatchExecutionTest, SinkFailureFailsTheQueryWithContextAndTheBatchIsRerun) {
  bool fail = true;
  std::vector<int64_t> seen;
  auto sink = std::make_shared<sinks::ForeachBatchSink>([&](const engine::Batch& b, BatchId id) {
    seen.push_back(id.value());
    if (fail) return Status::IOError("destination down");
    if (id.value() == 0) {
      EXPECT_EQ(b.num_rows(), 2);
    }
    return Status::OK();
  });
  AddInts({1, 2});
  {
    auto q = StartQuery(Options(), FixedSink(sink));
    ASSERT_TRUE(q.ok());
    Status st = (*q)->AwaitTermination();
    EXPECT_TRUE(st.IsIOError()) << st.ToString();
    EXPECT_NE(st.message().find("batch 0"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("destination down"), std::string::npos);
    EXPECT_NE(st.message().find((*q)->id()), std::string::npos);
    ASSERT_TRUE((*q)->Exception().has_value());
    EXPECT_TRUE((*q)->ProcessAllAvailable().IsIOError());
  }
  EXPECT_EQ(Ids(root_ + "/commits"), std::vector<int64_t>{});
  fail = false;
  AddInts({3});  // not part of the re-run batch
  auto q = StartQuery(Options(), FixedSink(sink));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ((*q)->restart_plan().kind, StartKind::kRerunBatch);
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  ASSERT_TRUE((*q)->Stop().ok());
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen[0], 0);
  EXPECT_EQ(seen[1], 0);  // the same id again
}

TEST_F(MicroBatchExecutionTest, SourceErrorNamesBatchAndSource) {
  stream_->Add(Ints({1}));
  auto sink = std::make_shared<sinks::MemorySink>();
  auto q = StartQuery(Options(), FixedSink(sink), "SELECT no_such_column FROM __source_0");
  ASSERT_TRUE(q.ok());
  Status st = (*q)->AwaitTermination();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("batch 0"), std::string::npos) << st.ToString();
}

TEST_F(MicroBatchExecutionTest, ProgressJsonHasEveryFieldAndObserve) {
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({1, 2, 3});
  auto o = Options();
  o.query_name = "q1";
  o.observations = {{"stats", {"count(*) AS n", "max(id) AS max_id"}}};
  auto q = StartQuery(o, FixedSink(sink));
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  auto p = (*q)->LastProgress();
  ASSERT_TRUE(p.has_value());
  auto j = nlohmann::ordered_json::parse(ProgressToJson(*p));
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "id", "runId", "name", "timestamp", "batchId", "batchDuration",
                      "numInputRows", "inputRowsPerSecond", "processedRowsPerSecond", "durationMs",
                      "stateOperators", "sources", "sink", "observedMetrics"}));
  EXPECT_EQ(j["name"], "q1");
  EXPECT_EQ(j["batchId"], 0);
  EXPECT_EQ(j["numInputRows"], 3);
  std::vector<std::string> dk;
  for (auto it = j["durationMs"].begin(); it != j["durationMs"].end(); ++it) dk.push_back(it.key());
  EXPECT_EQ(dk, (std::vector<std::string>{"addBatch", "commitOffsets", "getBatch", "latestOffset",
                                          "queryPlanning", "triggerExecution", "walCommit"}));
  const auto& s = j["sources"][0];
  EXPECT_EQ(s["description"], "TestSource[s]");
  EXPECT_TRUE(s["startOffset"].is_null());
  EXPECT_EQ(s["endOffset"], 1);
  EXPECT_EQ(s["latestOffset"], 1);
  EXPECT_EQ(s["numInputRows"], 3);
  EXPECT_TRUE(s.contains("inputRowsPerSecond"));
  EXPECT_TRUE(s.contains("processedRowsPerSecond"));
  EXPECT_EQ(s["metrics"]["chunksBehind"], "0");
  EXPECT_EQ(j["sink"]["description"], "MemorySink");
  EXPECT_EQ(j["sink"]["numOutputRows"], 3);
  EXPECT_EQ(j["observedMetrics"]["stats"]["n"], 3);
  EXPECT_EQ(j["observedMetrics"]["stats"]["max_id"], 3);
  EXPECT_GE(p->duration_ms.at("triggerExecution"), p->duration_ms.at("addBatch"));
  // A second batch: observe is per batch; the start offset is the previous end.
  AddInts({10});
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  p = (*q)->LastProgress();
  EXPECT_EQ(p->batch_id, 1);
  EXPECT_EQ(p->sources[0].start_offset, "1");
  EXPECT_EQ(p->observed_metrics.at("stats")["n"], 1);
  EXPECT_EQ(p->observed_metrics.at("stats")["max_id"], 10);
  EXPECT_TRUE(ParseProgressJson(ProgressToJson(*p)).ok());
}

TEST_F(MicroBatchExecutionTest, RecentProgressKeepsTheLast100AndPurgeKeepsRetainedBatches) {
  auto sink = std::make_shared<sinks::MemorySink>();
  for (int i = 0; i < 105; ++i) AddInts({i});
  auto o = Options();
  o.min_batches_to_retain = 3;
  auto q = StartQuery(o, FixedSink(sink), "SELECT id FROM __source_0", {.max_files = 1});
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ(sink->RowStrings().size(), 105u);
  auto recent = (*q)->RecentProgress();
  ASSERT_EQ(recent.size(), 100u);
  EXPECT_EQ(recent.back().batch_id, 104);
  EXPECT_EQ(recent.front().batch_id, 5);
  EXPECT_EQ(Ids(root_ + "/offsets"), (std::vector<int64_t>{101, 102, 103, 104}));
  EXPECT_EQ(Ids(root_ + "/commits"), (std::vector<int64_t>{101, 102, 103, 104}));
}

}  // namespace
}  // namespace sluice::stream

namespace sluice::stream {
namespace {

TEST(WatermarkTrackerTest, MinPolicyWaitsForEveryNodeAndIsMonotone) {
  auto t = WatermarkTracker::Make({{"a", 10}, {"b", 0}}, "min", 0);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->Update({{100, 50, 75, 2}, {0, 0, 0, 0}}), 0);     // b never saw data: counts as 0
  EXPECT_EQ(t->Update({{0, 0, 0, 0}, {60, 60, 60, 1}}), 60);     // min(90, 60)
  EXPECT_EQ(t->Update({{20, 20, 20, 1}, {30, 30, 30, 1}}), 60);  // nodes keep their max
  EXPECT_EQ(t->Update({{200, 200, 200, 1}, {300, 300, 300, 1}}), 190);
  auto m = WatermarkTracker::Make({{"a", 10}, {"b", 0}}, "MAX", 500);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->Update({{100, 100, 100, 1}, {0, 0, 0, 0}}), 500);  // never goes back
  EXPECT_EQ(m->Update({{1000, 1000, 1000, 1}, {0, 0, 0, 0}}), 990);
  EXPECT_TRUE(WatermarkTracker::Make({}, "avg", 0).status().IsInvalidArgument());
}

// A stateless plan with one watermark node on `id` (ms) with a 1000 ms delay.
class WatermarkedPlan final : public IncrementalPlan {
 public:
  WatermarkedPlan() : inner_("SELECT id FROM __source_0", 1) {}
  Status Open(const PlanContext& c) override { return inner_.Open(c); }
  size_t num_sources() const override { return 1; }
  std::vector<WatermarkNode> watermark_nodes() const override { return {{"id", 1000}}; }
  Result<PlanOutput> Execute(const PlanInput& in) override {
    watermarks_seen.push_back(in.batch_watermark_ms);
    SLUICE_ASSIGN_OR_RETURN(PlanOutput out, inner_.Execute(in));
    if (late_log != nullptr) {
      // A stateful operator's late-row filter: a row at or below the previous watermark is late.
      std::vector<int64_t> kept;
      for (int64_t r = 0; r < out.rows.num_rows(); ++r) {
        int64_t v = out.rows.GetInt64(r, 0)->value_or(0);
        if (v > in.previous_watermark_ms) kept.push_back(v);
      }
      std::sort(kept.begin(), kept.end());
      (*late_log)[in.batch_id.value()] = {in.previous_watermark_ms, std::move(kept)};
    }
    EventTimeStats s{INT64_MIN, INT64_MAX, 0, 0};
    double sum = 0;
    for (int64_t r = 0; r < out.rows.num_rows(); ++r) {
      int64_t v = out.rows.GetInt64(r, 0)->value_or(0);
      s.max_ms = std::max(s.max_ms, v);
      s.min_ms = std::min(s.min_ms, v);
      sum += static_cast<double>(v);
      ++s.count;
    }
    if (s.count > 0) s.avg_ms = sum / static_cast<double>(s.count);
    out.event_time = {s};
    return out;
  }
  std::string Description() const override { return "WatermarkedPlan"; }
  std::vector<int64_t> watermarks_seen;
  // When set: per batch id, the late-row threshold the batch ran with and the rows above it.
  std::map<int64_t, std::pair<int64_t, std::vector<int64_t>>>* late_log = nullptr;

 private:
  SqlPlan inner_;
};

// The late-row threshold of the first batch after a restart is the watermark the batch before it
// ran with, as without a restart (Spark's prevOffsetSeqMetadata), not the one it runs with: a
// row between the two is kept. Both restart kinds: after commits/1, and a re-run of batch 2.
TEST_F(MicroBatchExecutionTest, LateRowThresholdAfterARestartIsTheOneWithoutARestart) {
  using LateLog = std::map<int64_t, std::pair<int64_t, std::vector<int64_t>>>;
  enum class Restart { kNone, kAfterCommit, kRerun };
  auto run = [&](const std::string& name, Restart restart) {
    LateLog log;
    auto stream = std::make_shared<TestStream>("s");
    stream->schema = Ints({}).schema();
    bool fail_batch_2 = restart == Restart::kRerun;
    auto sink = std::make_shared<sinks::ForeachBatchSink>([&](const engine::Batch&, BatchId id) {
      if (fail_batch_2 && id.value() == 2) return Status::IOError("destination down");
      return Status::OK();
    });
    ExecutionOptions o = Options();
    o.checkpoint_root = dir_.Join(name);
    auto start = [&]() -> std::unique_ptr<MicroBatchExecution> {
      auto plan = std::make_unique<WatermarkedPlan>();
      plan->late_log = &log;
      std::vector<SourceSpec> specs;
      specs.push_back(testing::TestSourceSpec(stream));
      auto q = MicroBatchExecution::Start(o, std::move(specs), std::move(plan), FixedSink(sink));
      EXPECT_TRUE(q.ok()) << q.status().ToString();
      return q.ok() ? q.MoveValueUnsafe() : nullptr;
    };
    std::unique_ptr<MicroBatchExecution> q = start();
    if (!q) return log;
    stream->Add(Ints({5000, 7000}));  // batch 0 runs with watermark 0; the next is 6000
    EXPECT_TRUE(q->ProcessAllAvailable().ok());
    stream->Add(Ints({9000}));  // batch 1 runs with 6000; the next is 8000
    EXPECT_TRUE(q->ProcessAllAvailable().ok());
    if (restart == Restart::kAfterCommit) {
      EXPECT_TRUE(q->Stop().ok());
      q.reset();
      q = start();
      if (!q) return log;
      EXPECT_EQ(q->restart_plan().kind, StartKind::kNextBatch);
    }
    // Batch 2 runs with 8000; 7000 and 8000 are above batch 1's 6000, 5500 is late.
    stream->Add(Ints({5500, 7000, 8000}));
    if (restart == Restart::kRerun) {
      EXPECT_TRUE(q->ProcessAllAvailable().IsIOError());
      q.reset();
      fail_batch_2 = false;
      q = start();
      if (!q) return log;
      EXPECT_EQ(q->restart_plan().kind, StartKind::kRerunBatch);
    }
    EXPECT_TRUE(q->ProcessAllAvailable().ok());
    EXPECT_TRUE(q->Stop().ok());
    return log;
  };
  // Each batch's threshold is the watermark the batch before it ran with (batch 0's 0 for batch 1).
  const LateLog expected = {{0, {0, {5000, 7000}}}, {1, {0, {9000}}}, {2, {6000, {7000, 8000}}}};
  EXPECT_EQ(run("no_restart", Restart::kNone), expected);
  EXPECT_EQ(run("after_commit", Restart::kAfterCommit), expected);
  EXPECT_EQ(run("rerun", Restart::kRerun), expected);
}

TEST_F(MicroBatchExecutionTest, WatermarkMovesFromBatchToBatchAndIsRecovered) {
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({5000, 7000});
  auto plan = std::make_unique<WatermarkedPlan>();
  WatermarkedPlan* raw = plan.get();
  std::vector<SourceSpec> specs;
  specs.push_back(testing::TestSourceSpec(stream_));
  auto q =
      MicroBatchExecution::Start(Options(), std::move(specs), std::move(plan), FixedSink(sink));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  auto p = (*q)->LastProgress();
  ASSERT_TRUE(p.has_value());
  // Batch 0 runs with watermark 0; its data moves the watermark for batch 1 to 7000 - 1000.
  EXPECT_EQ(p->event_time.at("watermark"), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(p->event_time.at("max"), "1970-01-01T00:00:07.000Z");
  EXPECT_EQ(p->event_time.at("min"), "1970-01-01T00:00:05.000Z");
  EXPECT_EQ(p->event_time.at("avg"), "1970-01-01T00:00:06.000Z");
  EXPECT_EQ((*q)->CurrentWatermarkMs(), 6000);
  AddInts({3000});  // late: does not move the watermark back
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ(raw->watermarks_seen, (std::vector<int64_t>{0, 6000}));
  ASSERT_TRUE((*q)->Stop().ok());
  CommitLog commits(fs::LocalFileSystem(), root_);
  EXPECT_EQ(commits.Get(BatchId(0))->next_batch_watermark_ms, 6000);
  EXPECT_EQ(commits.Get(BatchId(1))->next_batch_watermark_ms, 6000);
  OffsetSeqLog offsets(fs::LocalFileSystem(), root_);
  EXPECT_EQ(offsets.Get(BatchId(1))->metadata->batch_watermark_ms, 6000);
  // A restart recovers the global watermark for its first batch.
  AddInts({9000});
  auto plan2 = std::make_unique<WatermarkedPlan>();
  raw = plan2.get();
  std::vector<SourceSpec> specs2;
  specs2.push_back(testing::TestSourceSpec(stream_));
  auto q2 =
      MicroBatchExecution::Start(Options(), std::move(specs2), std::move(plan2), FixedSink(sink));
  ASSERT_TRUE(q2.ok());
  ASSERT_TRUE((*q2)->ProcessAllAvailable().ok());
  EXPECT_EQ(raw->watermarks_seen, (std::vector<int64_t>{6000}));
  EXPECT_EQ((*q2)->CurrentWatermarkMs(), 8000);
}

TEST_F(MicroBatchExecutionTest, PerNodeWatermarksAndBatchProgressHook) {
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({5000});
  std::vector<int64_t> hooked;
  ExecutionOptions o = Options();
  o.trigger = Trigger::AvailableNow();
  o.on_batch_progress = [&hooked](const StreamingQueryProgress& p) {
    hooked.push_back(p.batch_id);
  };
  std::vector<SourceSpec> specs;
  specs.push_back(testing::TestSourceSpec(stream_));
  auto q = MicroBatchExecution::Start(o, std::move(specs), std::make_unique<WatermarkedPlan>(),
                                      FixedSink(sink));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_TRUE((*q)->AwaitTermination().ok());
  EXPECT_EQ(hooked, (std::vector<int64_t>{0}));  // idle triggers are not reported
  const std::vector<std::optional<int64_t>> nodes = (*q)->NodeWatermarksMs();
  EXPECT_EQ(nodes, (std::vector<std::optional<int64_t>>{4000}));
  // A next run in the same process starts from them: a smaller event time does not lower the
  // node's value (without them the node would restart at 2000 - 1000).
  AddInts({2000});
  o.initial_node_watermarks_ms = nodes;
  std::vector<SourceSpec> specs2;
  specs2.push_back(testing::TestSourceSpec(stream_));
  auto q2 = MicroBatchExecution::Start(o, std::move(specs2), std::make_unique<WatermarkedPlan>(),
                                       FixedSink(sink));
  ASSERT_TRUE(q2.ok()) << q2.status().ToString();
  ASSERT_TRUE((*q2)->AwaitTermination().ok());
  EXPECT_EQ((*q2)->NodeWatermarksMs(), (std::vector<std::optional<int64_t>>{4000}));
  EXPECT_EQ(hooked, (std::vector<int64_t>{0, 1}));
}

}  // namespace
}  // namespace sluice::stream
