#include "cli/sql_shell.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <editline/readline.h>

#include "sql/statement_splitter.h"

namespace sluice::cli {
namespace {

// The first line of a message: what a user needs at a glance; DuckDB adds caret diagrams below.
std::string FirstLine(const std::string& message) {
  size_t nl = message.find('\n');
  return nl == std::string::npos ? message : message.substr(0, nl);
}

constexpr const char* kHelp =
    "Statements end with ';' and may span lines. Dot commands:\n"
    "  .help                 this text\n"
    "  .format table|csv|json  how results are printed\n"
    "  .settings             the sluice.* settings and their values\n"
    "  .quit / .exit         leave (Ctrl-D too)\n"
    "SQL: DuckDB's dialect plus Sluice's statements (docs/sql-reference.md), e.g.\n"
    "  SELECT 42 AS answer;\n"
    "  SET sluice.shufflePartitions = 8;\n";

void PrintSettings(const sql::Session& session, std::ostream& out) {
  for (const auto& def : sql::AllSettings()) {
    Result<std::string> value = session.settings().Get(def.name);
    out << "sluice." << def.name << " = '" << (value.ok() ? *value : "?") << "'  -- "
        << def.description << "\n";
  }
}

// Handles a dot command; returns false when the shell should exit.
bool DotCommand(const std::string& line, sql::Session& session, OutputFormat* format) {
  std::istringstream in(line);
  std::string cmd, arg;
  in >> cmd >> arg;
  if (cmd == ".quit" || cmd == ".exit") return false;
  if (cmd == ".help") {
    std::cout << kHelp;
  } else if (cmd == ".format") {
    Result<OutputFormat> f = ParseOutputFormat(arg);
    if (f.ok()) {
      *format = *f;
    } else {
      std::cerr << "Error: " << f.status().message() << "\n";
    }
  } else if (cmd == ".settings") {
    PrintSettings(session, std::cout);
  } else {
    std::cerr << "Error: unknown command '" << cmd << "' (.help lists them)\n";
  }
  return true;
}

int Interactive(sql::Session& session, OutputFormat format) {
  std::cout << "Sluice SQL shell. Warehouse: " << session.warehouse()
            << ". Type .help for help, .quit to leave.\n";
  std::string pending;
  for (;;) {
    char* raw = readline(pending.empty() ? "sluice> " : "   ...> ");
    if (raw == nullptr) {  // Ctrl-D
      std::cout << "\n";
      break;
    }
    std::string line(raw);
    std::free(raw);
    if (pending.empty() && !line.empty() && line[0] == '.') {
      add_history(line.c_str());
      if (!DotCommand(line, session, &format)) break;
      continue;
    }
    pending += pending.empty() ? line : "\n" + line;
    if (sql::IsIncomplete(pending)) continue;
    add_history(pending.c_str());
    for (const auto& statement : sql::SplitStatements(pending)) {
      auto result = session.Execute(statement.text);
      if (!result.ok()) {
        std::cerr << "Error: " << result.status().message() << "\n";
        break;
      }
      PrintBatch(*result, format, std::cout);
    }
    pending.clear();
  }
  return 0;
}

}  // namespace

int RunScript(sql::Session& session, const std::string& script, OutputFormat format,
              std::ostream& out, std::ostream& err) {
  auto statements = sql::SplitStatements(script);
  for (const auto& statement : statements) {
    auto result = session.Execute(statement.text);
    if (!result.ok()) {
      err << "Error";
      if (statements.size() > 1) err << " (statement at line " << statement.line << ")";
      err << ": " << FirstLine(result.status().message()) << "\n";
      return 1;
    }
    PrintBatch(*result, format, out);
    out.flush();
  }
  return 0;
}

int RunSqlCommand(const SqlCommandOptions& options) {
  sql::SessionOptions session_options;
  session_options.warehouse = options.warehouse;
  auto session = sql::Session::Open(session_options);
  if (!session.ok()) {
    std::cerr << "Error: " << FirstLine(session.status().message()) << "\n";
    return 1;
  }
  if (!options.sql.empty())
    return RunScript(**session, options.sql, options.format, std::cout, std::cerr);
  if (!options.file.empty()) {
    std::ifstream in(options.file, std::ios::binary);
    if (!in) {
      std::cerr << "Error: cannot read " << options.file << "\n";
      return 1;
    }
    std::stringstream content;
    content << in.rdbuf();
    return RunScript(**session, content.str(), options.format, std::cout, std::cerr);
  }
  if (!isatty(STDIN_FILENO)) {
    std::stringstream content;
    content << std::cin.rdbuf();
    return RunScript(**session, content.str(), options.format, std::cout, std::cerr);
  }
  return Interactive(**session, options.format);
}

}  // namespace sluice::cli
