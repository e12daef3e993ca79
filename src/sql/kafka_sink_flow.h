// The Kafka parts of sinks and flows into them (docs/streaming-sql.md "Sinks"): the checks of
// CREATE SINK ... USING kafka and of CREATE FLOW ... INSERT INTO <sink>, and the sink the flow's
// runs write through (sinks/kafka_sink.h).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "sql/sink_catalog.h"
#include "sql/streaming_table_catalog.h"
#include "stream/micro_batch_execution.h"

namespace sluice::sql {

// Checks a sink at CREATE SINK: the format is kafka; the options are the Kafka sink's
// (sinks::ParseKafkaSinkOptions: kafka.bootstrap.servers required, kafka.*, topic,
// kafka.transactional.id, transactionMarkerTopic); checkpointLocation is refused (each flow has
// its own checkpoint); a secret('scope', 'key') value is well formed (it is resolved when a flow
// starts, common/secret_reference.h); the trigger is not CONTINUOUS. InvalidArgument / NotSupported
// naming what is wrong; option values never appear in the message.
Status CheckSinkDefinition(const SinkDefinition& sink);

// Checks a flow into `sink` at CREATE FLOW. `others` are the other flows into the sink. A
// transactional sink (kafka.transactional.id) takes one flow: the id is that flow's checkpoint's.
Status CheckFlowIntoSink(const SinkDefinition& sink, const std::string& flow,
                         const std::vector<StreamingDefinition>& others);

// The sink factory of a flow's runs into `sink`: secret() options resolved, then the Kafka sink.
// In exactly-once mode it passes the checkpoint's last planned batch, so that the sink refuses to
// start when the transactional.id has committed batches to Kafka that the flow's checkpoint never
// planned (the id belongs to another checkpoint: the flow was dropped and created again, say),
// which would otherwise skip the new checkpoint's first batches silently.
stream::SinkFactory KafkaSinkFlowFactory(const SinkDefinition& sink, const std::string& flow);

// The options of `sink` for display (SHOW SINKS): a JSON object with the values of secret
// options (passwords, JAAS strings, keys: common/redaction.h) as kRedactedValue.
std::string RedactedSinkOptionsJson(const SinkDefinition& sink);

}  // namespace sluice::sql
