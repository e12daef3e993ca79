#include "cli/sql_logic_test.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/strings.h"

namespace sluice::cli {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool IsBlank(std::string_view s) { return Trim(s).empty(); }

std::vector<std::string> SplitWords(std::string_view s) {
  std::vector<std::string> words;
  std::istringstream in{std::string(s)};
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

std::string OneLine(std::string_view s) {
  std::string out;
  for (char c : s) out += (c == '\n') ? ' ' : c;
  return Trim(out);
}

Status ParseError(const std::string& path, int line, const std::string& what) {
  return Status::InvalidArgument(path + ":" + std::to_string(line) + ": " + what);
}

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

std::string Substitute(std::string text, const std::map<std::string, std::string>& vars) {
  for (const auto& [name, value] : vars) {
    std::string token = "${" + name + "}";
    size_t pos = 0;
    while ((pos = text.find(token, pos)) != std::string::npos) {
      text.replace(pos, token.size(), value);
      pos += value.size();
    }
  }
  return text;
}

// Expands records from *index until the end (open_loop_line == 0) or until the endloop that
// closes the loop opened at open_loop_line; *index ends just past what was consumed.
Status Expand(const std::vector<TestRecord>& records, size_t* index,
              std::map<std::string, std::string>& vars, int open_loop_line, const std::string& path,
              std::vector<TestRecord>* out) {
  while (*index < records.size()) {
    const TestRecord& r = records[*index];
    ++*index;
    if (r.kind == RecordKind::kEndLoop) {
      if (open_loop_line == 0) return ParseError(path, r.line, "endloop without loop");
      return Status::OK();
    }
    if (r.kind == RecordKind::kLoop) {
      // Find (and validate) the body's end once, then expand the body per iteration.
      size_t body_start = *index;
      size_t body_end = body_start;
      std::vector<TestRecord> scratch;
      SLUICE_RETURN_NOT_OK(Expand(records, &body_end, vars, r.line, path, &scratch));
      for (int64_t i = r.loop_begin; i < r.loop_end; ++i) {
        vars[r.name] = std::to_string(i);
        size_t pos = body_start;
        SLUICE_RETURN_NOT_OK(Expand(records, &pos, vars, r.line, path, out));
      }
      vars.erase(r.name);
      *index = body_end;
      continue;
    }
    TestRecord copy = r;
    copy.sql = Substitute(copy.sql, vars);
    copy.expected_error = Substitute(copy.expected_error, vars);
    for (auto& row : copy.expected_rows) row = Substitute(row, vars);
    out->push_back(std::move(copy));
  }
  if (open_loop_line != 0) return ParseError(path, open_loop_line, "loop without endloop");
  return Status::OK();
}

// A working directory change for the duration of a scope.
class ScopedChdir {
 public:
  explicit ScopedChdir(const std::string& dir) {
    char buf[PATH_MAX];
    if (getcwd(buf, sizeof(buf)) != nullptr) previous_ = buf;
    ok_ = ::chdir(dir.c_str()) == 0;
  }
  ~ScopedChdir() {
    if (!previous_.empty()) {
      int rc = ::chdir(previous_.c_str());
      (void)rc;
    }
  }
  bool ok() const { return ok_; }

 private:
  std::string previous_;
  bool ok_ = false;
};

std::string JoinRows(const std::vector<std::string>& rows) {
  if (rows.empty()) return "(no rows)";
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i) out += " | ";
    out += rows[i];
  }
  return out;
}

std::string Indented(const std::vector<std::string>& rows) {
  std::string out;
  for (const auto& r : rows) out += "    " + r + "\n";
  return out.empty() ? "    (no rows)\n" : out;
}

class FileRunner {
 public:
  FileRunner(std::string path, const TestRunOptions& options, std::ostream& out)
      : path_(std::move(path)), options_(options), out_(out) {}

  FileOutcome Run() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) {
      out_ << path_ << ": cannot open test file\n";
      return FileOutcome::kFailed;
    }
    std::stringstream content;
    content << in.rdbuf();
    auto parsed = ParseTestFile(content.str(), path_);
    if (!parsed.ok()) {
      out_ << parsed.status().message() << "\n";
      return FileOutcome::kFailed;
    }
    auto records = ExpandLoops(*parsed, path_);
    if (!records.ok()) {
      out_ << records.status().message() << "\n";
      return FileOutcome::kFailed;
    }

    char tmpl[] = "/tmp/sluice-test-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      out_ << path_ << ": cannot create a temporary warehouse: " << std::strerror(errno) << "\n";
      return FileOutcome::kFailed;
    }
    warehouse_ = tmpl;
    FileOutcome outcome;
    {
      ScopedChdir chdir(warehouse_);
      if (!chdir.ok()) {
        out_ << path_ << ": cannot enter " << warehouse_ << "\n";
        outcome = FileOutcome::kFailed;
      } else {
        outcome = RunRecords(*records);
      }
    }
    session_.reset();
    std::error_code ec;
    std::filesystem::remove_all(warehouse_, ec);
    return outcome;
  }

 private:
  Status OpenSession() {
    sql::SessionOptions session_options;
    session_options.warehouse = warehouse_;
    session_options.engine = options_.engine;
    SLUICE_ASSIGN_OR_RETURN(session_, sql::Session::Open(session_options));
    return Status::OK();
  }

  FileOutcome RunRecords(const std::vector<TestRecord>& records) {
    if (Status st = OpenSession(); !st.ok()) {
      out_ << path_ << ": cannot open a session: " << st.ToString() << "\n";
      return FileOutcome::kFailed;
    }
    for (const TestRecord& r : records) {
      if (options_.verbose) out_ << path_ << ":" << r.line << ": " << OneLine(r.sql) << "\n";
      switch (r.kind) {
        case RecordKind::kStatementOk:
          RunStatementOk(r);
          break;
        case RecordKind::kStatementError:
          RunStatementError(r);
          break;
        case RecordKind::kQuery:
          RunQuery(r);
          break;
        case RecordKind::kRestart:
          session_.reset();
          if (Status st = OpenSession(); !st.ok()) {
            Fail(r, "restart failed: " + OneLine(st.ToString()));
            return FileOutcome::kFailed;
          }
          break;
        case RecordKind::kRequire:
          if (options_.features.count(r.name) == 0) {
            if (failures_ > 0) return FileOutcome::kFailed;
            out_ << path_ << ":" << r.line << ": skipped (requires '" << r.name
                 << "', which this build lacks)\n";
            return FileOutcome::kSkipped;
          }
          break;
        case RecordKind::kLoop:
        case RecordKind::kEndLoop:
          break;  // expanded before running
      }
    }
    return failures_ > 0 ? FileOutcome::kFailed : FileOutcome::kPassed;
  }

  void Fail(const TestRecord& r, const std::string& what) {
    ++failures_;
    out_ << path_ << ":" << r.line << ": " << what << "\n";
  }

  void RunStatementOk(const TestRecord& r) {
    auto result = session_->Execute(r.sql);
    if (!result.ok()) {
      Fail(r, "statement failed: " + OneLine(r.sql) +
                  "; expected: success; actual: " + OneLine(result.status().ToString()));
    }
  }

  void RunStatementError(const TestRecord& r) {
    auto result = session_->Execute(r.sql);
    if (result.ok()) {
      Fail(r, "statement succeeded: " + OneLine(r.sql) + "; expected: an error" +
                  (r.has_expected_error ? " containing '" + r.expected_error + "'" : "") +
                  "; actual: success");
      return;
    }
    std::string message = result.status().ToString();
    if (r.has_expected_error &&
        AsciiLower(message).find(AsciiLower(r.expected_error)) == std::string::npos) {
      Fail(r, "wrong error: " + OneLine(r.sql) + "; expected: an error containing '" +
                  r.expected_error + "'; actual: " + OneLine(message));
    }
  }

  void RunQuery(const TestRecord& r) {
    auto result = session_->Execute(r.sql);
    if (!result.ok()) {
      Fail(r, "query failed: " + OneLine(r.sql) + "; expected: " + JoinRows(r.expected_rows) +
                  "; actual: " + OneLine(result.status().ToString()));
      return;
    }
    const engine::Batch& batch = *result;
    if (batch.num_columns() != r.types.size()) {
      Fail(r, "query returned " + std::to_string(batch.num_columns()) + " columns but the types '" +
                  r.types + "' say " + std::to_string(r.types.size()) + ": " + OneLine(r.sql));
      return;
    }
    std::vector<std::string> actual;
    actual.reserve(static_cast<size_t>(batch.num_rows()));
    for (int64_t row = 0; row < batch.num_rows(); ++row) {
      std::string line;
      for (size_t c = 0; c < batch.num_columns(); ++c) {
        if (c) line += '\t';
        line += FormatCell(batch.GetString(row, c));
      }
      actual.push_back(std::move(line));
    }
    std::vector<std::string> expected = r.expected_rows;
    if (r.sort == SortMode::kRowSort) {
      std::sort(actual.begin(), actual.end());
      std::sort(expected.begin(), expected.end());
    }
    if (!RowsMatch(r.types, expected, actual)) {
      Fail(r, "wrong result: " + OneLine(r.sql) + "; expected: " + JoinRows(expected) +
                  "; actual: " + JoinRows(actual));
      if (options_.verbose) {
        out_ << "  expected:\n" << Indented(expected) << "  actual:\n" << Indented(actual);
      }
    }
  }

  static bool RowsMatch(const std::string& types, const std::vector<std::string>& expected,
                        const std::vector<std::string>& actual) {
    if (expected.size() != actual.size()) return false;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (expected[i] == actual[i]) continue;
      std::vector<std::string> e, a;
      std::stringstream es(expected[i]), as(actual[i]);
      std::string cell;
      while (std::getline(es, cell, '\t')) e.push_back(cell);
      while (std::getline(as, cell, '\t')) a.push_back(cell);
      if (e.size() != a.size() || e.size() != types.size()) return false;
      for (size_t c = 0; c < e.size(); ++c) {
        if (!CellMatches(types[c], e[c], a[c])) return false;
      }
    }
    return true;
  }

  std::string path_;
  const TestRunOptions& options_;
  std::ostream& out_;
  std::string warehouse_;
  std::unique_ptr<sql::Session> session_;
  int failures_ = 0;
};

void CollectTestFiles(const std::filesystem::path& dir, std::vector<std::string>* out) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".test") {
      found.push_back(it->path().string());
    }
  }
  std::sort(found.begin(), found.end());
  out->insert(out->end(), found.begin(), found.end());
}

}  // namespace

Result<std::vector<TestRecord>> ParseTestFile(std::string_view content, const std::string& path) {
  std::vector<std::string> lines;
  {
    std::string line;
    std::stringstream in{std::string(content)};
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
  }
  std::vector<TestRecord> records;
  size_t i = 0;
  // Lines of a block: until a blank line (or the end).
  auto read_block = [&](std::vector<std::string>* block, bool stop_at_dashes) {
    while (i < lines.size() && !IsBlank(lines[i])) {
      if (stop_at_dashes && Trim(lines[i]) == "----") return true;
      block->push_back(lines[i]);
      ++i;
    }
    return false;
  };
  auto join = [](const std::vector<std::string>& block) {
    std::string out;
    for (size_t k = 0; k < block.size(); ++k) {
      if (k) out += '\n';
      out += block[k];
    }
    return out;
  };
  while (i < lines.size()) {
    std::string trimmed = Trim(lines[i]);
    if (trimmed.empty() || trimmed[0] == '#') {
      ++i;
      continue;
    }
    TestRecord r;
    r.line = static_cast<int>(i) + 1;
    std::vector<std::string> words = SplitWords(trimmed);
    ++i;
    const std::string& head = words[0];
    if (head == "statement") {
      if (words.size() != 2 || (words[1] != "ok" && words[1] != "error")) {
        return ParseError(path, r.line, "expected 'statement ok' or 'statement error'");
      }
      r.kind = words[1] == "ok" ? RecordKind::kStatementOk : RecordKind::kStatementError;
      std::vector<std::string> sql;
      bool dashes = read_block(&sql, true);
      if (sql.empty()) return ParseError(path, r.line, "statement without SQL");
      r.sql = join(sql);
      if (dashes) {
        if (r.kind == RecordKind::kStatementOk) {
          return ParseError(path, r.line, "'statement ok' takes no expected output after ----");
        }
        ++i;  // the ---- line
        std::vector<std::string> expected;
        read_block(&expected, false);
        r.has_expected_error = true;
        r.expected_error = Trim(join(expected));
      }
    } else if (head == "query") {
      if (words.size() < 2 || words.size() > 3) {
        return ParseError(path, r.line, "expected 'query <types> [rowsort|nosort]'");
      }
      r.kind = RecordKind::kQuery;
      r.types = words[1];
      for (char t : r.types) {
        if (t != 'I' && t != 'R' && t != 'T') {
          return ParseError(path, r.line,
                            std::string("unknown column type '") + t + "' (use I, R or T)");
        }
      }
      if (words.size() == 3) {
        if (words[2] == "rowsort")
          r.sort = SortMode::kRowSort;
        else if (words[2] == "nosort")
          r.sort = SortMode::kNoSort;
        else
          return ParseError(path, r.line, "unknown sort mode '" + words[2] + "'");
      }
      std::vector<std::string> sql;
      bool dashes = read_block(&sql, true);
      if (sql.empty()) return ParseError(path, r.line, "query without SQL");
      if (!dashes) return ParseError(path, r.line, "query without '----' before its results");
      ++i;
      r.sql = join(sql);
      read_block(&r.expected_rows, false);
    } else if (head == "restart") {
      if (words.size() != 1) return ParseError(path, r.line, "'restart' takes no arguments");
      r.kind = RecordKind::kRestart;
    } else if (head == "require") {
      if (words.size() != 2) return ParseError(path, r.line, "expected 'require <feature>'");
      r.kind = RecordKind::kRequire;
      r.name = words[1];
    } else if (head == "loop") {
      if (words.size() != 4 || !ParseInt(words[2], &r.loop_begin) ||
          !ParseInt(words[3], &r.loop_end)) {
        return ParseError(path, r.line, "expected 'loop <var> <begin> <end>'");
      }
      r.kind = RecordKind::kLoop;
      r.name = words[1];
    } else if (head == "endloop") {
      r.kind = RecordKind::kEndLoop;
    } else {
      return ParseError(path, r.line, "unknown record '" + head + "'");
    }
    records.push_back(std::move(r));
  }
  return records;
}

Result<std::vector<TestRecord>> ExpandLoops(const std::vector<TestRecord>& records,
                                            const std::string& path) {
  std::vector<TestRecord> out;
  std::map<std::string, std::string> vars;
  size_t index = 0;
  SLUICE_RETURN_NOT_OK(Expand(records, &index, vars, 0, path, &out));
  return out;
}

std::string FormatCell(const std::optional<std::string>& value) {
  if (!value) return "NULL";
  if (value->empty()) return "(empty)";
  return *value;
}

bool CellMatches(char type, std::string_view expected, std::string_view actual) {
  if (expected == actual) return true;
  if (type != 'R') return false;
  std::string e(expected), a(actual);
  char* e_end = nullptr;
  char* a_end = nullptr;
  double ev = std::strtod(e.c_str(), &e_end);
  double av = std::strtod(a.c_str(), &a_end);
  if (e.empty() || a.empty() || *e_end != '\0' || *a_end != '\0') return false;
  if (std::isnan(ev) || std::isnan(av)) return std::isnan(ev) && std::isnan(av);
  if (ev == av) return true;
  return std::fabs(ev - av) <= 1e-9 * std::max(std::fabs(ev), std::fabs(av));
}

FileOutcome RunTestFile(const std::string& path, const TestRunOptions& options, std::ostream& out) {
  return FileRunner(path, options, out).Run();
}

TestSummary RunTests(const std::vector<std::string>& paths, const TestRunOptions& options,
                     std::ostream& out) {
  std::vector<std::string> files;
  TestSummary summary;
  for (const std::string& p : paths) {
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(p, ec);
    if (std::filesystem::is_directory(abs, ec)) {
      CollectTestFiles(abs, &files);
    } else if (std::filesystem::is_regular_file(abs, ec)) {
      files.push_back(abs.string());
    } else {
      out << p << ": no such test file or directory\n";
      ++summary.failed;
    }
  }
  for (const std::string& file : files) {
    switch (RunTestFile(file, options, out)) {
      case FileOutcome::kPassed:
        ++summary.passed;
        break;
      case FileOutcome::kFailed:
        ++summary.failed;
        break;
      case FileOutcome::kSkipped:
        ++summary.skipped;
        break;
    }
  }
  out << summary.passed << " passed, " << summary.failed << " failed";
  if (summary.skipped > 0) out << ", " << summary.skipped << " skipped";
  out << "\n";
  return summary;
}

std::set<std::string> BuiltInFeatures() {
  // RocksDB is the default state store of every build. Kafka is built in too, but a SQL logic
  // test has no broker to talk to (the runner starts none), so `require kafka` still skips.
  return {"rocksdb"};
}

}  // namespace sluice::cli
