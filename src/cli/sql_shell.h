// `sluice sql`: runs statements given on the command line, piped on stdin, or typed into an
// interactive shell (line editing and history through libedit).
#pragma once

#include <iosfwd>
#include <string>

#include "cli/result_printer.h"
#include "sql/session.h"

namespace sluice::cli {

struct SqlCommandOptions {
  std::string warehouse = "warehouse";
  OutputFormat format = OutputFormat::kTable;
  std::string sql;   // statements to run; empty means stdin or the interactive shell
  std::string file;  // a script file to run instead
};

// Runs the statements of `script` in order, printing each result. Stops at the first error,
// printing one line "Error: <message>" to `err` (with the statement's line when the script has
// several), and when `new_warehouse` (this command created the warehouse) and the error is
// that something does not exist, a line saying so: a mistyped --warehouse is found at once.
// Returns 0 on success, 1 on error.
int RunScript(sql::Session& session, const std::string& script, OutputFormat format,
              std::ostream& out, std::ostream& err, bool new_warehouse = false);

// Entry point of `sluice sql`. Returns the process exit code.
int RunSqlCommand(const SqlCommandOptions& options);

}  // namespace sluice::cli
