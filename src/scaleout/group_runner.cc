#include "scaleout/group_runner.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "fs/routing_file_system.h"
#include "scaleout/group_membership.h"
#include "scaleout/group_query.h"
#include "scaleout/task_layout.h"
#include "sql/pipeline_graph.h"
#include "sql/session.h"
#include "sql/streaming_table_catalog.h"
#include "sql/table_catalog.h"
#include "stream/checkpoint_metadata.h"
#include "stream/persisted_conf.h"

namespace sluice::scaleout {
namespace {

volatile std::sig_atomic_t g_stop_requested = 0;

extern "C" void HandleGroupStopSignal(int) { g_stop_requested = 1; }

constexpr int kPollMs = 100;
constexpr int kMaxConsecutiveFailures = 10;
constexpr int64_t kFirstBackoffMs = 500;
constexpr int64_t kMaxBackoffMs = 5000;

std::string JoinPartitions(const std::vector<int32_t>& ps, const std::string& topic) {
  std::string out;
  for (int32_t p : ps) out += (out.empty() ? "" : ", ") + topic + "-" + std::to_string(p);
  return out;
}

// The checks of the pipeline for group mode; the streaming table's node on success.
Result<const sql::PipelineNode*> CheckGraph(const sql::PipelineGraph& graph) {
  const sql::PipelineNode* table = nullptr;
  for (const sql::PipelineNode& n : graph.nodes) {
    if (n.kind == sql::PipelineNode::Kind::kSetting) continue;
    if (n.kind != sql::PipelineNode::Kind::kStreamingTable || !n.has_query || table != nullptr) {
      return Status::NotSupported(
          n.Place() +
          ": group mode (--group) runs one streaming table defined by a query (and "
          "SET statements); the " +
          std::string(sql::PipelineNodeKindName(n.kind)) + " " + n.name +
          " is not supported in group mode yet (docs/scale-out.md \"What group mode runs and what "
          "it refuses\")");
    }
    table = &n;
  }
  if (table == nullptr) {
    return Status::InvalidArgument("group mode (--group): the pipeline defines no streaming table");
  }
  return table;
}

// One process's tasks, driven by the membership's events (on the main thread) and the loop.
class GroupProcess final : public GroupListener {
 public:
  GroupProcess(const GroupQuery* query, std::string root, std::string query_id, std::string group,
               std::ostream& out, std::ostream& err)
      : query_(query),
        root_(std::move(root)),
        query_id_(std::move(query_id)),
        group_(std::move(group)),
        out_(out),
        err_(err) {}

  void OnAssigned(const std::vector<int32_t>& partitions) override {
    for (int32_t p : partitions) {
      Task& t = tasks_[p];
      t.start_at_ms = MonotonicMs();
    }
    Log(out_, "group " + group_ + ": assigned " + JoinPartitions(partitions, query_->topic()) +
                  " (owned now: " + OwnedText() + ")");
  }

  void OnRevoked(const std::vector<int32_t>& partitions, bool lost) override {
    Log(out_, "group " + group_ + ": " + (lost ? "lost " : "revoking ") +
                  JoinPartitions(partitions, query_->topic()) +
                  (lost ? " (this process was out of the group, e.g. paused past "
                          "session.timeout.ms: its tasks stop; a batch in flight is fenced by "
                          "its writes)"
                        : " (stopping its tasks at a batch boundary)"));
    for (int32_t p : partitions) {
      auto it = tasks_.find(p);
      if (it == tasks_.end()) continue;
      if (it->second.exec) {
        Status st = it->second.exec->Stop();
        std::optional<Status> ex = it->second.exec->Exception();
        if (ex && !ex->ok()) {
          Log(err_, "task " + TaskName(p) + " ended with: " + ex->ToString());
        } else if (!st.ok()) {
          Log(err_, "task " + TaskName(p) + " stop: " + st.ToString());
        }
      }
      tasks_.erase(it);
    }
    Log(out_, "group " + group_ + ": owned now: " + OwnedText());
  }

  // Starts what is due, reaps what ended. An error ends the run.
  Status Step() {
    const int64_t now = MonotonicMs();
    for (auto& [p, t] : tasks_) {
      if (t.exec && !t.exec->IsActive()) {
        std::optional<Status> ex = t.exec->Exception();
        (void)t.exec->Stop();  // joins; releases the task's checkpoint
        t.exec.reset();
        Status failure = ex && !ex->ok() ? *ex
                                         : Status::Internal(
                                               "the task ended by itself although "
                                               "its trigger is continuous");
        SLUICE_RETURN_NOT_OK(OnFailure(p, t, failure, now));
        continue;
      }
      if (!t.exec && t.start_at_ms && now >= *t.start_at_ms) {
        t.start_at_ms.reset();
        Result<std::unique_ptr<stream::MicroBatchExecution>> exec = query_->StartTask(
            p, query_id_, [this](int32_t partition, const stream::StreamingQueryProgress& pr) {
              OnProgress(partition, pr);
            });
        if (!exec.ok() && IsHeldByAnother(exec.status())) {
          // The previous owner (a zombie, or one still stopping the task) holds the task's
          // checkpoint: wait for it without counting a failure; the group decides who owns p.
          if (t.held_waits++ % 30 == 0) {
            Log(err_, "task " + TaskName(p) + " waits for its checkpoint: " +
                          exec.status().ToString() + " (retrying every second while owned)");
          }
          t.start_at_ms = now + 1000;
          continue;
        }
        t.held_waits = 0;
        if (!exec.ok()) {
          SLUICE_RETURN_NOT_OK(OnFailure(p, t, exec.status(), now));
          continue;
        }
        t.exec = std::move(exec).ValueOrDie();
        Log(out_, "started task " + TaskName(p) + " on " + TaskCheckpointRoot(root_, p) +
                      " (next batch " + t.exec->NextBatchId().ToString() + ")");
      }
    }
    return Status::OK();
  }

  void StopAll() {
    for (auto& [p, t] : tasks_) {
      if (t.exec) (void)t.exec->Stop();
    }
    tasks_.clear();
  }

 private:
  struct Task {
    std::unique_ptr<stream::MicroBatchExecution> exec;
    std::optional<int64_t> start_at_ms;  // when to (re)start it; nullopt: running or waiting
    int failures = 0;                    // in a row, without a batch committed in between
    int held_waits = 0;                  // starts refused because another run holds the task
  };

  // The task's checkpoint lock is held by another run (stream/checkpoint_lock.h's Conflict).
  static bool IsHeldByAnother(const Status& st) {
    return st.IsConflict() && st.message().find("is in use by another query") != std::string::npos;
  }

  std::string TaskName(int32_t p) const { return query_->name() + "[" + std::to_string(p) + "]"; }

  std::string OwnedText() const {
    std::string out;
    for (const auto& [p, t] : tasks_) out += (out.empty() ? "" : ", ") + std::to_string(p);
    return out.empty() ? "none" : out;
  }

  Status OnFailure(int32_t p, Task& t, const Status& st, int64_t now) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (committed_since_failure_[p]) t.failures = 0;
      committed_since_failure_[p] = false;
    }
    ++t.failures;
    if (t.failures >= kMaxConsecutiveFailures) {
      return st.WithContext("task " + TaskName(p) + " failed " + std::to_string(t.failures) +
                            " times in a row");
    }
    const int64_t delay = std::min(kMaxBackoffMs, kFirstBackoffMs << std::min(t.failures - 1, 10));
    Log(err_, "task " + TaskName(p) + " failed: " + st.ToString() + "; restarting it from its " +
                  "checkpoint in " + std::to_string(delay) + " ms (failure " +
                  std::to_string(t.failures) + " of " + std::to_string(kMaxConsecutiveFailures) +
                  ")");
    t.start_at_ms = now + delay;
    return Status::OK();
  }

  void OnProgress(int32_t p, const stream::StreamingQueryProgress& pr) {
    std::lock_guard<std::mutex> lock(mu_);
    committed_since_failure_[p] = true;
    out_ << std::left << std::setw(20) << TaskName(p) << " batch " << std::setw(5) << pr.batch_id
         << " " << std::right << std::setw(9) << pr.NumInputRows() << " rows " << std::setw(12)
         << std::fixed << std::setprecision(1) << pr.ProcessedRowsPerSecond() << " rows/s "
         << std::setw(7) << pr.batch_duration << " ms" << std::endl;
  }

  void Log(std::ostream& stream, const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    stream << line << std::endl;
  }

  const GroupQuery* query_;
  const std::string root_;
  const std::string query_id_;
  const std::string group_;
  std::ostream& out_;
  std::ostream& err_;
  std::map<int32_t, Task> tasks_;  // main thread only
  std::mutex mu_;                  // out_, err_, committed_since_failure_
  std::map<int32_t, bool> committed_since_failure_;
};

Status Run(const GroupRunOptions& options, std::ostream& out, std::ostream& err) {
  if (options.group.empty()) return Status::InvalidArgument("--group needs a group name");
  std::error_code ec;
  if (std::filesystem::is_directory(options.file, ec)) {
    return Status::NotSupported("group mode (--group) takes one pipeline file, not the directory " +
                                options.file + " (not supported yet)");
  }
  std::ifstream in(options.file);
  if (!in) return Status::IOError("cannot read " + options.file);
  std::stringstream text;
  text << in.rdbuf();
  std::shared_ptr<fs::FileSystem> fs = fs::PathFileSystem();
  const std::string warehouse = options.warehouse;
  auto exists = [fs, warehouse](const std::string& name) {
    sql::TableCatalog tables(fs, warehouse);
    Result<bool> table = tables.Exists(sql::TableName{name, false});
    if (table.ok() && *table) return true;
    sql::StreamingTableCatalog defs(fs, warehouse);
    Result<std::optional<sql::StreamingDefinition>> def =
        defs.Find(sql::StreamingDefinition::Kind::kTable, name);
    return def.ok() && def->has_value();
  };
  SLUICE_ASSIGN_OR_RETURN(sql::PipelineGraph graph,
                          sql::BuildPipelineGraph({{options.file, text.str()}}, exists, false));
  SLUICE_ASSIGN_OR_RETURN(const sql::PipelineNode* node, CheckGraph(graph));

  sql::SessionOptions session_options;
  session_options.warehouse = options.warehouse;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<sql::Session> session,
                          sql::Session::Open(session_options));
  for (const sql::PipelineNode& n : graph.nodes) {
    SLUICE_RETURN_NOT_OK_CTX(session->Execute(n.text).status(), n.Place());
  }
  sql::StreamingTableCatalog& catalog = session->streaming().catalog();
  SLUICE_ASSIGN_OR_RETURN(std::optional<sql::StreamingDefinition> def,
                          catalog.Find(sql::StreamingDefinition::Kind::kTable, node->name));
  if (!def) return Status::Internal("the streaming table " + node->name + " was not defined");
  sql::TableCatalog tables(fs, session->warehouse());
  SLUICE_ASSIGN_OR_RETURN(std::string table_path,
                          tables.Resolve(sql::TableName{def->target, false}));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> engine, engine::Engine::Open());

  GroupQueryOptions qo;
  qo.engine = engine.get();
  qo.fs = fs;
  qo.checkpoint_root = catalog.CheckpointOf(*def);
  qo.table_path = table_path;
  qo.is_table = [&tables](const std::string& name) {
    Result<bool> e = tables.Exists(sql::TableName{name, false});
    return e.ok() && *e;
  };
  // The persisted conf as the single-process run records it (sql/streaming_table_manager.cc).
  qo.session_conf[std::string(stream::kConfShufflePartitions)] =
      session->settings().GetString("shufflePartitions");
  qo.session_conf[std::string(stream::kConfMultipleWatermarkPolicy)] =
      session->settings().GetString("multipleWatermarkPolicy");
  qo.no_data_batches = session->settings().GetBoolean("noDataBatches");
  qo.watermark_idle_timeout_ms = session->settings().GetInteger("group.watermarkIdleTimeoutMs");
  const std::string root = qo.checkpoint_root;
  SLUICE_ASSIGN_OR_RETURN_CTX(std::unique_ptr<GroupQuery> query,
                              GroupQuery::Prepare(*def, std::move(qo)), node->Place());

  // The checkpoint: not one of a run without a group, not another group's or topic's.
  SLUICE_ASSIGN_OR_RETURN(bool single, HasSingleProcessBatches(*fs, root));
  if (single) {
    return Status::NotSupported(
        "the checkpoint " + root + " of " + def->name +
        " was run without --group (it has offsets/): its tasks would read the topic again from "
        "startingOffsets and write the data twice; use a new streaming table (or drop this one) "
        "to run it in group mode");
  }
  SLUICE_ASSIGN_OR_RETURN(stream::StreamMetadata metadata,
                          stream::LoadOrCreateStreamMetadata(*fs, root));
  SLUICE_RETURN_NOT_OK(ClaimGroupRecord(*fs, root, GroupRecord{options.group, query->topic()}));

  GroupProcess process(query.get(), root, metadata.id, options.group, out, err);
  GroupMembershipOptions mo;
  mo.config = query->kafka_config();
  mo.group_id = options.group;
  mo.group_instance_id = options.group_instance_id;
  mo.topic = query->topic();
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<GroupMembership> membership,
                          GroupMembership::Open(mo, &process));
  if (query->shares_watermark()) {
    // The global watermark is taken over every partition of the topic (global_watermark.h).
    Result<int32_t> n = Status::Internal("not asked");
    for (int attempt = 0; attempt < 12 && !g_stop_requested; ++attempt) {
      n = membership->TopicPartitionCount(5000);
      if (n.ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    SLUICE_RETURN_NOT_OK_CTX(n.status(), "group mode: the partitions the global watermark spans");
    query->SetTopicPartitions(*n);
  }
  out << "group " << options.group << ": query id " << metadata.id << ", table " << def->name
      << ", topic " << query->topic() << ", checkpoint " << root << "; joining"
      << (options.group_instance_id ? " as static member " + *options.group_instance_id : "")
      << std::endl;
  if (query->partitioning()) {
    out << "group " << options.group << ": stateful, keyed by " << query->partitioning()->column
        << " (partitionedBy: each batch checks the records' keys)"
        << (query->shares_watermark() ? "; global watermark over the topic's partitions" : "")
        << std::endl;
  }
  Status st;
  while (!g_stop_requested) {
    st = membership->Poll(kPollMs);
    if (!st.ok()) break;
    st = process.Step();
    if (!st.ok()) break;
  }
  // Leaving the group revokes every partition: the tasks stop at a batch boundary first.
  Status closed = membership->Close();
  process.StopAll();
  SLUICE_RETURN_NOT_OK(st);
  if (!closed.ok()) err << "Warning: " << closed.ToString() << std::endl;
  out << "stopped" << std::endl;
  return Status::OK();
}

}  // namespace

int RunGroupPipeline(const GroupRunOptions& options, std::ostream& out, std::ostream& err) {
  g_stop_requested = 0;
  auto old_int = std::signal(SIGINT, HandleGroupStopSignal);
  auto old_term = std::signal(SIGTERM, HandleGroupStopSignal);
  Status st = Run(options, out, err);
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  if (!st.ok()) {
    std::stringstream lines(st.ToString());
    for (std::string line; std::getline(lines, line);) err << "Error: " << line << "\n";
    return 1;
  }
  return 0;
}

}  // namespace sluice::scaleout
