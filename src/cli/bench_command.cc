#include "cli/bench_command.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/nexmark_kafka_feed.h"
#include "cli/nexmark_kafka_sql.h"
#include "common/clock.h"
#include "common/strings.h"
#include "engine/engine.h"
#include "sinks/blackhole_sink.h"
#include "sources/nexmark/nexmark_config.h"
#include "sources/nexmark/nexmark_generator.h"
#include "sources/nexmark/nexmark_json.h"
#include "sql/literal_rows.h"
#include "sql/session.h"
#include "sql/statement_splitter.h"
#include "stream/progress.h"

namespace sluice::cli {
namespace {

namespace stdfs = std::filesystem;

struct Kind {
  const char* placeholder;  // "@BID@"
  const char* name;         // "bid": the kind, the table, the JSON object
  int event_type;           // the JSON's event_type (= nexmark::EventKind)
  const char* columns;      // SELECT list over the JSON object `name`
};

// The flat columns of each kind, in the generator's order (docs/nexmark.md "JSON").
const Kind kKinds[] = {
    {"@PERSON@", "person", 0,
     "person.id AS id, person.name AS name, person.emailAddress AS emailAddress, "
     "person.creditCard AS creditCard, person.city AS city, person.state AS state, "
     "CAST(person.dateTime AS TIMESTAMP)::TIMESTAMPTZ AS dateTime, person.extra AS extra"},
    {"@AUCTION@", "auction", 1,
     "auction.id AS id, auction.itemName AS itemName, auction.description AS description, "
     "auction.initialBid AS initialBid, auction.reserve AS reserve, "
     "CAST(auction.dateTime AS TIMESTAMP)::TIMESTAMPTZ AS dateTime, "
     "CAST(auction.expires AS TIMESTAMP)::TIMESTAMPTZ AS expires, auction.seller AS seller, "
     "auction.category AS category, auction.extra AS extra"},
    {"@BID@", "bid", 2,
     "bid.auction AS auction, bid.bidder AS bidder, bid.price AS price, bid.channel AS channel, "
     "bid.url AS url, CAST(bid.dateTime AS TIMESTAMP)::TIMESTAMPTZ AS dateTime, "
     "bid.extra AS extra"},
};

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text without whole-line `--` comments (the statement parser sees only SQL).
std::string StripLineComments(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 2, "--") == 0) continue;
    out += line + "\n";
  }
  return out;
}

// The "-- compare: <query>" line of a batch file, or the default.
std::string CompareQuery(const std::string& batch_text) {
  const std::string marker = "-- compare:";
  size_t at = batch_text.find(marker);
  if (at == std::string::npos) return "SELECT * FROM @RESULT@";
  size_t end = batch_text.find('\n', at);
  std::string q = batch_text.substr(at + marker.size(), end - at - marker.size());
  q.erase(0, q.find_first_not_of(" \t"));
  q.erase(q.find_last_not_of(" \t\r") + 1);
  return q;
}

// The "-- sink: <name>" line of a query file (a query whose sink is what it measures, q10's
// file sink), or "" when it has none.
std::string SinkDirective(const std::string& query_text) {
  const std::string marker = "-- sink:";
  size_t at = query_text.find(marker);
  if (at == std::string::npos) return "";
  size_t end = query_text.find('\n', at);
  std::string s = query_text.substr(at + marker.size(), end - at - marker.size());
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t\r") + 1);
  return s;
}

// The events among the generator's first `events` that are of the kinds the query reads: what
// its sources generate (a bid-only query's source produces no person or auction).
Result<int64_t> SourceEvents(int64_t rate, int64_t events, const std::vector<const Kind*>& kinds) {
  nexmark::NexmarkConfig config;
  config.events_per_second = rate;
  SLUICE_ASSIGN_OR_RETURN(auto generator, nexmark::NexmarkGenerator::Open(config));
  bool read[3] = {false, false, false};
  for (const Kind* k : kinds) read[k->event_type] = true;
  int64_t n = 0;
  for (int64_t i = 0; i < events; ++i) n += read[static_cast<int>(generator->KindOf(i))] ? 1 : 0;
  return n;
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int64_t PeakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The p-th percentile (nearest rank) of `v`; 0 for none.
int64_t Percentile(std::vector<int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

// Rows of `b` as text lines (for error messages).
std::string RowsText(const engine::Batch& b, int64_t max_rows) {
  std::string out;
  for (int64_t r = 0; r < std::min(b.num_rows(), max_rows); ++r) {
    out += "    ";
    for (size_t c = 0; c < b.num_columns(); ++c) {
      out += (c ? " | " : "") + b.GetString(r, c).value_or("NULL");
    }
    out += "\n";
  }
  return out;
}

struct Run {
  BenchNexmarkOptions o;
  std::string work;
  std::string events_json;
  std::vector<const Kind*> kinds;  // the kinds the query reads
  std::unique_ptr<engine::Engine> batch_engine;
  std::unique_ptr<engine::Connection> batch;  // tables person/auction/bid of all events
};

// Writes the generator's events as JSON lines and loads the kinds into DuckDB tables. With a
// cache directory, the tables are read from (or saved to) <cache>/<N>_<rate>/<kind>.parquet.
Status LoadBatchTables(Run* run) {
  SLUICE_ASSIGN_OR_RETURN(run->batch_engine, engine::Engine::Open());
  SLUICE_ASSIGN_OR_RETURN(run->batch, run->batch_engine->Connect());
  std::string cache;
  if (!run->o.batch_cache.empty()) {
    cache = run->o.batch_cache + "/" + std::to_string(run->o.events) + "_" +
            std::to_string(run->o.rate);
    std::error_code ec;
    if (stdfs::exists(cache + "/complete", ec)) {
      for (const Kind& k : kKinds) {
        SLUICE_RETURN_NOT_OK(run->batch->Execute(
            "CREATE TABLE " + std::string(k.name) + " AS SELECT * FROM read_parquet(" +
            QuoteLiteral(cache + "/" + k.name + ".parquet") + ")"));
      }
      return Status::OK();
    }
  }
  nexmark::NexmarkConfig config;
  config.events_per_second = run->o.rate;
  SLUICE_RETURN_NOT_OK_CTX(config.Validate(), "the generator's parameters");
  run->events_json = run->work + "/events.jsonl";
  {
    std::ofstream out(run->events_json, std::ios::binary);
    if (!out) return Status::IOError("cannot write " + run->events_json);
    SLUICE_RETURN_NOT_OK(nexmark::EmitJson(config, 0, run->o.events, out));
  }
  SLUICE_RETURN_NOT_OK(run->batch->Execute("CREATE TABLE events AS SELECT * FROM read_json(" +
                                           QuoteLiteral(run->events_json) +
                                           ", format => 'newline_delimited')"));
  for (const Kind& k : kKinds) {
    SLUICE_RETURN_NOT_OK(
        run->batch->Execute("CREATE TABLE " + std::string(k.name) + " AS SELECT " + k.columns +
                            " FROM events WHERE event_type = " + std::to_string(k.event_type)));
  }
  SLUICE_RETURN_NOT_OK(run->batch->Execute("DROP TABLE events"));
  std::error_code ec;
  stdfs::remove(run->events_json, ec);
  if (!cache.empty()) {
    stdfs::create_directories(cache, ec);
    if (ec) return Status::IOError("cannot create " + cache + ": " + ec.message());
    for (const Kind& k : kKinds) {
      SLUICE_RETURN_NOT_OK(run->batch->Execute("COPY " + std::string(k.name) + " TO " +
                                               QuoteLiteral(cache + "/" + k.name + ".parquet") +
                                               " (FORMAT parquet)"));
    }
    std::ofstream(cache + "/complete") << "ok\n";
  }
  return Status::OK();
}

// Source "table": Delta tables of the kinds the query reads, one commit per M events' worth of
// event time (so that every stream's batch covers the same span of the generator's events). A
// span without rows of a kind gets no commit, so with an M small enough for a kind to miss a span
// (people are 2 % of the events) two streams of a join drift apart by a batch.
Status LoadDeltaTables(Run* run, sql::Session* session) {
  const double events_per_ms = static_cast<double>(run->o.rate) / 1000.0;
  const int64_t base_ms = nexmark::NexmarkConfig().base_time_ms;
  const int64_t m = run->o.batch_events;
  const int64_t chunks = (run->o.events + m - 1) / m;
  for (const Kind* k : run->kinds) {
    const std::string dir = run->work + "/chunks_" + k->name;
    std::ostringstream chunk_expr;
    chunk_expr << "CAST(floor((epoch_ms(dateTime) - " << base_ms << ") * " << std::setprecision(17)
               << events_per_ms << " / " << m << ") AS BIGINT)";
    SLUICE_RETURN_NOT_OK(run->batch->Execute(
        "COPY (SELECT *, " + chunk_expr.str() + " AS __chunk FROM " + k->name + ") TO " +
        QuoteLiteral(dir) + " (FORMAT parquet, PARTITION_BY (__chunk))"));
    for (int64_t c = 0; c < chunks; ++c) {
      const std::string files = dir + "/__chunk=" + std::to_string(c);
      std::error_code ec;
      if (!stdfs::exists(files, ec)) continue;
      const std::string scan = "SELECT * FROM read_parquet(" + QuoteLiteral(files + "/*.parquet") +
                               ", hive_partitioning = false)";  // the files lack __chunk
      const bool first = !stdfs::exists(run->work + "/warehouse/" + k->name, ec);
      SLUICE_ASSIGN_OR_RETURN_CTX(
          auto r,
          session->Execute(first ? "CREATE TABLE " + std::string(k->name) + " AS " + scan
                                 : "INSERT INTO " + std::string(k->name) + " " + scan),
          std::string("loading ") + k->name + " chunk " + std::to_string(c));
      (void)r;
    }
  }
  return Status::OK();
}

std::string StreamRelation(const Run& run, const Kind& k) {
  if (run.o.source == "table") {
    return std::string(k.name) + " WITH (maxFilesPerTrigger = 1)";
  }
  return "nexmark(kind => '" + std::string(k.name) + "', numEvents => " +
         std::to_string(run.o.events) + ", eventsPerSecond => " + std::to_string(run.o.rate) +
         ", maxEventsPerTrigger => " + std::to_string(run.o.batch_events) +
         (run.o.rate_limited ? ", rateLimited => true" : "") + ")";
}

int64_t WallMs() { return WallClockMs(); }

// One batch of a rate-limited run: events [start, end) of the unified stream, reported at
// wall time reported_ms.
struct LatencyBatch {
  int64_t start = 0, end = 0, reported_ms = 0;
};

// The source's wall-clock start (ms), from its checkpoint file "v1\n<ms>"; nullopt if absent.
std::optional<int64_t> SourceStartMs(const std::string& checkpoint) {
  std::ifstream in(checkpoint + "/sources/0/0");
  std::string version, ms;
  if (!in || !std::getline(in, version) || version != "v1" || !std::getline(in, ms)) {
    return std::nullopt;
  }
  try {
    return std::stoll(ms);
  } catch (...) {
    return std::nullopt;
  }
}

// p50 and p99 (ms) of the events' latencies: event k released at anchor + floor(k * 1000 / rate).
std::pair<double, double> LatencyPercentiles(const std::vector<LatencyBatch>& batches,
                                             int64_t anchor_ms, int64_t rate) {
  std::vector<std::pair<double, double>> samples;  // latency, weight (events)
  for (const LatencyBatch& b : batches) {
    const int64_t n = b.end - b.start;
    if (n <= 0) continue;
    const int64_t k_samples = std::min<int64_t>(n, 256);
    for (int64_t i = 0; i < k_samples; ++i) {
      const int64_t k = b.start + i * n / k_samples;
      // The generator releases event k at the whole millisecond k * 1000 / rate (integer).
      const auto due_ms = static_cast<int64_t>(static_cast<__int128>(k) * 1000 / rate);
      const double released = static_cast<double>(anchor_ms) + static_cast<double>(due_ms);
      samples.push_back({static_cast<double>(b.reported_ms) - released,
                         static_cast<double>(n) / static_cast<double>(k_samples)});
    }
  }
  if (samples.empty()) return {0, 0};
  std::sort(samples.begin(), samples.end());
  double total = 0;
  for (const auto& s : samples) total += s.second;
  auto at = [&](double p) {
    double seen = 0;
    for (const auto& s : samples) {
      seen += s.second;
      if (seen >= p * total) return s.first;
    }
    return samples.back().first;
  };
  return {at(0.50), at(0.99)};
}

struct Figures {
  double wall_s = 0, cpu_s = 0;
  int64_t batches = 0, input_rows = 0, output_rows = -1;
  std::vector<int64_t> durations;
  std::map<std::string, int64_t> duration_sums;  // progress durationMs, summed
  double batch_s = -1;                           // DuckDB batch run
  int64_t batch_rows = -1;
  std::string check;              // "", "ok", or the difference
  int64_t kafka_rounds = 0;       // source "kafka": produce-then-run rounds
  double kafka_produce_s = 0;     // source "kafka": generating and producing (not in wall_s)
  double kafka_broker_cpu_s = 0;  // source "kafka": the mock broker's CPU within cpu_s
};

// Partitions per topic of source "kafka" unless --kafka-partitions says otherwise: a round then
// holds about 16 * 12 000 bids (the mock keeps ~5 MiB per partition; a bid's JSON is ~300 B).
constexpr int kDefaultKafkaPartitions = 16;

int Fail(std::ostream& err, const std::string& what) {
  err << "Error: " << what << "\n";
  return 1;
}

}  // namespace

int RunBenchNexmark(const BenchNexmarkOptions& options, std::ostream& out, std::ostream& err) {
  Run run;
  run.o = options;
  if (run.o.check) run.o.sink = "delta";
  if (run.o.events < 1 || run.o.rate < 1 || run.o.batch_events < 0) {
    err << "Error: --events and --rate must be positive, --batch-events not negative\n";
    return 2;
  }
  if (run.o.batch_events == 0) run.o.batch_events = std::max<int64_t>(run.o.events / 10, 1);
  if (run.o.rate_limited && run.o.source != "generator") {
    err << "Error: --rate-limited needs --source generator\n";
    return 2;
  }
  if (run.o.kafka_partitions < 0) {
    err << "Error: --kafka-partitions must not be negative\n";
    return 2;
  }
  if (!run.o.kafka_bootstrap.empty() && run.o.source != "kafka") {
    err << "Error: --kafka-bootstrap needs --source kafka\n";
    return 2;
  }
  if (!run.o.kafka_bootstrap.empty() && run.o.kafka_partitions != 0) {
    err << "Error: --kafka-partitions does not apply to --kafka-bootstrap (its topics exist)\n";
    return 2;
  }
  const std::string query_file = run.o.queries_dir + "/" + run.o.query + ".sql";
  Result<std::string> text = ReadFile(query_file);
  if (!text.ok()) return Fail(err, text.status().ToString() + " (is --queries right?)");
  std::string batch_text;
  if (!run.o.no_batch) {
    Result<std::string> b = ReadFile(run.o.queries_dir + "/" + run.o.query + ".batch.sql");
    if (!b.ok()) return Fail(err, b.status().ToString());
    batch_text = *b;
  }
  for (const Kind& k : kKinds) {
    if (StripLineComments(*text).find(k.placeholder) != std::string::npos) {
      run.kinds.push_back(&k);
    }
  }
  // A query whose sink is part of what it measures (q10's file sink) names it in its file.
  if (const std::string sink = SinkDirective(*text); !sink.empty()) {
    if (sink != "delta") {
      return Fail(err, query_file + ": '-- sink: " + sink + "' is not a sink (only delta)");
    }
    run.o.sink = sink;
  }
  Result<int64_t> source_events = SourceEvents(run.o.rate, run.o.events, run.kinds);
  if (!source_events.ok()) return Fail(err, source_events.status().ToString());

  // Work directory.
  bool remove_work = false;
  if (run.o.work_dir.empty()) {
    std::string tmpl = (stdfs::temp_directory_path() / "sluice-bench-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return Fail(err, "cannot create a temporary directory");
    run.work = tmpl;
    remove_work = true;
  } else {
    run.work = run.o.work_dir;
    std::error_code ec;
    stdfs::create_directories(run.work, ec);
    if (ec) return Fail(err, "cannot create " + run.work + ": " + ec.message());
  }
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      if (!dir.empty()) stdfs::remove_all(dir, ec);
    }
  } cleanup{remove_work ? run.work : ""};

  sql::SessionOptions session_options;
  session_options.warehouse = run.work + "/warehouse";
  Result<std::unique_ptr<sql::Session>> opened = sql::Session::Open(session_options);
  if (!opened.ok()) return Fail(err, opened.status().ToString());
  std::unique_ptr<sql::Session> session = std::move(opened).ValueOrDie();

  // The batch tables are loaded after the streaming run (so that its peak RSS is its own),
  // except for source "table", which streams them.
  if (run.o.source == "table") {
    Status st = LoadBatchTables(&run);
    if (!st.ok()) return Fail(err, "generating the events: " + st.ToString());
  }
  if (run.o.source == "table") {
    Status st = LoadDeltaTables(&run, session.get());
    if (!st.ok()) return Fail(err, "loading the events into Delta tables: " + st.ToString());
  }

  // Source "kafka": the mock cluster and its topics; the events are produced in rounds below.
  // With --kafka-bootstrap the external cluster's topics hold the events already.
  std::unique_ptr<NexmarkKafkaFeed> feed;
  if (run.o.source == "kafka" && run.o.kafka_bootstrap.empty()) {
    nexmark::NexmarkConfig config;
    config.events_per_second = run.o.rate;
    Result<std::unique_ptr<NexmarkKafkaFeed>> started = NexmarkKafkaFeed::Start(
        config, run.o.kafka_partitions > 0 ? run.o.kafka_partitions : kDefaultKafkaPartitions);
    if (!started.ok()) return Fail(err, started.status().ToString());
    feed = std::move(started).ValueOrDie();
  }

  // The streaming table.
  std::string sql_text = StripLineComments(*text);
  if (run.o.source == "kafka") {
    const std::string bootstrap = feed != nullptr ? feed->bootstrap() : run.o.kafka_bootstrap;
    Result<std::string> rewritten =
        NexmarkKafkaQueryText(sql_text, NexmarkKafkaStreams{bootstrap, run.o.batch_events});
    if (!rewritten.ok()) return Fail(err, query_file + ": " + rewritten.status().ToString());
    sql_text = *rewritten;
  }
  for (const Kind& k : kKinds)
    sql_text = ReplaceAll(sql_text, k.placeholder, StreamRelation(run, k));
  for (const sql::StatementText& st : sql::SplitStatements(sql_text)) {
    Result<engine::Batch> r = session->Execute(st.text);
    if (!r.ok()) return Fail(err, query_file + ": " + r.status().ToString());
  }
  const std::string table = "nexmark_" + run.o.query;
  Result<std::vector<sql::StreamingDefinition>> defs = session->streaming().ListDefinitions();
  if (!defs.ok()) return Fail(err, defs.status().ToString());
  const sql::StreamingDefinition* def = nullptr;
  for (const auto& d : *defs) {
    if (d.name == table) def = &d;
  }
  if (def == nullptr) return Fail(err, query_file + " does not define streaming table " + table);
  // A pipeline (q4): the file's other streaming tables feed `table` (it reads STREAM of them).
  // Each runs to its end (AvailableNow, Delta sink in the work dir) before `table`, timed with it.
  std::vector<const sql::StreamingDefinition*> upstream;
  for (const auto& d : *defs) {
    if (d.name != table) upstream.push_back(&d);
  }
  if (!upstream.empty() && run.o.rate_limited) {
    return Fail(err, query_file +
                         " is a pipeline of streaming tables: --rate-limited is not "
                         "supported for it");
  }

  Figures f;
  std::mutex mu;
  auto blackhole = std::make_shared<sinks::BlackholeSink>();
  sql::StartOptions start;
  std::vector<LatencyBatch> latency_batches;
  int64_t processed_end = 0;  // the unified stream's offset processed so far
  start.on_progress = [&](const std::string&, const stream::StreamingQueryProgress& p) {
    std::lock_guard<std::mutex> lock(mu);
    if (!p.sources.empty()) {
      LatencyBatch b;
      b.reported_ms = WallMs();
      try {
        b.start = p.sources[0].start_offset ? std::stoll(*p.sources[0].start_offset) : 0;
        b.end = p.sources[0].end_offset ? std::stoll(*p.sources[0].end_offset) : b.start;
      } catch (...) {  // not the generator's integer offsets (source "table")
        b.end = b.start;
      }
      if (b.end > b.start) latency_batches.push_back(b);
      processed_end = std::max(processed_end, b.end);
    }
    ++f.batches;
    f.input_rows += p.NumInputRows();
    f.durations.push_back(p.batch_duration);
    for (const auto& [k, v] : p.duration_ms) f.duration_sums[k] += v;
  };
  if (run.o.sink == "blackhole") {
    start.sink_factory =
        [blackhole](const stream::SinkContext&) -> Result<std::shared_ptr<sinks::Sink>> {
      return blackhole;
    };
  }
  auto run_upstream = [&]() -> Status {
    sql::StartOptions up;
    up.on_progress = start.on_progress;
    for (const sql::StreamingDefinition* u : upstream) {
      SLUICE_ASSIGN_OR_RETURN_CTX(
          auto e, session->streaming().Start(*u, stream::Trigger::AvailableNow(), up), u->name);
      Status awaited = e->AwaitTermination();
      if (std::optional<Status> ex = e->Exception()) return *ex;
      SLUICE_RETURN_NOT_OK_CTX(awaited, u->name);
    }
    return Status::OK();
  };
  int64_t wall0_ms = WallMs();
  if (feed != nullptr) {
    // Rounds: produce what the mock's retention holds (not timed), run the query to its end
    // with AvailableNow (timed), until every event has been produced and processed.
    while (feed->next_event() < run.o.events) {
      Result<int64_t> produced =
          feed->ProduceRound(run.o.events - feed->next_event(), run.o.batch_events);
      if (!produced.ok()) return Fail(err, produced.status().ToString());
      ++f.kafka_rounds;
      const double cpu0 = CpuSeconds();
      const double broker0 = NexmarkKafkaFeed::MockBrokerCpuSeconds();
      const auto t0 = std::chrono::steady_clock::now();
      if (Status up = run_upstream(); !up.ok()) return Fail(err, up.ToString());
      Result<std::unique_ptr<stream::MicroBatchExecution>> exec =
          session->streaming().Start(*def, stream::Trigger::AvailableNow(), start);
      if (!exec.ok()) return Fail(err, exec.status().ToString());
      Status awaited = (*exec)->AwaitTermination();
      f.wall_s += Seconds(t0, std::chrono::steady_clock::now());
      f.cpu_s += CpuSeconds() - cpu0;
      f.kafka_broker_cpu_s += NexmarkKafkaFeed::MockBrokerCpuSeconds() - broker0;
      if (std::optional<Status> ex = (*exec)->Exception()) return Fail(err, ex->ToString());
      if (!awaited.ok()) return Fail(err, awaited.ToString());
    }
    f.kafka_produce_s = feed->produce_seconds();
  } else {
    const double cpu0 = CpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    wall0_ms = WallMs();
    if (Status up = run_upstream(); !up.ok()) return Fail(err, up.ToString());
    // Rate-limited: AvailableNow would stop at the events due at the start, so the query runs
    // on the default trigger until the last event is processed.
    Result<std::unique_ptr<stream::MicroBatchExecution>> exec = session->streaming().Start(
        *def, run.o.rate_limited ? stream::Trigger::Default() : stream::Trigger::AvailableNow(),
        start);
    if (!exec.ok()) return Fail(err, exec.status().ToString());
    Status awaited = Status::OK();
    if (run.o.rate_limited) {
      for (;;) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (processed_end >= run.o.events) break;
        }
        if (!(*exec)->IsActive()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      awaited = (*exec)->Stop();
    } else {
      awaited = (*exec)->AwaitTermination();
    }
    const auto t1 = std::chrono::steady_clock::now();
    f.cpu_s = CpuSeconds() - cpu0;
    f.wall_s = Seconds(t0, t1);
    if (std::optional<Status> ex = (*exec)->Exception()) return Fail(err, ex->ToString());
    if (!awaited.ok()) return Fail(err, awaited.ToString());
  }
  const int64_t rss_kb = PeakRssKb();

  if (run.o.sink == "blackhole") {
    f.output_rows = blackhole->total_rows();
  } else {
    Result<engine::Batch> n = session->Execute("SELECT count(*) FROM " + table);
    if (n.ok() && n->num_rows() == 1)
      f.output_rows = n->GetInt64(0, 0).ValueOr(std::nullopt).value_or(-1);
  }

  // The DuckDB batch reference, and the check.
  if (!run.o.no_batch) {
    if (run.batch == nullptr) {
      Status st = LoadBatchTables(&run);
      if (!st.ok()) return Fail(err, "generating the events: " + st.ToString());
    }
    const std::string batch_sql = StripLineComments(batch_text);
    const auto b0 = std::chrono::steady_clock::now();
    Result<engine::Batch> expected = run.batch->Query(batch_sql);
    f.batch_s = Seconds(b0, std::chrono::steady_clock::now());
    if (!expected.ok()) {
      return Fail(err, run.o.query + ".batch.sql: " + expected.status().ToString());
    }
    f.batch_rows = expected->num_rows();
    if (run.o.check) {
      Result<engine::Batch> actual =
          session->Execute(ReplaceAll(CompareQuery(batch_text), "@RESULT@", table));
      if (!actual.ok()) return Fail(err, "reading " + table + ": " + actual.status().ToString());
      Status st = run.batch->RegisterBatch("__expected", *expected);
      if (st.ok()) st = run.batch->RegisterBatch("__actual", *actual);
      if (!st.ok()) return Fail(err, st.ToString());
      Result<engine::Batch> missing =
          run.batch->Query("SELECT * FROM __expected EXCEPT ALL SELECT * FROM __actual");
      Result<engine::Batch> extra =
          run.batch->Query("SELECT * FROM __actual EXCEPT ALL SELECT * FROM __expected");
      if (!missing.ok()) return Fail(err, "comparing: " + missing.status().ToString());
      if (!extra.ok()) return Fail(err, "comparing: " + extra.status().ToString());
      if (missing->num_rows() == 0 && extra->num_rows() == 0) {
        f.check = "ok";
      } else {
        f.check = std::to_string(actual->num_rows()) + " streaming rows, " +
                  std::to_string(expected->num_rows()) + " batch rows; " +
                  std::to_string(missing->num_rows()) + " batch rows missing from the stream:\n" +
                  RowsText(*missing, 5) + "  " + std::to_string(extra->num_rows()) +
                  " streaming rows not in the batch result:\n" + RowsText(*extra, 5);
      }
    }
  }

  // Report. Throughput counts the events of the kinds the query reads (its sources' events), not
  // all N of the generator's stream.
  const double n = static_cast<double>(*source_events);
  const double eps = n / f.wall_s;
  const double per_core = f.cpu_s > 0 ? n / f.cpu_s : 0;
  const int64_t p50 = Percentile(f.durations, 50), p99 = Percentile(f.durations, 99);
  const double rss_mb = static_cast<double>(rss_kb) / 1024.0;
  const char* latency_na =
      "n/a: the source releases every event as soon as asked (no wall-clock release time)";
  std::optional<std::pair<double, double>> latency;
  if (run.o.rate_limited) {
    const std::string checkpoint = run.work + "/warehouse/_checkpoints/" + table;
    latency = LatencyPercentiles(latency_batches, SourceStartMs(checkpoint).value_or(wall0_ms),
                                 run.o.rate);
  }
  if (run.o.json) {
    nlohmann::ordered_json j;
    j["query"] = run.o.query;
    j["events"] = run.o.events;
    j["sourceEvents"] = *source_events;
    j["rate"] = run.o.rate;
    j["batchEvents"] = run.o.batch_events;
    j["source"] = run.o.source;
    j["sink"] = run.o.sink;
    if (feed != nullptr) {
      j["kafkaPartitions"] = feed->partitions();
      j["kafkaRounds"] = f.kafka_rounds;
      j["kafkaProduceSeconds"] = f.kafka_produce_s;
      j["kafkaBrokerCpuSeconds"] = f.kafka_broker_cpu_s;
      j["eventsPerSecondPerCoreWithoutBroker"] =
          f.cpu_s > f.kafka_broker_cpu_s ? n / (f.cpu_s - f.kafka_broker_cpu_s) : 0;
    } else if (!run.o.kafka_bootstrap.empty()) {
      j["kafkaBootstrap"] = run.o.kafka_bootstrap;
    }
    j["batches"] = f.batches;
    j["inputRows"] = f.input_rows;
    j["outputRows"] = f.output_rows;
    j["wallSeconds"] = f.wall_s;
    j["cpuSeconds"] = f.cpu_s;
    j["eventsPerSecond"] = eps;
    j["eventsPerSecondPerCore"] = per_core;
    j["coresUsed"] = f.cpu_s / f.wall_s;
    j["batchDurationMsP50"] = p50;
    j["batchDurationMsP99"] = p99;
    j["rateLimited"] = run.o.rate_limited;
    if (latency) {
      j["latencyMsP50"] = latency->first;
      j["latencyMsP99"] = latency->second;
    } else {
      j["latencyMsP50"] = nullptr;
      j["latencyMsP99"] = nullptr;
      j["latencyNote"] = latency_na;
    }
    j["peakRssMb"] = rss_mb;
    j["durationMsTotals"] = f.duration_sums;
    if (f.batch_s >= 0) {
      j["duckdbBatchSeconds"] = f.batch_s;
      j["duckdbBatchRows"] = f.batch_rows;
      j["sluiceOverDuckdbBatch"] = f.batch_s / f.wall_s;
    }
    if (!f.check.empty()) j["check"] = f.check;
    out << j.dump() << "\n";
  } else {
    out << std::fixed << std::setprecision(0);
    out << "nexmark " << run.o.query << ": " << run.o.events << " events (event-time rate "
        << run.o.rate << "/s, " << run.o.batch_events << " per batch), source " << run.o.source
        << (run.o.rate_limited ? " (rate-limited)" : "") << ", sink " << run.o.sink << "\n";
    out << "  source events      " << *source_events << " (the kinds the query reads; events/s "
        << "counts these)\n";
    if (feed != nullptr) {
      out << std::setprecision(3) << "  kafka              mock cluster, " << feed->partitions()
          << " partitions per topic, " << f.kafka_rounds << " rounds; producing took "
          << f.kafka_produce_s << " s (not counted below)\n"
          << std::setprecision(0);
    } else if (!run.o.kafka_bootstrap.empty()) {
      out << "  kafka              external cluster " << run.o.kafka_bootstrap
          << " (topics filled beforehand)\n";
    }
    out << "  batches            " << f.batches << " (" << f.input_rows << " input rows, "
        << f.output_rows << " output rows)\n";
    out << std::setprecision(3) << "  wall               " << f.wall_s << " s, cpu " << f.cpu_s
        << " s (" << std::setprecision(2) << f.cpu_s / f.wall_s << " cores)\n";
    out << std::setprecision(0) << "  events/s           " << eps << "\n";
    out << "  events/s per core  " << per_core << "\n";
    if (feed != nullptr) {
      out << "  without the broker "
          << (f.cpu_s > f.kafka_broker_cpu_s ? n / (f.cpu_s - f.kafka_broker_cpu_s) : 0)
          << " per core (the in-process mock broker used " << std::setprecision(3)
          << f.kafka_broker_cpu_s << " s of the cpu)\n"
          << std::setprecision(0);
    }
    out << "  batch duration     p50 " << p50 << " ms, p99 " << p99 << " ms\n";
    if (latency) {
      out << "  latency            p50 " << latency->first << " ms, p99 " << latency->second
          << " ms (batch reported - event released)\n";
    } else {
      out << "  latency            " << latency_na << "\n";
    }
    out << std::setprecision(1) << "  peak RSS           " << rss_mb << " MB\n";
    out << "  time per step      ";
    for (const auto& [k, v] : f.duration_sums) out << k << " " << v << " ms  ";
    out << "\n";
    if (f.batch_s >= 0) {
      out << std::setprecision(3) << "  DuckDB batch       " << f.batch_s << " s (" << f.batch_rows
          << " rows); Sluice/DuckDB-batch throughput " << std::setprecision(2)
          << f.batch_s / f.wall_s << "\n";
    }
    if (!f.check.empty()) out << "  check              " << f.check << "\n";
  }
  if (!f.check.empty() && f.check != "ok") {
    err << "Error: " << run.o.query << ": the streaming result differs from the batch result\n";
    return 1;
  }
  return 0;
}

namespace {

// Replaces the process with `driver` (a script of the clone `repo`) run by the peers' Python
// (scripts/peers/run-python.sh) with `args`; returns only on failure.
int ExecPeersPython(const std::string& repo, const std::string& driver_path,
                    const std::vector<std::string>& driver_args, std::ostream& err) {
  const stdfs::path root(repo);
  const std::string python = (root / "scripts/peers/run-python.sh").string();
  const std::string driver = (root / driver_path).string();
  std::error_code ec;
  if (!stdfs::exists(driver, ec)) {
    err << "Error: " << driver << " not found (run from the clone, or give --repo)\n";
    return 2;
  }
  std::vector<std::string> args = {python, driver};
  args.insert(args.end(), driver_args.begin(), driver_args.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(python.c_str(), argv.data());
  return Fail(err, "cannot run " + python + ": " + std::strerror(errno));
}

}  // namespace

int RunBenchPeers(const BenchPeersOptions& options, std::ostream& err) {
  std::error_code ec;
  const stdfs::path self = stdfs::read_symlink("/proc/self/exe", ec);
  if (ec) return Fail(err, "cannot read /proc/self/exe: " + ec.message());
  std::vector<std::string> args = {"--sluice", self.string(), "--query", options.query};
  if (options.events > 0) args.insert(args.end(), {"--events", std::to_string(options.events)});
  if (!options.engines.empty()) args.insert(args.end(), {"--engines", options.engines});
  if (!options.bootstrap.empty()) args.insert(args.end(), {"--bootstrap", options.bootstrap});
  if (options.json) args.push_back("--json");
  if (options.check) args.push_back("--check");
  return ExecPeersPython(options.repo, "bench/peers/nexmark_peers.py", args, err);
}

int RunBenchLatency(const BenchLatencyOptions& options, std::ostream& err) {
  std::error_code ec;
  const stdfs::path self = stdfs::read_symlink("/proc/self/exe", ec);
  if (ec) return Fail(err, "cannot read /proc/self/exe: " + ec.message());
  const std::string bench = (self.parent_path() / "bench" / "kafka_latency_bench").string();
  if (::access(bench.c_str(), X_OK) != 0) {
    err << "Error: " << bench
        << " not found: `sluice bench latency` runs the build tree's kafka_latency_bench "
           "(build the kafka_latency_bench target)\n";
    return 2;
  }
  std::vector<std::string> args = {"--bench", bench};
  if (!options.cases.empty()) args.insert(args.end(), {"--cases", options.cases});
  if (!options.triggers.empty()) args.insert(args.end(), {"--triggers", options.triggers});
  if (options.rate > 0) args.insert(args.end(), {"--rate", std::to_string(options.rate)});
  if (options.seconds > 0) args.insert(args.end(), {"--seconds", std::to_string(options.seconds)});
  if (options.warmup >= 0) args.insert(args.end(), {"--warmup", std::to_string(options.warmup)});
  if (options.partitions > 0) {
    args.insert(args.end(), {"--partitions", std::to_string(options.partitions)});
  }
  if (!options.bootstrap.empty()) args.insert(args.end(), {"--bootstrap", options.bootstrap});
  if (options.spark) args.push_back("--spark");
  if (options.json) args.push_back("--json");
  return ExecPeersPython(options.repo, "bench/latency/latency.py", args, err);
}

}  // namespace sluice::cli
