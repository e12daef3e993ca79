// GroupQuery: a streaming table's query checked for group mode and run as tasks, one per input
// partition (docs/scale-out.md). It runs a query over one Kafka topic read by `subscribe`, into
// the table's Delta table, on a continuous trigger: stateless, or stateful (an aggregation or a
// deduplication, APPEND mode) keyed by the source's declared partitionedBy column, whose tasks
// check each batch's keys (partition_key_check.h), keep their state under <root>/tasks/<p>/state
// and share a global watermark (global_watermark.h). Prepare refuses anything else with the limit
// named. StartTask runs the task of one partition: an ordinary
// stream::MicroBatchExecution on <root>/tasks/<p> (task_layout.h) whose Kafka source reads only
// that partition (assign) and whose Delta sink commits with txn appId "<query id>-task-<p>".
//
// Ownership: borrows the engine and file system, which outlive it and every task it starts.
// Thread safety: StartTask may be called from one thread at a time; the executions it returns
// run on their own threads.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/result.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "plan/planner.h"
#include "scaleout/global_watermark.h"
#include "scaleout/state_partitioning.h"
#include "sql/streaming_table_catalog.h"
#include "stream/micro_batch_execution.h"

namespace sluice::scaleout {

struct GroupQueryOptions {
  engine::Engine* engine = nullptr;    // required
  std::shared_ptr<fs::FileSystem> fs;  // required: the warehouse's and checkpoints' file system
  std::string checkpoint_root;         // required: the query's root (tasks/ is below it)
  std::string table_path;              // required: the Delta table the query writes
  // Whether a plain name in the query is a Delta table of the warehouse (TableCatalog::Exists);
  // required: a static table in the query is refused.
  std::function<bool(const std::string&)> is_table;
  stream::ConfMap session_conf = stream::DefaultPersistedConf();
  bool no_data_batches = true;
  // sluice.group.watermarkIdleTimeoutMs (global_watermark.h); 0: off.
  int64_t watermark_idle_timeout_ms = 0;
};

class GroupQuery {
 public:
  // Checks `def` (refusals: NotSupported naming the limit, docs/scale-out.md "What group mode
  // runs and what it refuses") and plans it once to know it is stateless.
  static Result<std::unique_ptr<GroupQuery>> Prepare(const sql::StreamingDefinition& def,
                                                     GroupQueryOptions options);

  const std::string& name() const { return def_.name; }
  const std::string& topic() const { return topic_; }
  // The source's kafka.* options without the prefix (how to reach the cluster).
  const std::map<std::string, std::string>& kafka_config() const { return kafka_config_; }
  const stream::Trigger& trigger() const { return trigger_; }
  // A stateful query keyed by the declared partitionedBy column (state_partitioning.h); nullopt
  // for a stateless one.
  const std::optional<StatePartitioning>& partitioning() const { return partitioning_; }
  // Whether the tasks share a global watermark (a stateful query with a WATERMARK): then
  // SetTopicPartitions must be called before StartTask.
  bool shares_watermark() const { return shares_watermark_; }
  // The topic's partition count: the partitions the global watermark is taken over.
  void SetTopicPartitions(int32_t n) { num_partitions_ = n; }

  // Starts the task of `partition` for the query `query_id` (the root's metadata). `on_progress`
  // (may be empty) is called on the task's thread after each batch.
  Result<std::unique_ptr<stream::MicroBatchExecution>> StartTask(
      int32_t partition, const std::string& query_id,
      std::function<void(int32_t, const stream::StreamingQueryProgress&)> on_progress) const;

  // The task's source options: the query's, with subscribe replaced by assign of `partition`.
  static std::map<std::string, std::string> TaskSourceOptions(
      const std::map<std::string, std::string>& options, const std::string& topic,
      int32_t partition);

 private:
  GroupQuery(sql::StreamingDefinition def, GroupQueryOptions options)
      : def_(std::move(def)), options_(std::move(options)) {}
  Result<plan::PlannedStreamingQuery> Plan() const;

  sql::StreamingDefinition def_;
  GroupQueryOptions options_;
  std::string topic_;
  std::map<std::string, std::string> kafka_config_;
  stream::Trigger trigger_;
  std::optional<StatePartitioning> partitioning_;
  plan::StreamRelation relation_;
  bool shares_watermark_ = false;
  WatermarkPolicy watermark_policy_;
  int32_t num_partitions_ = 0;
};

}  // namespace sluice::scaleout
