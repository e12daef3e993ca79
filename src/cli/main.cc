// The `sluice` command.
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/checkpoint_commands.h"
#include "cli/pipeline_runner.h"
#include "cli/restart_policy.h"
#include "cli/result_printer.h"
#include "cli/sql_logic_test.h"
#include "cli/sql_shell.h"
#include "cli/status_line.h"
#include "cli/table_commands.h"
#include "common/logging.h"
#include "connect/connect_server.h"
#include "scaleout/group_runner.h"

namespace {

constexpr const char* kDescription =
    "Sluice: a stream processing engine for the lakehouse.\n"
    "Structured Streaming semantics and Delta Lake tables in one native binary.";

constexpr const char* kSqlFooter =
    "Examples:\n"
    "  sluice sql \"SELECT 42 AS answer\"\n"
    "  sluice sql --warehouse /data/wh --format csv \"SELECT * FROM events\"\n"
    "  sluice sql < script.sql          # run a script from stdin\n"
    "  sluice sql                       # interactive shell (.help inside)";

constexpr const char* kTestFooter =
    "Runs SQL logic test files (docs/testing.md). Each file gets a fresh temporary warehouse,\n"
    "which is also its working directory. Prints one line per failing record and ends with\n"
    "'N passed, N failed'; exits 1 when anything failed.\n"
    "Examples:\n"
    "  sluice test test/sql\n"
    "  sluice test test/sql/basics/select.test -v";

constexpr const char* kRunFooter =
    "Checks the whole pipeline first (every statement, duplicates, cycles, unknown names; an\n"
    "error creates nothing), runs its statements in dependency order whatever their order in the\n"
    "file, then every streaming table and flow it defines on its own trigger, in dependency\n"
    "order, printing one line per micro-batch. AVAILABLE NOW and ONCE\n"
    "queries stop when done; the others run until Ctrl-C (which stops at a batch boundary).\n"
    "On a terminal, one status line per query is redrawn in place instead.\n"
    "A failed query is restarted from its checkpoint with backoff (--max-restarts,\n"
    "--restart-backoff) unless a restart cannot fix its error (bad SQL, incompatible checkpoint\n"
    "or schema change, checkpoint in use); why is logged on stderr (docs/operations.md).\n"
    "Examples:\n"
    "  sluice run examples/pipeline.sql --warehouse build/demo-warehouse\n"
    "  sluice run pipeline.sql --max-restarts 10 --restart-backoff 30s\n"
    "  sluice run pipelines/orders/ --dry-run           # check every .sql file, print the graph\n"
    "  sluice run examples/pipeline.sql --ui            # live page at http://127.0.0.1:4040/";

constexpr const char* kCheckFooter =
    "Makes every check of 'sluice run' without creating, writing or running anything: the\n"
    "graph (syntax, duplicates, cycles, unknown names), each query bound against its inputs'\n"
    "schemas and its table's, and each existing checkpoint against the new definition (its\n"
    "sources, stateful operators, grouping keys, aggregates, deduplication and join keys).\n"
    "Prints the graph, or each problem with its file:line, dataset and what to do.\n"
    "Exit code: 0 valid, 1 problems found, 2 usage error.\n"
    "Examples:\n"
    "  sluice check pipeline.sql -w warehouse\n"
    "  sluice check pipelines/orders/ -w /data/wh";

constexpr const char* kTableFooter =
    "Delta table maintenance through the same code as DESCRIBE HISTORY/DETAIL, VACUUM and\n"
    "OPTIMIZE in SQL. Human-readable by default, --json for scripts.\n"
    "Examples:\n"
    "  sluice table history warehouse/events --limit 10\n"
    "  sluice table detail warehouse/events --json\n"
    "  sluice table vacuum warehouse/events --dry-run\n"
    "  sluice table optimize warehouse/events --where \"day = '2026-11-30'\"";

constexpr const char* kInspectFooter =
    "Only reads: safe on a running query's checkpoint. A damaged file is an error naming it.\n"
    "Examples:\n"
    "  sluice checkpoint inspect warehouse/_checkpoints/counts\n"
    "  sluice checkpoint inspect warehouse/_checkpoints/counts --json";

constexpr const char* kDumpFooter =
    "Shows the state as of the last committed batch, one row per key, decoded with the state\n"
    "schema in the checkpoint (what read_state('table') shows in SQL). Only reads.\n"
    "Examples:\n"
    "  sluice state dump warehouse/_checkpoints/counts\n"
    "  sluice state dump warehouse/_checkpoints/counts --operator 0 --json";

// Keeps freed heap memory in the process instead of handing it back to the OS after every batch.
// With glibc's defaults the Kafka consumer's fetch thread and the batch buffers grow the heap,
// free it at the end of the batch (trimmed / unmapped) and page-fault it back in the next one:
// ~38 % of that thread's CPU in a profile of Kafka-fed Nexmark q0; with these settings q1 from
// Kafka uses ~15 % less CPU per event and ~280 MB more peak RSS. Each setting is applied only
// when its standard glibc variable (MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_,
// MALLOC_MMAP_THRESHOLD_) is unset and GLIBC_TUNABLES names no glibc.malloc tunable, so an
// operator's own choice wins (docs/operations.md "Memory"; figures in bench/RESULTS.md
// "Kafka-fed").
void TuneMalloc() {
#if defined(__GLIBC__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::string(tunables).find("glibc.malloc.") != std::string::npos) {
    return;
  }
  struct Setting {
    const char* env;
    int param;
    int value;
  };
  constexpr int kMiB = 1024 * 1024;
  constexpr Setting kSettings[] = {
      {"MALLOC_TRIM_THRESHOLD_", M_TRIM_THRESHOLD, 64 * kMiB},
      {"MALLOC_TOP_PAD_", M_TOP_PAD, 16 * kMiB},
      // glibc's largest allowed value (HEAP_MAX_SIZE / 2 on 64-bit).
      {"MALLOC_MMAP_THRESHOLD_", M_MMAP_THRESHOLD, 32 * kMiB},
  };
  for (const Setting& setting : kSettings) {
    if (std::getenv(setting.env) == nullptr) mallopt(setting.param, setting.value);
  }
#endif
}

// "sluice table history": the names from the root down to `app`.
std::string CommandPath(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* up = app.get_parent(); up != nullptr; up = up->get_parent()) {
    path = up->get_name() + " " + path;
  }
  return path;
}

// The first "Usage: ..." line of `app`'s help.
std::string UsageLine(const CLI::App& app) {
  const CLI::App* parent = app.get_parent();
  const std::string help = app.help(parent == nullptr ? "" : CommandPath(*parent));
  const size_t at = help.find("Usage:");
  if (at == std::string::npos) return "";
  const size_t end = help.find('\n', at);
  return help.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// Reports a command line that did not parse, as Unix tools do: one "Error: ..." line, the usage
// line of the (sub)command it was for and where to read more; exit code 2. --help and --version
// print and exit 0 (CLI11's own handling).
int ReportParseError(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  // The deepest subcommand the command line reached.
  CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  std::string message = e.what();
  // `sluice nosuch`: CLI11 says "argument not expected"; name it as the command it meant to be.
  if (at == &app && argc > 1 && argv[1][0] != '-') {
    std::string commands;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (!commands.empty()) commands += ", ";
      commands += sub->get_name();
      known = known || sub->get_name() == argv[1];
    }
    if (!known) {
      message = "unknown command '" + std::string(argv[1]) + "' (commands: " + commands + ")";
    }
  }
  std::cerr << "Error: " << message << "\n";
  const std::string usage = UsageLine(*at);
  if (!usage.empty()) std::cerr << usage << "\n";
  std::cerr << "Run '" << CommandPath(*at) << " --help' for "
            << (at == &app ? "the commands" : "its options and examples") << ".\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  TuneMalloc();
  CLI::App app{kDescription, "sluice"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sluice 0.1.0");
  std::string log_level;
  app.add_option("--log-level", log_level, "debug, info, warning (default) or error");
  app.footer("Run 'sluice <command> --help' for a command's options and examples.");

  // sluice sql
  sluice::cli::SqlCommandOptions sql_options;
  std::string format_text = "table";
  CLI::App* sql =
      app.add_subcommand("sql", "Run SQL statements, a script, or an interactive shell");
  sql->add_option("--warehouse,-w", sql_options.warehouse,
                  "Directory where table names resolve (default ./warehouse)");
  sql->add_option("--format", format_text, "Result format: table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  sql->add_option("--file,-f", sql_options.file, "Run the statements of this file");
  sql->add_option("statements", sql_options.sql, "SQL to run (several separated by ';')");
  sql->footer(kSqlFooter);

  // sluice connect (docs/pyspark.md)
  sluice::connect::ConnectServerOptions connect_options;
  CLI::App* connect = app.add_subcommand(
      "connect", "Serve Spark Connect: PySpark's SparkSession.builder.remote() runs on Sluice");
  connect->add_option("--port,-p", connect_options.port,
                      "Port (default 15002; 0 picks a free one)");
  connect->add_option("--host", connect_options.host,
                      "Address to bind (default 127.0.0.1: this machine only)");
  connect->add_option("--warehouse,-w", connect_options.warehouse,
                      "Directory where table names resolve (default ./warehouse)");
  connect->add_option("--python", connect_options.python,
                      "Python that runs foreachBatch functions (default $PYSPARK_PYTHON, "
                      "else $VIRTUAL_ENV/bin/python, else python3)");

  // sluice test
  std::vector<std::string> test_paths;
  bool verbose = false;
  CLI::App* test = app.add_subcommand("test", "Run SQL logic test files or directories");
  test->add_option("paths", test_paths, "Test files (*.test) or directories")->required();
  test->add_flag("--verbose,-v", verbose, "Print each record as it runs and multi-line diffs");
  test->footer(kTestFooter);

  // sluice run
  sluice::cli::RunCommandOptions run_options;
  CLI::App* run = app.add_subcommand(
      "run", "Run a pipeline: its statements, then its streaming tables and flows");
  run->add_option("file", run_options.file,
                  "The pipeline's SQL file, or a directory of .sql files (docs/pipelines.md)")
      ->required();
  run->add_flag("--triggered", run_options.triggered,
                "A triggered update: every query processes what is available (AVAILABLE NOW), "
                "materialized views are refreshed, then the run stops");
  run->add_flag("--dry-run", run_options.dry_run,
                "Check the whole pipeline and print its graph in run order; create and run "
                "nothing");
  run->add_option("--warehouse,-w", run_options.warehouse,
                  "Directory where table names resolve (default ./warehouse)");
  run->add_option("--progress-log", run_options.progress_log,
                  "Append every batch's progress JSON (one object per line) to this file");
  run->add_option("--progress-kafka", run_options.progress_kafka,
                  "Produce every batch's progress JSON to a Kafka topic: BOOTSTRAP_SERVERS/TOPIC "
                  "(record key: the query id)");
  std::string ui_address;
  CLI::Option* ui_option =
      run->add_option("--ui", ui_address,
                      "Serve the live monitoring page, JSON API and /metrics on [HOST:]PORT "
                      "(default 127.0.0.1:4040; docs/operations.md)")
          ->expected(0, 1);
  // Supervision (cli/restart_policy.h): restarts with backoff; defaults in RunCommandOptions.
  run->add_option("--max-restarts", run_options.max_restarts,
                  "Restart a failed query from its checkpoint up to N times in a row (default 3; "
                  "-1: no limit; 0: never). Errors a restart cannot fix are never retried")
      ->check(CLI::Range(int64_t{-1}, int64_t{1000000}));
  std::string restart_backoff = "10s";
  run->add_option("--restart-backoff", restart_backoff,
                  "Wait before the first restart, doubled per consecutive restart up to 5 min "
                  "(default 10s; e.g. 500ms, 30s, 2m)");
  // Group mode (scaleout/group_runner.h, docs/scale-out.md): one query over many processes.
  sluice::scaleout::GroupRunOptions group_options;
  run->add_option("--group", group_options.group,
                  "Run as one process of the Kafka consumer group NAME: the processes of a group "
                  "share the topic's partitions, one task per partition (docs/scale-out.md)");
  std::string group_instance_id;
  run->add_option("--group-instance-id", group_instance_id,
                  "With --group: Kafka's static membership (group.instance.id), unique per "
                  "process");
  run->footer(kRunFooter);

  // sluice check: sluice run --dry-run under Lakeflow's name for it (validate)
  sluice::cli::RunCommandOptions check_options;
  check_options.dry_run = true;
  CLI::App* check_cmd = app.add_subcommand(
      "check",
      "Check a pipeline before running it: its graph, every query against its inputs "
      "and every existing checkpoint against the new definitions; change nothing");
  check_cmd
      ->add_option("file", check_options.file,
                   "The pipeline's SQL file, or a directory of .sql files (docs/pipelines.md)")
      ->required()
      ->check(CLI::ExistingPath);
  check_cmd->add_option("--warehouse,-w", check_options.warehouse,
                        "Directory where table names resolve (default ./warehouse)");
  check_cmd->footer(kCheckFooter);

  // sluice checkpoint inspect / sluice state dump (cli/checkpoint_commands.h)
  sluice::cli::CheckpointCommandOptions inspect_options;
  CLI::App* checkpoint = app.add_subcommand("checkpoint", "Look into a streaming checkpoint");
  checkpoint->require_subcommand(1);
  CLI::App* inspect = checkpoint->add_subcommand(
      "inspect", "Query id, batches, offsets, watermark, conf and state of a checkpoint");
  inspect->add_option("dir", inspect_options.checkpoint, "The checkpoint directory")->required();
  inspect->add_flag("--json", inspect_options.json, "Print JSON for scripts");
  inspect->footer(kInspectFooter);
  sluice::cli::CheckpointCommandOptions dump_options;
  CLI::App* state = app.add_subcommand("state", "Look at the state of a streaming checkpoint");
  state->require_subcommand(1);
  CLI::App* dump = state->add_subcommand(
      "dump", "Print the committed state of a checkpoint's stateful operators");
  dump->add_option("dir", dump_options.checkpoint, "The checkpoint directory")->required();
  dump->add_option("--operator", dump_options.operator_id, "Only this operator (its id: 0, 1, ...)")
      ->check(CLI::NonNegativeNumber);
  dump->add_flag("--json", dump_options.json, "One JSON object per state row (JSON lines)");
  dump->footer(kDumpFooter);

  // sluice bench nexmark (cli/bench_command.h)
  sluice::cli::BenchNexmarkOptions bench_options;
  CLI::App* bench = app.add_subcommand("bench", "Run a benchmark");
  bench->require_subcommand(1);
  CLI::App* nexmark = bench->add_subcommand(
      "nexmark", "Run one Nexmark query over N generated events and report its throughput");
  nexmark->add_option("--query", bench_options.query, "q0 q1 q2 q3 q5 q7 q8 q11 q12")->required();
  nexmark->add_option("--events", bench_options.events, "Events of the generator (default 1000000)")
      ->check(CLI::PositiveNumber);
  nexmark->add_option("--rate", bench_options.rate, "Event-time rate, events/s (default 100000)")
      ->check(CLI::PositiveNumber);
  nexmark->add_option("--batch-events", bench_options.batch_events,
                      "Events per micro-batch (default events / 10)");
  nexmark->add_option("--source", bench_options.source, "generator (default), table or kafka")
      ->check(CLI::IsMember({"generator", "table", "kafka"}));
  nexmark
      ->add_option("--kafka-partitions", bench_options.kafka_partitions,
                   "Source kafka: partitions per topic (default 16)")
      ->check(CLI::PositiveNumber);
  nexmark->add_option("--sink", bench_options.sink, "blackhole (default) or delta")
      ->check(CLI::IsMember({"blackhole", "delta"}));
  nexmark->add_flag("--json", bench_options.json, "Print one JSON object");
  nexmark->add_flag("--check", bench_options.check,
                    "Compare the result with DuckDB's batch result (implies --sink delta)");
  nexmark->add_flag("--no-batch", bench_options.no_batch, "Skip the DuckDB batch reference run");
  nexmark->add_flag("--rate-limited", bench_options.rate_limited,
                    "Release events at --rate in wall time and measure end-to-end latency");
  nexmark->add_option("--queries", bench_options.queries_dir,
                      "Directory of the query files (default bench/nexmark)");
  nexmark->add_option("--work-dir", bench_options.work_dir,
                      "Keep the warehouse here (default: a temporary directory, removed)");
  nexmark->add_option("--batch-cache", bench_options.batch_cache,
                      "Keep and reuse the batch reference's tables (Parquet) in this directory");
  nexmark->footer(
      "Examples:\n"
      "  sluice bench nexmark --query q5 --events 10000000\n"
      "  sluice bench nexmark --query q7 --events 25000 --rate 500 --source table --check\n"
      "See bench/nexmark/README.md.");
  nexmark->add_option("--kafka-bootstrap", bench_options.kafka_bootstrap,
                      "Source kafka: read the topics of this cluster as they are (no mock)");
  // sluice bench peers (cli/bench_command.h)
  sluice::cli::BenchPeersOptions peers_options;
  CLI::App* peers = bench->add_subcommand(
      "peers", "Run a Nexmark query on Sluice, Spark and Flink over the same Kafka topic");
  peers->add_option("--query", peers_options.query, "q0 q1 q2 q5")->required();
  peers->add_option("--events", peers_options.events, "Events of the generator")
      ->check(CLI::PositiveNumber);
  peers->add_option("--engines", peers_options.engines,
                    "Subset of sluice,spark,flink (default all)");
  peers->add_option("--bootstrap", peers_options.bootstrap,
                    "A running broker (default: start one with scripts/kafka.sh)");
  peers->add_option("--repo", peers_options.repo, "The clone (default .)");
  peers->add_flag("--json", peers_options.json, "One JSON object per engine per line");
  peers->add_flag("--check", peers_options.check,
                  "A small run whose outputs must be equal on every engine");
  peers->footer("See bench/peers/README.md.");
  // sluice bench latency (cli/bench_command.h)
  sluice::cli::BenchLatencyOptions latency_options;
  CLI::App* latency = bench->add_subcommand(
      "latency", "End-to-end latency at a fixed rate on a real Kafka broker (produce -> visible)");
  latency->add_option("--cases", latency_options.cases,
                      "Subset of kafka_to_delta,stateless (default both)");
  latency->add_option("--triggers", latency_options.triggers,
                      "processingTime intervals in ms, comma-separated (default 0,100)");
  latency->add_option("--rate", latency_options.rate, "Records per second (default 10000)")
      ->check(CLI::PositiveNumber);
  latency->add_option("--seconds", latency_options.seconds, "Seconds of input per run (default 10)")
      ->check(CLI::PositiveNumber);
  latency
      ->add_option("--warmup", latency_options.warmup,
                   "Seconds left out at the start of each run (default 2)")
      ->check(CLI::NonNegativeNumber);
  latency->add_option("--partitions", latency_options.partitions, "Input partitions (default 8)")
      ->check(CLI::PositiveNumber);
  latency->add_option("--bootstrap", latency_options.bootstrap,
                      "A running broker (default: start one with scripts/kafka.sh)");
  latency->add_flag("--spark", latency_options.spark,
                    "Run kafka_to_delta on Spark Structured Streaming too (after make peers)");
  latency->add_option("--repo", latency_options.repo, "The clone (default .)");
  latency->add_flag("--json", latency_options.json, "One JSON object per run per line");
  latency->footer("See bench/latency/README.md.");

  // sluice table history|detail|vacuum|optimize (cli/table_commands.h)
  sluice::cli::TableCommandOptions table_options;
  CLI::App* table_cmd = app.add_subcommand("table", "Inspect and maintain a Delta table");
  table_cmd->require_subcommand(1);
  table_cmd->footer(kTableFooter);
  CLI::App* history = table_cmd->add_subcommand(
      "history", "The table's commits, newest first: version, time, operation, metrics");
  history->add_option("--limit", table_options.limit, "Only the newest N commits")
      ->check(CLI::PositiveNumber);
  CLI::App* detail = table_cmd->add_subcommand(
      "detail", "Format, id, location, partitioning, files, size, properties, protocol");
  CLI::App* vacuum =
      table_cmd->add_subcommand("vacuum", "Delete files no version within the retention needs");
  vacuum
      ->add_option("--retain", table_options.retain_hours,
                   "Retention in hours (default: the table's, 168 unless it sets one)")
      ->check(CLI::NonNegativeNumber);
  vacuum->add_flag("--dry-run", table_options.dry_run, "List the files, delete nothing");
  vacuum->add_flag("--force", table_options.force,
                   "Allow a retention shorter than the table's (can break readers and streams)");
  CLI::App* optimize = table_cmd->add_subcommand("optimize", "Compact small files (bin-packing)");
  optimize->add_option("--where", table_options.where,
                       "Only partitions matching this predicate over partition columns");
  for (CLI::App* c : {history, detail, vacuum, optimize}) {
    c->add_option("table", table_options.path,
                  "The Delta table: its directory, or the name of a table of the warehouse")
        ->required();
    c->add_option("-w,--warehouse", table_options.warehouse,
                  "Where table names resolve (default ./warehouse)");
    c->add_flag("--json", table_options.json, "Print JSON for scripts");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ReportParseError(app, e, argc, argv);
  }

  if (!log_level.empty()) {
    sluice::LogLevel level;
    if (!sluice::ParseLogLevel(log_level, &level)) {
      std::cerr << "Error: unknown log level '" << log_level << "'\n";
      return 2;
    }
    sluice::SetLogLevel(level);
  }

  if (sql->parsed()) {
    sql_options.format = *sluice::cli::ParseOutputFormat(format_text);
    return sluice::cli::RunSqlCommand(sql_options);
  }
  if (connect->parsed()) return sluice::connect::RunConnectCommand(connect_options);
  if (inspect->parsed()) {
    return sluice::cli::RunCheckpointInspect(inspect_options, std::cout, std::cerr);
  }
  if (dump->parsed()) return sluice::cli::RunStateDump(dump_options, std::cout, std::cerr);
  if (history->parsed()) return sluice::cli::RunTableHistory(table_options, std::cout, std::cerr);
  if (detail->parsed()) return sluice::cli::RunTableDetail(table_options, std::cout, std::cerr);
  if (vacuum->parsed()) return sluice::cli::RunTableVacuum(table_options, std::cout, std::cerr);
  if (optimize->parsed()) {
    return sluice::cli::RunTableOptimize(table_options, std::cout, std::cerr);
  }
  if (ui_option->count() > 0) run_options.ui = ui_address;
  if (run->parsed() && !group_options.group.empty() && !run_options.dry_run) {
    for (const char* flag : {"--triggered", "--ui", "--progress-log", "--progress-kafka",
                             "--max-restarts", "--restart-backoff"}) {
      if (run->count(flag) > 0) {
        std::cerr << "Error: " << flag
                  << " is not supported with --group yet (docs/scale-out.md)\n";
        return 2;
      }
    }
    group_options.file = run_options.file;
    group_options.warehouse = run_options.warehouse;
    if (!group_instance_id.empty()) group_options.group_instance_id = group_instance_id;
    return sluice::scaleout::RunGroupPipeline(group_options, std::cout, std::cerr);
  }
  if (run->parsed() && !group_instance_id.empty() && group_options.group.empty()) {
    std::cerr << "Error: --group-instance-id needs --group\n";
    return 2;
  }
  if (check_cmd->parsed()) return sluice::cli::RunPipeline(check_options, std::cout, std::cerr);
  if (run->parsed()) {
    sluice::Result<int64_t> backoff = sluice::cli::ParseDurationMs(restart_backoff);
    if (!backoff.ok()) {
      std::cerr << "Error: --restart-backoff: " << backoff.status().message() << "\n";
      return 2;
    }
    run_options.restart_backoff_ms = *backoff;
    run_options.live_status =
        sluice::cli::UseLiveStatus(isatty(STDOUT_FILENO) == 1, std::getenv("TERM"));
    return sluice::cli::RunPipeline(run_options, std::cout, std::cerr);
  }
  if (nexmark->parsed()) return sluice::cli::RunBenchNexmark(bench_options, std::cout, std::cerr);
  if (peers->parsed()) return sluice::cli::RunBenchPeers(peers_options, std::cerr);
  if (latency->parsed()) return sluice::cli::RunBenchLatency(latency_options, std::cerr);
  if (test->parsed()) {
    sluice::cli::TestRunOptions options;
    options.features = sluice::cli::BuiltInFeatures();
    options.verbose = verbose;
    sluice::cli::TestSummary summary = sluice::cli::RunTests(test_paths, options, std::cout);
    return summary.failed > 0 ? 1 : 0;
  }
  return 0;
}
