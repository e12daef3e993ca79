#include "connect/foreach_batch.h"

#include <stdlib.h>

#include <filesystem>

#include "common/uuid.h"
#include "connect/python_worker.h"
#include "sluice/dataframe.h"

namespace sluice::connect {

namespace {

constexpr const char* kWorkerModule = "pyspark.sql.connect.streaming.worker.foreach_batch_worker";

// The last line of a Python traceback: the exception ("ValueError: boom").
std::string LastLine(const std::string& text) {
  size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

}  // namespace

void CachedRelations::Put(const std::string& id, std::string sql) {
  MutexLock lock(&mu_);
  sql_[id] = std::move(sql);
}

void CachedRelations::Remove(const std::string& id) {
  MutexLock lock(&mu_);
  sql_.erase(id);
}

std::optional<std::string> CachedRelations::Get(const std::string& id) const {
  MutexLock lock(&mu_);
  auto it = sql_.find(id);
  if (it == sql_.end()) return std::nullopt;
  return it->second;
}

std::string WorkerPython() {
  const char* py = getenv("PYSPARK_PYTHON");
  if (py != nullptr && *py != '\0') return py;
  const char* venv = getenv("VIRTUAL_ENV");
  if (venv != nullptr && *venv != '\0') {
    std::filesystem::path p = std::filesystem::path(venv) / "bin" / "python";
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return p.string();
  }
  return "python3";
}

ForeachBatchRunner::ForeachBatchRunner(ForeachBatchOptions options)
    : options_(std::move(options)) {}

ForeachBatchRunner::~ForeachBatchRunner() {
  Close();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

void ForeachBatchRunner::Close() {
  std::shared_ptr<PythonWorker> worker;
  {
    MutexLock lock(&mu_);
    closed_ = true;
    worker.swap(worker_);
  }
  // Killed now; reaped here, or by a Run still holding it when that returns.
  if (worker) worker->Kill();
}

Result<std::shared_ptr<PythonWorker>> ForeachBatchRunner::Worker() {
  {
    MutexLock lock(&mu_);
    if (closed_) return Status::Cancelled("foreachBatch: the query is stopping");
    if (worker_) return worker_;
  }
  if (options_.config.connect_url.empty()) {
    return Status::NotSupported(
        "Spark Connect: writeStream.foreachBatch needs the server's own address (a server "
        "started by `sluice connect`)");
  }
  PythonWorkerOptions wo;
  wo.argv = {options_.config.python.empty() ? WorkerPython() : options_.config.python, "-m",
             kWorkerModule};
  wo.env["SPARK_CONNECT_LOCAL_URL"] = options_.config.connect_url;
  wo.env["PYTHONUNBUFFERED"] = "1";
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<PythonWorker> started, PythonWorker::Start(wo));
  std::shared_ptr<PythonWorker> w(std::move(started));
  {
    MutexLock lock(&mu_);
    if (closed_) return Status::Cancelled("foreachBatch: the query is stopping");
    worker_ = w;
  }
  SLUICE_RETURN_NOT_OK(w->WriteString(options_.python_version));
  SLUICE_RETURN_NOT_OK(w->WriteString(options_.session_id));
  SLUICE_RETURN_NOT_OK(w->WriteBytes(options_.command));
  Status ready = w->ReadReply();
  if (!ready.ok()) {
    return Status::InvalidArgument("foreachBatch: the Python worker could not load the function: " +
                                   ready.message());
  }
  return w;
}

Status ForeachBatchRunner::Run(const sluice::DataFrame& batch, int64_t batch_id) {
  Result<std::shared_ptr<PythonWorker>> w = Worker();
  if (!w.ok()) {
    // A worker that did not start or load the function is gone for good: the next batch (after
    // a restart) starts a new one.
    MutexLock lock(&mu_);
    worker_.reset();
    return w.status();
  }
  if (dir_.empty()) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "sluice-foreach-batch-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      return Status::IOError("foreachBatch: cannot make a temporary directory in " +
                             std::filesystem::temp_directory_path().string());
    }
    dir_ = tmpl;
  }
  const std::string path =
      dir_ + "/batch-" + std::to_string(batch_id) + "-" + std::to_string(calls_++);
  SLUICE_RETURN_NOT_OK(batch.Write().Format("delta").Mode("overwrite").Save(path));
  const std::string relation_id = NewUuidV4();
  options_.cache->Put(relation_id, "SELECT * FROM delta.`" + path + "`");
  Status st = (*w)->WriteString(relation_id);
  if (st.ok()) st = (*w)->WriteLong(batch_id);
  if (st.ok()) st = (*w)->ReadReply();
  options_.cache->Remove(relation_id);
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (st.ok()) return st;
  {
    MutexLock lock(&mu_);
    worker_.reset();  // the worker exits after an error (and is killed when it did not)
    if (closed_)
      return Status::Cancelled("foreachBatch: the query stopped during batch " +
                               std::to_string(batch_id));
  }
  if (st.code() == StatusCode::kInternal) {  // the function raised: the traceback
    return Status::Internal(
        "[FOREACH_BATCH_USER_FUNCTION_ERROR] foreachBatch function failed at "
        "batch " +
        std::to_string(batch_id) + ": " + LastLine(st.message()) + "\n" + st.message());
  }
  return Status::IOError("foreachBatch at batch " + std::to_string(batch_id) + ": " + st.message());
}

}  // namespace sluice::connect
