// `sluice bench nexmark`: runs one Nexmark query (bench/nexmark/qN.sql) over N generated events
// to the end and reports its throughput; optionally checks its result against the same query run
// by DuckDB as one batch (bench/nexmark/qN.batch.sql). docs/nexmark.md "Queries and the
// benchmark command"; bench/nexmark/README.md.
//
// A run, in a work directory (a fresh temporary one unless given; removed at the end unless
// kept):
//  1. The query file's @BID@, @PERSON@, @AUCTION@ become the stream relation of that kind:
//     source "generator": nexmark(kind => 'bid', numEvents => N, eventsPerSecond => R,
//       maxEventsPerTrigger => M), the in-process generator source;
//     source "table": a Delta table (bid, person, auction) loaded beforehand with the generator's
//       events in commits of M events' worth, read with maxFilesPerTrigger = 1, so each batch
//       gets one commit (the engine alone, without generation);
//     source "kafka": a subquery over read_kafka of the kind's topic in librdkafka's in-process
//       mock cluster, parsing the generator's JSON records with from_json (nexmark_kafka_sql.h);
//       the command starts the cluster and produces the events (nexmark_kafka_feed.h) in
//       rounds that fit the mock's retention (~5 MiB per partition): produce a round (not
//       timed), run the query with TRIGGER AVAILABLE NOW to the round's end (timed), repeat.
//       With --kafka-bootstrap the topics of that external cluster are read as they are (one
//       run to their end; `sluice bench peers` fills them on the real broker).
//     A query file's "-- sink: delta" line makes its sink the Delta table whatever --sink says
//     (q10, whose file sink is what it measures).
//  2. The streaming table runs with TRIGGER AVAILABLE NOW to the end of the events (every batch,
//     then the no-data batch that closes what the final watermark closes). Its output goes to
//     the sink: "blackhole" (counted and discarded) or "delta" (the streaming table).
//  3. Reported: wall time, events/s (S / wall), events/s per core (S / process CPU seconds, from
//     getrusage over the run), where S counts only the events of the kinds the query reads (what
//     its sources generate: a bid-only query gets no credit for the N - S people and auctions of
//     the stream it never produced), cores used, batch duration p50/p99 (progress batchDuration),
//     end-to-end latency (n/a: the sources release all events at once, see below), peak RSS
//     (the process's at the end of the streaming run; with source "table" it includes the
//     events loaded for the batch reference), output rows.
//  4. Unless --no-batch: the events are also loaded into DuckDB tables (from the generator's
//     JSON lines, or from the Parquet files of --batch-cache) and qN.batch.sql runs over them
//     once, timed (the Sluice / DuckDB-batch ratio; DuckDB with its default threads).
//     With --check the streaming table's rows (read with the batch file's "-- compare:" query,
//     default SELECT * FROM @RESULT@) must equal the batch result as multisets; --check implies
//     --sink delta. A difference is an error (exit 1) showing a few rows of each side.
//
// End-to-end latency needs the wall time at which each event was released. At max speed (the
// default) every event is released as soon as asked, so it is reported as n/a. With
// --rate-limited, event k is released at start + floor(k * 1000 / R) ms (start = the source's
// wall-clock start, read from its checkpoint file sources/0/0; the run's start if absent), and
// its latency is the wall time when its batch's progress is reported minus that release time;
// p50/p99 are over events (each batch's events are evenly spaced, sampled 256 per batch).
//
// Errors: exit code 1 and "Error: <what>" on `err`; exit code 2 for bad options.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace sluice::cli {

struct BenchNexmarkOptions {
  std::string query;                 // "q0" .. "q22" (bench/nexmark/<query>.sql)
  int64_t events = 1000000;          // N: events of the generator (all kinds)
  int64_t rate = 100000;             // event-time rate R (events per second of event time)
  int64_t batch_events = 0;          // M: events per micro-batch; 0 = max(N / 10, 1)
  std::string source = "generator";  // generator | table | kafka
  int kafka_partitions = 0;          // source "kafka": partitions per topic; 0 = 16
  // Source "kafka": non-empty = an external cluster (HOST:PORT) whose topics nexmark-<kind>
  // already hold the generator's first `events` events as the feed writes them (bench/peers
  // produces them); the command produces nothing and runs the query once to the topics' end.
  std::string kafka_bootstrap;
  std::string sink = "blackhole";  // blackhole | delta
  bool json = false;               // one JSON object instead of text
  bool check = false;              // compare with the batch reference (implies delta)
  bool no_batch = false;           // skip the DuckDB batch run
  // Source "generator" only: release events at the event-time rate in wall time
  // (rateLimited => true), run on the default trigger until every event is processed, and
  // measure end-to-end latency.
  bool rate_limited = false;
  std::string queries_dir = "bench/nexmark";
  std::string work_dir;  // empty: a new temporary directory, removed at the end
  // Non-empty: the batch reference's tables are kept in (and reused from)
  // <batch_cache>/<events>_<rate>/<kind>.parquet, so that a suite generates them once.
  std::string batch_cache;
};

int RunBenchNexmark(const BenchNexmarkOptions& options, std::ostream& out, std::ostream& err);

// `sluice bench peers`: the same Nexmark query over the same events on Sluice, Spark and Flink
// (bench/peers/README.md). The driver is bench/peers/nexmark_peers.py, run with the peers' Python
// (scripts/peers/run-python.sh); this command replaces the process with it, passing this binary
// as the Sluice to measure.
struct BenchPeersOptions {
  std::string query;       // q0, q1, q2, q5 (what bench/peers/nexmark_peers.py knows)
  int64_t events = 0;      // 0 = the driver's default
  std::string engines;     // comma-separated subset of sluice,spark,flink; empty = all
  bool json = false;       // one JSON object per engine per line
  bool check = false;      // a small run whose outputs are compared across the engines
  std::string repo = ".";  // the clone (its bench/peers and scripts/peers)
  std::string bootstrap;   // an already running broker; empty = the driver starts one
};

// Returns only on failure (exit code 1 or 2, the message on `err`).
int RunBenchPeers(const BenchPeersOptions& options, std::ostream& err);

// `sluice bench latency`: end-to-end latency, produce -> visible, at a fixed rate on a real Kafka
// broker (bench/latency/README.md), for each case and processingTime trigger, optionally with
// Spark beside it. The driver is bench/latency/latency.py, run with the peers' Python; it runs
// the build tree's bench/kafka_latency_bench (beside this binary) once per case and trigger.
// This command replaces the process with it. Zero / empty fields: the driver's defaults.
struct BenchLatencyOptions {
  std::string cases;       // comma-separated subset of kafka_to_delta,stateless
  std::string triggers;    // comma-separated processingTime intervals in ms (default 0,100)
  int64_t rate = 0;        // records per second (default 10000)
  int64_t seconds = 0;     // producing time per run (default 10)
  int64_t warmup = -1;     // seconds left out at the start of each run (default 2)
  int64_t partitions = 0;  // of the input topic (default 8)
  bool spark = false;      // kafka_to_delta on Spark too, per trigger
  bool json = false;       // one JSON object per run per line
  std::string repo = ".";  // the clone (its bench/latency and scripts/peers)
  std::string bootstrap;   // an already running broker; empty = the driver starts one
};

// Returns only on failure (exit code 1 or 2, the message on `err`).
int RunBenchLatency(const BenchLatencyOptions& options, std::ostream& err);

}  // namespace sluice::cli
