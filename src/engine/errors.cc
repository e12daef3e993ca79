// DuckDB errors -> Status.
#include <cctype>
#include <string>
#include <string_view>

#include "engine/duckdb_convert.h"
#include "engine/relation_names.h"

namespace sluice::engine::internal {
namespace {

bool Contains(const std::string& haystack, const char* needle) {
  return haystack.find(needle) != std::string::npos;
}

// DuckDB's message on one line (issue 24 #11): without the "LINE 1: <SQL fragment>" and caret
// lines it appends (they quote generated SQL the user never wrote), other line breaks made "; ".
std::string OneLine(std::string message) {
  for (const char* marker : {"\n\nLINE ", "\nLINE "}) {
    if (size_t at = message.find(marker); at != std::string::npos) message.resize(at);
  }
  std::string out;
  size_t start = 0;
  while (start <= message.size()) {
    size_t end = message.find('\n', start);
    std::string line =
        message.substr(start, end == std::string::npos ? std::string::npos : end - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    size_t lead = line.find_first_not_of(' ');
    if (lead != std::string::npos) out += (out.empty() ? "" : "; ") + line.substr(lead);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// Drops DuckDB's "Did you mean "x"?" when x is a name the user never made: the engine's own
// catalogs (pg_*, duckdb_*, sqlite_*, information_schema) and Sluice's internal names (__*).
std::string WithoutInternalSuggestion(std::string message) {
  static constexpr std::string_view kMean = "; Did you mean \"";
  size_t at = message.find(kMean);
  if (at == std::string::npos) return message;
  std::string_view name = std::string_view(message).substr(at + kMean.size());
  for (std::string_view internal :
       {"pg_", "duckdb_", "sqlite_", "information_schema", "__", "main.pg_", "main.duckdb_"}) {
    if (name.substr(0, internal.size()) == internal) {
      size_t end = message.find('?', at);
      message.erase(at, end == std::string::npos ? std::string::npos : end + 1 - at);
      return message;
    }
  }
  return message;
}

// The length of a generated stream relation name "__stream_<digits>" at `at` (0 when none).
size_t StreamNameAt(std::string_view s, size_t at) {
  constexpr std::string_view kPrefix = kStreamViewPrefix;
  if (s.substr(at, kPrefix.size()) != kPrefix) return 0;
  size_t end = at + kPrefix.size();
  while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
  if (end == at + kPrefix.size()) return 0;
  if (end < s.size() && (std::isalpha(static_cast<unsigned char>(s[end])) || s[end] == '_')) {
    return 0;  // a longer name that only starts like one
  }
  return end - at;
}

// Issue 24 #11: the names the streaming planner gives the relations of FROM STREAM without an
// alias ("__stream_0") must not reach the user. DuckDB's binder names them as qualifiers
// ("Candidate bindings: "__stream_0.id"", "__stream_0.id" in a message) and as candidates of
// their own ("Candidate tables: "__stream_0""). A qualifier is dropped (the column's name is what
// the user can write); a bare name becomes "the STREAM relation" (it has no name the user gave).
std::string WithoutGeneratedNames(std::string message) {
  // A stream's batch reaches the engine as a VALUES list; the user wrote a STREAM relation.
  static constexpr std::string_view kValues = "Values list \"";
  for (size_t at = message.find(kValues); at != std::string::npos;
       at = message.find(kValues, at + 1)) {
    message.replace(at, kValues.size(), "Relation \"");
  }
  std::string out;
  out.reserve(message.size());
  for (size_t i = 0; i < message.size();) {
    size_t n = StreamNameAt(message, i);
    if (n == 0 || (i > 0 && (std::isalnum(static_cast<unsigned char>(message[i - 1])) ||
                             message[i - 1] == '_'))) {
      out += message[i++];
      continue;
    }
    if (i + n < message.size() && message[i + n] == '.') {
      i += n + 1;  // "__stream_0.id" -> "id"
      continue;
    }
    const bool quoted =
        !out.empty() && out.back() == '"' && i + n < message.size() && message[i + n] == '"';
    if (quoted) {
      out.pop_back();
      out += "the STREAM relation";
      i += n + 1;
    } else {
      out += "the STREAM relation";
      i += n;
    }
  }
  return out;
}

}  // namespace

Status StatusFromError(const duckdb::ErrorData& error) {
  using duckdb::ExceptionType;
  std::string message = error.Message();
  if (message.empty()) message = error.RawMessage();
  message = WithoutGeneratedNames(WithoutInternalSuggestion(OneLine(std::move(message))));
  const std::string& raw = error.RawMessage();
  switch (error.Type()) {
    case ExceptionType::CATALOG: {
      auto it = error.ExtraInfo().find("error_subtype");
      bool missing = (it != error.ExtraInfo().end() && it->second == "MISSING_ENTRY") ||
                     Contains(raw, "does not exist");
      if (missing) return Status::NotFound(std::move(message));
      if (Contains(raw, "already exists")) return Status::AlreadyExists(std::move(message));
      return Status::InvalidArgument(std::move(message));
    }
    case ExceptionType::PARSER:
    case ExceptionType::SYNTAX:
    case ExceptionType::BINDER:
    case ExceptionType::PLANNER:
    case ExceptionType::EXPRESSION:
    case ExceptionType::CONVERSION:
    case ExceptionType::OUT_OF_RANGE:
    case ExceptionType::DECIMAL:
    case ExceptionType::MISMATCH_TYPE:
    case ExceptionType::INVALID_TYPE:
    case ExceptionType::UNKNOWN_TYPE:
    case ExceptionType::DIVIDE_BY_ZERO:
    case ExceptionType::INVALID_INPUT:
    case ExceptionType::CONSTRAINT:
    case ExceptionType::DEPENDENCY:
    case ExceptionType::SEQUENCE:
    case ExceptionType::SETTINGS:
    case ExceptionType::PARAMETER_NOT_RESOLVED:
    case ExceptionType::PARAMETER_NOT_ALLOWED:
    case ExceptionType::INVALID_CONFIGURATION:
    case ExceptionType::PERMISSION:
    case ExceptionType::MISSING_EXTENSION:
    case ExceptionType::AUTOLOAD:
      return Status::InvalidArgument(std::move(message));
    case ExceptionType::IO:
    case ExceptionType::HTTP:
    case ExceptionType::NETWORK:
      if (Contains(raw, "No files found") || Contains(raw, "No such file") ||
          Contains(raw, "does not exist") || Contains(raw, "not found")) {
        return Status::NotFound(std::move(message));
      }
      return Status::IOError(std::move(message));
    case ExceptionType::OUT_OF_MEMORY:
      // Resource exhaustion of the machine, not a bug: reported like other OS failures.
      return Status::IOError(std::move(message));
    case ExceptionType::INTERRUPT:
      // DuckDB's text ("INTERRUPT Error: Interrupted!") says neither what nor what is left.
      return Status::Cancelled(
          "interrupted: the statement was cancelled before it finished (nothing it would have "
          "written is committed)");
    case ExceptionType::NOT_IMPLEMENTED:
      return Status::NotSupported(std::move(message));
    case ExceptionType::TRANSACTION:
      return Status::Conflict(std::move(message));
    default:
      return Status::Internal(std::move(message));
  }
}

Status StatusFromException(const std::exception& ex) {
  duckdb::ErrorData error(ex);
  return StatusFromError(error);
}

}  // namespace sluice::engine::internal
