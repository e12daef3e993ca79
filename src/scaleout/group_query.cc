#include "scaleout/group_query.h"

#include <set>

#include <nlohmann/json.hpp>

#include "common/logging.h"
#include "common/strings.h"
#include "plan/stream_query_parser.h"
#include "scaleout/partition_key_check.h"
#include "scaleout/task_layout.h"
#include "sinks/delta_sink.h"
#include "sources/kafka/kafka_source.h"
#include "sources/source_factory.h"
#include "sql/delta_references.h"
#include "sql/streaming_progress_store.h"
#include "sql/table_catalog.h"

namespace sluice::scaleout {
namespace {

constexpr char kChangeDataFeed[] = "delta.enableChangeDataFeed";

Status Refuse(const std::string& name, const std::string& what) {
  return Status::NotSupported("streaming table " + name + ": group mode (--group) " + what +
                              " (docs/scale-out.md \"What group mode runs and what it refuses\")");
}

}  // namespace

std::map<std::string, std::string> GroupQuery::TaskSourceOptions(
    const std::map<std::string, std::string>& options, const std::string& topic,
    int32_t partition) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : options) {
    const std::string lower = AsciiLower(name);
    if (lower == "subscribe" || lower == "subscribepattern" || lower == "assign") continue;
    out[name] = value;
  }
  nlohmann::json assign;
  assign[topic] = nlohmann::json::array({partition});
  out["assign"] = assign.dump();
  return out;
}

Result<std::unique_ptr<GroupQuery>> GroupQuery::Prepare(const sql::StreamingDefinition& def,
                                                        GroupQueryOptions options) {
  if (options.engine == nullptr || options.fs == nullptr || options.checkpoint_root.empty() ||
      options.table_path.empty() || !options.is_table) {
    return Status::InvalidArgument("group mode: engine, file system, checkpoint and table needed");
  }
  if (def.kind != sql::StreamingDefinition::Kind::kTable || !def.query) {
    return Refuse(def.name,
                  "runs a streaming table defined by a query; flows are not supported yet");
  }
  if (def.auto_cdc) return Refuse(def.name, "does not run AUTO CDC yet");
  if (!def.expectations.empty()) return Refuse(def.name, "does not check expectations yet");
  if (def.sources.size() != 1 || def.sources[0].format != "kafka") {
    return Refuse(def.name,
                  "needs exactly one Kafka source (STREAM read_kafka(...)): a task is one "
                  "partition of a Kafka topic, and other sources have no group coordinator");
  }
  std::unique_ptr<GroupQuery> q(new GroupQuery(def, std::move(options)));
  const std::map<std::string, std::string>& src = def.sources[0].options;
  SLUICE_ASSIGN_OR_RETURN_CTX(sources::kafka::KafkaSourceOptions kafka,
                              sources::kafka::ParseKafkaSourceOptions(src),
                              "streaming table " + def.name);
  if (kafka.subscribe.size() != 1 || kafka.subscribe_pattern || !kafka.assign.empty()) {
    return Refuse(def.name,
                  "subscribes to one topic by 'subscribe' (subscribePattern, assign and several "
                  "topics are not supported yet: tasks are keyed by partition number)");
  }
  for (const auto& [name, value] : src) {
    if (AsciiLower(name) == "startingoffsets" && !value.empty() && value[0] == '{') {
      return Refuse(def.name,
                    "takes startingOffsets 'earliest' or 'latest' (per-partition JSON offsets are "
                    "not supported yet)");
    }
  }
  q->topic_ = kafka.subscribe[0];
  q->kafka_config_ = kafka.kafka_config;
  if (def.trigger) {
    q->trigger_ = *def.trigger;
  } else if (def.schedule_every_ms) {
    SLUICE_ASSIGN_OR_RETURN(q->trigger_, stream::Trigger::ProcessingTime(*def.schedule_every_ms));
  }
  if (q->trigger_.kind != stream::TriggerKind::kDefault &&
      q->trigger_.kind != stream::TriggerKind::kProcessingTime) {
    return Refuse(def.name, "runs continuous triggers (the default or PROCESSING TIME), not " +
                                q->trigger_.ToString() +
                                ": a task that ends by itself while its process still owns the "
                                "partition would leave the partition unread");
  }
  SLUICE_ASSIGN_OR_RETURN(plan::PlannedStreamingQuery planned, q->Plan());
  if (!planned.operators.empty()) {
    if (def.output_mode != sluice::OutputMode::kAppend) {
      return Refuse(def.name,
                    "writes a stateful query's results in APPEND mode only (in COMPLETE mode "
                    "each task would replace the table with its own keys' rows; UPDATE's MERGE "
                    "from many tasks is not supported yet)");
    }
    SLUICE_ASSIGN_OR_RETURN(plan::ParsedStreamingQuery parsed,
                            plan::ParseStreamingQuery(def.query.value_or("")));
    SLUICE_ASSIGN_OR_RETURN(
        StatePartitioning partitioning,
        CheckStatePartitioning(q->options_.engine, parsed, planned.operators, kafka.partitioned_by,
                               q->topic_, "streaming table " + def.name));
    q->partitioning_ = std::move(partitioning);
    q->relation_ = parsed.streams.at(0);
    q->shares_watermark_ = !planned.plan->watermark_nodes().empty();
    std::string policy = "min";
    if (auto it = q->options_.session_conf.find(std::string(stream::kConfMultipleWatermarkPolicy));
        it != q->options_.session_conf.end() && !it->second.empty()) {
      policy = it->second;
    }
    SLUICE_ASSIGN_OR_RETURN(q->watermark_policy_,
                            MakeWatermarkPolicy(policy, q->options_.watermark_idle_timeout_ms));
  }
  return q;
}

Result<plan::PlannedStreamingQuery> GroupQuery::Plan() const {
  SLUICE_ASSIGN_OR_RETURN(plan::ParsedStreamingQuery parsed,
                          plan::ParseStreamingQuery(def_.query.value_or("")));
  std::set<std::string> stream_aliases;
  for (const plan::StreamRelation& r : parsed.streams) {
    stream_aliases.insert(sql::NormalizeTableName(r.alias));
  }
  // A static Delta table in the query would be read by every task: refused in this step.
  SLUICE_ASSIGN_OR_RETURN(sql::RewrittenQuery rewritten,
                          sql::RewriteDeltaReferences(parsed.sql, options_.is_table));
  for (const sql::DeltaReference& ref : rewritten.references) {
    if (ref.kind == sql::DeltaReference::Kind::kLatest && !ref.table.is_path &&
        stream_aliases.count(sql::NormalizeTableName(ref.table.name)) > 0) {
      continue;
    }
    return Refuse(def_.name, "reads only its Kafka stream; the static table " + ref.table.name +
                                 " in the query is not supported yet");
  }
  plan::StreamingQuerySpec spec{std::move(parsed), def_.output_mode};
  return plan::PlanStreamingQuery(options_.engine, spec);
}

Result<std::unique_ptr<stream::MicroBatchExecution>> GroupQuery::StartTask(
    int32_t partition, const std::string& query_id,
    std::function<void(int32_t, const stream::StreamingQueryProgress&)> on_progress) const {
  SLUICE_ASSIGN_OR_RETURN(plan::PlannedStreamingQuery planned, Plan());
  if (partitioning_) {
    planned.plan = std::make_unique<PartitionKeyCheckPlan>(std::move(planned.plan), relation_,
                                                           *partitioning_, topic_);
  }
  stream::SourceSpec spec;
  spec.factory = [](const sources::SourceContext& ctx) {
    return sources::CreateSource("kafka", ctx);
  };
  spec.options = TaskSourceOptions(def_.sources[0].options, topic_, partition);
  std::vector<stream::SourceSpec> sources;
  sources.push_back(std::move(spec));

  // The Delta table as the single-process run writes it (sql/streaming_table_manager.cc): the
  // change data feed on unless the table's properties say otherwise, a table without declared
  // columns following its query's schema.
  sinks::DeltaSinkOptions sink_options;
  sink_options.path = options_.table_path;
  sink_options.partition_by = def_.partitioned_by;
  sink_options.configuration = def_.properties;
  if (!sink_options.configuration.count(kChangeDataFeed)) {
    sink_options.configuration[kChangeDataFeed] = "true";
  }
  sink_options.update_keys = planned.update_keys;
  sink_options.update_single_row = planned.update_single_row;
  sink_options.merge_schema = def_.columns.empty();
  sink_options.query_id = TaskAppId(query_id, partition);
  stream::SinkFactory sink_factory =
      [sink_options](const stream::SinkContext& ctx) -> Result<std::shared_ptr<sinks::Sink>> {
    SLUICE_ASSIGN_OR_RETURN(auto sink, sinks::DeltaSink::Open(ctx.fs, ctx.engine, sink_options));
    return std::shared_ptr<sinks::Sink>(std::move(sink));
  };

  stream::ExecutionOptions o;
  o.checkpoint_root = TaskCheckpointRoot(options_.checkpoint_root, partition);
  o.query_name = def_.name + "[" + std::to_string(partition) + "]";
  o.trigger = trigger_;
  o.output_mode = def_.output_mode;
  o.engine = options_.engine;
  o.fs = options_.fs;
  o.session_conf = options_.session_conf;
  o.no_data_batches = options_.no_data_batches;
  if (shares_watermark_) {
    if (num_partitions_ <= 0) {
      return Status::Internal("group mode: the topic's partition count is not known yet");
    }
    o.shared_watermark = std::make_shared<GlobalWatermark>(
        options_.fs, options_.checkpoint_root, partition, num_partitions_, watermark_policy_);
  }
  std::shared_ptr<fs::FileSystem> progress_fs = options_.fs;
  const std::string checkpoint = o.checkpoint_root;
  const std::string name = *o.query_name;
  o.on_batch_progress = [progress_fs, checkpoint, name, partition,
                         on_progress](const stream::StreamingQueryProgress& p) {
    Status st = sql::WriteBatchProgress(*progress_fs, checkpoint, p);
    if (!st.ok()) {
      SLUICE_LOG(kWarning) << "task " << name << ": " << st.ToString();
    }
    if (on_progress) on_progress(partition, p);
  };
  return stream::MicroBatchExecution::Start(std::move(o), std::move(sources),
                                            std::move(planned.plan), sink_factory);
}

}  // namespace sluice::scaleout
