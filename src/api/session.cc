// Session, SessionState, MemoryStream and DataStreamReader.
#include "sluice/session.h"
#include "api/api_internal.h"
#include "api/query_state.h"
#include "delta/warehouse_tables.h"
#include "dialect/spark_sql.h"
#include "dialect/tokenizer.h"
#include "fs/routing_file_system.h"
#include "sources/schema_text.h"

namespace sluice {
namespace api {

int64_t SessionState::NextId() {
  MutexLock lock(&mu);
  return next_name++;
}

Result<std::string> SessionState::TablePath(const std::string& name) const {
  return delta::ResolveWarehouseTable(fs.get(), warehouse, name);
}

Result<std::shared_ptr<delta::DeltaTable>> SessionState::DeltaTableAt(const std::string& path) {
  {
    MutexLock lock(&mu);
    auto it = tables.find(path);
    if (it != tables.end()) return it->second;
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<delta::DeltaTable> table,
                          delta::DeltaTable::Open(fs, engine.get(), path));
  std::shared_ptr<delta::DeltaTable> shared(std::move(table));
  MutexLock lock(&mu);
  return tables.emplace(path, shared).first->second;
}

Result<std::set<std::string>> SessionState::WarehouseTableNames() const {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names,
                          delta::ListWarehouseTables(fs.get(), warehouse));
  return std::set<std::string>(names.begin(), names.end());
}

std::shared_ptr<sinks::MemorySink> SessionState::FindMemorySink(const std::string& name) const {
  MutexLock lock(&mu);
  auto it = memory_sinks.find(AsciiLower(name));
  return it == memory_sinks.end() ? nullptr : it->second;
}

// Forwards the bus's events to a public listener.
class ListenerAdapter final : public stream::StreamingQueryListener {
 public:
  explicit ListenerAdapter(std::shared_ptr<sluice::StreamingQueryListener> user)
      : user_(std::move(user)) {}
  void OnQueryStarted(const QueryStartedEvent& e) override { user_->OnQueryStarted(e); }
  void OnQueryProgress(const stream::QueryProgressEvent& e) override {
    user_->OnQueryProgress({PublicProgress(e.progress)});
  }
  void OnQueryIdle(const QueryIdleEvent& e) override { user_->OnQueryIdle(e); }
  void OnQueryTerminated(const QueryTerminatedEvent& e) override { user_->OnQueryTerminated(e); }

 private:
  std::shared_ptr<sluice::StreamingQueryListener> user_;
};

}  // namespace api

using api::FrameAccess;
using api::FrameNode;

// ---------------------------------------------------------------------------------------------
// Session

Session::Session(std::shared_ptr<api::SessionState> state) : state_(std::move(state)) {}

Session::~Session() { (void)StopAll(); }

Result<std::unique_ptr<Session>> Session::Open(const SessionOptions& options) {
  auto state = std::make_shared<api::SessionState>();
  state->warehouse = options.warehouse;
  state->no_data_batches = options.no_data_batches;
  state->fs = fs::PathFileSystem();
  SLUICE_RETURN_NOT_OK_CTX(state->fs->CreateDirectories(options.warehouse),
                           "creating the warehouse " + options.warehouse);
  engine::EngineOptions eo;
  eo.threads = options.engine_threads;
  eo.memory_limit = options.memory_limit;
  SLUICE_ASSIGN_OR_RETURN(state->engine, engine::Engine::Open(eo));
  state->bus = std::make_shared<stream::ListenerBus>();
  return std::unique_ptr<Session>(new Session(std::move(state)));
}

DataFrame Session::Sql(const std::string& query) {
  FrameNode n;
  n.kind = FrameNode::Kind::kSql;
  n.text = query;
  // Warehouse tables and memory sinks named in the text become views of the same name.
  auto tokens = dialect::Tokenize(query);
  if (!tokens.ok()) return FrameAccess::Error(state_, tokens.status());
  std::set<std::string> words;
  for (const dialect::Token& t : *tokens) {
    if (t.kind == dialect::TokenKind::kWord || t.kind == dialect::TokenKind::kQuotedIdent ||
        t.kind == dialect::TokenKind::kBacktick) {
      words.insert(AsciiLower(t.text));
    }
  }
  Result<std::set<std::string>> tables = state_->WarehouseTableNames();
  if (!tables.ok()) return FrameAccess::Error(state_, tables.status());
  for (const std::string& w : words) {
    if (auto sink = state_->FindMemorySink(w)) {
      n.memory_tables[w] = sink;
    } else if (tables->count(w) > 0) {
      auto path = state_->TablePath(w);
      if (!path.ok()) return FrameAccess::Error(state_, path.status());
      n.delta_tables[w] = *path;
    }
  }
  return FrameAccess::Make(state_, std::make_shared<const FrameNode>(std::move(n)));
}

DataFrame Session::Table(const std::string& name) {
  FrameNode n;
  if (auto sink = state_->FindMemorySink(name)) {
    n.kind = FrameNode::Kind::kMemorySink;
    n.memory_sink = sink;
    return FrameAccess::Make(state_, std::make_shared<const FrameNode>(std::move(n)));
  }
  auto path = state_->TablePath(name);
  if (!path.ok()) return FrameAccess::Error(state_, path.status());
  auto exists = state_->fs->Exists(fs::JoinPath(*path, "_delta_log"));
  if (!exists.ok()) return FrameAccess::Error(state_, exists.status());
  if (!*exists) {
    return FrameAccess::Error(
        state_, Status::NotFound("[TABLE_OR_VIEW_NOT_FOUND] The table or view `" + name +
                                 "` cannot be found (no Delta table at " + *path + ")"));
  }
  return ReadDelta(*path);
}

DataFrame Session::ReadDelta(const std::string& path) {
  FrameNode n;
  n.kind = FrameNode::Kind::kDeltaTable;
  n.path = path;
  return FrameAccess::Make(state_, std::make_shared<const FrameNode>(std::move(n)));
}

DataStreamReader Session::ReadStream() { return FrameAccess::Reader(state_); }

void Session::AddListener(std::shared_ptr<StreamingQueryListener> listener) {
  if (listener == nullptr) return;
  auto adapter = std::make_shared<api::ListenerAdapter>(listener);
  {
    MutexLock lock(&state_->mu);
    state_->listeners[listener.get()] = adapter;
  }
  state_->bus->AddListener(adapter);
}

void Session::RemoveListener(const StreamingQueryListener* listener) {
  std::shared_ptr<api::ListenerAdapter> adapter;
  {
    MutexLock lock(&state_->mu);
    auto it = state_->listeners.find(listener);
    if (it == state_->listeners.end()) return;
    adapter = it->second;
    state_->listeners.erase(it);
  }
  state_->bus->RemoveListener(adapter.get());
}

bool Session::WaitForListenerEvents(std::chrono::milliseconds timeout) {
  return state_->bus->WaitUntilEmpty(timeout.count());
}

std::vector<std::shared_ptr<StreamingQuery>> Session::ActiveQueries() const {
  std::vector<std::shared_ptr<StreamingQuery>> out;
  MutexLock lock(&state_->mu);
  for (const auto& weak : state_->queries) {
    if (auto q = weak.lock(); q != nullptr && q->IsActive()) out.push_back(q);
  }
  return out;
}

Status Session::StopAll() {
  std::vector<std::shared_ptr<StreamingQuery>> all;
  {
    MutexLock lock(&state_->mu);
    for (const auto& weak : state_->queries) {
      if (auto q = weak.lock()) all.push_back(q);
    }
    state_->queries.clear();
  }
  Status first;
  for (const auto& q : all) {
    Status st = q->Stop();
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

const std::string& Session::warehouse() const { return state_->warehouse; }

Result<std::string> Session::TablePath(const std::string& name) const {
  return state_->TablePath(name);
}

// ---------------------------------------------------------------------------------------------
// MemoryStream

struct MemoryStream::Impl {
  std::shared_ptr<api::SessionState> session;
  std::shared_ptr<sources::MemorySource> source;
  std::string name;
  std::vector<Column> columns;
};

MemoryStream::MemoryStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MemoryStream::~MemoryStream() = default;

Result<std::shared_ptr<MemoryStream>> Session::CreateMemoryStream(const std::string& schema_ddl,
                                                                  const std::string& name) {
  SLUICE_ASSIGN_OR_RETURN(auto conn, state_->engine->Connect());
  SLUICE_ASSIGN_OR_RETURN(engine::Schema schema,
                          sources::ParseSchemaText(conn.get(), schema_ddl, "schema"));
  auto impl = std::make_unique<MemoryStream::Impl>();
  impl->session = state_;
  impl->name = name;
  impl->source = std::make_shared<sources::MemorySource>(schema, name);
  for (const engine::Field& f : schema) impl->columns.push_back({f.name, f.type.ToSql()});
  {
    MutexLock lock(&state_->mu);
    if (state_->memory_streams.count(name) > 0) {
      return Status::AlreadyExists("a memory stream named '" + name + "' exists in the session");
    }
    state_->memory_streams[name] = impl->source;
  }
  return std::shared_ptr<MemoryStream>(new MemoryStream(std::move(impl)));
}

Result<int64_t> MemoryStream::AddData(const DataFrame& rows) {
  SLUICE_RETURN_NOT_OK(rows.status());
  const engine::Schema& schema = impl_->source->schema();
  // Cast the frame's columns, by position, to the stream's names and types.
  SLUICE_ASSIGN_OR_RETURN(std::vector<Column> in, rows.Schema());
  if (in.size() != schema.size()) {
    return Status::InvalidArgument("memory stream '" + impl_->name + "' has " +
                                   std::to_string(schema.size()) + " columns; the data has " +
                                   std::to_string(in.size()));
  }
  std::vector<std::string> exprs;
  for (size_t i = 0; i < schema.size(); ++i) {
    exprs.push_back("CAST(" + dialect::QuoteSparkName(in[i].name) + " AS " +
                    schema[i].type.ToSql() + ") AS " + dialect::QuoteSparkName(schema[i].name));
  }
  DataFrame cast = rows.SelectExpr(exprs);
  SLUICE_ASSIGN_OR_RETURN(engine::Batch batch, api::RunBatch(cast));
  SLUICE_ASSIGN_OR_RETURN(std::string offset, impl_->source->AddData(batch));
  return sources::MemorySource::ParseOffset(offset);
}

Result<int64_t> MemoryStream::AddSql(const std::string& query) {
  api::FrameNode n;
  n.kind = api::FrameNode::Kind::kSql;
  n.text = query;
  return AddData(FrameAccess::Make(impl_->session, std::make_shared<const FrameNode>(n)));
}

DataFrame MemoryStream::ToDF() const {
  return FrameAccess::Reader(impl_->session).Format("memory").Load(impl_->name);
}

const std::string& MemoryStream::name() const { return impl_->name; }
const std::vector<Column>& MemoryStream::schema() const { return impl_->columns; }

// ---------------------------------------------------------------------------------------------
// DataStreamReader

DataStreamReader& DataStreamReader::Format(std::string format) {
  format_ = std::move(format);
  return *this;
}
DataStreamReader& DataStreamReader::Option(std::string key, std::string value) {
  options_[std::move(key)] = std::move(value);
  return *this;
}
DataStreamReader& DataStreamReader::Option(std::string key, int64_t value) {
  return Option(std::move(key), std::to_string(value));
}
DataStreamReader& DataStreamReader::Option(std::string key, const char* value) {
  return Option(std::move(key), std::string(value));
}
DataStreamReader& DataStreamReader::Option(std::string key, bool value) {
  return Option(std::move(key), api::OptionText(value));
}
DataStreamReader& DataStreamReader::Option(std::string key, double value) {
  return Option(std::move(key), api::OptionText(value));
}
DataStreamReader& DataStreamReader::Options(const std::map<std::string, std::string>& options) {
  for (const auto& [k, v] : options) options_[k] = v;
  return *this;
}
DataStreamReader& DataStreamReader::Schema(std::string ddl) {
  schema_ = std::move(ddl);
  return *this;
}

DataFrame DataStreamReader::Load(const std::string& path) {
  auto input = std::make_shared<api::StreamInput>();
  std::string format = AsciiLower(format_);
  input->options = options_;
  bool cdf = false;
  for (auto it = input->options.begin(); it != input->options.end(); ++it) {
    if (AsciiLower(it->first) == "readchangefeed" && AsciiLower(it->second) == "true") cdf = true;
  }
  if (format == "delta" && cdf) format = "delta_cdf";
  if (format == "cloudfiles") format = "cloudFiles";
  if (format == "json" || format == "csv" || format == "parquet") {
    // Spark's readStream.format("json"): the files source of that file format.
    for (const auto& [key, value] : input->options) {
      if (AsciiLower(key) == "format" && AsciiLower(value) != format) {
        return FrameAccess::Error(
            session_, Status::InvalidArgument("Format(\"" + format_ + "\") with Option(\"" + key +
                                              "\", \"" + value + "\"): two file formats"));
      }
    }
    std::erase_if(input->options, [](const auto& kv) { return AsciiLower(kv.first) == "format"; });
    input->options["format"] = format;
    format = "files";
  }
  input->format = format;
  input->description = format_ + (path.empty() ? "" : " " + path);
  auto conn = session_->engine->Connect();
  if (!conn.ok()) return FrameAccess::Error(session_, conn.status());

  if (format == "memory") {
    MutexLock lock(&session_->mu);
    auto it = session_->memory_streams.find(path);
    if (it == session_->memory_streams.end()) {
      return FrameAccess::Error(session_,
                                Status::NotFound("no memory stream named '" + path +
                                                 "' in the session (Session::CreateMemoryStream)"));
    }
    input->memory = it->second;
    input->schema = it->second->schema();
  } else {
    if (!path.empty()) input->options["path"] = path;
    if (schema_) {
      if (format != "files" && format != "cloudFiles") {
        return FrameAccess::Error(
            session_, Status::InvalidArgument("format '" + format_ +
                                              "' does not take a user-specified schema"));
      }
      input->options["schema"] = *schema_;
      auto parsed = sources::ParseSchemaText(conn->get(), *schema_, "schema");
      if (!parsed.ok()) return FrameAccess::Error(session_, parsed.status());
      engine::Schema s = *parsed;
      s.push_back({"_rescued_data", engine::DataType{engine::TypeId::kVarchar}, true});
      input->schema = s;
    }
    if (format == "rate") {
      input->schema = engine::Schema{{"timestamp", {engine::TypeId::kTimestampTz}, true},
                                     {"value", {engine::TypeId::kBigInt}, true}};
    } else if (format == "delta") {
      if (path.empty()) {
        return FrameAccess::Error(session_, Status::InvalidArgument("'path' is not specified"));
      }
      // The table's schema now (the source takes the latest schema when the query starts).
      auto table = session_->DeltaTableAt(path);
      if (table.ok()) {
        auto snap = (*table)->Latest();
        if (snap.ok()) input->schema = (*snap)->schema.fields;
      }
    }
  }
  FrameNode n;
  n.kind = FrameNode::Kind::kStream;
  n.stream = std::move(input);
  return FrameAccess::Make(session_, std::make_shared<const FrameNode>(std::move(n)));
}

DataFrame DataStreamReader::Table(const std::string& name) {
  auto path = session_->TablePath(name);
  if (!path.ok()) return FrameAccess::Error(session_, path.status());
  format_ = "delta";
  return Load(*path);
}

}  // namespace sluice
