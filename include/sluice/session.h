// Session: the entry point of the C++ API (Spark's SparkSession).
//
//   SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<sluice::Session> session,
//                           sluice::Session::Open({.warehouse = "/data/wh"}));
//   sluice::DataFrame top = session->Sql("SELECT * FROM orders WHERE amount > 100");
//   SLUICE_ASSIGN_OR_RETURN(sluice::Rows rows, top.Collect());
//
// A session owns one embedded engine (DuckDB), the warehouse directory where table names
// resolve (<warehouse>/<name>, or the LOCATION recorded by SQL's CREATE TABLE ... LOCATION), the
// session's memory streams and memory sinks, its listeners and its running queries.
//
// Ownership: DataFrames and StreamingQuery objects share the session's engine, so they stay
// usable after the Session is destroyed; destroying the Session stops its running queries.
// Thread safety: every method may be called from several threads at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sluice/dataframe.h"
#include "sluice/result.h"
#include "sluice/rows.h"
#include "sluice/streaming.h"

namespace sluice {

struct SessionOptions {
  // Where table names resolve; created when missing. Relative paths resolve against the
  // process's working directory.
  std::string warehouse = "warehouse";
  // Engine worker threads. 1 is fastest for micro-batches of a few thousand rows.
  int engine_threads = 1;
  // Engine memory limit ("4GB"); empty: the engine's default (80% of RAM).
  std::string memory_limit;
  // Run a micro-batch without new data when a stateful query's watermark moved, so that closed
  // windows are emitted and expired state is evicted at once (Spark's
  // spark.sql.streaming.noDataMicroBatches.enabled). False: they wait for the next batch with
  // data. For the queries this session starts.
  bool no_data_batches = true;
};

// A stream whose rows a program adds (Spark's MemoryStream), for tests and demos. From
// Session::CreateMemoryStream; read with ReadStream().Format("memory").Load(name) or ToDF().
// Each AddData call is one unit of input (a restarted query re-reads the data held here, which
// lives as long as the object). Thread safety: AddData may be called from any thread.
class MemoryStream {
 public:
  ~MemoryStream();
  // Appends the rows of a batch frame; columns are taken by position and cast to the stream's
  // types. Returns the stream's new offset (the number of AddData calls so far).
  Result<int64_t> AddData(const DataFrame& rows);
  // AddData(session.Sql(query)), e.g. AddSql("VALUES (1, 'a'), (2, 'b')").
  Result<int64_t> AddSql(const std::string& query);
  // A streaming DataFrame over this stream.
  DataFrame ToDF() const;
  const std::string& name() const;
  const std::vector<Column>& schema() const;

 private:
  friend class Session;
  struct Impl;
  explicit MemoryStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Session {
 public:
  // Opens the engine and the warehouse (creating its directory).
  static Result<std::unique_ptr<Session>> Open(const SessionOptions& options = {});
  // Stops every running query of the session (at a batch boundary).
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // A batch DataFrame of a query in the engine's SQL (DuckDB's dialect). Warehouse Delta tables
  // and the session's memory sinks are readable by their names (their latest data when the frame
  // runs). Errors are the frame's status().
  DataFrame Sql(const std::string& query);
  // A batch DataFrame of the warehouse Delta table `name`, or of the memory sink of the query
  // named `name`.
  DataFrame Table(const std::string& name);
  // A batch DataFrame of the Delta table at `path`.
  DataFrame ReadDelta(const std::string& path);
  // Reads streams: ReadStream().Format(...).Option(...).Load(...).
  DataStreamReader ReadStream();

  // A memory stream with columns "id BIGINT, name STRING". Names are unique in the session
  // (AlreadyExists).
  Result<std::shared_ptr<MemoryStream>> CreateMemoryStream(const std::string& schema_ddl,
                                                           const std::string& name = "memory");

  // Listeners receive the events of every query of this session started after they are added.
  void AddListener(std::shared_ptr<StreamingQueryListener> listener);
  void RemoveListener(const StreamingQueryListener* listener);
  // Waits until every listener event posted so far was delivered; false on timeout. For tests.
  bool WaitForListenerEvents(std::chrono::milliseconds timeout);

  // The session's queries that are still active.
  std::vector<std::shared_ptr<StreamingQuery>> ActiveQueries() const;
  // Stops every active query (each at a batch boundary); the first error of a Stop, if any.
  Status StopAll();

  const std::string& warehouse() const;
  // The directory of the warehouse table `name` (whether or not it exists). InvalidArgument for
  // names that cannot be table names.
  Result<std::string> TablePath(const std::string& name) const;

 private:
  friend struct api::FrameAccess;
  explicit Session(std::shared_ptr<api::SessionState> state);
  std::shared_ptr<api::SessionState> state_;
};

}  // namespace sluice
