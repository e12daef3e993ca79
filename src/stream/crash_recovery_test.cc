// Exactly-once across a crash at each of the four crash points, simulated in-process with
// FaultInjectingFileSystem: the crashed execution ends with "injected crash at <point>", a new
// execution on the same checkpoint recovers, and the sink holds every input row once.
#include <gtest/gtest.h>

#include "delta/table.h"
#include "delta/table_writer.h"
#include "fs/fault_injection_file_system.h"
#include "sinks/delta_sink.h"
#include "sinks/foreach_batch_sink.h"
#include "stream/loop_test_util.h"

namespace sluice::stream {
namespace {

using testing::LoopTest;

enum class SinkKind { kMemory, kDelta, kForeachBatchDelta };

struct CrashCase {
  const char* point;
  SinkKind sink;
};

std::string CaseName(const ::testing::TestParamInfo<CrashCase>& info) {
  const char* s = info.param.sink == SinkKind::kMemory  ? "Memory"
                  : info.param.sink == SinkKind::kDelta ? "Delta"
                                                        : "ForeachBatchDelta";
  return std::string(s) + "_" + info.param.point;
}

class CrashRecoveryTest : public LoopTest, public ::testing::WithParamInterface<CrashCase> {
 protected:
  void SetUp() override {
    LoopTest::SetUp();
    table_ = dir_.Join("table");
    memory_ = std::make_shared<sinks::MemorySink>();
  }

  SinkFactory Sink() {
    switch (GetParam().sink) {
      case SinkKind::kMemory:
        return FixedSink(memory_);
      case SinkKind::kDelta:
        return [this](const SinkContext& ctx) -> Result<std::shared_ptr<sinks::Sink>> {
          sinks::DeltaSinkOptions o;
          o.path = table_;
          o.query_id = ctx.query_id;
          o.writer.commit.sync = false;
          SLUICE_ASSIGN_OR_RETURN(auto s, sinks::DeltaSink::Open(ctx.fs, ctx.engine, o));
          return std::shared_ptr<sinks::Sink>(std::move(s));
        };
      case SinkKind::kForeachBatchDelta:
        // The documented foreachBatch pattern: one Delta write per batch with a fixed txnAppId
        // and txnVersion = batch id.
        return [this](const SinkContext& ctx) -> Result<std::shared_ptr<sinks::Sink>> {
          delta::TableWriterOptions wo;
          wo.commit.sync = false;
          SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<delta::DeltaTableWriter> w,
                                  delta::DeltaTableWriter::Open(ctx.fs, ctx.engine, table_, wo));
          return std::shared_ptr<sinks::Sink>(std::make_shared<sinks::ForeachBatchSink>(
              [w](const engine::Batch& b, BatchId id) -> Status {
                delta::WriteOptions opts;
                opts.txn_app_id = "my-pipeline-v1";
                opts.txn_version = id.value();
                return w->Write(b, opts).status();
              }));
        };
    }
    return nullptr;
  }

  std::vector<std::string> Output() {
    if (GetParam().sink == SinkKind::kMemory) return Sorted(memory_->RowStrings());
    auto t = delta::DeltaTable::Open(fs::LocalFileSystem(), engine_, table_);
    if (!t.ok()) return {"<no table>"};
    auto snap = (*t)->Latest();
    if (!snap.ok()) return {"<no snapshot>"};
    auto b = (*t)->Scan(**snap);
    if (!b.ok()) return {"<scan failed>"};
    std::vector<std::string> out;
    for (int64_t r = 0; r < b->num_rows(); ++r) out.push_back(sinks::RowToString(*b, r));
    return Sorted(out);
  }

  void AddRange(int64_t from, int64_t to) {
    std::vector<int64_t> v;
    for (int64_t i = from; i < to; ++i) v.push_back(i);
    AddInts(v);
  }

  std::string table_;
  std::shared_ptr<sinks::MemorySink> memory_;
};

TEST_P(CrashRecoveryTest, OutputEqualsInputExactlyOnce) {
  const std::string point = GetParam().point;
  auto faulty = std::make_shared<fs::FaultInjectingFileSystem>(fs::LocalFileSystem());
  faulty->SetCrashPoint(point, /*hit=*/2);  // batch 0 passes, batch 1 dies
  AddRange(0, 5);
  {
    auto o = Options();
    o.fs = faulty;
    auto q = StartQuery(o, Sink());
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
    AddRange(5, 10);
    Status st = (*q)->AwaitTermination();
    ASSERT_TRUE(st.IsCancelled()) << st.ToString();
    EXPECT_NE(st.message().find("injected crash at " + point), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("batch 1"), std::string::npos) << st.ToString();
    EXPECT_FALSE((*q)->IsActive());
  }
  AddRange(10, 15);  // arrives while the query is down
  // A new process: a healthy file system on the same disk.
  auto q = StartQuery(Options(), Sink());
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  if (point == kCrashAfterCommitWrite) {
    EXPECT_EQ((*q)->restart_plan().kind, StartKind::kNextBatch);
    EXPECT_EQ((*q)->restart_plan().batch_id, BatchId(2));
  } else {
    EXPECT_EQ((*q)->restart_plan().kind, StartKind::kRerunBatch);
    EXPECT_EQ((*q)->restart_plan().batch_id, BatchId(1));
    // The re-run reads exactly the recorded range (chunk 2 only), not what arrived later.
    EXPECT_EQ((*q)->restart_plan().end_offsets, (std::vector<std::optional<std::string>>{"2"}));
  }
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ(Output(), Range(0, 15));
  AddRange(15, 20);
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  ASSERT_TRUE((*q)->Stop().ok());
  EXPECT_EQ(Output(), Range(0, 20));
  // Batch ids stay dense across the crash.
  auto ids = Ids(root_ + "/offsets");
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], static_cast<int64_t>(i));
  EXPECT_EQ(Ids(root_ + "/commits"), ids);
}

INSTANTIATE_TEST_SUITE_P(
    AllPoints, CrashRecoveryTest,
    ::testing::Values(CrashCase{kCrashAfterOffsetsWrite, SinkKind::kMemory},
                      CrashCase{kCrashAfterStateCommit, SinkKind::kMemory},
                      CrashCase{kCrashAfterSinkWrite, SinkKind::kMemory},
                      CrashCase{kCrashAfterCommitWrite, SinkKind::kMemory},
                      CrashCase{kCrashAfterOffsetsWrite, SinkKind::kDelta},
                      CrashCase{kCrashAfterStateCommit, SinkKind::kDelta},
                      CrashCase{kCrashAfterSinkWrite, SinkKind::kDelta},
                      CrashCase{kCrashAfterCommitWrite, SinkKind::kDelta},
                      CrashCase{kCrashAfterSinkWrite, SinkKind::kForeachBatchDelta},
                      CrashCase{kCrashAfterCommitWrite, SinkKind::kForeachBatchDelta}),
    CaseName);

// SET sluice.test.crashAt: the option arms the point for the next batch of this execution.
TEST_F(LoopTest, TestCrashAtOptionStopsTheNextBatchDead) {
  auto sink = std::make_shared<sinks::MemorySink>();
  AddInts({1, 2});
  auto o = Options();
  o.test_crash_at = std::string(kCrashAfterSinkWrite);
  {
    auto q = StartQuery(o, FixedSink(sink));
    ASSERT_TRUE(q.ok());
    Status st = (*q)->AwaitTermination();
    EXPECT_NE(st.message().find("injected crash at after_sink_write"), std::string::npos)
        << st.ToString();
  }
  EXPECT_EQ(Ids(root_ + "/offsets"), std::vector<int64_t>{0});
  EXPECT_EQ(Ids(root_ + "/commits"), std::vector<int64_t>{});
  auto q = StartQuery(Options(), FixedSink(sink));
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  EXPECT_EQ(Sorted(sink->RowStrings()), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(sink->skipped_batches(), 1);
}

}  // namespace
}  // namespace sluice::stream
