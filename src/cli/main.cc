// The `sluice` command.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/checkpoint_commands.h"
#include "cli/pipeline_runner.h"
#include "cli/result_printer.h"
#include "cli/sql_logic_test.h"
#include "cli/sql_shell.h"
#include "common/logging.h"

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
    "Runs the file's statements, then every streaming table and flow it defines on its own\n"
    "trigger, in dependency order, printing one line per micro-batch. AVAILABLE NOW and ONCE\n"
    "queries stop when done; the others run until Ctrl-C (which stops at a batch boundary).\n"
    "Examples:\n"
    "  sluice run examples/pipeline.sql --warehouse build/demo-warehouse";

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

}  // namespace

int main(int argc, char** argv) {
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
  run->add_option("file", run_options.file, "The pipeline's SQL file")->required();
  run->add_option("--warehouse,-w", run_options.warehouse,
                  "Directory where table names resolve (default ./warehouse)");
  run->add_option("--progress-log", run_options.progress_log,
                  "Append every batch's progress JSON (one object per line) to this file");
  run->footer(kRunFooter);

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

  CLI11_PARSE(app, argc, argv);

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
  if (inspect->parsed()) {
    return sluice::cli::RunCheckpointInspect(inspect_options, std::cout, std::cerr);
  }
  if (dump->parsed()) return sluice::cli::RunStateDump(dump_options, std::cout, std::cerr);
  if (run->parsed()) return sluice::cli::RunPipeline(run_options, std::cout, std::cerr);
  if (test->parsed()) {
    sluice::cli::TestRunOptions options;
    options.features = sluice::cli::BuiltInFeatures();
    options.verbose = verbose;
    sluice::cli::TestSummary summary = sluice::cli::RunTests(test_paths, options, std::cout);
    return summary.failed > 0 ? 1 : 0;
  }
  return 0;
}
