// Streaming core benchmarks (issue 4), printed as plain lines for bench/RESULTS.md:
//
//   batch_overhead  the fixed cost of one micro-batch: 1 row in from a memory source, the Delta
//                   sink with fsync on (offsets, commits and the Delta commit are all fsynced).
//                   Reports p50/p99 of progress durationMs.triggerExecution over N batches.
//   files_to_delta  stateless throughput: JSON files of ~300-byte rows -> Delta, one
//                   AvailableNow run with a given schema. Reports rows/s over the whole run
//                   (listing, parsing, Parquet writing, commits).
//
// Usage: stream_bench [batch_overhead|files_to_delta|all] [--batches N] [--rows N] [--files N]
//                    [--threads N]  (DuckDB threads of the engine; default 1, the EngineOptions
//                    default) [--sync-checkpoints 1]  (write Delta checkpoints inside the
//                    committing batch, as before issue 4's background checkpoints, to compare)
//                    [--fsync 0]  (batch_overhead: fsync nothing, to separate the engine's fixed
//                    cost from the disk's fsync latency; not a configuration to run)
// Work directories are created under $TMPDIR (default /tmp) and removed afterwards.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_check.h"
#include "bench_percentile.h"
#include "engine/engine.h"
#include "fs/local_file_system.h"
#include "sinks/delta_sink.h"
#include "sources/memory_source.h"
#include "sources/source_factory.h"
#include "stream/micro_batch_execution.h"

namespace sluice {
namespace {

namespace stdfs = std::filesystem;
using bench::BatchPercentile;
using bench::Check;
using bench::Seconds;

// Forwards to a MemorySource that the benchmark keeps (the execution owns its source).
class SharedMemorySource final : public sources::Source {
 public:
  explicit SharedMemorySource(std::shared_ptr<sources::MemorySource> inner)
      : inner_(std::move(inner)) {}
  std::string Description() const override { return inner_->Description(); }
  const engine::Schema& schema() const override { return inner_->schema(); }
  Result<std::optional<sources::OffsetJson>> LatestOffset(
      const std::optional<sources::OffsetJson>& start, const sources::ReadLimit& limit) override {
    return inner_->LatestOffset(start, limit);
  }
  Status PrepareForAvailableNow() override { return inner_->PrepareForAvailableNow(); }
  Result<engine::Batch> GetBatch(const std::optional<sources::OffsetJson>& start,
                                 const sources::OffsetJson& end) override {
    return inner_->GetBatch(start, end);
  }
  Status Commit(const sources::OffsetJson& end) override { return inner_->Commit(end); }

 private:
  std::shared_ptr<sources::MemorySource> inner_;
};

stdfs::path MakeWorkDir(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  stdfs::path dir = stdfs::path(tmp ? tmp : "/tmp") /
                    ("sluice_stream_bench_" + name + "_" + std::to_string(::getpid()));
  stdfs::remove_all(dir);
  stdfs::create_directories(dir);
  return dir;
}

bool g_sync_checkpoints = false;  // --sync-checkpoints: checkpoints inside the batch (old way)
bool g_fsync = true;  // --fsync 0: nothing fsynced (the fixed cost without the disk's latency)

stream::SinkFactory DeltaSinkAt(std::string path) {
  return [path](const stream::SinkContext& ctx) -> Result<std::shared_ptr<sinks::Sink>> {
    sinks::DeltaSinkOptions options;
    options.path = path;
    options.query_id = ctx.query_id;
    options.background_checkpoints = !g_sync_checkpoints;
    options.writer.commit.sync = g_fsync;
    SLUICE_ASSIGN_OR_RETURN(auto sink, sinks::DeltaSink::Open(ctx.fs, ctx.engine, options));
    return std::shared_ptr<sinks::Sink>(std::move(sink));
  };
}

int g_threads = 1;  // --threads: DuckDB worker threads of the benchmark engine

engine::EngineOptions BenchEngineOptions() {
  engine::EngineOptions o;
  o.threads = g_threads;
  return o;
}

void BatchOverhead(int batches) {
  stdfs::path dir = MakeWorkDir("overhead");
  auto engine = Check(engine::Engine::Open(BenchEngineOptions()), "opening the engine");
  auto conn = Check(engine->Connect(), "connecting");
  engine::Batch one = Check(conn->Query("SELECT 1::BIGINT AS id, 'x' AS payload"), "the row");
  auto memory = std::make_shared<sources::MemorySource>(one.schema(), "bench");

  stream::ExecutionOptions options;
  options.checkpoint_root = (dir / "checkpoint").string();
  options.engine = engine.get();
  options.trigger = stream::Trigger::Default();
  options.sync = g_fsync;
  stream::SourceSpec spec;
  spec.factory =
      [memory](const sources::SourceContext&) -> Result<std::unique_ptr<sources::Source>> {
    return std::unique_ptr<sources::Source>(new SharedMemorySource(memory));
  };
  std::vector<stream::SourceSpec> specs;
  specs.push_back(std::move(spec));
  auto query = Check(
      stream::MicroBatchExecution::Start(
          options, std::move(specs), std::make_unique<plan::SqlPlan>("SELECT * FROM __source_0", 1),
          DeltaSinkAt((dir / "table").string())),
      "starting the query");

  std::vector<int64_t> trigger_ms;
  std::map<std::string, int64_t> phase_total_ms;
  for (int i = 0; i < batches; ++i) {
    Check(memory->AddData(one), "adding a row");
    Check(query->ProcessAllAvailable(), "processing");
  }
  for (const auto& p : query->RecentProgress()) {
    if (p.NumInputRows() == 0) continue;
    auto it = p.duration_ms.find("triggerExecution");
    if (it != p.duration_ms.end()) trigger_ms.push_back(it->second);
    for (const auto& [phase, ms] : p.duration_ms) phase_total_ms[phase] += ms;
  }
  Check(query->Stop(), "stopping");
  // RecentProgress keeps the last 100: the percentiles are over those (the warm state).
  std::printf("batch_overhead: batches=%d measured=%zu p50_ms=%.1f p99_ms=%.1f max_ms=%.1f\n",
              batches, trigger_ms.size(), BatchPercentile(trigger_ms, 0.5),
              BatchPercentile(trigger_ms, 0.99), BatchPercentile(trigger_ms, 1.0));
  // Where the time goes: the mean of each durationMs phase (ms granularity, so a mean).
  std::printf("batch_overhead phases (mean ms):");
  for (const auto& [phase, total] : phase_total_ms) {
    std::printf(
        " %s=%.2f", phase.c_str(),
        static_cast<double>(total) / static_cast<double>(std::max<size_t>(1, trigger_ms.size())));
  }
  std::printf("\n");
  stdfs::remove_all(dir);
}

void FilesToDelta(int64_t rows, int files) {
  stdfs::path dir = MakeWorkDir("files");
  stdfs::create_directories(dir / "landing");
  // ~300-byte JSON rows: an id, a timestamp, a few short fields and a padded payload.
  std::string pad(200, 'p');
  int64_t per_file = rows / files;
  int64_t bytes = 0;
  for (int f = 0; f < files; ++f) {
    std::ofstream out(dir / "landing" / ("part-" + std::to_string(1000 + f) + ".json"));
    for (int64_t r = 0; r < per_file; ++r) {
      int64_t id = f * per_file + r;
      std::string line = "{\"id\":" + std::to_string(id) +
                         ",\"ts\":\"2026-11-30 12:00:00\",\"user\":\"user_" +
                         std::to_string(id % 1000) +
                         "\",\"kind\":\"click\",\"amount\":" + std::to_string(id % 977) +
                         ".25,\"payload\":\"" + pad + "\"}\n";
      bytes += static_cast<int64_t>(line.size());
      out << line;
    }
  }
  auto engine = Check(engine::Engine::Open(BenchEngineOptions()), "opening the engine");
  stream::ExecutionOptions options;
  options.checkpoint_root = (dir / "checkpoint").string();
  options.engine = engine.get();
  options.trigger = stream::Trigger::AvailableNow();
  stream::SourceSpec spec;
  spec.options = {{"path", (dir / "landing").string()},
                  {"format", "json"},
                  {"schema",
                   "id BIGINT, ts TIMESTAMP, user VARCHAR, kind VARCHAR, amount DOUBLE, "
                   "payload VARCHAR"},
                  {"maxFilesPerTrigger", "1000"}};
  spec.factory = [](const sources::SourceContext& ctx) {
    return sources::CreateSource("files", ctx);
  };
  std::vector<stream::SourceSpec> specs;
  specs.push_back(std::move(spec));
  auto start = std::chrono::steady_clock::now();
  auto query = Check(
      stream::MicroBatchExecution::Start(
          options, std::move(specs), std::make_unique<plan::SqlPlan>("SELECT * FROM __source_0", 1),
          DeltaSinkAt((dir / "table").string())),
      "starting the query");
  Check(query->AwaitTermination(), "running");
  double seconds = Seconds(start);
  int64_t total = 0;
  int64_t batches = 0;
  std::map<std::string, int64_t> phase_total_ms;
  for (const auto& p : query->RecentProgress()) {
    total += p.NumInputRows();
    if (p.NumInputRows() > 0) ++batches;
    for (const auto& [phase, ms] : p.duration_ms) phase_total_ms[phase] += ms;
  }
  std::printf(
      "files_to_delta: rows=%lld files=%d avg_row_bytes=%lld seconds=%.2f rows_per_s=%.0f "
      "MB_per_s=%.1f\n",
      static_cast<long long>(total), files,
      static_cast<long long>(bytes / std::max<int64_t>(1, rows)), seconds,
      static_cast<double>(total) / seconds, static_cast<double>(bytes) / seconds / 1e6);
  std::printf("files_to_delta phases (total ms over %lld batches):",
              static_cast<long long>(batches));
  for (const auto& [phase, ms] : phase_total_ms)
    std::printf(" %s=%lld", phase.c_str(), static_cast<long long>(ms));
  std::printf("\n");
  if (total != per_file * files) {
    std::fprintf(stderr, "stream_bench: expected %lld rows, the query read %lld\n",
                 static_cast<long long>(per_file * files), static_cast<long long>(total));
    std::exit(1);
  }
  stdfs::remove_all(dir);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  std::string which = argc > 1 ? argv[1] : "all";
  if (which.rfind("--", 0) == 0) which = "all";  // scripts/bench.sh passes Google Benchmark flags
  int batches = 300;
  int64_t rows = 2'000'000;
  int files = 20;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--batches") batches = std::atoi(argv[i + 1]);
    if (flag == "--rows") rows = std::atoll(argv[i + 1]);
    if (flag == "--files") files = std::atoi(argv[i + 1]);
    if (flag == "--threads") sluice::g_threads = std::atoi(argv[i + 1]);
    if (flag == "--sync-checkpoints") sluice::g_sync_checkpoints = std::atoi(argv[i + 1]) != 0;
    if (flag == "--fsync") sluice::g_fsync = std::atoi(argv[i + 1]) != 0;
  }
  if (which == "batch_overhead" || which == "all") sluice::BatchOverhead(batches);
  if (which == "files_to_delta" || which == "all") sluice::FilesToDelta(rows, files);
  return 0;
}
