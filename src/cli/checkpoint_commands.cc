#include "cli/checkpoint_commands.h"

#include <algorithm>
#include <vector>

#include "cli/result_printer.h"
#include "fs/routing_file_system.h"
#include "sql/read_state.h"
#include "state/state_reader.h"
#include "stream/batch_log.h"
#include "stream/checkpoint_metadata.h"
#include "stream/commit_log.h"
#include "stream/offset_seq_log.h"
#include "stream/time_format.h"

namespace sluice::cli {
namespace {

using Json = nlohmann::ordered_json;

// "0..4" / "3" / "none" for a sorted id list.
std::string Range(const std::vector<int64_t>& ids) {
  if (ids.empty()) return "none";
  if (ids.size() == 1) return std::to_string(ids.front());
  return std::to_string(ids.front()) + ".." + std::to_string(ids.back());
}

std::vector<int64_t> Values(const std::vector<BatchId>& ids) {
  std::vector<int64_t> out;
  out.reserve(ids.size());
  for (BatchId id : ids) out.push_back(id.value());
  return out;
}

Json Watermark(int64_t ms) {
  Json j;
  j["ms"] = ms;
  j["utc"] = stream::FormatUtcTimestampMs(ms);
  return j;
}

// commits/<id>, whatever its version line says (1 or 2); errors name the file.
Result<stream::CommitMetadata> ReadCommit(const stream::CommitLog& log, BatchId id) {
  const std::string path = log.log().PathFor(id);
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, log.log().Read(id));
  std::vector<std::string_view> lines = stream::SplitLogLines(bytes);
  if (lines.empty()) return Status::Corruption("commit log file " + path + " is empty");
  SLUICE_ASSIGN_OR_RETURN(int version,
                          stream::ParseLogVersion(lines[0], stream::kMaxCommitLogVersion)
                              .WithContext("commit log file " + path));
  return stream::ParseCommit(bytes, version).WithContext("commit log file " + path);
}

Result<Json> InspectState(const std::shared_ptr<fs::FileSystem>& fs, const std::string& root) {
  Json ops = Json::array();
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> ids, state::ListStateOperators(*fs, root));
  for (int64_t id : ids) {
    SLUICE_ASSIGN_OR_RETURN(state::OperatorMetadata m, state::ReadOperatorMetadata(*fs, root, id));
    Json op;
    op["operatorId"] = m.operator_id;
    op["operatorName"] = m.operator_name;
    op["stores"] = Json::array();
    int64_t op_bytes = 0;
    for (const state::StateStoreInfo& info : m.stores) {
      Json store;
      store["storeName"] = info.store_name;
      store["numPartitions"] = info.num_partitions;
      SLUICE_ASSIGN_OR_RETURN(state::StateSchema schema,
                              state::ReadStateSchema(*fs, root, id, info.store_name));
      for (const char* part : {"keySchema", "valueSchema"}) {
        Json fields = Json::array();
        for (const auto& f : part[0] == 'k' ? schema.key : schema.value) {
          fields.push_back({{"name", f.name}, {"type", f.type}, {"nullable", f.nullable}});
        }
        store[part] = std::move(fields);
      }
      Json partitions = Json::array();
      for (int32_t p = 0; p < info.num_partitions; ++p) {
        SLUICE_ASSIGN_OR_RETURN(state::StoreFiles files,
                                state::ListStoreFiles(*fs, {root, id, p, info.store_name}));
        Json part;
        part["partition"] = p;
        part["oldestVersion"] = files.files.empty() ? 0 : files.files.front().version;
        part["latestVersion"] = files.latest_version;
        part["latestSnapshotVersion"] = files.latest_snapshot_version;
        part["files"] = files.files.size();
        part["bytes"] = files.total_bytes;
        op_bytes += files.total_bytes;
        partitions.push_back(std::move(part));
      }
      store["partitions"] = std::move(partitions);
      op["stores"].push_back(std::move(store));
    }
    op["bytes"] = op_bytes;
    ops.push_back(std::move(op));
  }
  return ops;
}

}  // namespace

Result<Json> InspectCheckpoint(std::shared_ptr<fs::FileSystem> fs, const std::string& root) {
  SLUICE_ASSIGN_OR_RETURN(bool exists, fs->Exists(root));
  if (!exists) return Status::NotFound("checkpoint directory " + root + " does not exist");
  Json report;
  report["checkpoint"] = root;
  Result<stream::StreamMetadata> metadata = stream::ReadStreamMetadata(*fs, root);
  if (metadata.ok()) {
    report["queryId"] = metadata->id;
  } else if (metadata.status().IsNotFound()) {
    report["queryId"] = nullptr;
  } else {
    return metadata.status();
  }

  stream::OffsetSeqLog offsets(fs, root);
  stream::CommitLog commits(fs, root);
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchId> offset_ids, offsets.ListIds());
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchId> commit_ids, commits.ListIds());
  std::optional<stream::OffsetSeq> latest;
  for (BatchId id : offset_ids) {  // every entry is parsed so that damage anywhere shows
    SLUICE_ASSIGN_OR_RETURN(stream::OffsetSeq seq, offsets.Get(id));
    latest = std::move(seq);
  }
  std::optional<stream::CommitMetadata> last_commit;
  for (BatchId id : commit_ids) {
    SLUICE_ASSIGN_OR_RETURN(stream::CommitMetadata c, ReadCommit(commits, id));
    last_commit = std::move(c);
  }
  const std::vector<int64_t> offset_values = Values(offset_ids);
  const std::vector<int64_t> commit_values = Values(commit_ids);
  report["offsetLogBatches"] = offset_values;
  report["commitLogBatches"] = commit_values;
  report["lastCommittedBatch"] = commit_values.empty() ? Json(nullptr) : Json(commit_values.back());
  Json uncommitted = Json::array();
  for (int64_t id : offset_values) {
    if (commit_values.empty() || id > commit_values.back()) uncommitted.push_back(id);
  }
  report["uncommittedBatches"] = std::move(uncommitted);
  report["nextBatchWatermark"] =
      last_commit ? Watermark(last_commit->next_batch_watermark_ms) : Json(nullptr);
  Json latest_json = nullptr;
  if (latest) {
    latest_json = Json::object();
    latest_json["batchId"] = offset_values.back();
    Json sources = Json::array();
    for (size_t i = 0; i < latest->offsets.size(); ++i) {
      const auto& o = latest->offsets[i];
      // The offset is JSON text; it is embedded as JSON (the text itself if it does not parse).
      Json offset = nullptr;
      if (o) {
        offset = Json::parse(*o, nullptr, /*allow_exceptions=*/false);
        if (offset.is_discarded()) offset = *o;
      }
      sources.push_back({{"source", i}, {"offset", std::move(offset)}});
    }
    latest_json["sources"] = std::move(sources);
    if (latest->metadata) {
      latest_json["batchWatermark"] = Watermark(latest->metadata->batch_watermark_ms);
      latest_json["batchTimestamp"] =
          stream::FormatUtcTimestampMs(latest->metadata->batch_timestamp_ms);
      latest_json["conf"] = latest->metadata->conf;
    }
  }
  report["latestBatch"] = std::move(latest_json);
  report["committedStateVersion"] = commit_values.empty() ? 0 : commit_values.back() + 1;
  SLUICE_ASSIGN_OR_RETURN(Json state_operators, InspectState(fs, root));
  report["stateOperators"] = std::move(state_operators);
  return report;
}

void PrintCheckpointReport(const Json& r, std::ostream& out) {
  out << "checkpoint:           " << r["checkpoint"].get<std::string>() << "\n";
  out << "query id:             "
      << (r["queryId"].is_null() ? "none (no metadata file)" : r["queryId"].get<std::string>())
      << "\n";
  const auto offsets = r["offsetLogBatches"].get<std::vector<int64_t>>();
  const auto commits = r["commitLogBatches"].get<std::vector<int64_t>>();
  out << "batches:              " << offsets.size() << " in the offset log (" << Range(offsets)
      << "), " << commits.size() << " in the commit log (" << Range(commits) << ")\n";
  out << "last committed batch: "
      << (r["lastCommittedBatch"].is_null()
              ? std::string("none")
              : std::to_string(r["lastCommittedBatch"].get<int64_t>()))
      << "\n";
  const auto uncommitted = r["uncommittedBatches"].get<std::vector<int64_t>>();
  out << "uncommitted batch:    ";
  if (uncommitted.empty()) {
    out << "none\n";
  } else {
    out << Range(uncommitted) << " (offsets written, not committed: re-run on restart)\n";
  }
  out << "watermark:            ";
  if (r["nextBatchWatermark"].is_null()) {
    out << "none\n";
  } else {
    out << r["nextBatchWatermark"]["utc"].get<std::string>() << " (for the next batch)\n";
  }
  const Json& latest = r["latestBatch"];
  if (!latest.is_null()) {
    out << "latest batch:         " << latest["batchId"].get<int64_t>();
    if (latest.contains("batchTimestamp")) {
      out << " at " << latest["batchTimestamp"].get<std::string>() << ", watermark "
          << latest["batchWatermark"]["utc"].get<std::string>();
    }
    out << "\n";
    out << "source offsets (batch " << latest["batchId"].get<int64_t>() << "):\n";
    for (const Json& s : latest["sources"]) {
      out << "  source " << s["source"].get<int64_t>() << ": "
          << (s["offset"].is_null()     ? std::string("- (no offset yet)")
              : s["offset"].is_string() ? s["offset"].get<std::string>()
                                        : s["offset"].dump())
          << "\n";
    }
    if (latest.contains("conf")) {
      out << "persisted conf:\n";
      for (const auto& [k, v] : latest["conf"].items()) {
        out << "  " << k << " = " << v.get<std::string>() << "\n";
      }
    }
  }
  const Json& ops = r["stateOperators"];
  if (ops.empty()) {
    out << "state operators:      none\n";
    return;
  }
  out << "state operators (committed state version " << r["committedStateVersion"].get<int64_t>()
      << "):\n";
  for (const Json& op : ops) {
    out << "  operator " << op["operatorId"].get<int64_t>() << " '"
        << op["operatorName"].get<std::string>() << "', " << op["bytes"].get<int64_t>()
        << " bytes\n";
    for (const Json& store : op["stores"]) {
      out << "    store '" << store["storeName"].get<std::string>() << "', "
          << store["numPartitions"].get<int64_t>() << " partitions\n";
      for (const char* part : {"keySchema", "valueSchema"}) {
        out << "      " << (part[0] == 'k' ? "key:  " : "value:");
        bool first = true;
        for (const Json& f : store[part]) {
          out << (first ? " " : ", ") << f["name"].get<std::string>() << " "
              << f["type"].get<std::string>();
          first = false;
        }
        out << (first ? " (none)\n" : "\n");
      }
      for (const Json& p : store["partitions"]) {
        out << "      partition " << p["partition"].get<int64_t>() << ": ";
        if (p["files"].get<int64_t>() == 0) {
          out << "no files\n";
          continue;
        }
        out << "versions " << p["oldestVersion"].get<int64_t>() << ".."
            << p["latestVersion"].get<int64_t>() << ", latest snapshot ";
        if (p["latestSnapshotVersion"].get<int64_t>() == 0) {
          out << "none";
        } else {
          out << p["latestSnapshotVersion"].get<int64_t>();
        }
        out << ", " << p["files"].get<int64_t>() << " files, " << p["bytes"].get<int64_t>()
            << " bytes\n";
      }
    }
  }
}

int RunCheckpointInspect(const CheckpointCommandOptions& options, std::ostream& out,
                         std::ostream& err) {
  Result<Json> report = InspectCheckpoint(fs::PathFileSystem(), options.checkpoint);
  if (!report.ok()) {
    err << "Error: " << report.status().ToString() << "\n";
    return 1;
  }
  if (options.json) {
    out << report->dump(2) << "\n";
  } else {
    PrintCheckpointReport(*report, out);
  }
  return 0;
}

int RunStateDump(const CheckpointCommandOptions& options, std::ostream& out, std::ostream& err) {
  Result<std::vector<sql::OperatorState>> ops =
      sql::ReadCommittedState(fs::PathFileSystem(), options.checkpoint, options.operator_id,
                              "checkpoint " + options.checkpoint);
  if (!ops.ok()) {
    err << "Error: " << ops.status().ToString() << "\n";
    return 1;
  }
  for (const sql::OperatorState& op : *ops) {
    if (options.json) {
      PrintBatch(op.rows, OutputFormat::kJson, out);
      continue;
    }
    out << "operator " << op.metadata.operator_id << " '" << op.metadata.operator_name
        << "': " << op.rows.num_rows() << " rows, state version " << op.version;
    if (op.version == 0) {
      out << " (no batch committed yet)";
    } else {
      out << " (after batch " << op.version - 1 << ")";
    }
    out << "\n";
    if (op.rows.num_rows() > 0) {
      PrintBatch(op.rows, OutputFormat::kTable, out);
      out << "\n";
    }
  }
  return 0;
}

}  // namespace sluice::cli
