// `sluice run pipeline.sql` (or a directory of .sql files): runs a pipeline (docs/pipelines.md).
// First the whole pipeline is parsed and checked as a graph (sql/pipeline_graph.h), and the
// options are checked (--ui, --progress-kafka), reading the warehouse only: any error is printed
// as "Error: <file>:<line>: <what>" (every error found, one line each) and nothing is created or
// run. With dry_run the graph is printed in run order and the run stops there. Otherwise the
// progress log, the Kafka progress writer and the monitoring server are opened, then the
// statements run in the graph's order (settings, then each dataset after every dataset it reads,
// whatever the order in the files), then every streaming table and flow the pipeline defines
// runs, each on its own trigger, until they all stop (AVAILABLE NOW and ONCE queries stop when
// done; the others run until interrupted) or one fails. With triggered (a Lakeflow triggered
// update), every query runs AVAILABLE NOW whatever its TRIGGER (ONCE stays ONCE), so the run
// processes what is available, refreshes its materialized views and stops.
//
// Order: a query that reads another query's table (STREAM t / table_changes on it) starts after
// that query: after it has finished when it runs AVAILABLE NOW or ONCE (so that it sees all its
// output), else once it is running and its first batch has created its table. Triggers: the
// table's TRIGGER; SCHEDULE EVERY n without a TRIGGER is TRIGGER PROCESSING TIME n; neither is
// the default trigger (a batch as soon as data arrives). One line per batch: name, batch id, input
// rows, rows/s, duration. With a progress log, every batch's StreamingQueryProgress JSON (Spark's
// field names, one compact object per line) is appended to that file and flushed. SIGINT/SIGTERM
// stop every query at a batch boundary; the exit code is then 0. Errors: exit code 1 and
// "Error: <message>" on `err`. With `ui`, the monitoring server (server/monitor_server.h) serves
// the queries' page, JSON and /metrics while the run lasts; its URL is printed at start.
//
// Supervision (cli/restart_policy.h, docs/operations.md "Supervised runs"): a query that fails
// is logged on `err` ("query X failed: <error with its context>") and, when a restart can fix
// the error, restarted from its checkpoint (same query id, new run id) after a backoff
// (restart_backoff_ms, doubling per consecutive restart up to max_backoff_ms; a run that lasted
// healthy_after_ms gets its budget back); other queries keep running meanwhile. After
// max_restarts consecutive restarts, or at once for an error a restart cannot fix, every query
// is stopped and the run exits 1 with "Error: <last error> (gave up after N restarts)" or
// "(not restarted: <reason>)". An additive Delta source schema change restarts at once without
// counting.
//
// Live status (cli/status_line.h): with live_status, per-batch lines are replaced by one status
// line per query redrawn in place; log lines are printed above them.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace sluice::cli {

struct RunCommandOptions {
  std::string file;        // the pipeline's SQL: a file, or a directory of .sql files
  bool dry_run = false;    // --dry-run: check and print the graph, create and run nothing
  bool triggered = false;  // --triggered: every query AVAILABLE NOW (ONCE stays ONCE), then stop
  std::string warehouse = "warehouse";
  std::string progress_log;            // empty: none
  std::string progress_kafka;          // --progress-kafka BOOTSTRAP_SERVERS/TOPIC; empty: none
  std::optional<std::string> ui;       // --ui [HOST:]PORT ("" = 127.0.0.1:4040); nullopt: no server
  int64_t max_restarts = 3;            // --max-restarts; < 0: unlimited
  int64_t restart_backoff_ms = 10000;  // --restart-backoff: the first restart's delay
  int64_t max_backoff_ms = 300000;     // the backoff's cap (5 min)
  int64_t healthy_after_ms = 600000;   // a run this long resets the restart count (10 min)
  bool live_status = false;            // redraw status lines in place (stdout is a terminal)
};

// Installs the SIGINT/SIGTERM handlers, runs, restores them. Returns the exit code.
int RunPipeline(const RunCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace sluice::cli
