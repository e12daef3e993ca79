#include "sql/kafka_sink_flow.h"

#include <nlohmann/json.hpp>

#include "common/redaction.h"
#include "common/secret_reference.h"
#include "common/strings.h"
#include "sinks/kafka_sink.h"
#include "stream/offset_seq_log.h"

namespace sluice::sql {
namespace {

std::string Ctx(const SinkDefinition& sink) { return "sink " + sink.name; }

bool IsTransactional(const SinkDefinition& sink) {
  for (const auto& [name, value] : sink.options) {
    if (AsciiLower(name) == "kafka.transactional.id") return true;
  }
  return false;
}

}  // namespace

Status CheckSinkDefinition(const SinkDefinition& sink) {
  if (sink.format != "kafka") {
    return Status::NotSupported(Ctx(sink) + ": USING " + sink.format +
                                " is not supported: a sink writes to Kafka (USING kafka); write "
                                "Delta tables with a flow into a table (CREATE FLOW f AS INSERT "
                                "INTO table SELECT ...)");
  }
  for (const auto& [name, value] : sink.options) {
    SLUICE_RETURN_NOT_OK_CTX(ParseSecretReference(value).status(),
                             Ctx(sink) + ": option '" + name + "'");
    if (AsciiLower(name) == "checkpointlocation") {
      return Status::InvalidArgument(
          Ctx(sink) +
          ": option 'checkpointLocation' is not a sink option: each flow into the sink has its "
          "own checkpoint, <warehouse>/_checkpoints/" +
          sink.name + "/flows/<flow>");
    }
  }
  SLUICE_RETURN_NOT_OK_CTX(sinks::ParseKafkaSinkOptions(sink.options).status(), Ctx(sink));
  if (sink.trigger && sink.trigger->kind == stream::TriggerKind::kContinuous) {
    return Status::NotSupported(
        Ctx(sink) +
        ": TRIGGER CONTINUOUS is not supported: Sluice runs micro-batches only; use TRIGGER "
        "PROCESSING TIME '<interval>', the default trigger, or TRIGGER AVAILABLE NOW");
  }
  return Status::OK();
}

Status CheckFlowIntoSink(const SinkDefinition& sink, const std::string& flow,
                         const std::vector<StreamingDefinition>& others) {
  if (!IsTransactional(sink)) return Status::OK();
  for (const StreamingDefinition& other : others) {
    if (other.name == flow) continue;
    return Status::InvalidArgument(
        Ctx(sink) + " is transactional (kafka.transactional.id) and flow " + other.name +
        " already writes to it: a transactional.id belongs to one flow's checkpoint; create "
        "another sink with its own kafka.transactional.id for flow " +
        flow);
  }
  return Status::OK();
}

stream::SinkFactory KafkaSinkFlowFactory(const SinkDefinition& sink, const std::string& flow) {
  const std::map<std::string, std::string> options = sink.options;
  const std::string what = "flow " + flow + " into " + Ctx(sink);
  return [options, what](const stream::SinkContext& ctx) -> Result<std::shared_ptr<sinks::Sink>> {
    SLUICE_ASSIGN_OR_RETURN_CTX(auto resolved, ResolveSecretReferences(options), what);
    SLUICE_ASSIGN_OR_RETURN_CTX(sinks::KafkaSinkOptions o, sinks::ParseKafkaSinkOptions(resolved),
                                what);
    if (o.transactional_id) {  // the guard against an id of another checkpoint (kafka_sink.h)
      SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<BatchId> planned,
                                  stream::OffsetSeqLog(ctx.fs, ctx.checkpoint_root).ListIds(),
                                  what);
      o.checkpoint_last_planned_batch = planned.empty() ? -1 : planned.back().value();
    }
    SLUICE_ASSIGN_OR_RETURN_CTX(auto opened, sinks::KafkaSink::Open(ctx.engine, o), what);
    return std::shared_ptr<sinks::Sink>(std::move(opened));
  };
}

std::string RedactedSinkOptionsJson(const SinkDefinition& sink) {
  nlohmann::ordered_json j = RedactOptions(sink.options);
  return j.dump();
}

}  // namespace sluice::sql
