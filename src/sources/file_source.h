// FileSource: `read_files(path, format => ...)`, new files in a directory (Spark's
// FileStreamSource with Auto Loader's schema handling).
//
// Listing: the files directly in `path` (all depths with recursive=true), skipping names that
// begin with '.' or '_' (temporary and metadata files, as Spark), taken in order of
// modification time, then path. Each file is read exactly once: a file is known by its path, so
// a file that changes after being read is not read again. Files should be moved into the
// directory complete (write elsewhere, then rename). A missing directory has no files yet; a
// path that is a file is InvalidArgument naming it.
//
// LatestOffset lists the directory, takes the unseen files up to the limits, and records them
// as the next entry of the file source log (file_source_log.h) before returning
// {"logOffset":N}. GetBatch(start, end) reads the files of log entries (start, end].
//
// Schema: the `schema` option, else inferred from the first files (up to 100, by the order
// above) when the source is first created and persisted in <checkpoint_dir>/_schemas/<k>
// ("v1\n" + JSON), so a restart reads with the same schema. Every batch has the schema's columns
// plus `_rescued_data` (VARCHAR):
// - a line that is not a JSON object (json), a CSV row the CSV reader rejects: every column
//   NULL and `_rescued_data` = the raw text;
// - a value that does not convert to its column's type: the column NULL and `_rescued_data` =
//   {"<column>":<raw value>,...,"_file_path":"<path>"};
// - schemaEvolutionMode: addNewColumns (default without `schema`): a field/column that is not
//   in the schema stops the stream (InvalidArgument naming the new columns) after the schema
//   with the new columns was persisted; after a restart the stream continues with them (the
//   batch that failed is re-read with the new schema). rescue: unknown fields go to
//   `_rescued_data`. none (default with `schema`): unknown fields are ignored.
//   failOnNewColumns: like addNewColumns without updating the schema.
// Bad rows are never dropped and never stop the stream; Metrics() counts them. With
// badRecordsPath, rows with `_rescued_data` are also written as JSON lines to
// <badRecordsPath>/<logOffset>/bad_records/part-00000.json.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sources/file_source_log.h"
#include "sources/source.h"

namespace sluice::sources {

enum class FileFormat { kJson, kCsv, kParquet };
enum class SchemaEvolutionMode { kAddNewColumns, kRescue, kNone, kFailOnNewColumns };

inline constexpr const char* kRescuedDataColumn = "_rescued_data";

struct FileSourceOptions {
  std::string path;  // directory; relative paths resolve against the cwd
  FileFormat format = FileFormat::kJson;
  std::optional<std::string> schema;             // "id BIGINT, ts TIMESTAMP"
  std::optional<int64_t> max_files_per_trigger;  // none: no limit
  std::optional<int64_t> max_bytes_per_trigger;  // none: no limit (soft: at least one file)
  bool recursive = false;
  std::optional<SchemaEvolutionMode> schema_evolution_mode;  // default: see above
  std::optional<std::string> bad_records_path;
  bool csv_header = true;  // csv: first line names the columns
  // csv with a header (Spark's enforceSchema, default true): a header that names none of the
  // schema's columns is read by position, with a warning, as Spark does; false refuses a header
  // that does not name the schema's columns in order (Spark's CSVHeaderChecker).
  bool csv_enforce_schema = true;
  std::string csv_delimiter = ",";
  // Internal (tests, benchmarks; not a read_files option): false reads JSON with the SQL path
  // only (see ReadJson), which the C++ decoder must match.
  bool json_decoder = true;
  // Internal (tests): threads that decode a JSON batch; 0 chooses (one per core, at most 4, each
  // with at least 16 MiB of files).
  int json_decode_threads = 0;
};

class FileSource final : public Source {
 public:
  // Resolves the path, loads the log and the schema (given, persisted, or inferred).
  // InvalidArgument when no schema is given and none can be inferred (no files yet).
  static Result<std::unique_ptr<FileSource>> Open(const SourceContext& ctx,
                                                  FileSourceOptions options);

  std::string Description() const override { return "FileStreamSource[" + dir_ + "]"; }
  const engine::Schema& schema() const override { return schema_; }
  Result<std::optional<OffsetJson>> LatestOffset(const std::optional<OffsetJson>& start,
                                                 const ReadLimit& limit) override;
  Status PrepareForAvailableNow() override;
  Result<engine::Batch> GetBatch(const std::optional<OffsetJson>& start,
                                 const OffsetJson& end) override;
  // numFilesOutstanding, numBytesOutstanding (at the last LatestOffset), numRescuedRows (last
  // GetBatch), numRescuedRowsTotal (this source object).
  std::map<std::string, std::string> Metrics(
      const std::optional<OffsetJson>& latest) const override;

  static Result<int64_t> ParseOffset(const OffsetJson& json);
  static OffsetJson MakeOffset(int64_t log_offset);

  SchemaEvolutionMode evolution_mode() const { return mode_; }
  // Tests: whether the last JSON batch was read by the C++ decoder (not the SQL path).
  bool last_json_decoded() const { return last_json_decoded_; }

 private:
  FileSource(const SourceContext& ctx, FileSourceOptions options);
  Result<std::vector<fs::FileInfo>> ListNewFiles();
  Status LoadSchema();
  Result<engine::Schema> InferSchema(const std::vector<std::string>& paths);
  Status PersistSchema(const engine::Schema& schema);
  Result<engine::Batch> ReadFiles(const std::vector<std::string>& paths, int64_t log_offset);
  Result<engine::Batch> ReadJson(const std::vector<std::string>& paths);
  // The C++ path (engine/json_decoder.h); nullopt when this batch needs the SQL path.
  Result<std::optional<engine::Batch>> ReadJsonDecoded(const std::vector<std::string>& paths);
  Result<engine::Batch> ReadJsonSql(const std::vector<std::string>& paths);
  Result<engine::Batch> ReadCsv(const std::vector<std::string>& paths);
  // The header of CSV file `path` against the schema (csv_enforce_schema): nullopt to read it by
  // name, or the names (a DuckDB list) to read its columns by position; InvalidArgument naming
  // the file when enforceSchema is false and the header does not conform.
  Result<std::optional<std::string>> CheckCsvHeader(const std::string& path,
                                                    const engine::Schema& header);
  Result<engine::Batch> ReadParquet(const std::vector<std::string>& paths);
  Status CheckNewColumns(const std::vector<std::string>& paths,
                         const std::vector<std::string>& new_columns);
  Status WriteBadRecords(const engine::Batch& batch, int64_t log_offset);

  SourceContext ctx_;
  FileSourceOptions options_;
  std::string dir_;  // absolute
  SchemaEvolutionMode mode_ = SchemaEvolutionMode::kNone;
  std::unique_ptr<engine::Connection> conn_;
  std::unique_ptr<FileSourceLog> log_;
  engine::Schema data_schema_;  // without _rescued_data
  engine::Schema schema_;       // data_schema_ + _rescued_data
  int64_t schema_id_ = -1;      // persisted schema version, -1 when given by the option
  std::set<std::string> seen_;  // URIs of files in the log
  int64_t latest_log_id_ = -1;
  std::optional<std::set<std::string>> available_now_;  // URIs present at PrepareForAvailableNow
  int64_t outstanding_files_ = 0;
  int64_t outstanding_bytes_ = 0;
  int64_t last_rescued_ = 0;
  bool last_json_decoded_ = false;
  int64_t decoded_rescued_ = 0;  // rows with _rescued_data in the last decoded JSON batch
  int64_t total_rescued_ = 0;
};

}  // namespace sluice::sources
