// sluice::DeltaTable (include/sluice/delta_table.h) over the Delta reader, writer and DML of
// src/delta.
#include "sluice/delta_table.h"
#include "common/uuid.h"

#include <cctype>
#include <mutex>
#include <utility>

#include "api/api_internal.h"
#include "common/check.h"
#include "delta/describe.h"
#include "delta/dml_delete.h"
#include "delta/dml_merge.h"
#include "delta/dml_update.h"
#include "delta/dml_util.h"
#include "delta/optimize.h"
#include "delta/paths.h"
#include "delta/restore.h"
#include "delta/scan.h"
#include "delta/table.h"
#include "delta/table_writer.h"
#include "delta/vacuum.h"
#include "delta/write_util.h"
#include "engine/registered_batch.h"
#include "fs/routing_file_system.h"
#include "sluice/session.h"

namespace sluice {

namespace api {

// Members are declared so that the connection, reader and writer die before the engine.
struct DeltaTableState {
  std::shared_ptr<SessionState> session;       // null for a table opened without one
  std::unique_ptr<engine::Engine> own_engine;  // the private engine (no session)
  engine::Engine* engine = nullptr;
  std::shared_ptr<fs::FileSystem> fs;
  std::string path;
  std::unique_ptr<engine::Connection> conn;  // runs the operations' queries
  std::unique_ptr<delta::DeltaTable> reader;
  std::unique_ptr<delta::DeltaTableWriter> writer;
  std::mutex mu;  // serializes operations

  delta::DmlTable Dml() { return delta::DmlTable{writer.get(), fs, engine, conn.get()}; }
};

}  // namespace api

namespace {

Result<std::unique_ptr<api::DeltaTableState>> OpenState(std::unique_ptr<api::DeltaTableState> state,
                                                        bool sync) {
  std::string path = state->path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  state->path = path;
  SLUICE_ASSIGN_OR_RETURN_CTX(state->conn, state->engine->Connect(), "opening Delta table " + path);
  // DeltaTable::Open is NotFound when there is no Delta log.
  SLUICE_ASSIGN_OR_RETURN(state->reader, delta::DeltaTable::Open(state->fs, state->engine, path));
  delta::TableWriterOptions wo;
  wo.commit.sync = sync;
  SLUICE_ASSIGN_OR_RETURN(state->writer,
                          delta::DeltaTableWriter::Open(state->fs, state->engine, path, wo));
  return state;
}

DeltaOperationResult FromDml(const delta::DmlResult& r) {
  DeltaOperationResult out;
  if (r.version) out.version = r.version->value();
  out.metrics = r.metrics;
  return out;
}

std::optional<std::string> NonEmpty(const std::string& s) {
  if (s.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
  return s;
}

}  // namespace

// ---- DeltaTable --------------------------------------------------------------------------------

DeltaTable::DeltaTable(std::unique_ptr<api::DeltaTableState> state) : state_(std::move(state)) {}
DeltaTable::~DeltaTable() = default;

Result<std::unique_ptr<DeltaTable>> DeltaTable::ForPath(Session* session, const std::string& path) {
  if (session == nullptr) return Status::InvalidArgument("DeltaTable::ForPath: null session");
  auto state = std::make_unique<api::DeltaTableState>();
  state->session = api::FrameAccess::State(*session);
  state->engine = state->session->engine.get();
  state->fs = state->session->fs;
  state->path = path;
  SLUICE_ASSIGN_OR_RETURN(state, OpenState(std::move(state), /*sync=*/true));
  return std::unique_ptr<DeltaTable>(new DeltaTable(std::move(state)));
}

Result<std::unique_ptr<DeltaTable>> DeltaTable::ForName(Session* session, const std::string& name) {
  if (session == nullptr) return Status::InvalidArgument("DeltaTable::ForName: null session");
  SLUICE_ASSIGN_OR_RETURN(std::string path, session->TablePath(name));
  auto table = ForPath(session, path);
  if (!table.ok() && table.status().IsNotFound()) {
    return Status::NotFound("table " + name + " does not exist in warehouse " +
                            session->warehouse());
  }
  return table;
}

Result<std::unique_ptr<DeltaTable>> DeltaTable::ForPath(const std::string& path,
                                                        const DeltaTableOptions& options) {
  auto state = std::make_unique<api::DeltaTableState>();
  engine::EngineOptions eo;
  eo.threads = options.engine_threads;
  SLUICE_ASSIGN_OR_RETURN(state->own_engine, engine::Engine::Open(eo));
  state->engine = state->own_engine.get();
  state->fs = fs::PathFileSystem();
  state->path = path;
  SLUICE_ASSIGN_OR_RETURN(state, OpenState(std::move(state), options.sync));
  return std::unique_ptr<DeltaTable>(new DeltaTable(std::move(state)));
}

const std::string& DeltaTable::path() const { return state_->path; }

Result<int64_t> DeltaTable::Version() {
  std::lock_guard<std::mutex> lock(state_->mu);
  SLUICE_ASSIGN_OR_RETURN(auto snap, state_->reader->Latest());
  return snap->version.value();
}

Result<Rows> DeltaTable::Scan(const std::string& condition, std::optional<int64_t> version) {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::shared_ptr<const delta::Snapshot> snap;
  if (version) {
    SLUICE_ASSIGN_OR_RETURN(snap, state_->reader->SnapshotAt(sluice::Version(*version)));
  } else {
    SLUICE_ASSIGN_OR_RETURN(snap, state_->reader->Latest());
  }
  std::optional<std::string> cond = NonEmpty(condition);
  delta::ScanFilter filter;
  if (cond) filter = delta::ExtractPruningFilter(*cond, snap->schema.fields, "");
  SLUICE_ASSIGN_OR_RETURN(std::vector<delta::AddFile> files, delta::PlanScanFiles(*snap, filter));
  SLUICE_ASSIGN_OR_RETURN(delta::ReadSpec spec,
                          delta::ReadSpecForTable(snap->schema, snap->metadata));
  if (cond) spec.where_sql = "(" + *cond + ")";
  std::vector<delta::FileToRead> reads;
  delta::DeletionVectorLoader dvs(state_->fs.get(), snap->table_root);
  for (const delta::AddFile& f : files) {
    SLUICE_ASSIGN_OR_RETURN(delta::FileToRead read,
                            delta::FileToReadForAdd(&dvs, snap->table_root, f));
    reads.push_back(std::move(read));
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch rows, delta::ReadFiles(state_->conn.get(), spec, reads),
                              "scanning Delta table " + state_->path);
  return api::RowsAccess::Make(std::move(rows));
}

DataFrame DeltaTable::ToDF() {
  if (!state_->session) {
    return api::FrameAccess::Error(
        nullptr, Status::InvalidArgument("DeltaTable::ToDF: the table " + state_->path +
                                         " was opened without a session; use Scan"));
  }
  api::FrameNode n;
  n.kind = api::FrameNode::Kind::kDeltaTable;
  n.path = state_->path;
  return api::FrameAccess::Make(state_->session, std::make_shared<const api::FrameNode>(n));
}

Result<Rows> DeltaTable::History(std::optional<int64_t> limit) {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::optional<size_t> n;
  if (limit) {
    if (*limit < 0) return Status::InvalidArgument("History: limit must not be negative");
    n = static_cast<size_t>(*limit);
  }
  SLUICE_ASSIGN_OR_RETURN(engine::Batch rows,
                          delta::DescribeHistory(state_->reader.get(), state_->conn.get(), n));
  return api::RowsAccess::Make(std::move(rows));
}

Result<std::string> DeltaTable::DetailAsJson() {
  std::lock_guard<std::mutex> lock(state_->mu);
  SLUICE_ASSIGN_OR_RETURN(engine::Batch detail,
                          delta::DescribeDetail(state_->reader.get(), state_->conn.get()));
  const std::string view = "__sluice_detail_" + NewUuidV4().substr(0, 8);
  SLUICE_ASSIGN_OR_RETURN(
      engine::Batch json,
      engine::QueryOver(state_->conn.get(), view, detail,
                        "SELECT CAST(to_json(d) AS VARCHAR) FROM " + QuoteIdentifier(view) + " d"));
  if (json.num_rows() != 1) return Status::Internal("DESCRIBE DETAIL did not return one row");
  return json.GetString(0, 0).value_or("{}");
}

Result<std::optional<int64_t>> DeltaTable::LatestTxnVersion(const std::string& app_id) {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->reader->LatestTxnVersion(app_id);
}

Result<DeltaOperationResult> DeltaTable::Delete(const std::string& condition) {
  std::lock_guard<std::mutex> lock(state_->mu);
  SLUICE_ASSIGN_OR_RETURN(delta::DmlResult r,
                          delta::DeleteRows(state_->Dml(), NonEmpty(condition)));
  return FromDml(r);
}

Result<DeltaOperationResult> DeltaTable::Update(const std::map<std::string, std::string>& set,
                                                const std::string& condition) {
  std::lock_guard<std::mutex> lock(state_->mu);
  delta::Assignments assignments(set.begin(), set.end());
  delta::DmlOptions options;
  options.target_alias = "t";
  SLUICE_ASSIGN_OR_RETURN(delta::DmlResult r, delta::UpdateRows(state_->Dml(), assignments,
                                                                NonEmpty(condition), options));
  return FromDml(r);
}

MergeBuilder DeltaTable::Merge(const DataFrame& source, const std::string& source_alias,
                               const std::string& condition) {
  MergeBuilder b(this, source_alias, condition);
  b.source_frame_ = source;
  return b;
}

MergeBuilder DeltaTable::Merge(const Rows& source, const std::string& source_alias,
                               const std::string& condition) {
  MergeBuilder b(this, source_alias, condition);
  b.source_rows_ = source;
  return b;
}

MergeBuilder DeltaTable::MergeSql(const std::string& source_sql, const std::string& source_alias,
                                  const std::string& condition) {
  MergeBuilder b(this, source_alias, condition);
  b.source_sql_ = source_sql;
  return b;
}

Result<DeltaOperationResult> DeltaTable::RunMerge(const MergeBuilder& builder,
                                                  const MergeBuilder::ExecuteOptions& options) {
  if (options.txn_app_id.has_value() != options.txn_version.has_value()) {
    return Status::InvalidArgument("Merge: txn_app_id and txn_version must be given together");
  }
  delta::MergeSpec spec;
  if (builder.source_frame_) {
    SLUICE_ASSIGN_OR_RETURN_CTX(Rows rows, builder.source_frame_->Collect(), "MERGE source");
    spec.source_batch = api::RowsAccess::BatchOf(rows);
  } else if (builder.source_rows_) {
    spec.source_batch = api::RowsAccess::BatchOf(*builder.source_rows_);
  } else {
    std::string sql = builder.source_sql_;
    if (!NonEmpty(sql)) return Status::InvalidArgument("Merge: the source SQL is empty");
    // A query is used as a subquery; anything else is a relation name.
    size_t start = sql.find_first_not_of(" \t\r\n(");
    std::string head = start == std::string::npos ? sql : sql.substr(start);
    head = AsciiLower(head);
    if (head.rfind("select", 0) == 0 || head.rfind("values", 0) == 0 ||
        head.rfind("with", 0) == 0 || head.rfind("from", 0) == 0) {
      sql = "(" + sql + ")";
    }
    spec.source_sql = sql;
  }
  spec.source_alias = builder.source_alias_;
  spec.target_alias = builder.target_alias_;
  spec.on = builder.condition_;
  using When = MergeBuilder::When;
  using Action = MergeBuilder::Action;
  auto kind_of = [](When w) {
    switch (w) {
      case When::kMatched:
        return delta::MergeClauseKind::kMatched;
      case When::kNotMatched:
        return delta::MergeClauseKind::kNotMatched;
      case When::kNotMatchedBySource:
        return delta::MergeClauseKind::kNotMatchedBySource;
    }
    return delta::MergeClauseKind::kMatched;
  };
  auto action_of = [](Action a) {
    switch (a) {
      case Action::kUpdate:
        return delta::MergeActionKind::kUpdate;
      case Action::kUpdateAll:
        return delta::MergeActionKind::kUpdateAll;
      case Action::kDelete:
        return delta::MergeActionKind::kDelete;
      case Action::kInsert:
        return delta::MergeActionKind::kInsert;
      case Action::kInsertAll:
        return delta::MergeActionKind::kInsertAll;
    }
    return delta::MergeActionKind::kUpdate;
  };
  for (const MergeBuilder::Clause& c : builder.clauses_) {
    delta::MergeClause mc;
    mc.kind = kind_of(c.when);
    mc.action = action_of(c.action);
    mc.condition = c.condition;
    mc.assignments = c.assignments;
    spec.clauses.push_back(std::move(mc));
  }

  std::lock_guard<std::mutex> lock(state_->mu);
  delta::DmlOptions dml;
  if (options.txn_app_id) {
    SLUICE_ASSIGN_OR_RETURN(auto snap, state_->writer->Latest());
    if (snap == nullptr) return Status::NotFound("no Delta table at " + state_->path);
    auto recorded = snap->TxnVersion(*options.txn_app_id);
    if (recorded && *recorded >= *options.txn_version) {
      DeltaOperationResult skipped;
      skipped.skipped = true;
      return skipped;
    }
    dml.txn = delta::SetTransaction{*options.txn_app_id, *options.txn_version, delta::NowMillis()};
  }
  SLUICE_ASSIGN_OR_RETURN(delta::DmlResult r, delta::MergeInto(state_->Dml(), spec, dml));
  return FromDml(r);
}

Result<std::vector<std::string>> DeltaTable::Vacuum(std::optional<double> retain_hours,
                                                    bool dry_run, bool retention_check) {
  std::lock_guard<std::mutex> lock(state_->mu);
  delta::VacuumOptions options;
  options.retain_hours = retain_hours;
  options.dry_run = dry_run;
  options.retention_duration_check = retention_check;
  SLUICE_ASSIGN_OR_RETURN(delta::VacuumResult r, delta::Vacuum(state_->Dml(), options));
  return r.files;
}

Result<DeltaOperationResult> DeltaTable::Optimize(const std::string& partition_predicate) {
  std::lock_guard<std::mutex> lock(state_->mu);
  delta::OptimizeOptions options;
  options.partition_predicate = NonEmpty(partition_predicate);
  SLUICE_ASSIGN_OR_RETURN(delta::DmlResult r, delta::Optimize(state_->Dml(), options));
  return FromDml(r);
}

Result<DeltaOperationResult> DeltaTable::RestoreToVersion(int64_t version) {
  std::lock_guard<std::mutex> lock(state_->mu);
  SLUICE_ASSIGN_OR_RETURN(
      delta::DmlResult r,
      delta::RestoreTable(state_->Dml(), delta::RestoreTarget{sluice::Version(version), {}}));
  return FromDml(r);
}

// ---- MergeBuilder ------------------------------------------------------------------------------

MergeBuilder::MergeBuilder(DeltaTable* table, std::string source_alias, std::string condition)
    : table_(table), source_alias_(std::move(source_alias)), condition_(std::move(condition)) {}

MergeBuilder& MergeBuilder::TargetAlias(std::string alias) {
  target_alias_ = std::move(alias);
  return *this;
}

MergeBuilder& MergeBuilder::WhenMatchedUpdate(std::map<std::string, std::string> set,
                                              std::optional<std::string> condition) {
  clauses_.push_back(
      {When::kMatched, Action::kUpdate, std::move(condition), {set.begin(), set.end()}});
  return *this;
}

MergeBuilder& MergeBuilder::WhenMatchedUpdateAll(std::optional<std::string> condition) {
  clauses_.push_back({When::kMatched, Action::kUpdateAll, std::move(condition), {}});
  return *this;
}

MergeBuilder& MergeBuilder::WhenMatchedDelete(std::optional<std::string> condition) {
  clauses_.push_back({When::kMatched, Action::kDelete, std::move(condition), {}});
  return *this;
}

MergeBuilder& MergeBuilder::WhenNotMatchedInsert(std::map<std::string, std::string> values,
                                                 std::optional<std::string> condition) {
  clauses_.push_back(
      {When::kNotMatched, Action::kInsert, std::move(condition), {values.begin(), values.end()}});
  return *this;
}

MergeBuilder& MergeBuilder::WhenNotMatchedInsertAll(std::optional<std::string> condition) {
  clauses_.push_back({When::kNotMatched, Action::kInsertAll, std::move(condition), {}});
  return *this;
}

MergeBuilder& MergeBuilder::WhenNotMatchedBySourceUpdate(std::map<std::string, std::string> set,
                                                         std::optional<std::string> condition) {
  clauses_.push_back(
      {When::kNotMatchedBySource, Action::kUpdate, std::move(condition), {set.begin(), set.end()}});
  return *this;
}

MergeBuilder& MergeBuilder::WhenNotMatchedBySourceDelete(std::optional<std::string> condition) {
  clauses_.push_back({When::kNotMatchedBySource, Action::kDelete, std::move(condition), {}});
  return *this;
}

Result<DeltaOperationResult> MergeBuilder::Execute(const ExecuteOptions& options) {
  return table_->RunMerge(*this, options);
}

Result<DeltaOperationResult> MergeBuilder::Execute() { return Execute(ExecuteOptions{}); }

}  // namespace sluice
