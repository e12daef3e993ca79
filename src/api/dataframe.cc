// DataFrame, GroupedData, DataFrameWriter, Rows, and the compilation of frames to engine SQL.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>

#include "api/api_internal.h"
#include "common/check.h"
#include "common/interval.h"
#include "delta/table_writer.h"
#include "dialect/spark_sql.h"
#include "engine/registered_batch.h"
#include "engine/relation_names.h"
#include "sinks/console_sink.h"
#include "sources/source_util.h"

namespace sluice {

// ---------------------------------------------------------------------------------------------
// Rows

struct Rows::Impl {
  engine::Batch batch;
  std::vector<Column> columns;
};

Rows::Rows() : impl_(std::make_shared<const Impl>()) {}
Rows::Rows(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

const std::vector<Column>& Rows::columns() const { return impl_->columns; }
int64_t Rows::num_rows() const { return impl_->batch.num_rows(); }
size_t Rows::num_columns() const { return impl_->columns.size(); }
std::optional<size_t> Rows::ColumnIndex(std::string_view name) const {
  return impl_->batch.ColumnIndex(name);
}
bool Rows::IsNull(int64_t row, size_t col) const { return impl_->batch.IsNull(row, col); }
std::optional<std::string> Rows::GetString(int64_t row, size_t col) const {
  return impl_->batch.GetString(row, col);
}
Result<std::optional<int64_t>> Rows::GetInt64(int64_t row, size_t col) const {
  return impl_->batch.GetInt64(row, col);
}
Result<std::optional<double>> Rows::GetDouble(int64_t row, size_t col) const {
  return impl_->batch.GetDouble(row, col);
}
Result<std::optional<bool>> Rows::GetBool(int64_t row, size_t col) const {
  return impl_->batch.GetBool(row, col);
}
std::vector<std::string> Rows::RowStrings() const {
  std::vector<std::string> out;
  for (int64_t r = 0; r < num_rows(); ++r) out.push_back(sinks::RowToString(impl_->batch, r));
  return out;
}
std::string Rows::ToString(int64_t num_rows, bool truncate) const {
  return sinks::ShowString(impl_->batch, num_rows, truncate);
}

namespace api {

Rows RowsAccess::Make(engine::Batch batch) {
  auto impl = std::make_shared<Rows::Impl>();
  for (const engine::Field& f : batch.schema()) impl->columns.push_back({f.name, f.type.ToSql()});
  impl->batch = std::move(batch);
  return Rows(std::shared_ptr<const Rows::Impl>(std::move(impl)));
}
const engine::Batch& RowsAccess::BatchOf(const Rows& rows) { return rows.impl_->batch; }

bool HasStream(const NodePtr& node) {
  if (node == nullptr) return false;
  if (node->kind == FrameNode::Kind::kStream) return true;
  for (const NodePtr& c : node->children) {
    if (HasStream(c)) return true;
  }
  return false;
}

bool HasStatefulStreamNode(const NodePtr& node) {
  if (node == nullptr) return false;
  using K = FrameNode::Kind;
  if ((node->kind == K::kAggregate || node->kind == K::kDedup ||
       node->kind == K::kTransformWithState) &&
      HasStream(node)) {
    return true;
  }
  if (node->kind == K::kJoin && HasStream(node->children[0]) && HasStream(node->children[1])) {
    return true;
  }
  for (const NodePtr& c : node->children) {
    if (HasStatefulStreamNode(c)) return true;
  }
  return false;
}

namespace {
void CollectWatermarks(const NodePtr& node, std::vector<const FrameNode*>* out) {
  if (node == nullptr) return;
  if (node->kind == FrameNode::Kind::kWatermark && HasStream(node)) out->push_back(node.get());
  for (const NodePtr& c : node->children) CollectWatermarks(c, out);
}
}  // namespace

std::vector<const FrameNode*> WatermarkNodes(const NodePtr& node) {
  std::vector<const FrameNode*> out;
  CollectWatermarks(node, &out);
  return out;
}

size_t CountStreams(const NodePtr& node) {
  if (node == nullptr) return 0;
  size_t n = node->kind == FrameNode::Kind::kStream ? 1 : 0;
  for (const NodePtr& c : node->children) n += CountStreams(c);
  return n;
}

namespace {

bool AllStreamSchemasKnown(const NodePtr& node) {
  if (node->kind == FrameNode::Kind::kStream) return node->stream->schema.has_value();
  for (const NodePtr& c : node->children) {
    if (!AllStreamSchemasKnown(c)) return false;
  }
  return true;
}

std::string JoinList(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

// Strips trailing whitespace and semicolons.
std::string TrimQuery(std::string q) {
  while (!q.empty() && (std::isspace(static_cast<unsigned char>(q.back())) || q.back() == ';')) {
    q.pop_back();
  }
  return q;
}

// A grouping key that is a bare window(...) / session_window(...) call gets its column name,
// as in Spark: "window(ts, '5 minutes')" -> "window(ts, '5 minutes') AS \"window\"".
std::string NameWindowKey(const std::string& key) {
  std::string k = AsciiLower(key);
  size_t b = k.find_first_not_of(" \t\n");
  size_t e = k.find_last_not_of(" \t\n");
  if (b == std::string::npos) return key;
  k = k.substr(b, e - b + 1);
  std::string name;
  for (const char* fn : {"window", "session_window"}) {
    if (k.rfind(std::string(fn) + "(", 0) == 0) name = fn;
  }
  if (name.empty() || k.back() != ')') return key;
  int depth = 0;  // the call's parenthesis must close at the end (no alias, no operator after)
  bool quoted = false;
  for (size_t i = name.size(); i < k.size(); ++i) {
    if (k[i] == '\'') quoted = !quoted;
    if (quoted) continue;
    if (k[i] == '(') ++depth;
    if (k[i] == ')' && --depth == 0 && i + 1 != k.size()) return key;
  }
  return key + " AS `" + name + "`";  // Spark SQL: the dialect quotes it for the engine
}

Result<std::string> JoinKeyword(const std::string& how) {
  std::string h = AsciiLower(how);
  h.erase(std::remove(h.begin(), h.end(), '_'), h.end());
  if (h == "inner" || h.empty()) return std::string("JOIN");
  if (h == "left" || h == "leftouter") return std::string("LEFT JOIN");
  if (h == "right" || h == "rightouter") return std::string("RIGHT JOIN");
  if (h == "full" || h == "outer" || h == "fullouter") return std::string("FULL JOIN");
  if (h == "semi" || h == "leftsemi") return std::string("SEMI JOIN");
  if (h == "anti" || h == "leftanti") return std::string("ANTI JOIN");
  if (h == "cross") return std::string("CROSS JOIN");
  return Status::InvalidArgument(
      "Unsupported join type '" + how +
      "'. Supported join types include: 'inner', 'outer', 'full', 'fullouter', 'full_outer', "
      "'left', 'leftouter', 'left_outer', 'right', 'rightouter', 'right_outer', 'leftsemi', "
      "'left_semi', 'semi', 'leftanti', 'left_anti', 'anti', 'cross'");
}

class Compiler {
 public:
  Compiler(SessionState* session, engine::Connection* conn, const StreamSchemas& schemas,
           CompileMode mode)
      : session_(session),
        conn_(conn),
        schemas_(schemas),
        plan_mode_(mode == CompileMode::kStreamingPlan) {}

  Result<std::string> Gen(const NodePtr& n) {
    using K = FrameNode::Kind;
    if (plan_mode_ && !HasStream(n)) return StaticView(n);
    if (plan_mode_ && (n->kind == K::kStream || n->kind == K::kWatermark)) {
      SLUICE_ASSIGN_OR_RETURN(size_t i, StreamRelation(n));
      out_.relations[i].alias = engine::StreamViewName(i);
      return "SELECT * FROM " + engine::StreamViewName(i);
    }
    switch (n->kind) {
      case K::kSql: {
        for (const auto& [name, path] : n->delta_tables) {
          AddDeltaView(name, path);
        }
        for (const auto& [name, sink] : n->memory_tables) AddMemoryView(name, sink);
        SLUICE_RETURN_NOT_OK(PrepareSoFar());
        // Session::Sql text is Spark SQL, as spark.sql() is (the expression strings are too).
        SLUICE_ASSIGN_OR_RETURN(std::string engine_sql, dialect::RewriteSparkSql(conn_, n->text));
        return "SELECT * FROM (" + TrimQuery(engine_sql) + ") AS " + NextAlias();
      }
      case K::kStream: {
        size_t i = out_.streams.size();
        out_.streams.push_back(n->stream);
        std::string name = engine::SourceTableName(i);
        std::optional<engine::Schema> schema = n->stream->schema;
        auto it = schemas_.find(i);
        if (it != schemas_.end()) schema = it->second;
        if (!schema) {
          return Status::NotSupported("the schema of stream " + std::to_string(i) + " (" +
                                      n->stream->description +
                                      ") is known only when the query starts");
        }
        SLUICE_ASSIGN_OR_RETURN(engine::Batch empty, engine::EmptyBatch(*schema));
        SLUICE_RETURN_NOT_OK(conn_->RegisterBatch(name, empty));
        return "SELECT * FROM " + name;
      }
      case K::kWatermark:  // outside the streaming planner (a batch frame): no effect, as Spark
        return Gen(n->children[0]);
      case K::kDedup:
        return Dedup(n);
      case K::kTransformWithState:  // planned by transform_with_state_plan.h, never compiled
        return Status::NotSupported(
            "TransformWithState runs only in streaming queries: start the frame with "
            "WriteStream() (a batch frame, or a use in ToSql/Schema/Collect, is not supported)");
      case K::kBatch: {
        std::string name = "__sluice_batch_" + std::to_string(session_->NextId());
        out_.batches.emplace_back(name, n->batch);
        SLUICE_RETURN_NOT_OK(PrepareSoFar());
        return "SELECT * FROM " + QuoteIdentifier(name);
      }
      case K::kDeltaTable: {
        std::string name = "__sluice_delta_" + std::to_string(session_->NextId());
        AddDeltaView(name, n->path);
        SLUICE_RETURN_NOT_OK(PrepareSoFar());
        return "SELECT * FROM " + QuoteIdentifier(name);
      }
      case K::kMemorySink: {
        std::string name = "__sluice_memory_" + std::to_string(session_->NextId());
        AddMemoryView(name, n->memory_sink);
        SLUICE_RETURN_NOT_OK(PrepareSoFar());
        return "SELECT * FROM " + QuoteIdentifier(name);
      }
      case K::kSelect: {
        SLUICE_ASSIGN_OR_RETURN(std::string from, FromClause(n->children[0]));
        SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> items, Spark(n->list));
        return "SELECT " + JoinList(items) + " FROM " + from;
      }
      case K::kWhere: {
        SLUICE_ASSIGN_OR_RETURN(std::string from, FromClause(n->children[0]));
        SLUICE_ASSIGN_OR_RETURN(std::string condition, Spark(n->text));
        return "SELECT * FROM " + from + " WHERE " + condition;
      }
      case K::kWithColumn: {
        SLUICE_ASSIGN_OR_RETURN(std::string from, FromClause(n->children[0]));
        SLUICE_ASSIGN_OR_RETURN(engine::Batch probe,
                                conn_->Query("SELECT * FROM " + from + " LIMIT 0"));
        bool exists = false;
        for (const engine::Field& f : probe.schema()) {
          if (AsciiLower(f.name) == AsciiLower(n->name)) exists = true;
        }
        SLUICE_ASSIGN_OR_RETURN(std::string expr, Spark(n->text));
        if (exists) {
          return "SELECT * REPLACE ((" + expr + ") AS " + QuoteIdentifier(n->name) + ") FROM " +
                 from;
        }
        return "SELECT *, (" + expr + ") AS " + QuoteIdentifier(n->name) + " FROM " + from;
      }
      case K::kDrop: {
        SLUICE_ASSIGN_OR_RETURN(std::string from, FromClause(n->children[0]));
        std::vector<std::string> quoted;
        for (const std::string& col : n->list) quoted.push_back(QuoteIdentifier(col));
        return "SELECT * EXCLUDE (" + JoinList(quoted) + ") FROM " + from;
      }
      case K::kAlias: {
        SLUICE_ASSIGN_OR_RETURN(std::string c, Gen(n->children[0]));
        return "SELECT * FROM (" + c + ") AS " + QuoteIdentifier(n->name);
      }
      case K::kJoin: {
        SLUICE_ASSIGN_OR_RETURN(std::string from, JoinFrom(n));
        return "SELECT * FROM " + from;
      }
      case K::kUnion: {
        SLUICE_ASSIGN_OR_RETURN(std::string a, Gen(n->children[0]));
        SLUICE_ASSIGN_OR_RETURN(std::string b, Gen(n->children[1]));
        return "SELECT * FROM ((" + a + ") UNION ALL " + (n->by_name ? "BY NAME " : "") + "(" + b +
               ")) AS " + NextAlias();
      }
      case K::kAggregate: {
        out_.has_aggregate = true;
        SLUICE_ASSIGN_OR_RETURN(std::string from, FromClause(n->children[0]));
        std::vector<std::string> items;
        for (const std::string& key : n->list) items.push_back(NameWindowKey(key));
        items.insert(items.end(), n->list2.begin(), n->list2.end());
        SLUICE_ASSIGN_OR_RETURN(items, Spark(items));
        if (plan_mode_) {  // the streaming planner takes GROUP BY positions, not GROUP BY ALL
          std::vector<std::string> positions;
          for (size_t k = 0; k < n->list.size(); ++k) positions.push_back(std::to_string(k + 1));
          return "SELECT " + JoinList(items) + " FROM " + from +
                 (positions.empty() ? "" : " GROUP BY " + JoinList(positions));
        }
        return "SELECT " + JoinList(items) + " FROM " + from +
               (n->list.empty() ? "" : " GROUP BY ALL");
      }
    }
    return Status::Internal("unknown frame node");
  }

  CompiledQuery Take() { return std::move(out_); }

 private:
  // The FROM clause of a transformation over `c`: a join's own FROM clause (so that the
  // transformation right after a Join can use the sides' aliases, "p.name"), otherwise the
  // sub-frame as a subquery.
  Result<std::string> FromClause(const NodePtr& c) {
    if (c->kind == FrameNode::Kind::kJoin) return JoinFrom(c);
    SLUICE_ASSIGN_OR_RETURN(std::string sql, Gen(c));
    return "(" + sql + ") AS " + NextAlias();
  }
  // "<left> JOIN <right> ON ..." of a join node.
  Result<std::string> JoinFrom(const NodePtr& n) {
    if (HasStream(n->children[0]) && HasStream(n->children[1])) out_.has_stream_join = true;
    SLUICE_ASSIGN_OR_RETURN(std::string l, Side(n->children[0], "l"));
    SLUICE_ASSIGN_OR_RETURN(std::string r, Side(n->children[1], "r"));
    SLUICE_ASSIGN_OR_RETURN(std::string kw, JoinKeyword(n->how));
    std::string from = l + " " + kw + " " + r;
    if (kw == "CROSS JOIN") return from;
    if (n->using_join) {
      std::vector<std::string> quoted;
      for (const std::string& col : n->list) quoted.push_back(QuoteIdentifier(col));
      return from + " USING (" + JoinList(quoted) + ")";
    }
    SLUICE_ASSIGN_OR_RETURN(std::string condition, Spark(n->text));
    return from + " ON " + condition;
  }
  // A user's expression (SelectExpr, Where, WithColumn, GroupBy/Agg, a join condition) in
  // Spark's dialect, in the engine's words (dialect/spark_sql.h).
  Result<std::string> Spark(const std::string& expr) {
    return dialect::RewriteSparkExpression(conn_, expr);
  }
  Result<std::vector<std::string>> Spark(const std::vector<std::string>& exprs) {
    std::vector<std::string> out;
    for (const std::string& e : exprs) {
      SLUICE_ASSIGN_OR_RETURN(std::string x, Spark(e));
      out.push_back(std::move(x));
    }
    return out;
  }
  // A join side: "(<sql>) AS <alias>" with the frame's Alias, or the default. In plan mode a
  // side that is a stream relation is named directly ("__stream_<i> AS <alias>"), as the
  // stream-stream join planner wants it.
  Result<std::string> Side(const NodePtr& n, const std::string& default_alias) {
    if (plan_mode_) {
      const bool aliased = n->kind == FrameNode::Kind::kAlias;
      const NodePtr& r = aliased ? n->children[0] : n;
      if (r->kind == FrameNode::Kind::kStream || r->kind == FrameNode::Kind::kWatermark) {
        SLUICE_ASSIGN_OR_RETURN(size_t i, StreamRelation(r));
        out_.relations[i].alias = aliased ? n->name : default_alias;
        return engine::StreamViewName(i) + " AS " + QuoteIdentifier(out_.relations[i].alias);
      }
    }
    if (n->kind == FrameNode::Kind::kAlias) {
      SLUICE_ASSIGN_OR_RETURN(std::string c, Gen(n->children[0]));
      return "(" + c + ") AS " + QuoteIdentifier(n->name);
    }
    SLUICE_ASSIGN_OR_RETURN(std::string c, Gen(n));
    return "(" + c + ") AS " + default_alias;
  }
  std::string NextAlias() { return "__q" + std::to_string(alias_++); }

  // Plan mode: a sub-frame without streams becomes a view (so that its own aggregations and
  // DISTINCTs are not taken for streaming ones).
  Result<std::string> StaticView(const NodePtr& n) {
    plan_mode_ = false;
    Result<std::string> sql = Gen(n);
    plan_mode_ = true;
    SLUICE_RETURN_NOT_OK(sql.status());
    std::string name = "__sluice_static_" + std::to_string(session_->NextId());
    out_.static_views.emplace_back(name, *sql);
    SLUICE_RETURN_NOT_OK(PrepareSoFar());
    SLUICE_RETURN_NOT_OK(
        conn_->Execute("CREATE OR REPLACE TEMP VIEW " + QuoteIdentifier(name) + " AS " + *sql));
    return "SELECT * FROM " + QuoteIdentifier(name);
  }

  // Plan mode: registers stream relation i for a stream leaf or a WithWatermark over one stream
  // (an empty __stream_<i> of its schema on the connection, for the checks) and returns i.
  Result<size_t> StreamRelation(const NodePtr& n) {
    const size_t i = out_.streams.size();
    const std::string view = engine::StreamViewName(i);
    CompiledQuery::Relation rel;
    engine::Batch empty;
    if (n->kind == FrameNode::Kind::kStream) {
      plan_mode_ = false;
      Result<std::string> raw = Gen(n);  // registers __source_<i>
      plan_mode_ = true;
      SLUICE_RETURN_NOT_OK(raw.status());
      SLUICE_ASSIGN_OR_RETURN(empty, conn_->Query(*raw + " LIMIT 0"));
    } else {
      const NodePtr& child = n->children[0];
      if (CountStreams(child) != 1 || HasStatefulStreamNode(child) ||
          !WatermarkNodes(child).empty()) {
        return Status::InvalidArgument(
            "WithWatermark(\"" + n->name +
            "\", ...) must be applied to a frame that reads exactly one stream, before any "
            "aggregation, deduplication or join of streams and without another WithWatermark");
      }
      plan_mode_ = false;
      Result<std::string> pre = Gen(child);  // its stream is __source_<i>
      plan_mode_ = true;
      SLUICE_RETURN_NOT_OK(pre.status());
      SLUICE_ASSIGN_OR_RETURN(
          empty, conn_->Query("SELECT * FROM (" + *pre + ") AS " + NextAlias() + " LIMIT 0"));
      const engine::Field* field = nullptr;
      for (const engine::Field& f : empty.schema()) {
        if (AsciiLower(f.name) == AsciiLower(n->name)) field = &f;
      }
      if (field == nullptr) {
        return Status::InvalidArgument("WithWatermark: no column \"" + n->name + "\" in the frame");
      }
      const std::string type = field->type.ToSql();
      if (AsciiLower(type).find("timestamp") == std::string::npos) {
        return Status::InvalidArgument(
            "Event time must be defined on a window or a timestamp, "
            "but " +
            field->name + " is of type " + type);
      }
      rel.watermark = field->name;
      rel.delay_ms = n->delay_ms;
      rel.pre_sql = *pre;
    }
    if (out_.relations.size() != i) return Status::Internal("stream relations out of order");
    SLUICE_RETURN_NOT_OK(conn_->RegisterBatch(view, empty));
    out_.relations.push_back(std::move(rel));
    return i;
  }

  // DropDuplicates / DropDuplicatesWithinWatermark.
  Result<std::string> Dedup(const NodePtr& n) {
    SLUICE_ASSIGN_OR_RETURN(std::string from, FromClause(n->children[0]));
    std::vector<std::string> keys;
    for (const std::string& k : n->list) keys.push_back(QuoteIdentifier(k));
    if (n->how == "within_watermark" && HasStream(n->children[0])) {
      std::vector<const FrameNode*> marks = WatermarkNodes(n->children[0]);
      if (marks.empty()) {
        return Status::InvalidArgument(
            "dropDuplicatesWithinWatermark is not supported on streaming DataFrames/DataSets "
            "without watermark: call WithWatermark(column, delay) first");
      }
      if (keys.empty()) {
        SLUICE_ASSIGN_OR_RETURN(engine::Batch probe,
                                conn_->Query("SELECT * FROM " + from + " LIMIT 0"));
        for (const engine::Field& f : probe.schema()) keys.push_back(QuoteIdentifier(f.name));
      }
      return "SELECT * FROM " + from + " QUALIFY row_number() OVER (PARTITION BY " +
             JoinList(keys) + " ORDER BY " + QuoteIdentifier(marks[0]->name) + ") = 1";
    }
    if (keys.empty() && !HasStream(n->children[0])) return "SELECT DISTINCT * FROM " + from;
    if (keys.empty()) {
      // dropDuplicates() of a stream is Spark's Deduplicate over every column, not the Distinct
      // aggregate of SQL's SELECT DISTINCT: a deduplication, which an aggregation may follow in
      // every output mode (Spark refuses SELECT DISTINCT there, not dropDuplicates()).
      SLUICE_ASSIGN_OR_RETURN(engine::Batch probe,
                              conn_->Query("SELECT * FROM " + from + " LIMIT 0"));
      for (const engine::Field& f : probe.schema()) keys.push_back(QuoteIdentifier(f.name));
    }
    return "SELECT DISTINCT ON (" + JoinList(keys) + ") * FROM " + from;
  }
  void AddDeltaView(const std::string& name, const std::string& path) {
    for (const auto& [v, p] : out_.delta_views) {
      if (v == name) return;
    }
    out_.delta_views.emplace_back(name, path);
  }
  void AddMemoryView(const std::string& name, const std::shared_ptr<sinks::MemorySink>& sink) {
    for (const auto& [v, s] : out_.memory_views) {
      if (v == name) return;
    }
    out_.memory_views.emplace_back(name, sink);
  }
  // Makes what was collected so far readable (later sub-frames may need it for their schema).
  Status PrepareSoFar() {
    CompiledQuery partial;
    partial.batches.assign(out_.batches.begin() + prepared_batches_, out_.batches.end());
    partial.delta_views.assign(out_.delta_views.begin() + prepared_deltas_, out_.delta_views.end());
    partial.memory_views.assign(out_.memory_views.begin() + prepared_memory_,
                                out_.memory_views.end());
    prepared_batches_ = out_.batches.size();
    prepared_deltas_ = out_.delta_views.size();
    prepared_memory_ = out_.memory_views.size();
    return Prepare(session_, partial, conn_);
  }

  SessionState* session_;
  engine::Connection* conn_;
  const StreamSchemas& schemas_;
  bool plan_mode_;  // CompileMode::kStreamingPlan, off while compiling a static or raw part
  CompiledQuery out_;
  int alias_ = 0;
  size_t prepared_batches_ = 0, prepared_deltas_ = 0, prepared_memory_ = 0;
};

}  // namespace

Result<CompiledQuery> Compile(SessionState* session, const NodePtr& node, engine::Connection* conn,
                              const StreamSchemas& schemas, CompileMode mode) {
  Compiler compiler(session, conn, schemas, mode);
  SLUICE_ASSIGN_OR_RETURN(std::string sql, compiler.Gen(node));
  CompiledQuery q = compiler.Take();
  q.sql = std::move(sql);
  return q;
}

Status Prepare(SessionState* session, const CompiledQuery& q, engine::Connection* conn) {
  for (const auto& [name, batch] : q.batches) {
    if (batch.num_columns() == 0) {
      SLUICE_RETURN_NOT_OK(conn->Execute("CREATE OR REPLACE TEMP VIEW " + QuoteIdentifier(name) +
                                         " AS SELECT 1 AS __empty WHERE false"));
      continue;
    }
    SLUICE_RETURN_NOT_OK(conn->RegisterBatch(name, batch));
  }
  for (const auto& [name, path] : q.delta_views) {
    SLUICE_ASSIGN_OR_RETURN_CTX(std::shared_ptr<delta::DeltaTable> table,
                                session->DeltaTableAt(path), "reading Delta table " + path);
    SLUICE_ASSIGN_OR_RETURN(auto snapshot, table->Latest());
    SLUICE_ASSIGN_OR_RETURN(std::string scan, table->ScanSql(*snapshot));
    SLUICE_RETURN_NOT_OK(
        conn->Execute("CREATE OR REPLACE TEMP VIEW " + QuoteIdentifier(name) + " AS " + scan));
  }
  for (const auto& [name, sink] : q.memory_views) {
    SLUICE_ASSIGN_OR_RETURN(engine::Batch rows, sink->AllRows());
    if (rows.num_columns() == 0) {
      return Status::NotFound("memory table '" + name +
                              "' has no rows yet (its query has not "
                              "completed a batch)");
    }
    SLUICE_RETURN_NOT_OK(conn->RegisterBatch(name, rows));
  }
  for (const auto& [name, sql] : q.static_views) {
    SLUICE_RETURN_NOT_OK(
        conn->Execute("CREATE OR REPLACE TEMP VIEW " + QuoteIdentifier(name) + " AS " + sql));
  }
  return Status::OK();
}

DataFrame FrameAccess::Make(std::shared_ptr<SessionState> session, NodePtr node) {
  Status st;
  // A stateful stream frame is checked by the streaming planner when its query starts (its
  // window(...) keys exist only there).
  if (!HasStream(node) || (AllStreamSchemasKnown(node) && !HasStatefulStreamNode(node))) {
    // Check the frame now: compile it and bind it with no rows.
    auto conn = session->engine->Connect();
    if (!conn.ok()) {
      st = conn.status();
    } else {
      auto q = Compile(session.get(), node, conn->get());
      if (!q.ok()) {
        st = q.status();
      } else {
        st = (*conn)->Query("SELECT * FROM (" + q->sql + ") AS __check LIMIT 0").status();
      }
    }
  }
  return DataFrame(std::move(session), std::move(node), std::move(st));
}

DataFrame FrameAccess::Error(std::shared_ptr<SessionState> session, Status status) {
  return DataFrame(std::move(session), nullptr, std::move(status));
}

std::string OptionText(bool value) { return value ? "true" : "false"; }

std::string OptionText(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // The shortest digits that read back as `value`, then Java's layout of them.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  (void)ec;                   // 64 bytes hold any double
  std::string sci(buf, end);  // "-1.2345e+07"
  const bool negative = sci[0] == '-';
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string out = negative ? "-" : "";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    if (exponent >= 0) {
      const size_t whole_digits = static_cast<size_t>(exponent) + 1;  // exponent < 7 here
      std::string whole = digits.substr(0, std::min(digits.size(), whole_digits));
      whole.append(whole_digits - whole.size(), '0');
      std::string frac = digits.size() > whole_digits ? digits.substr(whole_digits) : "0";
      return out + whole + "." + frac;
    }
    return out + "0." + std::string(static_cast<size_t>(-exponent) - 1, '0') + digits;
  }
  return out + digits.substr(0, 1) + "." + (digits.size() > 1 ? digits.substr(1) : "0") + "E" +
         std::to_string(exponent);
}

Result<engine::Batch> RunBatch(const DataFrame& frame) {
  SLUICE_RETURN_NOT_OK(frame.status());
  const auto& session = FrameAccess::Session(frame);
  const NodePtr& node = FrameAccess::Node(frame);
  if (HasStream(node)) {
    return Status::InvalidArgument(
        "Queries with streaming sources must be executed with WriteStream().Start()");
  }
  SLUICE_ASSIGN_OR_RETURN(auto conn, session->engine->Connect());
  SLUICE_ASSIGN_OR_RETURN(CompiledQuery q, Compile(session.get(), node, conn.get()));
  return conn->Query(q.sql);
}

}  // namespace api

// ---------------------------------------------------------------------------------------------
// DataFrame

using api::FrameAccess;
using api::FrameNode;
using api::NodePtr;

DataFrame::DataFrame() : status_(Status::InvalidArgument("empty DataFrame")) {}

DataFrame::DataFrame(std::shared_ptr<api::SessionState> session,
                     std::shared_ptr<const api::FrameNode> node, Status status)
    : session_(std::move(session)), node_(std::move(node)), status_(std::move(status)) {}

const Status& DataFrame::status() const { return status_; }

bool DataFrame::IsStreaming() const { return api::HasStream(node_); }

namespace {

DataFrame Derive(const DataFrame& base, FrameNode node,
                 const std::vector<const DataFrame*>& inputs) {
  for (const DataFrame* in : inputs) {
    if (!in->ok()) return FrameAccess::Error(FrameAccess::Session(*in), in->status());
  }
  for (const DataFrame* in : inputs) {
    node.children.push_back(FrameAccess::Node(*in));
    if (FrameAccess::Session(*in) != FrameAccess::Session(base)) {
      return FrameAccess::Error(FrameAccess::Session(base),
                                Status::InvalidArgument("cannot combine DataFrames of different "
                                                        "sessions"));
    }
  }
  return FrameAccess::Make(FrameAccess::Session(base),
                           std::make_shared<const FrameNode>(std::move(node)));
}

FrameNode NodeOf(FrameNode::Kind kind) {
  FrameNode n;
  n.kind = kind;
  return n;
}

}  // namespace

DataFrame DataFrame::Select(const std::vector<std::string>& columns) const {
  FrameNode n = NodeOf(FrameNode::Kind::kSelect);
  // Spark's quotes: the list is Spark SQL ("c" would be a string literal).
  for (const std::string& c : columns) n.list.push_back(c == "*" ? c : dialect::QuoteSparkName(c));
  return Derive(*this, std::move(n), {this});
}

DataFrame DataFrame::SelectExpr(const std::vector<std::string>& exprs) const {
  FrameNode n = NodeOf(FrameNode::Kind::kSelect);
  n.list = exprs;
  return Derive(*this, std::move(n), {this});
}

DataFrame DataFrame::Where(const std::string& condition) const {
  FrameNode n = NodeOf(FrameNode::Kind::kWhere);
  n.text = condition;
  return Derive(*this, std::move(n), {this});
}

DataFrame DataFrame::WithColumn(const std::string& name, const std::string& expr) const {
  FrameNode n = NodeOf(FrameNode::Kind::kWithColumn);
  n.name = name;
  n.text = expr;
  return Derive(*this, std::move(n), {this});
}

DataFrame DataFrame::Drop(const std::vector<std::string>& columns) const {
  FrameNode n = NodeOf(FrameNode::Kind::kDrop);
  n.list = columns;
  return Derive(*this, std::move(n), {this});
}

DataFrame DataFrame::Alias(const std::string& alias) const {
  FrameNode n = NodeOf(FrameNode::Kind::kAlias);
  n.name = alias;
  return Derive(*this, std::move(n), {this});
}

DataFrame DataFrame::Join(const DataFrame& right, const std::string& condition,
                          const std::string& how) const {
  FrameNode n = NodeOf(FrameNode::Kind::kJoin);
  n.text = condition;
  n.how = how;
  return Derive(*this, std::move(n), {this, &right});
}

DataFrame DataFrame::Join(const DataFrame& right, const std::vector<std::string>& using_columns,
                          const std::string& how) const {
  FrameNode n = NodeOf(FrameNode::Kind::kJoin);
  n.using_join = true;
  n.list = using_columns;
  n.how = how;
  return Derive(*this, std::move(n), {this, &right});
}

DataFrame DataFrame::Union(const DataFrame& other) const {
  FrameNode n = NodeOf(FrameNode::Kind::kUnion);
  return Derive(*this, std::move(n), {this, &other});
}

DataFrame DataFrame::UnionByName(const DataFrame& other) const {
  FrameNode n = NodeOf(FrameNode::Kind::kUnion);
  n.by_name = true;
  return Derive(*this, std::move(n), {this, &other});
}

DataFrame DataFrame::WithWatermark(const std::string& event_time_column,
                                   const std::string& delay) const {
  FrameNode n = NodeOf(FrameNode::Kind::kWatermark);
  n.name = event_time_column;
  n.text = delay;
  Result<Duration> d = ParseDuration(delay);
  if (!d.ok() || d->micros < 0) {
    return FrameAccess::Error(
        session_, Status::InvalidArgument("WithWatermark(\"" + event_time_column + "\", \"" +
                                          delay + "\"): the delay must be a non-negative " +
                                          "interval such as \"10 seconds\"" +
                                          (d.ok() ? "" : " (" + d.status().message() + ")")));
  }
  n.delay_ms = d->millis();
  return Derive(*this, std::move(n), {this});
}

DataFrame DataFrame::DropDuplicates(const std::vector<std::string>& columns) const {
  FrameNode n = NodeOf(FrameNode::Kind::kDedup);
  n.list = columns;
  return Derive(*this, std::move(n), {this});
}

DataFrame DataFrame::DropDuplicatesWithinWatermark(const std::vector<std::string>& columns) const {
  FrameNode n = NodeOf(FrameNode::Kind::kDedup);
  n.list = columns;
  n.how = "within_watermark";
  return Derive(*this, std::move(n), {this});
}

GroupedData DataFrame::GroupBy(const std::vector<std::string>& exprs) const {
  return GroupedData(*this, exprs);
}

DataFrame GroupedData::Agg(const std::vector<std::string>& aggregate_exprs) const {
  FrameNode n = NodeOf(FrameNode::Kind::kAggregate);
  n.list = keys_;
  n.list2 = aggregate_exprs;
  return Derive(frame_, std::move(n), {&frame_});
}

DataFrame GroupedData::Count() const { return Agg({"count(*) AS count"}); }

DataFrame GroupedData::TransformWithState(StatefulProcessorFactory factory, TimeMode time_mode,
                                          OutputMode output_mode, const std::string& output_schema,
                                          std::optional<DataFrame> initial_state) const {
  const auto error = [&](const std::string& why) {
    return FrameAccess::Error(FrameAccess::Session(frame_),
                              Status::InvalidArgument("TransformWithState: " + why));
  };
  if (!frame_.ok()) return frame_;
  if (!factory) return error("no StatefulProcessor factory");
  if (keys_.empty()) return error("GroupBy needs at least one key column");
  if (output_mode != OutputMode::kAppend && output_mode != OutputMode::kUpdate) {
    return error("the output mode must be Append or Update");
  }
  if (initial_state.has_value()) {
    if (!initial_state->ok()) {
      return FrameAccess::Error(FrameAccess::Session(frame_), initial_state->status());
    }
    if (initial_state->IsStreaming()) return error("the initial state must be a batch DataFrame");
  }
  FrameNode n = NodeOf(FrameNode::Kind::kTransformWithState);
  n.list = keys_;
  auto spec = std::make_shared<api::TransformWithStateSpec>();
  spec->factory = std::move(factory);
  spec->time_mode = time_mode;
  spec->output_mode = output_mode;
  spec->output_schema = output_schema;
  spec->initial_state = std::move(initial_state);
  n.tws = std::move(spec);
  return Derive(frame_, std::move(n), {&frame_});
}

Result<std::vector<Column>> DataFrame::Schema() const {
  SLUICE_RETURN_NOT_OK(status_);
  if (api::HasStatefulStreamNode(node_)) {
    return Status::NotSupported(
        "the schema of a stateful streaming DataFrame (a streaming aggregation, deduplication or "
        "stream-stream join) is known only when its query starts");
  }
  SLUICE_ASSIGN_OR_RETURN(auto conn, session_->engine->Connect());
  SLUICE_ASSIGN_OR_RETURN(api::CompiledQuery q, api::Compile(session_.get(), node_, conn.get()));
  SLUICE_ASSIGN_OR_RETURN(engine::Batch probe,
                          conn->Query("SELECT * FROM (" + q.sql + ") AS __schema LIMIT 0"));
  return api::RowsAccess::Make(std::move(probe)).columns();
}

Result<Rows> DataFrame::Collect() const {
  SLUICE_ASSIGN_OR_RETURN(engine::Batch rows, api::RunBatch(*this));
  return api::RowsAccess::Make(std::move(rows));
}

Result<int64_t> DataFrame::Count() const {
  SLUICE_ASSIGN_OR_RETURN(Rows rows, GroupBy({}).Count().Collect());
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, rows.GetInt64(0, 0));
  return n.value_or(0);
}

Result<std::string> DataFrame::ToSql() const {
  SLUICE_RETURN_NOT_OK(status_);
  SLUICE_ASSIGN_OR_RETURN(auto conn, session_->engine->Connect());
  SLUICE_ASSIGN_OR_RETURN(api::CompiledQuery q, api::Compile(session_.get(), node_, conn.get()));
  return q.sql;
}

DataFrameWriter DataFrame::Write() const { return DataFrameWriter(*this); }
DataStreamWriter DataFrame::WriteStream() const { return DataStreamWriter(*this); }

// ---------------------------------------------------------------------------------------------
// DataFrameWriter

DataFrameWriter& DataFrameWriter::Format(std::string format) {
  format_ = std::move(format);
  return *this;
}
DataFrameWriter& DataFrameWriter::Mode(std::string mode) {
  mode_ = std::move(mode);
  return *this;
}
DataFrameWriter& DataFrameWriter::Option(std::string key, std::string value) {
  options_[AsciiLower(std::move(key))] = std::move(value);
  return *this;
}
DataFrameWriter& DataFrameWriter::Option(std::string key, int64_t value) {
  return Option(std::move(key), std::to_string(value));
}
DataFrameWriter& DataFrameWriter::Option(std::string key, const char* value) {
  return Option(std::move(key), std::string(value));
}
DataFrameWriter& DataFrameWriter::Option(std::string key, bool value) {
  return Option(std::move(key), api::OptionText(value));
}
DataFrameWriter& DataFrameWriter::Option(std::string key, double value) {
  return Option(std::move(key), api::OptionText(value));
}
DataFrameWriter& DataFrameWriter::PartitionBy(std::vector<std::string> columns) {
  partition_by_ = std::move(columns);
  return *this;
}

Status DataFrameWriter::Save(const std::string& path) {
  SLUICE_RETURN_NOT_OK(frame_.status());
  if (frame_.IsStreaming()) {
    return Status::InvalidArgument(
        "'Write' can not be called on streaming DataFrame: use WriteStream()");
  }
  if (AsciiLower(format_) != "delta") {
    return Status::NotSupported("DataFrameWriter format '" + format_ +
                                "' is not supported (supported: delta)");
  }
  delta::WriteOptions opts;
  std::string mode = AsciiLower(mode_);
  if (mode == "append") {
    opts.mode = delta::SaveMode::kAppend;
  } else if (mode == "overwrite") {
    opts.mode = delta::SaveMode::kOverwrite;
  } else if (mode == "error" || mode == "errorifexists") {
    opts.mode = delta::SaveMode::kErrorIfExists;
  } else {
    return Status::InvalidArgument("Unknown save mode: " + mode_ +
                                   ". Accepted save modes are 'overwrite', 'append', "
                                   "'error', 'errorifexists'");
  }
  opts.partition_by = partition_by_;
  for (const auto& [k, v] : options_) {
    if (k == "txnappid") {
      opts.txn_app_id = v;
    } else if (k == "txnversion") {
      int64_t version = -1;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), version);
      if (ec != std::errc() || end != v.data() + v.size() || version < 0) {
        return Status::InvalidArgument("option txnVersion must be a non-negative integer, got '" +
                                       v + "'");
      }
      opts.txn_version = version;
    } else if (k == "mergeschema") {
      SLUICE_ASSIGN_OR_RETURN(opts.merge_schema, api::ParseBoolOption(k, v));
    } else if (k.rfind("delta.", 0) == 0) {
      // A table property of a new table, as Delta's writer options. Option names arrive
      // lower-cased; the log needs the protocol's spelling.
      static const char* const kProperties[] = {
          "delta.enableChangeDataFeed",         "delta.appendOnly",
          "delta.checkpointInterval",           "delta.logRetentionDuration",
          "delta.deletedFileRetentionDuration", "delta.enableDeletionVectors",
          "delta.dataSkippingNumIndexedCols",   "delta.checkpoint.writeStatsAsJson",
          "delta.checkpoint.writeStatsAsStruct"};
      std::string name;
      for (const char* p : kProperties) {
        if (AsciiLower(p) == k) name = p;
      }
      if (name.empty()) {
        std::string known;
        for (const char* p : kProperties) known += (known.empty() ? "" : ", ") + std::string(p);
        return Status::InvalidArgument("unknown Delta table property '" + k +
                                       "' for the Delta writer (known: " + known + ")");
      }
      opts.configuration[name] = v;
    } else {
      return Status::InvalidArgument("unknown option '" + k +
                                     "' for the Delta writer (known: txnAppId, txnVersion, "
                                     "mergeSchema, delta.* table properties)");
    }
  }
  if (opts.txn_app_id.has_value() != opts.txn_version.has_value()) {
    return Status::InvalidArgument(
        "Invalid options for idempotent Dataframe writes: txnAppId and txnVersion must be given "
        "together");
  }
  SLUICE_ASSIGN_OR_RETURN(engine::Batch rows, api::RunBatch(frame_));
  auto session = FrameAccess::Session(frame_);
  SLUICE_ASSIGN_OR_RETURN(auto writer,
                          delta::DeltaTableWriter::Open(session->fs, session->engine.get(), path));
  SLUICE_ASSIGN_OR_RETURN_CTX(delta::WriteResult r, writer->Write(rows, opts),
                              "writing Delta table " + path);
  (void)r;
  return Status::OK();
}

Status DataFrameWriter::SaveAsTable(const std::string& name) {
  SLUICE_RETURN_NOT_OK(frame_.status());
  SLUICE_ASSIGN_OR_RETURN(std::string path, FrameAccess::Session(frame_)->TablePath(name));
  return Save(path);
}

}  // namespace sluice
