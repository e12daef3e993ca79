// Crash tests that kill a real process: a forked child streams chunks into a Delta table and dies
// at a crash point (SLUICE_CRASH_AT, _exit(137)) or by SIGKILL at a random moment; a fresh child
// then recovers on the same checkpoint and checks that the table holds every input row exactly
// once. The parent never opens DuckDB (children fork from a thread-free process).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "delta/table.h"
#include "fs/crash_point.h"
#include "fs/test_util.h"
#include "sinks/delta_sink.h"
#include "sinks/memory_sink.h"
#include "stream/loop_test_util.h"

namespace sluice::stream {
namespace {

constexpr int kChunks = 12;
constexpr int kRowsPerChunk = 10;

enum ChildExit { kOk = 0, kSetupFailed = 2, kMismatch = 3, kQueryFailed = 4 };

// Runs the query until the first `num_chunks` chunks are processed (the data is the same prefix
// in every process: the determinism contract of sources); with `verify`, then checks that the
// table holds rows 0 .. kChunks*kRowsPerChunk-1 exactly once.
int ChildMain(const std::string& dir, bool verify, int num_chunks) {
  auto engine = engine::Engine::Open();
  if (!engine.ok()) return kSetupFailed;
  auto conn = (*engine)->Connect();
  if (!conn.ok()) return kSetupFailed;
  auto data = std::make_shared<testing::TestStream>("chunks");
  for (int c = 0; c < num_chunks; ++c) {
    auto b = (*conn)->Query("SELECT range AS id FROM range(" + std::to_string(c * kRowsPerChunk) +
                            ", " + std::to_string((c + 1) * kRowsPerChunk) + ")");
    if (!b.ok()) return kSetupFailed;
    if (c == 0) data->schema = b->schema();
    data->Add(*b);
  }
  const std::string table = dir + "/table";
  ExecutionOptions o;
  o.checkpoint_root = dir + "/ck";
  o.engine = engine->get();
  o.trigger = Trigger::AvailableNow();
  std::vector<SourceSpec> specs;
  specs.push_back(testing::TestSourceSpec(data, {.max_files = 1}));
  auto q = MicroBatchExecution::Start(
      o, std::move(specs), std::make_unique<SqlPlan>("SELECT id FROM __source_0", 1),
      [&](const SinkContext& ctx) -> Result<std::shared_ptr<sinks::Sink>> {
        sinks::DeltaSinkOptions so;
        so.path = table;
        so.query_id = ctx.query_id;
        SLUICE_ASSIGN_OR_RETURN(auto s, sinks::DeltaSink::Open(ctx.fs, ctx.engine, so));
        return std::shared_ptr<sinks::Sink>(std::move(s));
      });
  if (!q.ok()) {
    fprintf(stderr, "start: %s\n", q.status().ToString().c_str());
    return kQueryFailed;
  }
  Status st = (*q)->AwaitTermination();
  if (!st.ok()) {
    fprintf(stderr, "query: %s\n", st.ToString().c_str());
    return kQueryFailed;
  }
  if (!verify) return kOk;
  auto fail = [](const char* what, const Status& st) {
    fprintf(stderr, "verify: %s: %s\n", what, st.ToString().c_str());
    return kMismatch;
  };
  auto t = delta::DeltaTable::Open(fs::LocalFileSystem(), engine->get(), table);
  if (!t.ok()) return fail("open", t.status());
  auto snap = (*t)->Latest();
  if (!snap.ok()) return fail("latest", snap.status());
  auto rows = (*t)->Scan(**snap);
  if (!rows.ok()) return fail("scan", rows.status());
  std::vector<int64_t> ids;
  for (int64_t r = 0; r < rows->num_rows(); ++r) ids.push_back(rows->GetInt64(r, 0)->value_or(-1));
  std::sort(ids.begin(), ids.end());
  if (ids.size() != static_cast<size_t>(kChunks * kRowsPerChunk)) {
    fprintf(stderr, "expected %d rows, table has %zu\n", kChunks * kRowsPerChunk, ids.size());
    return kMismatch;
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] != static_cast<int64_t>(i)) {
      fprintf(stderr, "row %zu: expected id %zu, table has %lld\n", i, i,
              static_cast<long long>(ids[i]));
      return kMismatch;
    }
  }
  return kOk;
}

// Forks a child running ChildMain; crash_at arms SLUICE_CRASH_AT in the child. Returns the pid.
pid_t Spawn(const std::string& dir, bool verify, const std::string& crash_at,
            int num_chunks = kChunks) {
  pid_t pid = fork();
  if (pid == 0) {
    if (crash_at.empty()) {
      unsetenv(fs::kCrashAtEnvVar);
    } else {
      setenv(fs::kCrashAtEnvVar, crash_at.c_str(), 1);
    }
    _exit(ChildMain(dir, verify, num_chunks));
  }
  return pid;
}

int Wait(pid_t pid, bool* signaled = nullptr) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (signaled) *signaled = WIFSIGNALED(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class ProcessCrashTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ProcessCrashTest, CrashAtPointThenRecoverExactlyOnce) {
  fs::ScopedTempDir dir("sluice-pcrash");
  // Dies the third time the point is reached (batches 0 and 1 are done).
  pid_t pid = Spawn(dir.path(), false, std::string(GetParam()) + ":3");
  ASSERT_GT(pid, 0);
  EXPECT_EQ(Wait(pid), fs::kCrashExitCode);
  pid = Spawn(dir.path(), true, "");
  EXPECT_EQ(Wait(pid), kOk);
}

INSTANTIATE_TEST_SUITE_P(AllPoints, ProcessCrashTest,
                         ::testing::Values(kCrashAfterOffsetsWrite, kCrashAfterStateCommit,
                                           kCrashAfterSinkWrite, kCrashAfterCommitWrite));

TEST(ProcessKillTest, SigkillAtRandomMomentsThenRecoverExactlyOnce) {
  fs::ScopedTempDir dir("sluice-pkill");
  std::mt19937 rng(std::random_device{}());
  // A child needs ~20-300 ms to open DuckDB, start and finish, depending on the machine; kills
  // spread over start-up and batches. A child that finishes before its kill lowers the bound to
  // 3/4 of its run time, so that later kills land inside runs on a fast machine too.
  int max_delay_ms = 250;
  int killed = 0, killed_mid_batch = 0, runs = 0;
  // At least 10 runs, and more (up to 40) until one was killed: on a fast machine a child can
  // finish before its kill, and a run without any kill would test nothing.
  for (int i = 0; i < 10 || (killed == 0 && i < 40); ++i) {
    ++runs;
    // Each run sees a longer prefix of the input, so that every run has batches to do.
    const auto spawned = std::chrono::steady_clock::now();
    pid_t pid = Spawn(dir.path(), false, "", std::min(kChunks, 2 + i));
    ASSERT_GT(pid, 0);
    std::uniform_int_distribution<int> delay_ms(1, max_delay_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    kill(pid, SIGKILL);
    bool signaled = false;
    int code = Wait(pid, &signaled);
    if (!signaled) {
      const auto ran_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - spawned)
                              .count();
      max_delay_ms = std::max(2, std::min(max_delay_ms, static_cast<int>(ran_ms * 3 / 4)));
    }
    if (signaled) {
      ++killed;
      // Killed between offsets/N and commits/N: the next run must re-run batch N.
      auto offsets = fs::LocalFileSystem()->List(dir.Join("ck/offsets"));
      auto commits = fs::LocalFileSystem()->List(dir.Join("ck/commits"));
      auto count = [](const auto& r) {
        int64_t n = 0;
        if (r.ok()) {
          for (const auto& f : *r) n += ParseBatchFileName(fs::BaseName(f.path)).has_value();
        }
        return n;
      };
      if (count(offsets) > count(commits)) ++killed_mid_batch;
    } else {
      // Finished before the kill. Otherwise the child printed why to stderr (above).
      EXPECT_EQ(code, kOk) << "run " << i << " exited with " << code
                           << " (2: setup failed, 3: mismatch, 4: query failed)";
    }
  }
  RecordProperty("killed", killed);
  RecordProperty("killed_mid_batch", killed_mid_batch);
  std::printf("killed %d of %d runs, %d between offsets/N and commits/N\n", killed, runs,
              killed_mid_batch);
  EXPECT_GE(killed, 1);
  pid_t pid = Spawn(dir.path(), true, "");
  int code = Wait(pid);
  EXPECT_EQ(code, kOk) << "the recovering run exited with " << code
                       << " (2: setup failed, 3: mismatch, 4: query failed)";
}

}  // namespace
}  // namespace sluice::stream
