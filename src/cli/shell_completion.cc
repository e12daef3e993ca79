#include "cli/shell_completion.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/strings.h"

namespace sluice::cli {
namespace {

// The keywords of the statements a user types most (docs/sql-reference.md), upper case.
constexpr const char* kKeywords[] = {
    "ADD",        "ALL",      "ALTER",     "AND",          "APPLY",
    "AS",         "ASC",      "AUTO",      "AVG",          "BETWEEN",
    "BY",         "CASE",     "CAST",      "CHANGES",      "COLUMN",
    "CONSTRAINT", "COUNT",    "CREATE",    "CROSS",        "DELAY",
    "DELETE",     "DELTA",    "DESC",      "DESCRIBE",     "DETAIL",
    "DISTINCT",   "DROP",     "ELSE",      "END",          "EXISTS",
    "EXPECT",     "EXPLAIN",  "FALSE",     "FLOW",         "FROM",
    "FULL",       "GROUP",    "HAVING",    "HISTORY",      "IF",
    "IN",         "INNER",    "INSERT",    "INTERVAL",     "INTO",
    "IS",         "JOIN",     "KEYS",      "LEFT",         "LIKE",
    "LIMIT",      "LOCATION", "MATCHED",   "MATERIALIZED", "MAX",
    "MERGE",      "MIN",      "NOT",       "NULL",         "OF",
    "ON",         "OPTIMIZE", "OPTIONS",   "OR",           "ORDER",
    "OUTER",      "OVER",     "PARTITION", "PARTITIONED",  "REFRESH",
    "RENAME",     "REPLACE",  "RESTORE",   "RIGHT",        "SELECT",
    "SEQUENCE",   "SET",      "SHOW",      "SINK",         "STREAM",
    "STREAMING",  "SUM",      "TABLE",     "TABLES",       "TBLPROPERTIES",
    "THEN",       "TO",       "TRIGGER",   "TRUE",         "UNION",
    "UPDATE",     "USING",    "VACUUM",    "VALUES",       "VIEW",
    "WATERMARK",  "WHEN",     "WHERE",     "WINDOW",       "WITH",
};

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  return prefix.size() <= text.size() &&
         AsciiEqualsIgnoreCase(text.substr(0, prefix.size()), prefix);
}

}  // namespace

std::vector<std::string> CompleteWord(std::string_view prefix,
                                      const std::vector<std::string>& names) {
  const bool lower = std::any_of(prefix.begin(), prefix.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c));
  });
  std::set<std::string> keywords, matching_names;
  std::set<std::string> seen;  // lower-cased, so a name that is also a keyword comes once
  for (const char* k : kKeywords) {
    if (!StartsWithNoCase(k, prefix)) continue;
    seen.insert(AsciiLower(k));
    keywords.insert(lower ? AsciiLower(k) : std::string(k));
  }
  for (const std::string& name : names) {
    if (!StartsWithNoCase(name, prefix)) continue;
    if (seen.insert(AsciiLower(name)).second) matching_names.insert(name);
  }
  std::vector<std::string> out(keywords.begin(), keywords.end());
  out.insert(out.end(), matching_names.begin(), matching_names.end());
  return out;
}

}  // namespace sluice::cli
