#include "sql/streaming_progress_store.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "common/logging.h"
#include "common/strings.h"
#include "dialect/tokenizer.h"
#include "sql/literal_rows.h"
#include "stream/checkpoint_layout.h"

namespace sluice::sql {
namespace {

constexpr char kProgressDir[] = "progress";

std::string IntOrNull(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return "NULL";
  return std::to_string(it->get<int64_t>());
}

std::string DoubleOrNull(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return "NULL::DOUBLE";
  double v = it->get<double>();
  if (!std::isfinite(v)) return "NULL::DOUBLE";
  nlohmann::json n = v;
  return "CAST(" + n.dump() + " AS DOUBLE)";
}

std::string TimestampOrNull(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "NULL::TIMESTAMPTZ";
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "NULL::TIMESTAMPTZ";
  return "CAST(" + QuoteLiteral(it->get<std::string>()) + " AS TIMESTAMPTZ)";
}

// The JSON text as written (Spark's field order), without the trailing newline.
std::string Trimmed(const std::string& text) {
  size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' ')) {
    --end;
  }
  return text.substr(0, end);
}

}  // namespace

Status WriteBatchProgress(fs::FileSystem& fs, const std::string& checkpoint_root,
                          const stream::StreamingQueryProgress& progress) {
  const std::string path = fs::JoinPath(fs::JoinPath(checkpoint_root, kProgressDir),
                                        std::to_string(progress.batch_id) + ".json");
  return fs.AtomicReplace(path, stream::ProgressToJson(progress) + "\n", {.sync = false});
}

Result<std::vector<std::string>> ReadBatchProgress(fs::FileSystem& fs,
                                                   const std::string& checkpoint_root,
                                                   std::vector<std::string>* skipped) {
  std::vector<std::string> out;
  // A group-mode root: its tasks' progress after the root's own (none).
  auto add_tasks = [&]() -> Status {
    const std::string tasks = fs::JoinPath(checkpoint_root, stream::kTasksDirName);
    Result<std::vector<fs::FileInfo>> dirs = fs.List(tasks);
    if (dirs.status().IsNotFound()) return Status::OK();
    if (!dirs.ok()) return dirs.status();
    std::vector<std::pair<int64_t, std::string>> parts;
    for (const auto& d : *dirs) {
      const std::string base = fs::BaseName(d.path);
      int64_t p = 0;
      if (!d.is_directory || base.empty() || !std::all_of(base.begin(), base.end(), ::isdigit) ||
          std::from_chars(base.data(), base.data() + base.size(), p).ec != std::errc()) {
        continue;
      }
      parts.emplace_back(p, d.path);
    }
    std::sort(parts.begin(), parts.end());
    for (const auto& [p, dir] : parts) {
      SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> texts, ReadBatchProgress(fs, dir, skipped));
      for (std::string& t : texts) out.push_back(std::move(t));
    }
    return Status::OK();
  };
  Result<std::vector<fs::FileInfo>> files = fs.List(fs::JoinPath(checkpoint_root, kProgressDir));
  if (files.status().IsNotFound()) {
    SLUICE_RETURN_NOT_OK(add_tasks());
    return out;
  }
  if (!files.ok()) return files.status();
  std::vector<std::pair<int64_t, std::string>> ids;
  for (const auto& f : *files) {
    std::string base = fs::BaseName(f.path);
    if (!base.ends_with(".json")) continue;
    std::string stem = base.substr(0, base.size() - 5);
    if (stem.empty() || !std::all_of(stem.begin(), stem.end(), ::isdigit)) continue;
    int64_t id = 0;
    if (std::from_chars(stem.data(), stem.data() + stem.size(), id).ec != std::errc()) {
      // std::stoll threw here (out of int64 range): a name no batch has.
      SLUICE_LOG(kWarning) << "batch progress file " << f.path
                           << " skipped: its name is not a batch id";
      continue;
    }
    ids.emplace_back(id, f.path);
  }
  std::sort(ids.begin(), ids.end());
  for (const auto& [id, path] : ids) {
    std::string problem;
    Result<std::string> text = fs.ReadFile(path);
    if (!text.ok()) {
      problem = text.status().ToString();
    } else if (Trimmed(*text).empty()) {
      problem = "the file is empty";
    } else if (auto p = stream::ParseProgressJson(*text); !p.ok()) {
      problem = p.status().message();
    } else if (p->batch_id != id) {
      problem = "it holds batchId " + std::to_string(p->batch_id);
    }
    if (problem.empty()) {
      out.push_back(std::move(*text));
      continue;
    }
    std::string warning = "batch progress file " + path + " skipped: " + problem +
                          " (cut short, or damaged; remove it to silence this warning)";
    SLUICE_LOG(kWarning) << warning;
    if (skipped) skipped->push_back(std::move(warning));
  }
  SLUICE_RETURN_NOT_OK(add_tasks());
  return out;
}

Result<std::string> ProgressRowsSql(const std::vector<std::string>& progress_jsons,
                                    const std::string& what) {
  static const char* kColumns =
      "batch_id, \"timestamp\", num_input_rows, input_rows_per_second, processed_rows_per_second, "
      "batch_duration_ms, watermark, state_rows_total, state_rows_updated, state_rows_removed, "
      "state_rows_dropped_by_watermark, state_memory_bytes, progress";
  std::string values;
  for (const std::string& text : progress_jsons) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return Status::Corruption("progress of " + what + ": not a JSON object");
    }
    int64_t total = 0, updated = 0, removed = 0, dropped = 0, memory = 0;
    if (auto ops = j.find("stateOperators"); ops != j.end() && ops->is_array()) {
      for (const auto& op : *ops) {
        total += op.value("numRowsTotal", int64_t{0});
        updated += op.value("numRowsUpdated", int64_t{0});
        removed += op.value("numRowsRemoved", int64_t{0});
        dropped += op.value("numRowsDroppedByWatermark", int64_t{0});
        memory += op.value("memoryUsedBytes", int64_t{0});
      }
    }
    nlohmann::json event_time = j.contains("eventTime") ? j["eventTime"] : nlohmann::json();
    std::string row =
        "(" + IntOrNull(j, "batchId") + ", " + TimestampOrNull(j, "timestamp") + ", " +
        IntOrNull(j, "numInputRows") + ", " + DoubleOrNull(j, "inputRowsPerSecond") + ", " +
        DoubleOrNull(j, "processedRowsPerSecond") + ", " + IntOrNull(j, "batchDuration") + ", " +
        TimestampOrNull(event_time, "watermark") + ", " + std::to_string(total) + ", " +
        std::to_string(updated) + ", " + std::to_string(removed) + ", " + std::to_string(dropped) +
        ", " + std::to_string(memory) + ", CAST(" + QuoteLiteral(Trimmed(text)) + " AS JSON))";
    values += (values.empty() ? "" : ", ") + row;
  }
  if (values.empty()) {
    return std::string(
        "SELECT NULL::BIGINT AS batch_id, NULL::TIMESTAMPTZ AS timestamp, NULL::BIGINT AS "
        "num_input_rows, NULL::DOUBLE AS input_rows_per_second, NULL::DOUBLE AS "
        "processed_rows_per_second, NULL::BIGINT AS batch_duration_ms, NULL::TIMESTAMPTZ AS "
        "watermark, NULL::BIGINT AS state_rows_total, NULL::BIGINT AS state_rows_updated, "
        "NULL::BIGINT AS state_rows_removed, NULL::BIGINT AS state_rows_dropped_by_watermark, "
        "NULL::BIGINT AS state_memory_bytes, NULL::JSON AS progress LIMIT 0");
  }
  return "SELECT " + std::string(kColumns) + " FROM (VALUES " + values + ") AS __p(" + kColumns +
         ")";
}

Result<ProgressRewrite> RewriteStreamingProgress(std::string_view sql) {
  ProgressRewrite out;
  SLUICE_ASSIGN_OR_RETURN(std::vector<dialect::Token> tokens, dialect::Tokenize(sql));
  size_t copied = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].IsSymbol("(") && i + 4 < tokens.size() && tokens[i + 1].IsKeyword("show") &&
        tokens[i + 2].IsKeyword("streaming") && tokens[i + 3].IsKeyword("tables") &&
        tokens[i + 4].IsSymbol(")")) {
      out.sql += std::string(sql.substr(copied, tokens[i].begin - copied));
      out.sql += QuoteIdentifier(kShowStreamingTablesView);
      copied = tokens[i + 4].end;
      out.show_streaming_tables = true;
      i += 4;
      continue;
    }
    if (!tokens[i].IsKeyword("streaming_progress")) continue;
    if (i + 1 >= tokens.size() || !tokens[i + 1].IsSymbol("(")) continue;
    if (i + 3 >= tokens.size() || tokens[i + 2].kind != dialect::TokenKind::kString ||
        !tokens[i + 3].IsSymbol(")")) {
      return Status::InvalidArgument(
          "streaming_progress takes one argument, the streaming table's name as a string: "
          "streaming_progress('name') (at " +
          dialect::DescribePosition(sql, tokens[i].begin) + ")");
    }
    ProgressReference ref{tokens[i + 2].text, "progress:" + tokens[i + 2].text};
    out.sql += std::string(sql.substr(copied, tokens[i].begin - copied));
    out.sql += QuoteIdentifier(ref.view_name);
    copied = tokens[i + 3].end;
    out.references.push_back(std::move(ref));
    i += 3;
  }
  out.sql += std::string(sql.substr(copied));
  return out;
}

}  // namespace sluice::sql
