#include "delta/checkpoint_writer.h"

#include <nlohmann/json.hpp>

#include "common/interval.h"
#include "common/strings.h"
#include "delta/log_segment.h"
#include "delta/values.h"

namespace sluice::delta {

namespace {

// The checkpoint schema, as a from_json structure (Delta column names and order).
constexpr char kStructure[] =
    R"j({"txn":{"appId":"VARCHAR","version":"BIGINT","lastUpdated":"BIGINT"},)j"
    R"j("add":{"path":"VARCHAR","partitionValues":"MAP(VARCHAR, VARCHAR)","size":"BIGINT",)j"
    R"j("modificationTime":"BIGINT","dataChange":"BOOLEAN","stats":"VARCHAR","tags":"MAP(VARCHAR, VARCHAR)",)j"
    R"j("deletionVector":{"storageType":"VARCHAR","pathOrInlineDv":"VARCHAR","offset":"INTEGER",)j"
    R"j("sizeInBytes":"INTEGER","cardinality":"BIGINT"}},)j"
    R"j("remove":{"path":"VARCHAR","deletionTimestamp":"BIGINT","dataChange":"BOOLEAN",)j"
    R"j("extendedFileMetadata":"BOOLEAN","partitionValues":"MAP(VARCHAR, VARCHAR)","size":"BIGINT",)j"
    R"j("deletionVector":{"storageType":"VARCHAR","pathOrInlineDv":"VARCHAR","offset":"INTEGER",)j"
    R"j("sizeInBytes":"INTEGER","cardinality":"BIGINT"}},)j"
    R"j("metaData":{"id":"VARCHAR","name":"VARCHAR","description":"VARCHAR",)j"
    R"j("format":{"provider":"VARCHAR","options":"MAP(VARCHAR, VARCHAR)"},"schemaString":"VARCHAR",)j"
    R"j("partitionColumns":["VARCHAR"],"configuration":"MAP(VARCHAR, VARCHAR)","createdTime":"BIGINT"},)j"
    R"j("protocol":{"minReaderVersion":"INTEGER","minWriterVersion":"INTEGER","readerFeatures":["VARCHAR"],)j"
    R"j("writerFeatures":["VARCHAR"]}})j";

Result<int64_t> DurationMs(const Metadata& metadata, const std::string& key, int64_t fallback) {
  auto v = metadata.Config(key);
  if (!v) return fallback;
  auto d = ParseDuration(*v);
  if (!d.ok()) return d.status().WithContext("table property " + key);
  return d->millis();
}

}  // namespace

Result<int64_t> CheckpointInterval(const Metadata& metadata) {
  auto v = metadata.Config("delta.checkpointInterval");
  if (!v) return kDefaultCheckpointInterval;
  char* end = nullptr;
  long long n = std::strtoll(v->c_str(), &end, 10);
  if (end == v->c_str() || *end != '\0' || n <= 0) {
    return Status::InvalidArgument(
        "table property delta.checkpointInterval must be a positive integer, got '" + *v + "'");
  }
  return static_cast<int64_t>(n);
}

Result<int64_t> DeletedFileRetentionMs(const Metadata& metadata) {
  return DurationMs(metadata, "delta.deletedFileRetentionDuration", kDefaultDeletedFileRetentionMs);
}

Result<int64_t> LogRetentionMs(const Metadata& metadata) {
  return DurationMs(metadata, "delta.logRetentionDuration", kDefaultLogRetentionMs);
}

bool ShouldCheckpoint(int64_t version, int64_t interval) {
  return version > 0 && interval > 0 && version % interval == 0;
}

Result<CheckpointInfo> WriteCheckpoint(engine::Connection* conn, fs::FileSystem* fs,
                                       const Snapshot& snapshot, int64_t now_ms) {
  const std::string log_dir = fs::JoinPath(snapshot.table_root, "_delta_log");
  const std::string path = fs::JoinPath(log_dir, CheckpointFileName(snapshot.version));
  const std::string ctx = "writing checkpoint " + path;
  SLUICE_ASSIGN_OR_RETURN_CTX(int64_t retention, DeletedFileRetentionMs(snapshot.metadata), ctx);

  CheckpointInfo info;
  info.version = snapshot.version.value();
  info.path = path;
  std::string lines;
  auto add_line = [&](const Action& a) {
    lines += SerializeAction(a);
    lines += '\n';
    ++info.num_actions;
  };
  add_line(snapshot.protocol);
  add_line(snapshot.metadata);
  for (const auto& [app, txn] : snapshot.transactions) add_line(txn);
  for (const AddFile& f : snapshot.files) {
    add_line(f);
    ++info.num_add_files;
  }
  for (const RemoveFile& r : snapshot.tombstones) {
    if (r.deletion_timestamp && *r.deletion_timestamp + retention <= now_ms) continue;  // expired
    add_line(r);
  }
  if (!lines.empty() && lines.back() == '\n') lines.pop_back();

  std::string temp = fs::TempPathFor(path);
  std::string sql =
      "COPY (SELECT j.txn AS txn, j.add AS add, j.remove AS remove, j.metaData AS metaData, "
      "j.protocol AS protocol FROM (SELECT from_json(line, " +
      QuoteLiteral(kStructure) + ") AS j FROM (SELECT unnest(string_split(" + QuoteLiteral(lines) +
      ", chr(10))) AS line))) TO " + QuoteLiteral(temp) + " (FORMAT parquet, COMPRESSION snappy)";
  SLUICE_RETURN_NOT_OK_CTX(fs->CreateDirectories(log_dir), ctx);
  Status st = conn->Execute(sql);
  if (!st.ok()) {
    (void)fs->DeleteFile(temp);
    return st.WithContext(ctx);
  }
  // The engine's COPY does not fsync: make the contents durable before the name is published
  // (a crash must not leave a named, torn checkpoint that _last_checkpoint points to).
  st = fs->SyncFile(temp);
  if (!st.ok()) {
    (void)fs->DeleteFile(temp);
    return st.WithContext(ctx);
  }
  st = fs->RenameNoReplace(temp, path);
  if (!st.ok()) {
    (void)fs->DeleteFile(temp);
    if (!st.IsAlreadyExists()) return st.WithContext(ctx);
    // Another writer checkpointed this version first; its file (and _last_checkpoint) stand.
    info.already_existed = true;
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(fs::FileInfo stat, fs->Stat(path), ctx);
  info.size_bytes = stat.size;
  if (info.already_existed) return info;

  nlohmann::ordered_json last = nlohmann::ordered_json::object();
  last["version"] = info.version;
  last["size"] = info.num_actions;
  last["sizeInBytes"] = info.size_bytes;
  last["numOfAddFiles"] = info.num_add_files;
  SLUICE_RETURN_NOT_OK_CTX(
      fs->AtomicReplace(fs::JoinPath(log_dir, "_last_checkpoint"), last.dump()),
      "writing _last_checkpoint of " + snapshot.table_root);
  return info;
}

}  // namespace sluice::delta
