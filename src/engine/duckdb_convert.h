// Internal to src/engine: conversions between Sluice's engine types and DuckDB's, and the
// definitions of the opaque state structs declared in engine.h. Include only from src/engine/*.cc.
//
// Ownership model:
//   - EngineState owns the duckdb::DuckDB handle.
//   - BatchData owns its ColumnDataCollection and shares ownership of the DatabaseInstance, because
//     the collection's memory comes from that database's buffer manager; a Batch may therefore
//     outlive the Engine that produced it.
//   - ConnectionState owns a duckdb::Connection. A registered batch is a temporary view whose
//     ColumnDataRef shares ownership of the batch's collection, so the rows live as long as the
//     view (or any Batch) refers to them, and are never copied.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "duckdb.hpp"
#include "engine/engine.h"
#include "engine/types.h"

namespace sluice::engine::internal {

// ---- errors ----------------------------------------------------------------------------------

// Maps a DuckDB error to a Status, keeping DuckDB's message ("Catalog Error: ...").
// Parser/binder/catalog/conversion errors -> InvalidArgument; missing table/view/file ->
// NotFound; "already exists" -> AlreadyExists; IO -> IOError; interrupt -> Cancelled;
// not implemented -> NotSupported; transaction conflicts -> Conflict; otherwise Internal.
Status StatusFromError(const duckdb::ErrorData& error);
// The same for an exception caught at an engine entry point.
Status StatusFromException(const std::exception& ex);

// Runs `fn` (returning Status or Result<T>) and converts any exception it throws.
template <typename Fn>
auto CatchAll(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::exception& ex) {
    return StatusFromException(ex);
  } catch (...) {
    return Status::Internal("unknown exception in the engine");
  }
}

// ---- types -----------------------------------------------------------------------------------

DataType FromLogicalType(const duckdb::LogicalType& type);
// InvalidArgument when `type` (kOther text) cannot be turned into a DuckDB type.
Result<duckdb::LogicalType> ToLogicalType(const DataType& type);
Schema SchemaFromDuckDB(const std::vector<std::string>& names,
                        const duckdb::vector<duckdb::LogicalType>& types);

// ---- state -----------------------------------------------------------------------------------

struct BatchData {
  BatchData(duckdb::shared_ptr<duckdb::DatabaseInstance> db_p,
            std::unique_ptr<duckdb::ColumnDataCollection> collection_p,
            std::vector<std::string> names_p);

  // Declared first so that it is destroyed last: the collection's blocks belong to its buffer
  // manager.
  duckdb::shared_ptr<duckdb::DatabaseInstance> db;
  // Never null; >= 1 column. Shared with the temporary views that scan it (see
  // ConnectionState::CreateBatchView), never modified after construction.
  duckdb::shared_ptr<duckdb::ColumnDataCollection> collection;
  std::vector<std::string> names;
  duckdb::vector<duckdb::LogicalType> types;
  Schema schema;
};

// Makes a Batch from a collection (names.size() == collection->ColumnCount()). A collection
// with no columns gives the empty Batch().
Batch MakeBatch(duckdb::shared_ptr<duckdb::DatabaseInstance> db,
                std::unique_ptr<duckdb::ColumnDataCollection> collection,
                std::vector<std::string> names);

struct EngineState {
  std::unique_ptr<duckdb::DuckDB> db;
};

struct ConnectionState {
  duckdb::shared_ptr<duckdb::DatabaseInstance> db;
  std::unique_ptr<duckdb::Connection> conn;
  uint64_t next_temp_id = 0;

  // Runs all statements of `sql`; returns the last statement's rows (the empty Batch() when it
  // returns nothing) or the first error. Throws DuckDB exceptions (callers use CatchAll).
  Result<Batch> RunQuery(const std::string& sql);
  // Creates (or replaces) the temporary view `name` scanning `data` in place (no copy); the view
  // shares ownership of the rows. Throws like RunQuery.
  Status CreateBatchView(const std::string& name, std::shared_ptr<const BatchData> data);
  Status DropBatchView(const std::string& name);
};

}  // namespace sluice::engine::internal
