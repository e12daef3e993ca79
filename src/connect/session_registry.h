// SessionRegistry: the Spark Connect sessions of one server, by the client's session_id.
//
// Each session owns a sql::Session over the server's warehouse (its own engine: temporary state
// and settings of one client never reach another), the session's Spark confs (Config RPC) and
// its temporary views (createOrReplaceTempView: plan_translator.h).
// A session is created by the first request that names it and lives until ReleaseSession or the
// server's end. The server-side session id is a fresh UUID per session, sent in every response
// (Spark Connect clients check that it does not change).
//
// Confs: every key may be set; reading a key never set gives Spark's default for the confs the
// PySpark client reads (the table in session_registry.cc), and SQL_CONF_NOT_FOUND otherwise.
// spark.sql.session.timeZone accepts only UTC spellings: the engine computes in UTC, and another
// zone would silently shift every timestamp the client shows.
//
// Thread safety: the registry is thread-safe. A ConnectSession's `mu` serializes the requests
// of one session (sql::Session is used by one thread at a time); hold it for every use of `sql`,
// `confs`, `temp_views`, `streams` (the pointer; SessionStreams has its own lock) and
// `write_engine`.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/result.h"
#include "connect/foreach_batch.h"
#include "connect/plan_translator.h"
#include "connect/stream_commands.h"
#include "sql/session.h"

namespace sluice::connect {

struct ConnectSession {
  std::string session_id;
  std::string server_side_session_id;
  std::mutex mu;
  std::unique_ptr<sql::Session> sql;
  std::map<std::string, std::string> confs;  // set by the client
  TempViews temp_views;                      // createOrReplaceTempView
  std::unique_ptr<SessionStreams> streams;   // writeStream queries (opened on first use)
  // foreachBatch micro-batches by relation id (thread-safe itself: the query threads add them).
  std::shared_ptr<CachedRelations> cached = std::make_shared<CachedRelations>();
  std::unique_ptr<engine::Engine> write_engine;  // df.write's Delta writer (opened on first use)

  // The conf's value: set, else Spark's default; nullopt when neither.
  std::optional<std::string> GetConf(const std::string& key) const;
  // Sets a conf; InvalidArgument / NotSupported for values Sluice cannot honour.
  Status SetConf(const std::string& key, const std::string& value);
  // Delta's idempotent writes by SQL conf, as Delta 4.4 reads them for MERGE, UPDATE, DELETE,
  // INSERT and df.write: spark.databricks.delta.write.txnAppId and .txnVersion (a non-negative
  // integer). nullopt when neither is set; InvalidArgument with Delta's
  // DELTA_INVALID_IDEMPOTENT_WRITES_OPTIONS when only one is, or the version is not a number.
  Result<std::optional<delta::SetTransaction>> IdempotentTxn() const;
};

inline constexpr char kTxnAppIdConf[] = "spark.databricks.delta.write.txnAppId";
inline constexpr char kTxnVersionConf[] = "spark.databricks.delta.write.txnVersion";

class SessionRegistry {
 public:
  explicit SessionRegistry(std::string warehouse);

  // The session `session_id` (a UUID, as Spark requires: InvalidArgument otherwise), created on
  // first use.
  Result<std::shared_ptr<ConnectSession>> GetOrCreate(const std::string& session_id);
  // Forgets the session (its engine closes when the last request using it ends).
  void Release(const std::string& session_id);
  size_t size() const;

 private:
  std::string warehouse_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<ConnectSession>> sessions_;
};

}  // namespace sluice::connect
