// Connection: runs SQL, registers batches as temporary views.
#include "common/strings.h"
#include "duckdb/parser/expression/star_expression.hpp"
#include "duckdb/parser/parsed_data/create_view_info.hpp"
#include "duckdb/parser/query_node/select_node.hpp"
#include "duckdb/parser/statement/create_statement.hpp"
#include "duckdb/parser/statement/select_statement.hpp"
#include "duckdb/parser/tableref/column_data_ref.hpp"
#include "engine/duckdb_convert.h"
#include "engine/engine.h"

namespace sluice::engine {
namespace internal {

Result<Batch> ConnectionState::RunQuery(const std::string& sql) {
  auto statements = conn->ExtractStatements(sql);
  if (statements.empty()) return Batch();
  duckdb::unique_ptr<duckdb::MaterializedQueryResult> last;
  for (auto& statement : statements) {
    last = conn->Query(std::move(statement));
    if (last->HasError()) return StatusFromError(last->GetErrorObject());
  }
  if (last->properties.return_type == duckdb::StatementReturnType::NOTHING) return Batch();
  std::vector<std::string> names(last->names.begin(), last->names.end());
  auto collection = last->TakeCollection();
  return MakeBatch(db, std::unique_ptr<duckdb::ColumnDataCollection>(collection.release()),
                   std::move(names));
}

Status ConnectionState::CreateBatchView(const std::string& name,
                                        std::shared_ptr<const BatchData> data) {
  auto info = duckdb::make_uniq<duckdb::CreateViewInfo>();
  info->catalog = TEMP_CATALOG;
  info->schema = DEFAULT_SCHEMA;
  info->temporary = true;
  info->view_name = name;
  info->on_conflict = duckdb::OnCreateConflict::REPLACE_ON_CONFLICT;

  auto node = duckdb::make_uniq<duckdb::SelectNode>();
  node->select_list.push_back(duckdb::make_uniq<duckdb::StarExpression>());
  // The view shares ownership of the batch's collection and scans it in place (no copy), so it
  // stays valid however the view is dropped or restored (e.g. a rolled-back DROP VIEW).
  duckdb::vector<std::string> names(data->names.begin(), data->names.end());
  auto ref = duckdb::make_uniq<duckdb::ColumnDataRef>(
      duckdb::optionally_owned_ptr<duckdb::ColumnDataCollection>(data->collection),
      std::move(names));
  ref->alias = name;  // the binder needs an alias to expand "*"
  node->from_table = std::move(ref);
  auto select = duckdb::make_uniq<duckdb::SelectStatement>();
  select->node = std::move(node);
  info->query = std::move(select);

  auto statement = duckdb::make_uniq<duckdb::CreateStatement>();
  statement->info = std::move(info);
  auto result = conn->Query(std::move(statement));
  if (result->HasError()) return StatusFromError(result->GetErrorObject());
  return Status::OK();
}

Status ConnectionState::DropBatchView(const std::string& name) {
  auto result = conn->Query("DROP VIEW IF EXISTS temp.main." + QuoteIdentifier(name));
  if (result->HasError()) return StatusFromError(result->GetErrorObject());
  return Status::OK();
}

}  // namespace internal

Connection::Connection(std::unique_ptr<internal::ConnectionState> state)
    : state_(std::move(state)) {}

Connection::~Connection() = default;

Result<Batch> Connection::Query(std::string_view sql) {
  return internal::CatchAll([&]() { return state_->RunQuery(std::string(sql)); });
}

Status Connection::Execute(std::string_view sql) { return ToStatus(Query(sql)); }

Status Connection::RegisterBatch(const std::string& name, const Batch& batch) {
  if (name.empty()) return Status::InvalidArgument("RegisterBatch: empty name");
  if (!batch.data()) {
    return Status::InvalidArgument("RegisterBatch: batch '" + name + "' has no columns");
  }
  return internal::CatchAll(
      [&]() -> Status { return state_->CreateBatchView(name, batch.data()); });
}

Status Connection::UnregisterBatch(const std::string& name) {
  return internal::CatchAll([&]() -> Status { return state_->DropBatchView(name); });
}

void Connection::Interrupt() {
  try {
    state_->conn->Interrupt();
  } catch (...) {
  }
}

}  // namespace sluice::engine
