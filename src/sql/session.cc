#include "sql/session.h"

#include <cctype>
#include <utility>

#include "common/strings.h"
#include "dialect/spark_sql.h"
#include "fs/file_system.h"
#include "fs/routing_file_system.h"
#include "fs/s3_file_system.h"
#include "sources/kafka/kafka_source.h"
#include "sources/source_util.h"
#include "sql/delta_references.h"
#include "sql/kafka_batch_read.h"
#include "sql/literal_rows.h"
#include "sql/read_state.h"
#include "sql/sink_statement_parser.h"
#include "sql/spark_confs.h"
#include "sql/streaming_progress_store.h"
#include "sql/streaming_statement_parser.h"
#include "sql/table_statement_parser.h"

namespace sluice::sql {
namespace {

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// A tiny cursor over a statement for the few statements Sluice parses itself.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}

  // Skips whitespace and comments (-- to the end of the line, /* ... */).
  void SkipSpace() {
    for (;;) {
      while (pos_ < s_.size() && IsSpace(s_[pos_])) ++pos_;
      if (s_.compare(pos_, 2, "--") == 0) {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else if (s_.compare(pos_, 2, "/*") == 0) {
        size_t close = s_.find("*/", pos_ + 2);
        pos_ = close == std::string_view::npos ? s_.size() : close + 2;
      } else {
        return;
      }
    }
  }
  // Consumes `word` (case-insensitive) when it is next, followed by a non-identifier char.
  bool Keyword(std::string_view word) {
    SkipSpace();
    if (s_.size() - pos_ < word.size()) return false;
    for (size_t i = 0; i < word.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(s_[pos_ + i])) != word[i]) return false;
    }
    size_t end = pos_ + word.size();
    if (end < s_.size() &&
        (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_' || s_[end] == '.')) {
      return false;
    }
    pos_ = end;
    return true;
  }
  // A dotted identifier: [A-Za-z_][A-Za-z0-9_.]*
  std::string_view DottedName() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == '.')) {
      ++pos_;
    }
    return s_.substr(start, pos_ - start);
  }
  bool Char(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string_view Rest() {
    SkipSpace();
    std::string_view rest = s_.substr(pos_);
    while (!rest.empty() && (IsSpace(rest.back()) || rest.back() == ';')) rest.remove_suffix(1);
    return rest;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

// Parses a SQL literal as SET takes it: 'string' ('' escapes), a number, true/false, or a bare
// word. Returns the value's text.
Result<std::string> ParseLiteral(std::string_view text) {
  if (text.empty()) return Status::InvalidArgument("SET needs a value");
  if (text.front() == '\'') {
    std::string out;
    size_t i = 1;
    for (; i < text.size(); ++i) {
      if (text[i] == '\'') {
        if (i + 1 < text.size() && text[i + 1] == '\'') {
          out += '\'';
          ++i;
          continue;
        }
        break;
      }
      out += text[i];
    }
    if (i != text.size() - 1) {
      return Status::InvalidArgument("SET value is not a single literal: " + std::string(text));
    }
    return out;
  }
  for (char c : text) {
    if (IsSpace(c)) {
      return Status::InvalidArgument("SET value is not a single literal: " + std::string(text));
    }
  }
  return std::string(text);
}

// Epoch milliseconds of a timestamp string ('2026-01-01 10:00:00', ISO-8601 with a zone), read
// in UTC when it has no zone.
Result<int64_t> TimestampToMillis(engine::Connection* conn, const std::string& text) {
  Result<engine::Batch> r =
      conn->Query("SELECT epoch_ms(CAST(" + QuoteLiteral(text) + " AS TIMESTAMPTZ))");
  if (!r.ok()) {
    return Status::InvalidArgument("'" + text + "' is not a timestamp: " + r.status().message());
  }
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> ms, r->GetInt64(0, 0));
  if (!ms) return Status::InvalidArgument("'" + text + "' is not a timestamp");
  return *ms;
}

// A warehouse is a local directory or an s3:// prefix (docs/storage.md "The warehouse on S3");
// other schemes are refused by name, before anything is created.
Status CheckWarehousePath(const std::string& path) {
  if (fs::PathScheme(path).empty()) return Status::OK();
  return fs::FileSystemForPath(path).status();
}

// Reconfigures the process-wide S3 file system from the sluice.s3.* settings of `settings`.
Status ApplyS3Settings(const Settings& settings) {
  fs::S3Overrides o;
  o.endpoint = settings.GetString("s3.endpoint");
  while (!o.endpoint.empty() && o.endpoint.back() == '/') o.endpoint.pop_back();
  o.region = settings.GetString("s3.region");
  const std::string style = AsciiLower(settings.GetString("s3.pathStyle"));
  if (style == "true" || style == "false") {
    o.path_style = style == "true";
  } else if (!style.empty()) {
    return Status::InvalidArgument("setting 'sluice.s3.pathStyle' takes true or false, not '" +
                                   settings.GetString("s3.pathStyle") + "'");
  }
  return fs::ConfigureDefaultS3FileSystem(o);
}

}  // namespace

Session::Session(std::string warehouse, std::unique_ptr<engine::Engine> engine,
                 std::unique_ptr<engine::Connection> connection)
    : warehouse_(std::move(warehouse)),
      engine_(std::move(engine)),
      connection_(std::move(connection)),
      catalog_(std::make_unique<TableCatalog>(fs::PathFileSystem(), warehouse_)),
      executor_(std::make_unique<TableStatementExecutor>(
          fs::PathFileSystem(), engine_.get(), connection_.get(), catalog_.get(), &settings_)) {
  ResetStreaming();
}

void Session::ResetStreaming() {
  StreamingTableManagerOptions o;
  o.fs = fs::PathFileSystem();
  o.engine = engine_.get();
  o.tables = catalog_.get();
  o.settings = &settings_;
  o.run_table_statement = [this](const TableStatement& statement) {
    return executor_->Execute(statement);
  };
  streaming_ = std::make_unique<StreamingTableManager>(std::move(o));
}

Session::~Session() {
  streaming_.reset();
  executor_.reset();
  connection_.reset();
  engine_.reset();
}

void Session::SetIdempotentTxn(std::optional<delta::SetTransaction> txn) {
  idempotent_txn_ = txn;
  executor_->SetIdempotentTxn(std::move(txn));
}

void Session::ResetCatalog() {
  tables_.clear();
  catalog_ = std::make_unique<TableCatalog>(fs::PathFileSystem(), warehouse_);
  executor_ = std::make_unique<TableStatementExecutor>(
      fs::PathFileSystem(), engine_.get(), connection_.get(), catalog_.get(), &settings_);
  executor_->SetIdempotentTxn(idempotent_txn_);
  ResetStreaming();
}

Result<delta::DeltaTable*> Session::TableAt(const std::string& path) {
  auto it = tables_.find(path);
  if (it != tables_.end()) return it->second.get();
  SLUICE_ASSIGN_OR_RETURN(auto table,
                          delta::DeltaTable::Open(fs::PathFileSystem(), engine_.get(), path));
  delta::DeltaTable* raw = table.get();
  tables_[path] = std::move(table);
  return raw;
}

Result<std::string> Session::PrepareDeltaViews(std::string_view statement) {
  for (const std::string& view : temp_views_) {
    SLUICE_RETURN_NOT_OK(connection_->Execute("DROP VIEW IF EXISTS " + QuoteIdentifier(view)));
  }
  temp_views_.clear();
  for (const std::string& batch : temp_batches_) {
    SLUICE_RETURN_NOT_OK(connection_->UnregisterBatch(batch));
  }
  temp_batches_.clear();
  // A temporary view of the user's shadows a table of its name (as Spark's do), the one this
  // statement creates too.
  SLUICE_ASSIGN_OR_RETURN(std::optional<std::string> created,
                          SessionTempViews::CreatedView(statement));
  SLUICE_ASSIGN_OR_RETURN(RewrittenQuery query,
                          RewriteDeltaReferences(statement, [&](const std::string& name) {
                            if (user_views_.Contains(name)) return false;
                            if (check_relations_.count(AsciiLower(name)) > 0) return false;
                            if (created && AsciiLower(name) == *created) return false;
                            Result<bool> exists = catalog_->Exists(TableName{name, false});
                            return exists.ok() && *exists;
                          }));
  statement_references_ = query.references;
  // The Delta tables the temporary views it reads read: their views again, as of now.
  SLUICE_ASSIGN_OR_RETURN(std::vector<DeltaReference> through_views,
                          user_views_.ReferencesRead(statement));
  for (DeltaReference& ref : through_views) {
    bool known = false;
    for (const DeltaReference& r : query.references) known = known || r.view_name == ref.view_name;
    if (!known) query.references.push_back(std::move(ref));
  }
  for (const DeltaReference& ref : query.references) {
    const std::string display =
        ref.table.is_path ? "delta.`" + ref.table.name + "`" : ref.table.name;
    SLUICE_ASSIGN_OR_RETURN(std::string path, catalog_->Resolve(ref.table));
    SLUICE_ASSIGN_OR_RETURN(bool exists,
                            fs::PathFileSystem()->Exists(fs::JoinPath(path, "_delta_log")));
    if (!exists) {
      return Status::NotFound(ref.table.is_path ? display + " is not a Delta table"
                                                : "table " + display +
                                                      " does not exist in warehouse " + warehouse_);
    }
    if (ref.kind == DeltaReference::Kind::kHistory || ref.kind == DeltaReference::Kind::kDetail ||
        ref.kind == DeltaReference::Kind::kDescribe) {
      DescribeStatement describe;
      describe.kind = ref.kind == DeltaReference::Kind::kHistory ? DescribeStatement::Kind::kHistory
                      : ref.kind == DeltaReference::Kind::kDetail ? DescribeStatement::Kind::kDetail
                                                                  : DescribeStatement::Kind::kTable;
      describe.table = ref.table;
      SLUICE_ASSIGN_OR_RETURN(engine::Batch rows, executor_->Execute(describe));
      SLUICE_RETURN_NOT_OK(connection_->RegisterBatch(ref.view_name, rows));
      temp_batches_.push_back(ref.view_name);
      continue;
    }
    SLUICE_ASSIGN_OR_RETURN(delta::DeltaTable * table, TableAt(path));
    if (ref.kind == DeltaReference::Kind::kChanges) {
      Result<engine::Batch> changes = Status::Internal("unset");
      if (ref.changes_by_timestamp) {
        SLUICE_ASSIGN_OR_RETURN(int64_t start,
                                TimestampToMillis(connection_.get(), ref.changes_start));
        std::optional<int64_t> end;
        if (ref.changes_end) {
          SLUICE_ASSIGN_OR_RETURN(end, TimestampToMillis(connection_.get(), *ref.changes_end));
        }
        changes = table->ChangesBetweenTimestamps(start, end);
      } else {
        std::optional<Version> end;
        if (ref.changes_end) end = Version(std::stoll(*ref.changes_end));
        changes = table->Changes(Version(std::stoll(ref.changes_start)), end);
      }
      if (!changes.ok()) return changes.status().WithContext("table_changes('" + display + "')");
      SLUICE_RETURN_NOT_OK(connection_->RegisterBatch(ref.view_name, *changes));
      temp_batches_.push_back(ref.view_name);
      continue;
    }
    std::shared_ptr<const delta::Snapshot> snapshot;
    if (ref.kind == DeltaReference::Kind::kVersion) {
      SLUICE_ASSIGN_OR_RETURN_CTX(snapshot, table->SnapshotAt(Version(*ref.version)), display);
    } else if (ref.kind == DeltaReference::Kind::kTimestamp) {
      SLUICE_ASSIGN_OR_RETURN(int64_t ms, TimestampToMillis(connection_.get(), *ref.timestamp));
      SLUICE_ASSIGN_OR_RETURN_CTX(snapshot, table->SnapshotAtTimestamp(ms), display);
    } else {
      SLUICE_ASSIGN_OR_RETURN_CTX(snapshot, table->Latest(), display);
    }
    SLUICE_ASSIGN_OR_RETURN_CTX(std::string scan, table->ScanSql(*snapshot), display);
    SLUICE_RETURN_NOT_OK(connection_->Execute("CREATE OR REPLACE TEMP VIEW " +
                                              QuoteIdentifier(ref.view_name) + " AS " + scan));
    temp_views_.push_back(ref.view_name);
  }
  return query.sql;
}

Result<std::unique_ptr<Session>> Session::Open(const SessionOptions& options) {
  if (options.warehouse.empty()) return Status::InvalidArgument("the warehouse path is empty");
  SLUICE_RETURN_NOT_OK(CheckWarehousePath(options.warehouse));
  SLUICE_RETURN_NOT_OK_CTX(fs::PathFileSystem()->CreateDirectories(options.warehouse),
                           "creating the warehouse directory");
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> engine,
                          engine::Engine::Open(options.engine));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Connection> connection, engine->Connect());
  auto session = std::unique_ptr<Session>(
      new Session(options.warehouse, std::move(engine), std::move(connection)));
  SLUICE_RETURN_NOT_OK(session->settings_.Set("warehouse", options.warehouse));
  return session;
}

Status Session::MaybeHandleSetting(std::string_view statement, bool* handled) {
  *handled = false;
  Cursor cursor(statement);
  bool is_set = cursor.Keyword("set");
  bool is_reset = !is_set && cursor.Keyword("reset");
  if (!is_set && !is_reset) return Status::OK();
  std::string_view name = cursor.DottedName();
  std::string lower_name(name);
  for (char& c : lower_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower_name.rfind("spark.", 0) == 0) {  // Spark's name of a setting (spark_confs.h)
    *handled = true;
    if (is_reset) {
      if (AsciiEqualsIgnoreCase(name, kSessionTimeZoneConf)) return Status::OK();
      SLUICE_ASSIGN_OR_RETURN(std::string setting, SluiceSettingOfSparkConf(name));
      return settings_.Reset(setting);
    }
    if (!cursor.Char('=') && !cursor.Keyword("to")) {
      return Status::InvalidArgument("expected '=' after SET " + std::string(name));
    }
    SLUICE_ASSIGN_OR_RETURN(std::string value, ParseLiteral(cursor.Rest()));
    SLUICE_ASSIGN_OR_RETURN(bool time_zone, IsSessionTimeZoneConf(name, value));
    if (time_zone) return Status::OK();  // UTC, the zone the session runs in
    SLUICE_ASSIGN_OR_RETURN(std::string setting, SluiceSettingOfSparkConf(name));
    return settings_.Set(setting, value);
  }
  if (lower_name.rfind("sluice.", 0) != 0) return Status::OK();  // a DuckDB setting
  *handled = true;
  const bool is_s3 = lower_name.rfind("sluice.s3.", 0) == 0;
  if (is_reset) {
    if (!cursor.Rest().empty()) {
      return Status::InvalidArgument("RESET takes only a setting name: " + std::string(statement));
    }
    SLUICE_RETURN_NOT_OK(settings_.Reset(name));
    return is_s3 ? ApplyS3Settings(settings_) : Status::OK();
  }
  if (!cursor.Char('=') && !cursor.Keyword("to")) {
    return Status::InvalidArgument("expected '=' after SET " + std::string(name));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string value, ParseLiteral(cursor.Rest()));
  if (is_s3) {  // applied first: a value S3 refuses is not kept
    Settings with = settings_;
    SLUICE_RETURN_NOT_OK(with.Set(name, value));
    SLUICE_RETURN_NOT_OK(ApplyS3Settings(with));
  }
  SLUICE_RETURN_NOT_OK(settings_.Set(name, value));
  if (lower_name == "sluice.warehouse") {
    if (value.empty()) return Status::InvalidArgument("sluice.warehouse cannot be empty");
    SLUICE_RETURN_NOT_OK(CheckWarehousePath(value));
    SLUICE_RETURN_NOT_OK_CTX(fs::PathFileSystem()->CreateDirectories(value),
                             "creating the warehouse directory");
    warehouse_ = value;
    ResetCatalog();
  }
  return Status::OK();
}

Result<std::string> Session::PrepareProgressViews(std::string_view statement) {
  SLUICE_ASSIGN_OR_RETURN(ProgressRewrite rewrite, RewriteStreamingProgress(statement));
  for (const ProgressReference& ref : rewrite.references) {
    SLUICE_ASSIGN_OR_RETURN(std::string sql, streaming_->ProgressSql(ref.name));
    SLUICE_RETURN_NOT_OK(connection_->Execute("CREATE OR REPLACE TEMP VIEW " +
                                              QuoteIdentifier(ref.view_name) + " AS " + sql));
    temp_views_.push_back(ref.view_name);
  }
  if (rewrite.show_streaming_tables) {
    SLUICE_ASSIGN_OR_RETURN(engine::Batch rows,
                            streaming_->Execute(ShowStreamingTablesStatement{}, connection_.get()));
    SLUICE_RETURN_NOT_OK(connection_->RegisterBatch(kShowStreamingTablesView, rows));
    temp_batches_.push_back(kShowStreamingTablesView);
  }
  return rewrite.sql;
}

Result<std::string> Session::PrepareReadStateViews(std::string_view statement) {
  SLUICE_ASSIGN_OR_RETURN(ReadStateRewrite rewrite, RewriteReadState(statement));
  for (const ReadStateReference& ref : rewrite.references) {
    const std::string what =
        "read_state('" + ref.name + "'" +
        (ref.operator_index ? ", " + std::to_string(*ref.operator_index) : "") + ")";
    const std::string lower = NormalizeTableName(ref.name);
    SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingDefinition> def,
                            streaming_->catalog().Find(StreamingDefinition::Kind::kTable, lower));
    if (!def) {
      SLUICE_ASSIGN_OR_RETURN(def,
                              streaming_->catalog().Find(StreamingDefinition::Kind::kFlow, lower));
    }
    if (!def) return Status::NotFound(what + ": " + ref.name + " is not a streaming table or flow");
    SLUICE_ASSIGN_OR_RETURN(
        std::vector<OperatorState> ops,
        ReadCommittedState(fs::PathFileSystem(), streaming_->catalog().CheckpointOf(*def),
                           ref.operator_index, what));
    // One operator: its rows. Several: their rows by column name (NULL where one lacks a column).
    std::string union_sql;
    for (size_t i = 0; i < ops.size(); ++i) {
      const std::string part =
          ops.size() == 1 ? ref.view_name : ref.view_name + "#" + std::to_string(i);
      SLUICE_RETURN_NOT_OK(connection_->RegisterBatch(part, ops[i].rows));
      temp_batches_.push_back(part);
      union_sql +=
          (i ? " UNION ALL BY NAME SELECT * FROM " : "SELECT * FROM ") + QuoteIdentifier(part);
    }
    if (ops.size() > 1) {
      SLUICE_RETURN_NOT_OK_CTX(
          connection_->Execute("CREATE OR REPLACE TEMP VIEW " + QuoteIdentifier(ref.view_name) +
                               " AS " + union_sql),
          what);
      temp_views_.push_back(ref.view_name);
    }
  }
  return rewrite.sql;
}

Result<std::string> Session::PrepareKafkaBatchViews(std::string_view statement) {
  SLUICE_ASSIGN_OR_RETURN(KafkaBatchRewrite rewrite, RewriteKafkaBatchReads(statement));
  for (const KafkaBatchReference& ref : rewrite.references) {
    sources::SourceContext ctx;
    ctx.fs = fs::PathFileSystem();
    ctx.engine = engine_.get();
    ctx.options = ref.options;
    SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch rows, sources::kafka::KafkaSource::ReadBatch(ctx),
                                "read_kafka");
    SLUICE_RETURN_NOT_OK(connection_->RegisterBatch(ref.view_name, rows));
    temp_batches_.push_back(ref.view_name);
  }
  return rewrite.sql;
}

Result<engine::Batch> Session::Drop(const DropTableStatement& drop) {
  if (!drop.table.is_path) {
    SLUICE_ASSIGN_OR_RETURN(bool was_streaming, streaming_->DropIfStreaming(drop.table.name));
    if (was_streaming) {
      SLUICE_ASSIGN_OR_RETURN(bool exists, catalog_->Exists(drop.table));
      if (!exists) return engine::Batch();
    }
  }
  return executor_->Execute(drop);
}

void Session::Interrupt() {
  connection_->Interrupt();
  streaming_->Interrupt();
}

Result<engine::Batch> Session::Execute(std::string_view original) {
  bool handled = false;
  SLUICE_RETURN_NOT_OK(MaybeHandleSetting(original, &handled));
  if (handled) return engine::Batch();
  // Sink statements hold only names and literals, read as written: the dialect would join the
  // adjacent literals of OPTIONS ('key' 'value'), which Spark's property lists keep apart.
  SLUICE_ASSIGN_OR_RETURN(std::optional<SinkStatement> sink_statement,
                          ParseSinkStatement(original));
  if (sink_statement) return streaming_->ExecuteSink(*sink_statement, connection_.get());
  // Spark's spellings in the engine's words (dialect/spark_sql.h), for every statement.
  SLUICE_ASSIGN_OR_RETURN(const std::string rewritten,
                          dialect::RewriteSparkSql(connection_.get(), original));
  const std::string_view statement = rewritten;
  SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingStatement> streaming_statement,
                          ParseStreamingStatement(statement));
  if (streaming_statement) {
    Result<engine::Batch> result = streaming_->Execute(*streaming_statement, connection_.get());
    tables_.clear();  // a REFRESH may have written tables
    return result;
  }
  SLUICE_ASSIGN_OR_RETURN(std::optional<TableStatement> table_statement,
                          ParseTableStatement(statement));
  // Queries inside table statements (AS SELECT, INSERT ... SELECT, MERGE ... USING) read Delta
  // tables through the same views as plain queries. An INSERT's target is written, not read:
  // only its query gets views (a view of the target would open every file of the table, at
  // every INSERT).
  auto* insert = table_statement ? std::get_if<InsertStatement>(&*table_statement) : nullptr;
  SLUICE_ASSIGN_OR_RETURN(std::string sql,
                          PrepareDeltaViews(insert ? std::string_view(insert->query) : statement));
  SLUICE_ASSIGN_OR_RETURN(sql, PrepareProgressViews(sql));
  SLUICE_ASSIGN_OR_RETURN(sql, PrepareReadStateViews(sql));
  SLUICE_ASSIGN_OR_RETURN(sql, PrepareKafkaBatchViews(sql));
  if (table_statement) {
    if (insert) {
      insert->query = std::move(sql);
    } else if (sql != statement) {
      SLUICE_ASSIGN_OR_RETURN(table_statement, ParseTableStatement(sql));
      if (!table_statement) {
        return Status::Internal("the table statement is no longer one after its views: " +
                                std::string(statement));
      }
    }
    Result<engine::Batch> result = Status::Internal("unset");
    if (const auto* drop = std::get_if<DropTableStatement>(&*table_statement)) {
      result = Drop(*drop);
    } else {
      result = executor_->Execute(*table_statement);
    }
    tables_.clear();  // a write may have changed what cached readers hold
    return result;
  }
  SLUICE_ASSIGN_OR_RETURN(engine::Batch rows, connection_->Query(sql));
  SLUICE_RETURN_NOT_OK(user_views_.AfterStatement(statement, statement_references_));
  return rows;
}

Result<std::optional<engine::Schema>> Session::CheckStreamingDefinition(
    std::string_view statement, const StreamingTableManager::PendingSchemas& pending) {
  SLUICE_ASSIGN_OR_RETURN(const std::string rewritten,
                          dialect::RewriteSparkSql(connection_.get(), statement));
  SLUICE_ASSIGN_OR_RETURN(std::optional<StreamingStatement> parsed,
                          ParseStreamingStatement(rewritten));
  if (!parsed) return std::optional<engine::Schema>();
  return streaming_->CheckDefinition(*parsed, pending, /*against_checkpoint=*/true);
}

Result<engine::Schema> Session::CheckQuerySchema(
    std::string_view query, const StreamingTableManager::PendingSchemas& pending) {
  std::vector<std::string> registered;
  Status st;
  // A dataset of the pipeline is read with the schema its definition gives, also when its table
  // exists (its new query may add columns): the name then reads the batch, not the table.
  for (const auto& [name, schema] : pending) {
    Result<engine::Batch> empty = sources::EmptyBatch(connection_.get(), schema);
    if (empty.ok()) st = connection_->RegisterBatch(name, *empty);
    if (!empty.ok() || !st.ok()) {
      st = empty.ok() ? st : empty.status();
      break;
    }
    registered.push_back(name);
    check_relations_.insert(name);
  }
  std::optional<engine::Schema> schema;
  if (st.ok()) {
    Result<engine::Batch> rows =
        Execute("SELECT * FROM (" + std::string(query) + ") AS __sluice_check LIMIT 0");
    if (rows.ok()) schema = rows->schema();
    st = rows.status();
  }
  for (const std::string& name : registered) (void)connection_->UnregisterBatch(name);
  check_relations_.clear();
  SLUICE_RETURN_NOT_OK(st);
  return *schema;
}

}  // namespace sluice::sql
