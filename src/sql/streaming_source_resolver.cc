#include "sql/streaming_source_resolver.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "common/strings.h"
#include "fs/file_system.h"

namespace sluice::sql {
namespace {

Result<std::string> TablePath(const std::string& written, const TableCatalog& tables,
                              const std::function<bool(const std::string&)>& is_streaming_table) {
  TableName name{written, false};
  const std::string prefix = "delta.`";
  if (written.size() > prefix.size() + 1 && written.compare(0, prefix.size(), prefix) == 0 &&
      written.back() == '`') {
    name = {written.substr(prefix.size(), written.size() - prefix.size() - 1), true};
  }
  SLUICE_ASSIGN_OR_RETURN(std::string path, tables.Resolve(name));
  SLUICE_ASSIGN_OR_RETURN(bool exists, tables.Exists(name));
  if (!exists && !name.is_path && is_streaming_table && is_streaming_table(name.name)) {
    return path;  // a streaming table not yet refreshed: its first batch creates it
  }
  if (!exists) {
    return Status::NotFound(name.is_path ? "delta.`" + name.name + "` is not a Delta table"
                                         : "table " + name.name + " does not exist in warehouse " +
                                               tables.warehouse());
  }
  return path;
}

std::string Absolute(const std::string& path) {
  // "s3://b/k" stays as is; another scheme too, so that the file system refuses it by name.
  if (!fs::PathScheme(path).empty()) return path;
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  if (ec) return path;
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

bool IsInteger(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// The options of `STREAM t [WITH (...)]` (names lower-cased, as the parser gives them).
Status CheckDeltaTableOptions(const plan::StreamRelation& relation, bool change_feed) {
  static const std::set<std::string> kDelta = {
      "startingversion",        "startingtimestamp",       "maxfilespertrigger",
      "maxbytespertrigger",     "skipchangecommits",       "readchangefeed",
      "schematrackinglocation", "allowsourcecolumnrename", "allowsourcecolumndrop"};
  // The Delta table source's own options (delta_source.h), not the change feed's.
  static const std::set<std::string> kTableOnly = {"skipchangecommits", "schematrackinglocation",
                                                   "allowsourcecolumnrename",
                                                   "allowsourcecolumndrop"};
  for (const auto& [key, value] : relation.named) {
    if (kDelta.count(key) == 0 || (change_feed && kTableOnly.count(key) > 0)) {
      std::string known;
      for (const std::string& k : kDelta) {
        if (change_feed && kTableOnly.count(k) > 0) continue;
        known += (known.empty() ? "" : ", ") + k;
      }
      return Status::InvalidArgument(
          "STREAM " + relation.table + ": unknown option '" + key + "' for a Delta " +
          (change_feed ? "change data feed" : "table") + " source (known options: " + known + ")");
    }
  }
  return Status::OK();
}

}  // namespace

Result<ResolvedSource> ResolveStreamRelation(
    const plan::StreamRelation& relation, const TableCatalog& tables,
    const std::function<bool(const std::string&)>& is_streaming_table) {
  using Kind = plan::StreamRelation::Kind;
  ResolvedSource out;
  out.options = relation.named;
  switch (relation.kind) {
    case Kind::kTable: {
      // WITH (readChangeFeed = true) reads the change data feed, as Spark's option does.
      auto cdf = relation.named.find("readchangefeed");
      const bool change_feed = cdf != relation.named.end() && AsciiLower(cdf->second) == "true";
      SLUICE_RETURN_NOT_OK(CheckDeltaTableOptions(relation, change_feed));
      out.format = change_feed ? "delta_cdf" : "delta";
      // Without startingVersion / startingTimestamp the change feed starts with the latest
      // snapshot as inserts, as Spark's does (delta_cdf_source.h).
      SLUICE_ASSIGN_OR_RETURN(out.options["path"],
                              TablePath(relation.table, tables, is_streaming_table));
      break;
    }
    case Kind::kTableChanges: {
      out.format = "delta_cdf";
      std::string table = relation.table;
      if (table.empty() && !relation.positional.empty()) table = relation.positional[0];
      if (table.empty()) {
        return Status::InvalidArgument("STREAM table_changes needs a table name");
      }
      SLUICE_ASSIGN_OR_RETURN(out.options["path"], TablePath(table, tables, is_streaming_table));
      if (relation.positional.size() < 2) {
        return Status::InvalidArgument(
            "STREAM table_changes('" + table +
            "', start) needs a starting version or timestamp as its second argument");
      }
      if (relation.positional.size() > 2) {
        return Status::InvalidArgument(
            "STREAM table_changes takes no end version: a stream reads every later change");
      }
      const std::string& start = relation.positional[1];
      out.options[IsInteger(start) ? "startingVersion" : "startingTimestamp"] = start;
      break;
    }
    case Kind::kReadFiles: {
      out.format = "files";
      std::string path;
      if (!relation.positional.empty()) {
        path = relation.positional[0];
      } else if (auto it = out.options.find("path"); it != out.options.end()) {
        path = it->second;
      }
      if (path.empty()) return Status::InvalidArgument("STREAM read_files needs a path");
      out.options["path"] = Absolute(path);
      break;
    }
    case Kind::kReadRate:
    case Kind::kReadKafka:
    case Kind::kNexmark: {
      const char* fn = relation.kind == Kind::kReadRate    ? "read_rate"
                       : relation.kind == Kind::kReadKafka ? "read_kafka"
                                                           : "nexmark";
      if (!relation.positional.empty()) {
        // A positional argument would otherwise be ignored (nexmark('person') reading bids).
        return Status::InvalidArgument(
            std::string("STREAM ") + fn + " takes named arguments only, such as " + fn + "(" +
            (relation.kind == Kind::kNexmark    ? "kind => 'person'"
             : relation.kind == Kind::kReadRate ? "rowsPerSecond => 10"
                                                : "bootstrapServers => 'host:9092'") +
            "); got the positional argument '" + relation.positional[0] + "'");
      }
      out.format = relation.kind == Kind::kReadRate    ? "rate"
                   : relation.kind == Kind::kReadKafka ? "kafka"
                                                       : "nexmark";
      break;
    }
  }
  return out;
}

}  // namespace sluice::sql
