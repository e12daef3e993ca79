#include "sql/pipeline_schema_check.h"

#include <set>
#include <string>
#include <vector>

#include "sql/streaming_table_manager_internal.h"

namespace sluice::sql {

Status CheckPipelineSchemas(const PipelineGraph& graph, Session& session) {
  using Kind = PipelineNode::Kind;
  StreamingTableManager::PendingSchemas pending;  // datasets of the pipeline with a known schema
  std::set<std::string> unknown;                  // datasets of the pipeline without one
  for (const PipelineNode& node : graph.nodes) {
    if (node.kind == Kind::kStreamingTable || node.kind == Kind::kMaterializedView) {
      unknown.insert(node.name);
    }
  }
  std::vector<std::string> errors;
  auto fail = [&](const PipelineNode& node, const Status& st) {
    std::string what = node.Place() + ": ";
    if (!node.name.empty()) what += PipelineNodeKindName(node.kind) + (" '" + node.name + "': ");
    // The engine lists every overload of a function that does not match: one line is enough.
    std::string message = st.message();
    if (size_t list = message.find("; \tCandidate functions:"); list != std::string::npos) {
      message.erase(list);
    }
    errors.push_back(what + message);
  };
  for (const PipelineNode& node : graph.nodes) {
    if (node.kind == Kind::kSetting) {
      Result<engine::Batch> r = session.Execute(node.text);
      if (!r.ok()) fail(node, r.status());
      continue;
    }
    if (node.kind != Kind::kStreamingTable && node.kind != Kind::kFlow &&
        node.kind != Kind::kMaterializedView) {
      continue;
    }
    bool inputs_known = true;
    for (const std::string& read : node.reads) {
      inputs_known = inputs_known && (unknown.count(read) == 0 || pending.count(read) > 0);
    }
    if (node.kind == Kind::kFlow && unknown.count(node.target) > 0 &&
        pending.count(node.target) == 0) {
      inputs_known = false;  // its target's schema comes from a check that did not give one
    }
    if (!inputs_known) continue;
    if (node.kind == Kind::kMaterializedView) {
      Result<engine::Schema> schema = session.CheckQuerySchema(node.query, pending);
      if (schema.ok()) schema = DeltaStoredSchema(*schema);  // its refresh writes a Delta table
      if (!schema.ok()) {
        fail(node, schema.status());
        continue;
      }
      if (!node.expectations.empty()) {
        Status counted =
            session.CheckQuerySchema(ExpectationCountsSql(node.query, node.expectations), pending)
                .status();
        if (!counted.ok()) {
          fail(node, counted.WithContext("its expectations cannot be evaluated over its rows"));
          continue;
        }
      }
      pending[node.name] = *schema;
      continue;
    }
    Result<std::optional<engine::Schema>> schema =
        session.CheckStreamingDefinition(node.text, pending);
    if (!schema.ok()) {
      fail(node, schema.status());
      continue;
    }
    if (node.kind == Kind::kStreamingTable && schema->has_value()) pending[node.name] = **schema;
  }
  if (errors.empty()) return Status::OK();
  std::string message;
  for (const std::string& e : errors) message += (message.empty() ? "" : "\n") + e;
  return Status::InvalidArgument(message);
}

}  // namespace sluice::sql
