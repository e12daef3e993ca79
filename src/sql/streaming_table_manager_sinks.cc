// StreamingTableManager's sink statements (streaming_table_manager.h, sink_statements.h):
// CREATE [OR REPLACE] SINK, DROP SINK, REFRESH SINK, SHOW SINKS.
#include <utility>

#include "sql/kafka_sink_flow.h"
#include "sql/literal_rows.h"
#include "sql/streaming_table_manager.h"

namespace sluice::sql {

Result<engine::Batch> StreamingTableManager::ExecuteSink(const SinkStatement& statement,
                                                         engine::Connection* conn) {
  if (const auto* s = std::get_if<CreateSinkStatement>(&statement)) return CreateSink(*s);
  if (const auto* s = std::get_if<DropSinkStatement>(&statement)) return DropSink(*s);
  if (const auto* s = std::get_if<RefreshSinkStatement>(&statement)) return RefreshSink(*s);
  return ShowSinks(conn);
}

Result<std::vector<StreamingDefinition>> StreamingTableManager::FlowsInto(
    const std::string& name) const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> flows,
                          catalog_.List(StreamingDefinition::Kind::kFlow));
  std::vector<StreamingDefinition> out;
  for (auto& f : flows) {
    if (f.target == name) out.push_back(std::move(f));
  }
  return out;
}

Result<engine::Batch> StreamingTableManager::CreateSink(const CreateSinkStatement& s) {
  SinkDefinition def;
  def.name = NormalizeTableName(s.name);
  def.format = s.format;
  def.options = s.options;
  def.trigger = s.trigger;
  const std::string ctx = "CREATE SINK " + def.name;
  SLUICE_RETURN_NOT_OK_CTX(options_.tables->Resolve(TableName{def.name, false}).status(), ctx);
  SLUICE_RETURN_NOT_OK_CTX(CheckSinkDefinition(def), ctx);
  SLUICE_ASSIGN_OR_RETURN(std::optional<SinkDefinition> existing, sinks_.Find(def.name));
  if (existing) {
    // Re-declaring the same sink (a pipeline file run again by `sluice run`) changes nothing.
    if (*existing == def) return engine::Batch();
    if (!s.or_replace) {
      return Status::AlreadyExists(ctx + ": sink " + def.name +
                                   " already exists with a different definition (CREATE OR "
                                   "REPLACE SINK replaces it; its flows keep their checkpoints)");
    }
  } else {
    SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingDefinition> table,
                            catalog_.Find(StreamingDefinition::Kind::kTable, def.name));
    SLUICE_ASSIGN_OR_RETURN(bool table_exists, options_.tables->Exists(TableName{def.name, false}));
    if (table || table_exists) {
      return Status::AlreadyExists(ctx + ": " + def.name +
                                   " is a table; a sink needs a name of its own");
    }
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> flows, FlowsInto(def.name));
  if (!flows.empty()) {
    SLUICE_RETURN_NOT_OK_CTX(CheckFlowIntoSink(def, flows.front().name, flows), ctx);
  }
  SLUICE_RETURN_NOT_OK_CTX(sinks_.Save(def), ctx);
  return engine::Batch();
}

Result<engine::Batch> StreamingTableManager::DropSink(const DropSinkStatement& s) {
  const std::string name = NormalizeTableName(s.name);
  const std::string ctx = "DROP SINK " + name;
  SLUICE_ASSIGN_OR_RETURN(std::optional<SinkDefinition> sink, sinks_.Find(name));
  if (!sink) {
    if (s.if_exists) return engine::Batch();
    return Status::NotFound(ctx + ": sink " + name + " does not exist");
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> flows, FlowsInto(name));
  for (const StreamingDefinition& f : flows) {
    SLUICE_RETURN_NOT_OK_CTX(catalog_.Remove(StreamingDefinition::Kind::kFlow, f.name), ctx);
    node_watermarks_.erase(Key(f));
    last_status_.erase(Key(f));
  }
  const std::string checkpoints = catalog_.TableCheckpoint(name);  // the flows' checkpoints
  SLUICE_ASSIGN_OR_RETURN(bool exists, options_.fs->Exists(checkpoints));
  if (exists) SLUICE_RETURN_NOT_OK_CTX(options_.fs->DeleteRecursive(checkpoints), ctx);
  SLUICE_RETURN_NOT_OK_CTX(sinks_.Remove(name), ctx);
  return engine::Batch();
}

Result<engine::Batch> StreamingTableManager::RefreshSink(const RefreshSinkStatement& s) {
  const std::string name = NormalizeTableName(s.name);
  const std::string ctx = "REFRESH SINK " + name;
  SLUICE_ASSIGN_OR_RETURN(std::optional<SinkDefinition> sink, sinks_.Find(name));
  if (!sink) return Status::NotFound(ctx + ": sink " + name + " does not exist");
  SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> flows, FlowsInto(name));
  const stream::Trigger trigger = sink->trigger && sink->trigger->kind == stream::TriggerKind::kOnce
                                      ? stream::Trigger::Once()
                                      : stream::Trigger::AvailableNow();
  for (const StreamingDefinition& def : flows) {
    SLUICE_RETURN_NOT_OK_CTX(RunToEnd(def, trigger), ctx);
  }
  return engine::Batch();
}

Result<engine::Batch> StreamingTableManager::ShowSinks(engine::Connection* conn) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<SinkDefinition> sinks, sinks_.List());
  std::vector<std::vector<std::optional<std::string>>> rows;
  for (const SinkDefinition& sink : sinks) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<StreamingDefinition> flows, FlowsInto(sink.name));
    std::string names;
    for (const auto& f : flows) names += (names.empty() ? "" : ", ") + f.name;
    rows.push_back({sink.name, sink.format,
                    sink.trigger ? sink.trigger->ToString() : std::string("Default"), names,
                    RedactedSinkOptionsJson(sink)});
  }
  return LiteralRows(conn, {{"name"}, {"format"}, {"trigger"}, {"flows"}, {"options"}}, rows);
}

}  // namespace sluice::sql
