// Stateful streaming benchmarks (issue 5), printed as plain lines for bench/RESULTS.md. Every
// case runs the real path: streaming SQL -> plan::PlanStreamingQuery -> stream::
// MicroBatchExecution with its checkpoint, the stateful operator (src/ops) and the RocksDB state
// store (src/state, the default provider, sluice.sql.shuffle.partitions = 4), into a sink that
// only counts rows.
//
//   windowed_count  COUNT per (10-second tumbling window, key), APPEND mode, watermark 5 s:
//                   --keys distinct keys (100K), --events events (10M), 100K events per second
//                   of event time, --batch events per micro-batch (1M). Reports events/s.
//   dedup           QUALIFY row_number() OVER (PARTITION BY id ORDER BY ts) = 1 on a stream with
//                   a 10-second watermark (dropDuplicatesWithinWatermark): every id twice, the
//                   copy 3 s of event time later. Reports events/s and checks the output count.
//   join            inner stream-stream join of --join-rows rows per side (1M + 1M) on ad_id
//                   with c.cts BETWEEN i.its AND i.its + 10 minutes, watermarks of 1 minute,
//                   100K rows per side per batch. Reports input rows/s; checks every click
//                   matched exactly once.
//   commit          GROUP BY k (UPDATE mode) where each batch touches 100K keys: the state
//                   commit time of each batch (progress stateOperators[0].commitTimeMs, summed
//                   over the 4 partitions as Spark sums task metrics) and the batch duration.
//   rss             windowed_count for --seconds of wall time on an endless stream: VmRSS and the
//                   state row count sampled every --sample-seconds; bounded if the watermark
//                   evicts (the state-bloat failure would show as a steady climb).
//
// Events are made by a generator source with DuckDB's range() inside GetBatch (included in the
// measured time; `gen` prints what generating alone costs).
// Usage: stateful_bench [windowed_count|dedup|join|commit|rss|gen|all] [--events N] [--keys N]
//                       [--batch N] [--join-rows N] [--seconds N] [--sample-seconds N]
//                       [--rate N]  (rss: at most N events/s; 0, the default, as fast as it goes)
//                       [--conf KEY=VALUE]...  (session conf of every query, e.g.
//                       sluice.streaming.aggregate.stateMirrorMaxBytes=0 for an A/B run)
// Work directories are created under $TMPDIR (default /tmp) and removed afterwards.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_check.h"
#include "bench_percentile.h"
#include "engine/engine.h"
#include "plan/planner.h"
#include "plan/stream_query_parser.h"
#include "sinks/sink.h"
#include "sources/source.h"
#include "stream/micro_batch_execution.h"

namespace sluice {
namespace {

namespace stdfs = std::filesystem;
using Clock = std::chrono::steady_clock;

using bench::BatchPercentile;
using bench::Check;
using bench::CpuSeconds;
using bench::Seconds;

stdfs::path MakeWorkDir(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  stdfs::path dir = stdfs::path(tmp ? tmp : "/tmp") /
                    ("sluice_stateful_bench_" + name + "_" + std::to_string(::getpid()));
  stdfs::remove_all(dir);
  stdfs::create_directories(dir);
  return dir;
}

int64_t RssKiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

// The SQL of the rows [begin, end) of a generated stream; `i` is the row number.
using RowsSql = std::function<std::string(int64_t begin, int64_t end)>;

// A source of generated rows: offsets count batches of `batch_rows` rows; the benchmark makes
// batches available with Release(n). GetBatch runs the generator SQL on its own connection
// (only the query thread calls it).
class GeneratorSource final : public sources::Source {
 public:
  struct Shared {
    std::atomic<int64_t> available{0};
  };
  GeneratorSource(engine::Engine* engine, RowsSql sql, int64_t batch_rows,
                  std::shared_ptr<Shared> shared)
      : sql_(std::move(sql)), batch_rows_(batch_rows), shared_(std::move(shared)) {
    conn_ = Check(engine->Connect(), "connecting");
    schema_ = Check(conn_->Query("SELECT * FROM (" + sql_(0, 0) + ") LIMIT 0"), "schema").schema();
  }
  std::string Description() const override { return "GeneratorSource"; }
  const engine::Schema& schema() const override { return schema_; }
  Result<std::optional<sources::OffsetJson>> LatestOffset(const std::optional<sources::OffsetJson>&,
                                                          const sources::ReadLimit&) override {
    int64_t n = shared_->available.load();
    if (n == 0) return std::optional<sources::OffsetJson>();
    return std::optional<sources::OffsetJson>(std::to_string(n));
  }
  Result<engine::Batch> GetBatch(const std::optional<sources::OffsetJson>& start,
                                 const sources::OffsetJson& end) override {
    int64_t s = start ? std::atoll(start->c_str()) : 0;
    int64_t e = std::atoll(end.c_str());
    return conn_->Query(sql_(s * batch_rows_, e * batch_rows_));
  }

 private:
  RowsSql sql_;
  int64_t batch_rows_;
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<engine::Connection> conn_;
  engine::Schema schema_;
};

class CountingSink final : public sinks::Sink {
 public:
  std::string Description() const override { return "CountingSink"; }
  Status AddBatch(BatchId, const engine::Batch& data, sluice::OutputMode) override {
    last_ = data.num_rows();
    total_ += last_;
    return Status::OK();
  }
  std::optional<int64_t> LastNumOutputRows() const override { return last_; }
  int64_t total() const { return total_; }

 private:
  std::atomic<int64_t> total_{0};
  int64_t last_ = 0;
};

struct Stream {
  RowsSql sql;
  int64_t batch_rows;
  std::shared_ptr<GeneratorSource::Shared> shared = std::make_shared<GeneratorSource::Shared>();
};

struct Running {
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<stream::MicroBatchExecution> query;
  std::shared_ptr<CountingSink> sink;
  stdfs::path dir;
};

// Session conf given with --conf, applied to every query.
std::map<std::string, std::string>& ExtraConf() {
  static std::map<std::string, std::string> conf;
  return conf;
}

Running Start(const std::string& name, const std::string& sql, sluice::OutputMode mode,
              const std::vector<Stream>& streams) {
  Running r;
  r.dir = MakeWorkDir(name);
  r.engine = Check(engine::Engine::Open(), "opening the engine");
  r.sink = std::make_shared<CountingSink>();
  plan::StreamingQuerySpec spec;
  spec.query = Check(plan::ParseStreamingQuery(sql), "parsing the query");
  spec.output_mode = mode;
  plan::PlannedStreamingQuery planned =
      Check(plan::PlanStreamingQuery(r.engine.get(), spec), "planning the query");
  stream::ExecutionOptions options;
  options.checkpoint_root = (r.dir / "checkpoint").string();
  options.engine = r.engine.get();
  options.trigger = stream::Trigger::Default();
  options.output_mode = mode;
  options.sync = false;  // measure the engine, not the disk's fsync latency
  for (const auto& [k, v] : ExtraConf()) options.session_conf[k] = v;
  std::vector<stream::SourceSpec> specs;
  for (const Stream& s : streams) {
    stream::SourceSpec source;
    engine::Engine* engine = r.engine.get();
    source.factory =
        [engine, s](const sources::SourceContext&) -> Result<std::unique_ptr<sources::Source>> {
      return std::unique_ptr<sources::Source>(
          new GeneratorSource(engine, s.sql, s.batch_rows, s.shared));
    };
    specs.push_back(std::move(source));
  }
  r.query =
      Check(stream::MicroBatchExecution::Start(std::move(options), std::move(specs),
                                               std::move(planned.plan), stream::FixedSink(r.sink)),
            "starting the query");
  return r;
}

void Finish(Running& r) {
  Check(r.query->Stop(), "stopping");
  r.query.reset();
  stdfs::remove_all(r.dir);
}

// Releases one more batch on every stream and waits until it is processed.
void Step(Running& r, std::vector<Stream>& streams) {
  for (Stream& s : streams) s.shared->available.fetch_add(1);
  Check(r.query->ProcessAllAvailable(), "processing");
}

struct Timing {
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // the process's, every thread
};

// `batches` Steps, timed.
Timing TimedSteps(Running& r, std::vector<Stream>& streams, int64_t batches) {
  const auto start = Clock::now();
  const double cpu = CpuSeconds();
  for (int64_t b = 0; b < batches; ++b) Step(r, streams);
  return Timing{Seconds(start), CpuSeconds() - cpu};
}

// Event time of row i at `per_second` rows per second of event time, from 2026-01-01.
std::string EventTime(int64_t per_second) {
  return "TIMESTAMP '2026-01-01 00:00:00' + to_microseconds((i * " +
         std::to_string(1000000 / per_second) + ")::BIGINT)";
}

constexpr int64_t kEventsPerEventSecond = 100000;

Stream WindowedStream(int64_t keys, int64_t batch) {
  return Stream{[keys](int64_t b, int64_t e) {
                  return "SELECT (i % " + std::to_string(keys) + ")::BIGINT AS k, " +
                         EventTime(kEventsPerEventSecond) + " AS ts FROM range(" +
                         std::to_string(b) + ", " + std::to_string(e) + ") t(i)";
                },
                batch};
}

constexpr char kWindowedSql[] =
    "SELECT k, window.start AS ws, count(*) AS n FROM STREAM events WATERMARK ts DELAY OF "
    "INTERVAL 5 SECONDS AS e GROUP BY window(ts, '10 seconds'), k";

void PrintStateProgress(const char* what, const std::vector<stream::StreamingQueryProgress>& ps) {
  std::vector<int64_t> commit, total, duration;
  std::map<std::string, int64_t> phases;  // durationMs phases and operator times, summed
  for (const auto& p : ps) {
    if (p.state_operators.empty()) continue;
    for (const auto& [phase, ms] : p.duration_ms) phases[phase] += ms;
    phases["op.allUpdatesTimeMs"] += p.state_operators[0].all_updates_time_ms;
    phases["op.allRemovalsTimeMs"] += p.state_operators[0].all_removals_time_ms;
    phases["op.commitTimeMs"] += p.state_operators[0].commit_time_ms;
    commit.push_back(p.state_operators[0].commit_time_ms);
    total.push_back(p.state_operators[0].num_rows_total);
    auto it = p.duration_ms.find("triggerExecution");
    if (it != p.duration_ms.end()) duration.push_back(it->second);
  }
  std::printf(
      "%s: batches=%zu batch_ms_p50=%.0f batch_ms_max=%.0f commit_ms_p50=%.0f commit_ms_max=%.0f "
      "state_rows_max=%.0f\n",
      what, duration.size(), BatchPercentile(duration, 0.5), BatchPercentile(duration, 1.0),
      BatchPercentile(commit, 0.5), BatchPercentile(commit, 1.0), BatchPercentile(total, 1.0));
  std::printf("%s phases (total ms over those batches):", what);
  for (const auto& [phase, ms] : phases)
    std::printf(" %s=%lld", phase.c_str(), static_cast<long long>(ms));
  std::printf("\n");
}

void WindowedCount(int64_t events, int64_t keys, int64_t batch) {
  std::vector<Stream> streams{WindowedStream(keys, batch)};
  Running r = Start("windowed", kWindowedSql, sluice::OutputMode::kAppend, streams);
  Step(r, streams);  // warm-up batch: opens the state stores
  int64_t batches = events / batch - 1;
  const auto [s, cpu] = TimedSteps(r, streams, batches);
  int64_t processed = batches * batch;
  std::printf(
      "windowed_count: events=%lld keys=%lld batch=%lld seconds=%.2f events_per_s=%.0f "
      "cpu_s=%.2f events_per_cpu_s=%.0f windows_out=%lld\n",
      static_cast<long long>(processed), static_cast<long long>(keys),
      static_cast<long long>(batch), s, static_cast<double>(processed) / s, cpu,
      static_cast<double>(processed) / cpu, static_cast<long long>(r.sink->total()));
  PrintStateProgress("windowed_count state", r.query->RecentProgress());
  Finish(r);
}

void Dedup(int64_t events, int64_t batch) {
  // Ids repeat once, 300K rows (3 s of event time) later: rows [2jD, 2jD+D) and [2jD+D, 2(j+1)D)
  // carry ids jD .. jD+D-1.
  const int64_t d = 300000;
  std::vector<Stream> streams{Stream{[d](int64_t b, int64_t e) {
                                       std::string ds = std::to_string(d);
                                       return "SELECT (i % " + ds + " + (i // (2 * " + ds +
                                              ")) * " + ds + ")::BIGINT AS id, " +
                                              EventTime(kEventsPerEventSecond) +
                                              " AS ts FROM range(" + std::to_string(b) + ", " +
                                              std::to_string(e) + ") t(i)";
                                     },
                                     batch}};
  Running r = Start("dedup",
                    "SELECT id, ts FROM STREAM events WATERMARK ts DELAY OF INTERVAL 10 SECONDS AS "
                    "e QUALIFY row_number() OVER (PARTITION BY id ORDER BY ts) = 1",
                    sluice::OutputMode::kAppend, streams);
  int64_t batches = events / batch;
  const auto [s, cpu] = TimedSteps(r, streams, batches);
  int64_t processed = batches * batch;
  std::printf(
      "dedup_within_watermark: events=%lld batch=%lld seconds=%.2f events_per_s=%.0f "
      "cpu_s=%.2f events_per_cpu_s=%.0f rows_out=%lld (expected %lld)\n",
      static_cast<long long>(processed), static_cast<long long>(batch), s,
      static_cast<double>(processed) / s, cpu, static_cast<double>(processed) / cpu,
      static_cast<long long>(r.sink->total()),
      static_cast<long long>(processed / (2 * d) * d + std::min(processed % (2 * d), d)));
  PrintStateProgress("dedup state", r.query->RecentProgress());
  Finish(r);
}

void Join(int64_t rows_per_side) {
  const int64_t batch = 100000;
  // 1M rows over 100 minutes of event time (6 ms apart); each click 30 s after its impression.
  auto side = [](const char* id, const char* ts, int64_t shift_s) {
    return [id, ts, shift_s](int64_t b, int64_t e) {
      return std::string("SELECT i::BIGINT AS ") + id + ", TIMESTAMP '2026-01-01 00:00:00' + " +
             "to_microseconds((i * 6000 + " + std::to_string(shift_s * 1000000) + ")::BIGINT) AS " +
             ts + " FROM range(" + std::to_string(b) + ", " + std::to_string(e) + ") t(i)";
    };
  };
  std::vector<Stream> streams{Stream{side("ad_id", "its", 0), batch},
                              Stream{side("ad_id", "cts", 30), batch}};
  Running r = Start(
      "join",
      "SELECT i.ad_id, i.its, c.cts FROM STREAM impressions WATERMARK its DELAY OF INTERVAL 1 "
      "MINUTE AS i JOIN STREAM clicks WATERMARK cts DELAY OF INTERVAL 1 MINUTE AS c ON c.ad_id = "
      "i.ad_id AND c.cts BETWEEN i.its AND i.its + INTERVAL 10 MINUTES",
      sluice::OutputMode::kAppend, streams);
  int64_t batches = rows_per_side / batch;
  const auto [s, cpu] = TimedSteps(r, streams, batches);
  int64_t input = 2 * batches * batch;
  std::printf(
      "stream_stream_join: rows=%lld+%lld seconds=%.2f input_rows_per_s=%.0f cpu_s=%.2f "
      "rows_out=%lld (expected %lld)\n",
      static_cast<long long>(batches * batch), static_cast<long long>(batches * batch), s,
      static_cast<double>(input) / s, cpu, static_cast<long long>(r.sink->total()),
      static_cast<long long>(batches * batch));
  PrintStateProgress("join state", r.query->RecentProgress());
  Finish(r);
}

void Commit(int64_t keys, int batches) {
  std::vector<Stream> streams{Stream{[keys](int64_t b, int64_t e) {
                                       return "SELECT (i % " + std::to_string(keys) +
                                              ")::BIGINT AS k FROM range(" + std::to_string(b) +
                                              ", " + std::to_string(e) + ") t(i)";
                                     },
                                     keys}};
  Running r = Start("commit", "SELECT k, count(*) AS n FROM STREAM events GROUP BY k",
                    sluice::OutputMode::kUpdate, streams);
  for (int b = 0; b < batches; ++b) Step(r, streams);
  char what[64];
  std::snprintf(what, sizeof what, "commit_%lld_changed_keys", static_cast<long long>(keys));
  PrintStateProgress(what, r.query->RecentProgress());
  Finish(r);
}

// rate > 0: at most `rate` events per second of wall time (the loop sleeps between batches), so
// a long run measures memory at a steady production rate without holding a core.
void Rss(int64_t keys, int64_t batch, int64_t seconds, int64_t sample_seconds, int64_t rate) {
  std::vector<Stream> streams{WindowedStream(keys, batch)};
  Running r = Start("rss", kWindowedSql, sluice::OutputMode::kAppend, streams);
  auto start = Clock::now();
  auto next_sample = start;
  int64_t batches = 0;
  std::printf("rss: keys=%lld batch=%lld (elapsed_s events rss_MiB state_rows)\n",
              static_cast<long long>(keys), static_cast<long long>(batch));
  while (Seconds(start) < static_cast<double>(seconds)) {
    Step(r, streams);
    ++batches;
    if (rate > 0) {
      std::this_thread::sleep_until(start +
                                    std::chrono::microseconds(batches * batch * 1'000'000 / rate));
    }
    if (Clock::now() >= next_sample) {
      auto p = r.query->LastProgress();
      int64_t state_rows =
          p && !p->state_operators.empty() ? p->state_operators[0].num_rows_total : -1;
      std::printf("rss_sample: %.0f %lld %.1f %lld\n", Seconds(start),
                  static_cast<long long>(batches * batch), static_cast<double>(RssKiB()) / 1024,
                  static_cast<long long>(state_rows));
      std::fflush(stdout);
      next_sample += std::chrono::seconds(sample_seconds);
    }
  }
  std::printf("rss: events=%lld seconds=%.0f events_per_s=%.0f final_rss_MiB=%.1f\n",
              static_cast<long long>(batches * batch), Seconds(start),
              static_cast<double>(batches * batch) / Seconds(start),
              static_cast<double>(RssKiB()) / 1024);
  Finish(r);
}

void Generate(int64_t events, int64_t keys, int64_t batch) {
  auto engine = Check(engine::Engine::Open(), "opening the engine");
  auto shared = std::make_shared<GeneratorSource::Shared>();
  Stream s = WindowedStream(keys, batch);
  GeneratorSource source(engine.get(), s.sql, batch, shared);
  auto start = Clock::now();
  for (int64_t b = 0; b < events / batch; ++b) {
    Check(source.GetBatch(std::to_string(b), std::to_string(b + 1)), "generating");
  }
  double secs = Seconds(start);
  std::printf("generator_only: events=%lld seconds=%.2f events_per_s=%.0f\n",
              static_cast<long long>(events), secs, static_cast<double>(events) / secs);
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  std::string which = argc > 1 ? argv[1] : "all";
  if (which.rfind("--", 0) == 0) which = "all";  // scripts/bench.sh passes Google Benchmark flags
  int64_t events = 10'000'000, keys = 100'000, batch = 1'000'000, join_rows = 1'000'000;
  int64_t seconds = 180, sample_seconds = 15, rate = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--events") events = std::atoll(argv[i + 1]);
    if (flag == "--keys") keys = std::atoll(argv[i + 1]);
    if (flag == "--batch") batch = std::atoll(argv[i + 1]);
    if (flag == "--join-rows") join_rows = std::atoll(argv[i + 1]);
    if (flag == "--seconds") seconds = std::atoll(argv[i + 1]);
    if (flag == "--sample-seconds") sample_seconds = std::atoll(argv[i + 1]);
    if (flag == "--rate") rate = std::atoll(argv[i + 1]);
    if (flag == "--conf") {
      std::string kv = argv[i + 1];
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "--conf takes KEY=VALUE, not '%s'\n", kv.c_str());
        return 2;
      }
      sluice::ExtraConf()[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  if (which == "gen" || which == "all") sluice::Generate(events, keys, batch);
  if (which == "windowed_count" || which == "all") sluice::WindowedCount(events, keys, batch);
  if (which == "dedup" || which == "all") sluice::Dedup(events, batch);
  if (which == "join" || which == "all") sluice::Join(join_rows);
  if (which == "commit" || which == "all") sluice::Commit(keys, 10);
  if (which == "rss" || which == "all") sluice::Rss(keys, batch, seconds, sample_seconds, rate);
  return 0;
}
