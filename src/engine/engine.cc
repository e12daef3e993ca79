// Engine: opens the embedded DuckDB database and hands out connections.
#include "engine/engine.h"
#include "common/strings.h"
#include "duckdb/main/extension_helper.hpp"
#include "engine/duckdb_convert.h"
#include "engine/object_store_file_system.h"
#include "engine/row_lists.h"
#include "engine/spark_macros.h"
#include "engine/spark_string.h"

namespace sluice::engine {
namespace {

// Parquet and JSON are linked into libduckdb; they must be loaded without any network access.
Status EnsureBuiltinExtensions(duckdb::DuckDB& db) {
  auto loaded = [&]() -> bool {
    duckdb::Connection conn(db);
    auto r = conn.Query(
        "SELECT count(*) FROM duckdb_extensions() WHERE loaded AND extension_name IN "
        "('parquet', 'json')");
    return !r->HasError() && r->GetValue(0, 0).GetValue<int64_t>() == 2;
  };
  if (loaded()) return Status::OK();
  duckdb::ExtensionHelper::LoadAllExtensions(db);  // statically linked extensions only
  if (loaded()) return Status::OK();
  return Status::Internal("the parquet and json extensions are not linked into libduckdb");
}

}  // namespace

Result<std::unique_ptr<Engine>> Engine::Open(const EngineOptions& options) {
  if (options.threads < 1) {
    return Status::InvalidArgument("EngineOptions.threads must be >= 1, got " +
                                   std::to_string(options.threads));
  }
  return internal::CatchAll([&]() -> Result<std::unique_ptr<Engine>> {
    duckdb::DBConfig config;
    config.options.autoinstall_known_extensions = false;
    config.options.autoload_known_extensions = false;
    config.SetOptionByName("threads", duckdb::Value::BIGINT(options.threads));
    if (!options.memory_limit.empty()) {
      config.SetOptionByName("memory_limit", duckdb::Value(options.memory_limit));
    }
    if (!options.temp_directory.empty()) {
      config.SetOptionByName("temp_directory", duckdb::Value(options.temp_directory));
    }
    auto state = std::make_unique<internal::EngineState>();
    state->db = std::make_unique<duckdb::DuckDB>(nullptr, &config);
    SLUICE_RETURN_NOT_OK(EnsureBuiltinExtensions(*state->db));
    internal::RegisterSparkString(*state->db->instance);
    internal::RegisterSparkFunctions(*state->db->instance);
    internal::RegisterRowLists(*state->db->instance);
    internal::RegisterObjectStoreFileSystem(*state->db->instance);
    if (!options.time_zone.empty()) {
      duckdb::Connection conn(*state->db);
      auto r = conn.Query("SET GLOBAL TimeZone = " + QuoteLiteral(options.time_zone));
      if (r->HasError()) {
        return internal::StatusFromError(r->GetErrorObject())
            .WithContext("EngineOptions.time_zone");
      }
    }
    return std::unique_ptr<Engine>(new Engine(std::move(state)));
  });
}

Engine::Engine(std::unique_ptr<internal::EngineState> state) : state_(std::move(state)) {}

Engine::~Engine() = default;

Result<std::unique_ptr<Connection>> Engine::Connect() {
  return internal::CatchAll([&]() -> Result<std::unique_ptr<Connection>> {
    auto cs = std::make_unique<internal::ConnectionState>();
    cs->db = state_->db->instance;
    cs->conn = std::make_unique<duckdb::Connection>(*state_->db);
    return std::unique_ptr<Connection>(new Connection(std::move(cs)));
  });
}

}  // namespace sluice::engine
