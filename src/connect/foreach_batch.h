// writeStream.foreachBatch(fn) over Spark Connect (docs/pyspark.md, "foreachBatch"): the
// client sends fn pickled (WriteStreamOperationStart.foreach_batch.python_function); the server
// runs it in a Python worker process, PySpark's own
// `pyspark.sql.connect.streaming.worker.foreach_batch_worker` module, which connects back to the
// server as a client of the same Connect session.
//
// The worker protocol (python_worker.h framing), as PySpark's module reads it:
//   server -> worker   the client's Python version ("3.11"; the worker refuses another one),
//                      the session id, the pickled function (length + bytes)
//   worker -> server   0 (ready)
//   per micro-batch:   server -> worker: the id of a cached relation holding the batch, the
//                      batch id (a long); worker -> server: 0, or -2 and the traceback
// Inside fn the batch DataFrame is a CachedRemoteRelation of that id, which the plan translator
// reads through CachedRelations below.
//
// The batch's rows are written to a temporary Delta table (a private directory of the runner,
// removed after the call) so that every statement of the session can read them, in SQL too
// (`df.createOrReplaceTempView("b")` + `spark.sql("MERGE INTO t USING b ...")`), as often as fn
// reads them, with the same rows each time.
//
// The worker starts at the first batch (so its errors are the query's), with the Python chosen
// by WorkerPython(); a failed batch (fn raised, or the worker died) fails the query with the
// Python traceback. Close() kills the worker (the query's stop, its end, the session's end).
//
// Thread safety: Run is called by the query's thread; Close may be called from any thread,
// also while Run waits (Run then returns an error). CachedRelations is thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/mutex.h"
#include "common/result.h"

namespace sluice {
class DataFrame;
}

namespace sluice::connect {

class PythonWorker;

// The relations a session keeps by id (CachedRemoteRelation): id -> the SQL that reads them.
class CachedRelations {
 public:
  void Put(const std::string& id, std::string sql);
  void Remove(const std::string& id);
  std::optional<std::string> Get(const std::string& id) const;

 private:
  mutable Mutex mu_;
  std::map<std::string, std::string> sql_ SLUICE_GUARDED_BY(mu_);
};

// The server's side of the workers: the URL they connect back to, and their Python.
struct PythonWorkerConfig {
  std::string connect_url;  // "sc://127.0.0.1:15002/"; empty: foreachBatch is refused
  std::string python;       // empty: WorkerPython()
};

// $PYSPARK_PYTHON when set (Spark's variable for its workers), else $VIRTUAL_ENV/bin/python when
// that exists (the server started from the client's venv), else "python3".
std::string WorkerPython();

struct ForeachBatchOptions {
  PythonWorkerConfig config;
  std::string session_id;
  std::string python_version;  // PythonUDF.python_ver: the client's "major.minor"
  std::string command;         // PythonUDF.command: the pickled function
  std::shared_ptr<CachedRelations> cache;
};

class ForeachBatchRunner {
 public:
  explicit ForeachBatchRunner(ForeachBatchOptions options);
  ~ForeachBatchRunner();
  ForeachBatchRunner(const ForeachBatchRunner&) = delete;
  ForeachBatchRunner& operator=(const ForeachBatchRunner&) = delete;

  // Calls fn on one micro-batch and waits for it. The error of a failed call says so and carries
  // the Python traceback ("foreachBatch function failed at batch 3: Traceback ... ValueError:
  // boom").
  Status Run(const sluice::DataFrame& batch, int64_t batch_id);
  // Kills the worker; later Runs fail with Cancelled. Idempotent.
  void Close();

 private:
  Result<std::shared_ptr<PythonWorker>> Worker();

  const ForeachBatchOptions options_;
  Mutex mu_;
  bool closed_ SLUICE_GUARDED_BY(mu_) = false;
  std::shared_ptr<PythonWorker> worker_ SLUICE_GUARDED_BY(mu_);
  std::string dir_;  // the batches' temporary Delta tables (the query thread's only)
  int64_t calls_ = 0;
};

}  // namespace sluice::connect
