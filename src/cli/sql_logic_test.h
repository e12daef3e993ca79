// The SQL logic test format (docs/testing.md "SQL logic test files"):
// parsing test files into records, and running them against fresh sessions.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "sql/session.h"

namespace sluice::cli {

enum class RecordKind {
  kStatementOk,
  kStatementError,
  kQuery,
  kRestart,
  kRequire,
  kLoop,
  kEndLoop,
};

enum class SortMode { kNoSort, kRowSort };

struct TestRecord {
  RecordKind kind = RecordKind::kStatementOk;
  int line = 0;     // 1-based line of the record's header
  std::string sql;  // statements and queries
  bool has_expected_error = false;
  std::string expected_error;  // statement error: substring of the message (case-insensitive)
  std::string types;           // query: one of I, R, T per column
  SortMode sort = SortMode::kNoSort;
  std::vector<std::string> expected_rows;  // query: tab-separated values per row
  std::string name;                        // require: feature; loop: variable
  int64_t loop_begin = 0;                  // loop: [begin, end)
  int64_t loop_end = 0;
};

// Parses a test file. Errors name the file and line ("x.test:12: unknown record 'foo'").
Result<std::vector<TestRecord>> ParseTestFile(std::string_view content, const std::string& path);

// Expands loop/endloop blocks (nested allowed), substituting ${var} in sql, expected rows and
// expected errors. Errors for an endloop without loop or a loop without endloop.
Result<std::vector<TestRecord>> ExpandLoops(const std::vector<TestRecord>& records,
                                            const std::string& path);

// Renders a cell as the format expects: NULL as "NULL", the empty string as "(empty)".
std::string FormatCell(const std::optional<std::string>& value);

// True when `actual` matches `expected` for a column of type `type` ('R': numeric with a relative
// tolerance of 1e-9; otherwise exact text).
bool CellMatches(char type, std::string_view expected, std::string_view actual);

struct TestRunOptions {
  // Features `require` accepts; a file requiring anything else is skipped from that point.
  std::set<std::string> features;
  bool verbose = false;  // print each record as it runs and multi-line diffs
  engine::EngineOptions engine;
};

enum class FileOutcome { kPassed, kFailed, kSkipped };

// Runs one test file in a fresh temporary warehouse that is also the working directory (restored
// afterwards) and removed at the end. Prints one line per failing record to `out`.
FileOutcome RunTestFile(const std::string& path, const TestRunOptions& options, std::ostream& out);

struct TestSummary {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
};

// Runs every file named (directories: every *.test below them, sorted) and prints the summary
// line "N passed, N failed" (", N skipped" when some were). Missing paths count as failed.
TestSummary RunTests(const std::vector<std::string>& paths, const TestRunOptions& options,
                     std::ostream& out);

// The features this build supports for `require`.
std::set<std::string> BuiltInFeatures();

}  // namespace sluice::cli
