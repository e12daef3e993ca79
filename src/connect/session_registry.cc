#include "connect/session_registry.h"

#include <charconv>

#include "common/uuid.h"
#include "delta/write_util.h"

namespace sluice::connect {

namespace {

// Spark's defaults of the confs the PySpark client reads (Spark 4.2).
const std::map<std::string, std::string>& Defaults() {
  static const std::map<std::string, std::string> kDefaults = {
      {"spark.sql.session.timeZone", "UTC"},
      {"spark.sql.ansi.enabled", "true"},
      {"spark.sql.execution.arrow.maxRecordsPerBatch", "10000"},
      {"spark.sql.execution.arrow.pyspark.enabled", "false"},
      {"spark.sql.execution.arrow.pyspark.selfDestruct.enabled", "false"},
      {"spark.sql.execution.pandas.structHandlingMode", "legacy"},
      {"spark.sql.execution.pandas.convertToArrowArraySafely", "false"},
      {"spark.sql.execution.pyspark.binaryAsBytes", "true"},
      // Spark's is 1 MiB; above it the client sends its rows as an artifact, which Sluice does
      // not serve yet, so larger local data comes inline (gRPC takes 128 MiB: connect_server.cc).
      {"spark.sql.session.localRelationCacheThreshold", "67108864"},
      {"spark.sql.session.localRelationSizeLimit", "3221225472"},
      {"spark.sql.session.localRelationChunkSizeRows", "10000"},
      {"spark.sql.session.localRelationChunkSizeBytes", "16777216"},
      {"spark.sql.session.localRelationBatchOfChunksSizeBytes", "1073741824"},
      {"spark.sql.execution.pandas.inferPandasDictAsMap", "false"},
      {"spark.sql.execution.arrow.useLargeVarTypes", "false"},
      {"spark.sql.timestampType", "TIMESTAMP_LTZ"},
      {"spark.sql.pyspark.inferNestedDictAsStruct.enabled", "false"},
      {"spark.sql.pyspark.legacy.inferArrayTypeFromFirstElement.enabled", "false"},
      {"spark.sql.pyspark.legacy.inferMapTypeFromFirstPair.enabled", "false"},
      {"spark.sql.repl.eagerEval.enabled", "false"},
      {"spark.sql.repl.eagerEval.maxNumRows", "20"},
      {"spark.sql.repl.eagerEval.truncate", "20"},
      {"spark.sql.shuffle.partitions", "200"},
      {"spark.sql.caseSensitive", "false"},
  };
  return kDefaults;
}

bool IsUtc(const std::string& zone) {
  return zone == "UTC" || zone == "Etc/UTC" || zone == "GMT" || zone == "Etc/GMT" || zone == "Z" ||
         zone == "+00:00" || zone == "UTC+00:00";
}

}  // namespace

std::optional<std::string> ConnectSession::GetConf(const std::string& key) const {
  auto it = confs.find(key);
  if (it != confs.end()) return it->second;
  auto d = Defaults().find(key);
  if (d != Defaults().end()) return d->second;
  return std::nullopt;
}

Status ConnectSession::SetConf(const std::string& key, const std::string& value) {
  if (key == "spark.sql.session.timeZone" && !IsUtc(value)) {
    return Status::NotSupported("spark.sql.session.timeZone = '" + value +
                                "': Sluice computes in UTC only for now");
  }
  confs[key] = value;
  return Status::OK();
}

Result<std::optional<delta::SetTransaction>> ConnectSession::IdempotentTxn() const {
  auto app = confs.find(kTxnAppIdConf);
  auto version = confs.find(kTxnVersionConf);
  if (app == confs.end() && version == confs.end()) return std::optional<delta::SetTransaction>();
  if (app == confs.end() || version == confs.end()) {
    return Status::InvalidArgument(
        "[DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS] Invalid options for idempotent Dataframe "
        "writes: Both spark.databricks.delta.write.txnAppId and "
        "spark.databricks.delta.write.txnVersion must be specified for idempotent Delta writes");
  }
  const std::string& text = version->second;
  int64_t v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) {
    return Status::InvalidArgument(
        "[DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS] Invalid options for idempotent Dataframe "
        "writes: spark.databricks.delta.write.txnVersion must be a non-negative integer, got '" +
        text + "'");
  }
  return std::optional<delta::SetTransaction>(
      delta::SetTransaction{app->second, v, delta::NowMillis()});
}

SessionRegistry::SessionRegistry(std::string warehouse) : warehouse_(std::move(warehouse)) {}

Result<std::shared_ptr<ConnectSession>> SessionRegistry::GetOrCreate(
    const std::string& session_id) {
  if (!IsCanonicalUuid(session_id)) {
    return Status::InvalidArgument("[INVALID_HANDLE.FORMAT] the session id '" + session_id +
                                   "' is not a UUID");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(session_id);
  if (it != sessions_.end()) return it->second;
  sql::SessionOptions options;
  options.warehouse = warehouse_;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<sql::Session> sql, sql::Session::Open(options));
  auto session = std::make_shared<ConnectSession>();
  session->session_id = session_id;
  session->server_side_session_id = NewUuidV4();
  session->sql = std::move(sql);
  sessions_[session_id] = session;
  return session;
}

void SessionRegistry::Release(const std::string& session_id) {
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase(session_id);
}

size_t SessionRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

}  // namespace sluice::connect
