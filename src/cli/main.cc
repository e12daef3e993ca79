// The `sluice` command.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

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
  run->footer(kRunFooter);

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
