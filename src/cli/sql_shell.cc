#include "cli/sql_shell.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <vector>

#include <editline/readline.h>

#include "cli/shell_completion.h"
#include "cli/shell_interrupt.h"
#include "fs/routing_file_system.h"
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
    "  .tables               the tables of the warehouse (SHOW TABLES)\n"
    "  .schema [table]       the columns of a table, or of every table\n"
    "  .views                the temporary views of this session (CREATE TEMP VIEW)\n"
    "  .quit / .exit         leave (Ctrl-D too)\n"
    "Ctrl-C cancels the running statement (a REFRESH stops at a batch boundary) or the line\n"
    "being typed; Tab completes keywords, tables and columns; history is kept in\n"
    "$SLUICE_HISTORY (default ~/.sluice_history).\n"
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

// The table names of the warehouse (SHOW TABLES' tableName column), or none on an error.
std::vector<std::string> TableNames(sql::Session& session) {
  std::vector<std::string> names;
  Result<engine::Batch> tables = session.Execute("SHOW TABLES");
  if (!tables.ok()) return names;
  std::optional<size_t> column = tables->ColumnIndex("tableName");
  if (!column) return names;
  for (int64_t r = 0; r < tables->num_rows(); ++r) {
    std::optional<std::string> name = tables->GetString(r, *column);
    if (name && !name->empty()) names.push_back(std::move(*name));
  }
  return names;
}

void PrintResult(const Result<engine::Batch>& result, OutputFormat format) {
  if (result.ok()) {
    PrintBatch(*result, format, std::cout);
  } else {
    std::cerr << "Error: " << FirstLine(result.status().message()) << "\n";
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
  } else if (cmd == ".tables") {
    PrintResult(session.Execute("SHOW TABLES"), *format);
  } else if (cmd == ".views") {
    // The session's temporary views; the views Sluice makes for a statement's Delta tables are
    // dropped before the next statement runs, and its own relations start with "__".
    PrintResult(session.Execute("SELECT view_name AS viewName FROM duckdb_views() WHERE temporary "
                                "AND NOT internal AND NOT starts_with(view_name, '__') "
                                "ORDER BY view_name"),
                *format);
  } else if (cmd == ".schema") {
    std::vector<std::string> tables =
        arg.empty() ? TableNames(session) : std::vector<std::string>{arg};
    for (const std::string& table : tables) {
      if (tables.size() > 1) std::cout << table << ":\n";
      PrintResult(session.Execute("DESCRIBE " + table), *format);
    }
  } else {
    std::cerr << "Error: unknown command '" << cmd << "' (.help lists them)\n";
  }
  return true;
}

// What Tab completes against: the tables and their columns, read again after each statement
// (the first Tab after it), since a statement may create or drop tables.
struct CompletionNames {
  sql::Session* session = nullptr;
  bool stale = true;
  std::vector<std::string> names;
  std::vector<std::string> matches;  // of the word being completed, handed out one by one

  const std::vector<std::string>& Get() {
    if (stale) {
      names = TableNames(*session);
      const size_t tables = names.size();
      for (size_t t = 0; t < tables; ++t) {
        Result<engine::Batch> columns = session->Execute("DESCRIBE " + names[t]);
        if (!columns.ok() || columns->num_columns() == 0) continue;
        for (int64_t r = 0; r < columns->num_rows(); ++r) {
          std::optional<std::string> column = columns->GetString(r, 0);
          if (column && !column->empty() && (*column)[0] != '#') {
            names.push_back(std::move(*column));
          }
        }
      }
      stale = false;
    }
    return names;
  }
};

CompletionNames* g_completion = nullptr;  // the interactive shell's (one per process)

// libedit's generator protocol: called with state 0 first, then 1, 2, ... until it returns
// nullptr; each returned string is malloc'ed and freed by libedit.
char* NextCompletion(const char* text, int state) {
  if (g_completion == nullptr) return nullptr;
  if (state == 0) g_completion->matches = CompleteWord(text, g_completion->Get());
  if (static_cast<size_t>(state) >= g_completion->matches.size()) return nullptr;
  return strdup(g_completion->matches[static_cast<size_t>(state)].c_str());
}

char** Complete(const char* text, int, int) { return rl_completion_matches(text, NextCompletion); }

ShellInterrupt* g_interrupt = nullptr;  // the interactive shell's (one per process)

// libedit's reader of one key: waits for the terminal in slices of 50 ms and answers EOF once a
// Ctrl-C has come, so that readline returns and the shell drops the line. (A SIGINT that lands
// while libedit is not blocked in read() would otherwise leave it waiting for the next key.)
int ReadKey(FILE* in) {
  const int fd = fileno(in);
  for (;;) {
    if (g_interrupt != nullptr && g_interrupt->Pending()) return EOF;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, 50);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return EOF;
    if (ready == 0) continue;
    unsigned char key = 0;
    const ssize_t n = read(fd, &key, 1);
    if (n == 1) return key;
    if (n < 0 && errno == EINTR) continue;
    return EOF;
  }
}

// $SLUICE_HISTORY, else ~/.sluice_history; empty (no history kept) when neither is known.
std::string HistoryPath() {
  if (const char* path = std::getenv("SLUICE_HISTORY"); path != nullptr) return path;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home) {
    return std::string(home) + "/.sluice_history";
  }
  return "";
}

int Interactive(sql::Session& session, OutputFormat format, bool new_warehouse) {
  Result<std::unique_ptr<ShellInterrupt>> interrupt =
      ShellInterrupt::Install([&session] { session.Interrupt(); });
  if (!interrupt.ok()) {
    std::cerr << "Error: " << interrupt.status().message() << "\n";
    return 1;
  }
  g_interrupt = interrupt->get();
  rl_getc_function = ReadKey;
  CompletionNames completion;
  completion.session = &session;
  g_completion = &completion;
  rl_attempted_completion_function = Complete;
  const std::string history = HistoryPath();
  constexpr int kHistoryEntries = 1000;
  stifle_history(kHistoryEntries);
  if (!history.empty()) read_history(history.c_str());  // absent the first time: no history
  auto remember = [&](const std::string& entry) {
    add_history(entry.c_str());
    if (!history.empty()) write_history(history.c_str());
  };

  std::cout << "Sluice SQL shell. Warehouse: " << session.warehouse()
            << (new_warehouse ? " (new: created empty)" : "")
            << ". Type .help for help, .quit to leave.\n";
  std::string pending;
  for (;;) {
    char* raw = readline(pending.empty() ? "sluice> " : "   ...> ");
    if ((*interrupt)->TakeSeen()) {  // Ctrl-C at the prompt: drop what was typed, keep going
      std::free(raw);
      pending.clear();
      std::cout << "^C\n";
      continue;
    }
    if (raw == nullptr) {  // Ctrl-D
      std::cout << "\n";
      break;
    }
    std::string line(raw);
    std::free(raw);
    if (pending.empty() && !line.empty() && line[0] == '.') {
      remember(line);
      (*interrupt)->BeginStatement();
      const bool go_on = DotCommand(line, session, &format);
      (*interrupt)->EndStatement();
      completion.stale = true;
      if (!go_on) break;
      continue;
    }
    pending += pending.empty() ? line : "\n" + line;
    if (sql::IsIncomplete(pending)) continue;
    remember(pending);
    for (const auto& statement : sql::SplitStatements(pending)) {
      (*interrupt)->BeginStatement();
      auto result = session.Execute(statement.text);
      (*interrupt)->EndStatement();
      if (!result.ok()) {
        std::cerr << "Error: " << FirstLine(result.status().message()) << "\n";
        break;
      }
      PrintBatch(*result, format, std::cout);
    }
    completion.stale = true;
    pending.clear();
  }
  g_completion = nullptr;
  g_interrupt = nullptr;
  rl_attempted_completion_function = nullptr;
  return 0;
}

}  // namespace

int RunScript(sql::Session& session, const std::string& script, OutputFormat format,
              std::ostream& out, std::ostream& err, bool new_warehouse) {
  auto statements = sql::SplitStatements(script);
  for (const auto& statement : statements) {
    auto result = session.Execute(statement.text);
    if (!result.ok()) {
      err << "Error";
      if (statements.size() > 1) err << " (statement at line " << statement.line << ")";
      err << ": " << FirstLine(result.status().message()) << "\n";
      if (new_warehouse && result.status().message().find("does not exist") != std::string::npos) {
        err << "Note: the warehouse " << session.warehouse()
            << " did not exist and was created empty by this command: is --warehouse right?\n";
      }
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
  // Open creates a missing warehouse; a mistyped --warehouse then reads as "no such table".
  Result<bool> existed = fs::PathFileSystem()->Exists(options.warehouse);
  const bool new_warehouse = existed.ok() && !*existed;
  auto session = sql::Session::Open(session_options);
  if (!session.ok()) {
    std::cerr << "Error: " << FirstLine(session.status().message()) << "\n";
    return 1;
  }
  if (!options.sql.empty())
    return RunScript(**session, options.sql, options.format, std::cout, std::cerr, new_warehouse);
  if (!options.file.empty()) {
    std::ifstream in(options.file, std::ios::binary);
    if (!in) {
      std::cerr << "Error: cannot read " << options.file << "\n";
      return 1;
    }
    std::stringstream content;
    content << in.rdbuf();
    return RunScript(**session, content.str(), options.format, std::cout, std::cerr, new_warehouse);
  }
  if (!isatty(STDIN_FILENO)) {
    std::stringstream content;
    content << std::cin.rdbuf();
    return RunScript(**session, content.str(), options.format, std::cout, std::cerr, new_warehouse);
  }
  return Interactive(**session, options.format, new_warehouse);
}

}  // namespace sluice::cli
