// DataStreamWriter, StreamingQuery and the plan that runs a streaming DataFrame.
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <map>

#include "api/api_internal.h"
#include "api/frame_plan.h"
#include "api/query_state.h"
#include "common/logging.h"
#include "sinks/console_sink.h"
#include "sinks/delta_sink.h"
#include "sinks/foreach_batch_sink.h"
#include "sinks/kafka_sink.h"
#include "sources/source_factory.h"
#include "stream/offset_seq_log.h"
#include "stream/progress.h"

namespace sluice {
namespace api {
namespace {

// The loop owns its sources; a memory stream belongs to the session. This forwards to it.
class SharedMemorySource final : public sources::Source {
 public:
  explicit SharedMemorySource(std::shared_ptr<sources::MemorySource> source)
      : source_(std::move(source)) {}
  std::string Description() const override { return source_->Description(); }
  const engine::Schema& schema() const override { return source_->schema(); }
  Result<std::optional<sources::OffsetJson>> LatestOffset(
      const std::optional<sources::OffsetJson>& start, const sources::ReadLimit& limit) override {
    return source_->LatestOffset(start, limit);
  }
  Status PrepareForAvailableNow() override { return source_->PrepareForAvailableNow(); }
  Result<engine::Batch> GetBatch(const std::optional<sources::OffsetJson>& start,
                                 const sources::OffsetJson& end) override {
    return source_->GetBatch(start, end);
  }
  Status Commit(const sources::OffsetJson& end) override { return source_->Commit(end); }

 private:
  std::shared_ptr<sources::MemorySource> source_;
};

void CollectStreams(const NodePtr& node, std::vector<std::shared_ptr<StreamInput>>* out) {
  if (node->kind == FrameNode::Kind::kStream) out->push_back(node->stream);
  for (const NodePtr& c : node->children) CollectStreams(c, out);
}

Result<stream::Trigger> ToStreamTrigger(const sluice::Trigger& t) {
  using K = sluice::Trigger::Kind;
  switch (t.kind()) {
    case K::kDefault:
      return stream::Trigger::Default();
    case K::kAvailableNow:
      return stream::Trigger::AvailableNow();
    case K::kOnce:
      return stream::Trigger::Once();
    case K::kProcessingTime:
      if (!t.interval_text().empty()) return stream::Trigger::ProcessingTime(t.interval_text());
      return stream::Trigger::ProcessingTime(t.interval_ms());
    case K::kContinuous:
      return stream::Trigger::Continuous(t.interval_ms());
  }
  return Status::Internal("unknown trigger");
}

Result<int64_t> ParseCount(const std::string& key, const std::string& value) {
  int64_t n = 0;
  size_t i = 0;
  for (; i < value.size() && std::isdigit(static_cast<unsigned char>(value[i])); ++i) {
    n = n * 10 + (value[i] - '0');
    if (n > (int64_t{1} << 40)) break;
  }
  if (value.empty() || i != value.size() || n <= 0) {
    return Status::InvalidArgument("option " + key + " must be a positive integer, got '" + value +
                                   "'");
  }
  return n;
}

}  // namespace

Result<bool> ParseBoolOption(const std::string& key, const std::string& value) {
  if (std::optional<bool> b = ParseBoolText(value)) return *b;
  return Status::InvalidArgument("option " + key + " must be true or false, got '" + value + "'");
}

sluice::StreamingQueryProgress PublicProgress(const stream::StreamingQueryProgress& p) {
  sluice::StreamingQueryProgress out(stream::ProgressToJson(p));
  out.id = p.id;
  out.run_id = p.run_id;
  out.name = p.name;
  out.timestamp = p.timestamp;
  out.batch_id = p.batch_id;
  out.batch_duration_ms = p.batch_duration;
  out.num_input_rows = p.NumInputRows();
  out.input_rows_per_second = p.InputRowsPerSecond();
  out.processed_rows_per_second = p.ProcessedRowsPerSecond();
  out.num_output_rows = p.sink.num_output_rows;
  out.duration_ms = p.duration_ms;
  out.event_time = p.event_time;
  return out;
}

std::shared_ptr<StreamingQuery> FrameAccess::Query(std::unique_ptr<QueryState> state) {
  return std::shared_ptr<StreamingQuery>(new StreamingQuery(std::move(state)));
}

}  // namespace api

using api::FrameAccess;

// ---------------------------------------------------------------------------------------------
// DataStreamWriter

DataStreamWriter& DataStreamWriter::Format(std::string format) {
  format_ = std::move(format);
  return *this;
}
DataStreamWriter& DataStreamWriter::OutputMode(sluice::OutputMode mode) {
  mode_ = mode;
  mode_error_.reset();
  return *this;
}
DataStreamWriter& DataStreamWriter::OutputMode(const std::string& mode) {
  std::string m = AsciiLower(mode);
  if (m == "append") return OutputMode(sluice::OutputMode::kAppend);
  if (m == "update") return OutputMode(sluice::OutputMode::kUpdate);
  if (m == "complete") return OutputMode(sluice::OutputMode::kComplete);
  mode_error_ =
      "Unknown output mode " + mode + ". Accepted output modes are 'append', 'complete', 'update'";
  return *this;
}
DataStreamWriter& DataStreamWriter::Option(std::string key, std::string value) {
  options_[AsciiLower(std::move(key))] = std::move(value);
  return *this;
}
DataStreamWriter& DataStreamWriter::Option(std::string key, int64_t value) {
  return Option(std::move(key), std::to_string(value));
}
DataStreamWriter& DataStreamWriter::Option(std::string key, const char* value) {
  return Option(std::move(key), std::string(value));
}
DataStreamWriter& DataStreamWriter::Option(std::string key, bool value) {
  return Option(std::move(key), api::OptionText(value));
}
DataStreamWriter& DataStreamWriter::Option(std::string key, double value) {
  return Option(std::move(key), api::OptionText(value));
}
DataStreamWriter& DataStreamWriter::Trigger(const sluice::Trigger& trigger) {
  trigger_ = trigger;
  return *this;
}
DataStreamWriter& DataStreamWriter::QueryName(std::string name) {
  name_ = std::move(name);
  return *this;
}
DataStreamWriter& DataStreamWriter::PartitionBy(std::vector<std::string> columns) {
  partition_by_ = std::move(columns);
  return *this;
}
DataStreamWriter& DataStreamWriter::ForeachBatch(ForeachBatchFunction fn) {
  foreach_batch_ = std::move(fn);
  return *this;
}

Result<std::shared_ptr<StreamingQuery>> DataStreamWriter::Start(const std::string& path) {
  options_["path"] = path;
  return Start();
}

Result<std::shared_ptr<StreamingQuery>> DataStreamWriter::ToTable(const std::string& name) {
  SLUICE_RETURN_NOT_OK(frame_.status());
  SLUICE_ASSIGN_OR_RETURN(std::string path, FrameAccess::Session(frame_)->TablePath(name));
  table_ = AsciiLower(name);
  format_ = "delta";
  options_["path"] = path;
  return Start();
}

Result<std::shared_ptr<StreamingQuery>> DataStreamWriter::Start() {
  SLUICE_RETURN_NOT_OK(frame_.status());
  std::shared_ptr<api::SessionState> session = FrameAccess::Session(frame_);
  const api::NodePtr& node = FrameAccess::Node(frame_);
  if (!frame_.IsStreaming()) {
    return Status::InvalidArgument("'WriteStream' can be called only on streaming DataFrame");
  }
  if (mode_error_) return Status::InvalidArgument(*mode_error_);
  SLUICE_ASSIGN_OR_RETURN(stream::Trigger trigger, api::ToStreamTrigger(trigger_));

  std::string format = foreach_batch_ ? "foreachbatch" : AsciiLower(format_);
  if (format != "delta" && format != "console" && format != "memory" && format != "kafka" &&
      format != "foreachbatch") {
    return Status::InvalidArgument("unknown sink format '" + format_ +
                                   "' (known: delta, console, memory, kafka, or ForeachBatch)");
  }
  auto state = std::make_unique<api::QueryState>();
  state->session = session;
  state->name = name_;

  // Options: each sink takes its own; anything else is refused.
  std::optional<std::string> checkpoint, path;
  bool merge_schema = false, truncate = true;
  int64_t num_rows = 20;
  std::map<std::string, std::string> kafka_options;  // topic, transactionMarkerTopic, kafka.*
  for (const auto& [k, v] : options_) {
    if (k == "checkpointlocation") {
      checkpoint = v;
    } else if (k == "path" && format == "delta") {
      path = v;
    } else if (k == "mergeschema" && format == "delta") {
      SLUICE_ASSIGN_OR_RETURN(merge_schema, api::ParseBoolOption(k, v));
    } else if (k == "numrows" && format == "console") {
      SLUICE_ASSIGN_OR_RETURN(num_rows, api::ParseCount(k, v));
    } else if (k == "truncate" && format == "console") {
      SLUICE_ASSIGN_OR_RETURN(truncate, api::ParseBoolOption(k, v));
    } else if (format == "kafka" &&
               (k == "topic" || k == "transactionmarkertopic" || k.rfind("kafka.", 0) == 0)) {
      kafka_options[k] = v;
    } else {
      return Status::InvalidArgument(
          "unknown option '" + k + "' for the " + format + " sink (known: checkpointLocation" +
          (format == "delta"     ? ", path, mergeSchema"
           : format == "console" ? ", numRows, truncate"
           : format == "kafka"   ? ", topic, kafka.*, transactionMarkerTopic"
                                 : "") +
          ")");
    }
  }
  if (!checkpoint && table_) {
    checkpoint = fs::JoinPath(fs::JoinPath(session->warehouse, "_checkpoints"), *table_);
  }
  if (!checkpoint && (format == "console" || format == "memory")) {
    std::string pattern = "/tmp/sluice-checkpoint-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return Status::FromErrno(errno, "creating a temporary checkpoint directory");
    }
    checkpoint = pattern;
    state->temp_checkpoint = pattern;
  }
  if (!checkpoint) {
    return Status::InvalidArgument(
        "checkpointLocation must be specified either through "
        "Option(\"checkpointLocation\", ...) or, for ToTable, derived from the warehouse");
  }
  if (format == "delta" && !path) {
    return Status::InvalidArgument("'path' is not specified: use Start(path) or ToTable(name)");
  }
  if (format == "delta" && !sinks::DeltaSink::SupportsOutputMode(mode_)) {
    return Status::NotSupported(std::string("Data source delta does not support ") +
                                sluice::OutputModeName(mode_) + " output mode");
  }
  if (format == "memory" && !name_) {
    return Status::InvalidArgument("queryName must be specified for memory sink");
  }

  // Sources, in the order the plan numbers them.
  std::vector<std::shared_ptr<api::StreamInput>> inputs;
  api::CollectStreams(node, &inputs);
  auto slots = std::make_shared<api::SchemaSlots>(inputs.size());
  std::vector<stream::SourceSpec> specs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::shared_ptr<api::StreamInput> input = inputs[i];
    stream::SourceSpec spec;
    if (input->format != "memory") spec.options = input->options;
    spec.factory =
        [input, slots,
         i](const sources::SourceContext& ctx) -> Result<std::unique_ptr<sources::Source>> {
      std::unique_ptr<sources::Source> source;
      if (input->memory) {
        source = std::make_unique<api::SharedMemorySource>(input->memory);
      } else {
        SLUICE_ASSIGN_OR_RETURN(source, sources::CreateSource(input->format, ctx));
      }
      (*slots)[i] = source->schema();
      return source;
    };
    specs.push_back(std::move(spec));
  }
  // The planner (run when the query opens, before the sink) fills the UPDATE-mode MERGE keys.
  auto facts = std::make_shared<api::PlanFacts>();
  auto plan = std::make_unique<api::FramePlan>(session, node, slots, facts);

  // The sink.
  stream::SinkFactory sink_factory;
  if (format == "foreachbatch") {
    ForeachBatchFunction fn = foreach_batch_;
    auto sink = std::make_shared<sinks::ForeachBatchSink>(
        [session, fn](const engine::Batch& data, BatchId id) -> Status {
          api::FrameNode n;
          n.kind = api::FrameNode::Kind::kBatch;
          n.batch = data;
          DataFrame batch =
              FrameAccess::Make(session, std::make_shared<const api::FrameNode>(std::move(n)));
          return fn(batch, id.value());
        });
    sink_factory = stream::FixedSink(sink);
  } else if (format == "console") {
    sink_factory = stream::FixedSink(std::make_shared<sinks::ConsoleSink>(
        sinks::ConsoleSinkOptions{.num_rows = num_rows, .truncate = truncate}));
  } else if (format == "memory") {
    state->memory_sink = std::make_shared<sinks::MemorySink>(*name_);
    sink_factory = stream::FixedSink(state->memory_sink);
  } else if (format == "kafka") {
    // At-least-once, as Spark's Kafka sink (sinks/kafka_sink.h).
    SLUICE_ASSIGN_OR_RETURN(sinks::KafkaSinkOptions opts,
                            sinks::ParseKafkaSinkOptions(kafka_options));
    sink_factory = [opts](const stream::SinkContext& ctx) -> Result<std::shared_ptr<sinks::Sink>> {
      sinks::KafkaSinkOptions o = opts;
      if (o.transactional_id) {  // the guard against an id of another checkpoint (kafka_sink.h)
        SLUICE_ASSIGN_OR_RETURN(std::vector<BatchId> planned,
                                stream::OffsetSeqLog(ctx.fs, ctx.checkpoint_root).ListIds());
        o.checkpoint_last_planned_batch = planned.empty() ? -1 : planned.back().value();
      }
      SLUICE_ASSIGN_OR_RETURN(auto sink, sinks::KafkaSink::Open(ctx.engine, o));
      return std::shared_ptr<sinks::Sink>(std::move(sink));
    };
  } else {
    sinks::DeltaSinkOptions opts;
    opts.path = *path;
    opts.partition_by = partition_by_;
    opts.merge_schema = merge_schema;
    const bool update = mode_ == sluice::OutputMode::kUpdate;
    sink_factory = [opts, facts, update](
                       const stream::SinkContext& ctx) -> Result<std::shared_ptr<sinks::Sink>> {
      if (update && facts->transformed_after_state && !facts->update_keys.empty()) {
        return Status::NotSupported(
            "Update output mode into a Delta table merges by the aggregation's (or "
            "deduplication's) key columns, so the frame must end with it: move the "
            "transformations after it into Agg's expressions, or use ForeachBatch");
      }
      sinks::DeltaSinkOptions o = opts;
      o.query_id = ctx.query_id;
      o.update_keys = facts->update_keys;
      o.update_single_row = update && facts->update_single_row;
      SLUICE_ASSIGN_OR_RETURN(auto sink, sinks::DeltaSink::Open(ctx.fs, ctx.engine, o));
      return std::shared_ptr<sinks::Sink>(std::move(sink));
    };
  }

  stream::ExecutionOptions eo;
  eo.checkpoint_root = *checkpoint;
  eo.query_name = name_;
  eo.trigger = trigger;
  eo.output_mode = mode_;
  eo.engine = session->engine.get();
  eo.fs = session->fs;
  eo.listener_bus = session->bus;
  eo.no_data_batches = session->no_data_batches;
  auto execution =
      stream::MicroBatchExecution::Start(eo, std::move(specs), std::move(plan), sink_factory);
  if (!execution.ok()) {
    if (state->temp_checkpoint) (void)session->fs->DeleteRecursive(*state->temp_checkpoint);
    return execution.status();
  }
  state->execution = execution.MoveValueUnsafe();
  if (state->memory_sink) {
    MutexLock lock(&session->mu);
    session->memory_sinks[AsciiLower(*name_)] = state->memory_sink;
  }
  std::shared_ptr<StreamingQuery> query = FrameAccess::Query(std::move(state));
  {
    MutexLock lock(&session->mu);
    auto& qs = session->queries;
    qs.erase(std::remove_if(qs.begin(), qs.end(), [](const auto& w) { return w.expired(); }),
             qs.end());
    qs.push_back(query);
  }
  return query;
}

// ---------------------------------------------------------------------------------------------
// StreamingQuery

StreamingQuery::StreamingQuery(std::unique_ptr<api::QueryState> state) : state_(std::move(state)) {}

StreamingQuery::~StreamingQuery() {
  if (state_ == nullptr || state_->execution == nullptr) return;
  (void)state_->execution->Stop();
  state_->execution.reset();
  if (state_->temp_checkpoint) (void)state_->session->fs->DeleteRecursive(*state_->temp_checkpoint);
}

const std::string& StreamingQuery::Id() const { return state_->execution->id(); }
const std::string& StreamingQuery::RunId() const { return state_->execution->run_id(); }
const std::optional<std::string>& StreamingQuery::Name() const { return state_->name; }
bool StreamingQuery::IsActive() const { return state_->execution->IsActive(); }

StreamingQueryStatus StreamingQuery::CurrentStatus() const {
  return state_->execution->CurrentStatus();
}

std::optional<StreamingQueryProgress> StreamingQuery::LastProgress() const {
  auto p = state_->execution->LastProgress();
  if (!p) return std::nullopt;
  return api::PublicProgress(*p);
}

std::vector<StreamingQueryProgress> StreamingQuery::RecentProgress() const {
  std::vector<StreamingQueryProgress> out;
  for (const auto& p : state_->execution->RecentProgress()) out.push_back(api::PublicProgress(p));
  return out;
}

std::optional<int64_t> StreamingQuery::LastBatchId() const {
  int64_t next = state_->execution->NextBatchId().value();
  if (next == 0) return std::nullopt;
  return next - 1;
}

::sluice::Status StreamingQuery::AwaitTermination() {
  return state_->execution->AwaitTermination();
}

Result<bool> StreamingQuery::AwaitTermination(std::chrono::milliseconds timeout) {
  return state_->execution->AwaitTermination(timeout.count());
}

::sluice::Status StreamingQuery::Stop() { return state_->execution->Stop(); }

::sluice::Status StreamingQuery::ProcessAllAvailable() {
  return state_->execution->ProcessAllAvailable();
}

std::optional<::sluice::Status> StreamingQuery::Exception() const {
  return state_->execution->Exception();
}

}  // namespace sluice
