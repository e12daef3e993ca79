// The engine: Sluice's only door to DuckDB (docs/architecture.md). Every layer above runs batch
// compute through these types; DuckDB headers are included only by files in src/engine/.
//
// Model: an Engine owns one embedded DuckDB database (in memory, extension autoload and
// autoinstall off). Connections run SQL. A Batch is an immutable set of columnar rows handed
// between layers; a Batch registered on a Connection is visible to its SQL as a table.
// DuckDB exceptions never escape: every call returns Status/Result, with DuckDB's message.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/status.h"
#include "engine/types.h"

namespace sluice::engine {

namespace internal {
struct BatchData;  // holds DuckDB's materialized rows (defined in batch.cc)
struct EngineState;
struct ConnectionState;
}  // namespace internal

// Immutable columnar rows. Copying a Batch is cheap (shared ownership of the same rows).
// Thread safety: const methods may be called from several threads at once.
class Batch {
 public:
  // A batch with no columns and no rows.
  Batch();

  const Schema& schema() const;
  int64_t num_rows() const;
  size_t num_columns() const;
  // Index of the column named `name` (exact match), or nullopt.
  std::optional<size_t> ColumnIndex(std::string_view name) const;

  // Cell accessors, for metadata-sized data (logs, test results), not for hot paths.
  // row < num_rows() and col < num_columns() are the caller's duty (SLUICE_DCHECK).
  bool IsNull(int64_t row, size_t col) const;
  // The value as DuckDB's CAST(value AS VARCHAR) shows it; nullopt for NULL. TIMESTAMPTZ values
  // are shown in UTC ("2024-01-02 03:04:05+00"), which is what CAST shows under the engine's
  // default time zone (EngineOptions::time_zone).
  std::optional<std::string> GetString(int64_t row, size_t col) const;
  // The value cast to BIGINT / DOUBLE / BOOLEAN; nullopt for NULL; InvalidArgument when the
  // cast fails.
  Result<std::optional<int64_t>> GetInt64(int64_t row, size_t col) const;
  Result<std::optional<double>> GetDouble(int64_t row, size_t col) const;
  Result<std::optional<bool>> GetBool(int64_t row, size_t col) const;

  // Bytes held by the rows (approximate: DuckDB's allocation).
  int64_t memory_bytes() const;

  // Rows [offset, offset + length) as a new batch (clamped to the rows present). The whole range
  // shares the rows; a proper sub-range copies them.
  Batch Slice(int64_t offset, int64_t length) const;
  // All rows of `batches`, which must share column types; InvalidArgument otherwise. Column names
  // come from the first batch with columns. An empty list gives the empty Batch().
  static Result<Batch> Concat(const std::vector<Batch>& batches);

  // Internal: engine files build batches from DuckDB data. The rows live in memory of the
  // DuckDB database that produced them (counted against its memory_limit); a Batch keeps that
  // database alive, so it may outlive the Engine.
  explicit Batch(std::shared_ptr<const internal::BatchData> data);
  const std::shared_ptr<const internal::BatchData>& data() const { return data_; }

 private:
  std::shared_ptr<const internal::BatchData> data_;
};

struct EngineOptions {
  // DuckDB worker threads. 1 is fastest for micro-batches of a few thousand rows.
  int threads = 1;
  // DuckDB memory limit, e.g. "4GB"; empty means DuckDB's default (80% of RAM).
  std::string memory_limit;
  // Where DuckDB may spill; empty means no spilling directory.
  std::string temp_directory;
  // Session time zone of every connection (DuckDB's TimeZone setting): how TIMESTAMPTZ values
  // are shown and cast. "UTC" by default so that results do not depend on the machine; empty
  // keeps DuckDB's default (the machine's zone). Batch::GetString always shows UTC ("+00").
  std::string time_zone = "UTC";
};

struct ParquetWriteOptions {
  std::string compression = "snappy";  // snappy | zstd | uncompressed | gzip | lz4
  int64_t row_group_size = 122880;     // rows per row group
};

// Per-column statistics of a written Parquet file, for Delta's add.stats. Values are DuckDB's
// VARCHAR rendering of the min/max (nullopt when every value is NULL or the type has no order).
struct ColumnStats {
  std::string column;  // top-level column name; nested struct leaves as "a.b"
  std::optional<std::string> min;
  std::optional<std::string> max;
  int64_t null_count = 0;
};

struct ParquetFileInfo {
  std::string path;
  int64_t num_rows = 0;
  int64_t size_bytes = 0;
  std::vector<ColumnStats> stats;
};

class Connection;

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Open(const EngineOptions& options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // A new connection. The Engine must outlive it. Thread safety: the Engine is thread-safe;
  // each Connection is used by one thread at a time.
  Result<std::unique_ptr<Connection>> Connect();

  internal::EngineState* state() { return state_.get(); }

 private:
  explicit Engine(std::unique_ptr<internal::EngineState> state);
  std::unique_ptr<internal::EngineState> state_;
};

class Connection {
 public:
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs `sql` (one or more statements separated by ';') and returns the rows of the last.
  // Statements that return nothing give an empty batch. Errors carry DuckDB's message
  // (InvalidArgument for parser/binder/catalog errors, NotFound for missing tables/files,
  // IOError for I/O, Internal otherwise).
  Result<Batch> Query(std::string_view sql);
  // Runs `sql` and discards the rows.
  Status Execute(std::string_view sql);

  // Makes `batch` visible to this connection's SQL as a table (a temporary view) named `name`,
  // replacing any earlier registration or temporary view of that name. The rows are not copied:
  // the view shares ownership of them, so the caller may drop its Batch. Names follow DuckDB's
  // rules (case-insensitive). Costs ~0.1 ms whatever the size (bench/RESULTS.md). A batch with
  // no columns is InvalidArgument.
  Status RegisterBatch(const std::string& name, const Batch& batch);
  // Drops the view `name` (OK when it does not exist).
  Status UnregisterBatch(const std::string& name);

  // Writes `batch` as one Parquet file at `path` (overwriting) and returns its size and
  // per-column statistics: one ColumnStats per top-level column and per struct leaf ("a.b"),
  // in schema order; lists and maps get null_count only. Stats are computed exactly from the
  // batch (min/max as CAST(... AS VARCHAR)).
  Result<ParquetFileInfo> WriteParquet(const Batch& batch, const std::string& path,
                                       const ParquetWriteOptions& options = {});
  // Reads Parquet files (all columns, in file order) into one batch. Missing file: NotFound.
  // Paths are passed to DuckDB's read_parquet, so glob characters (*, ?) expand.
  Result<Batch> ReadParquet(const std::vector<std::string>& paths);

  // Cancels the statement running on this connection from another thread; that call returns
  // Cancelled. Thread-safe. Does nothing when no statement is running.
  void Interrupt();

  internal::ConnectionState* state() { return state_.get(); }

 private:
  friend class Engine;
  explicit Connection(std::unique_ptr<internal::ConnectionState> state);
  std::unique_ptr<internal::ConnectionState> state_;
};

}  // namespace sluice::engine
