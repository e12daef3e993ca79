// TransformWithState (transform_with_state.h): SQL on the operator's connection drops late rows
// and converts the input to value rows; the rows are grouped by their key's row codec bytes; each
// partition's processor handles its keys, then its expired timers, inside
// OperatorStateStores::RunBatch (which loads and commits the partition's state).
#include "ops/transform_with_state.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <limits>
#include <system_error>
#include <unordered_map>

#include "common/strings.h"
#include "engine/row_codec.h"
#include "ops/custom_state_codec.h"
#include "ops/custom_state_vars.h"
#include "ops/operator_conf.h"
#include "ops/state_work_dir.h"
#include "state/partitions.h"

namespace sluice::ops {
namespace {

constexpr char kInputView[] = "__sluice_tws_input";
constexpr char kRowsView[] = "__sluice_tws_rows";
constexpr char kInitialView[] = "__sluice_tws_initial";

int64_t MillisToMicros(int64_t ms) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 1000;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min() / 1000;
  return std::clamp(ms, kMin, kMax) * 1000;
}

const char* TimeModeName(TimeMode m) {
  switch (m) {
    case TimeMode::kNone:
      return "None";
    case TimeMode::kProcessingTime:
      return "ProcessingTime";
    case TimeMode::kEventTime:
      return "EventTime";
  }
  return "?";
}

// Calls a user handler, turning an escaped exception into an error.
template <typename F>
auto Guard(F&& f, const std::string& what) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    return Status::Internal(what + " threw an exception: " + e.what());
  } catch (...) {
    return Status::Internal(what + " threw an exception");
  }
}

std::string CastList(const engine::Schema& schema) {
  std::string out;
  for (const engine::Field& f : schema) {
    out +=
        (out.empty() ? "" : ", ") + ValueCastSql(f.name, f.type) + " AS " + QuoteIdentifier(f.name);
  }
  return out;
}

// One key's work in a batch.
struct Group {
  std::string gk;
  Row key;
  std::vector<size_t> rows;  // indexes into the batch's value rows
};

}  // namespace

struct TransformWithState::Impl {
  TransformWithStateOptions options;
  OperatorContext context;
  std::unique_ptr<engine::Connection> conn;
  std::unique_ptr<state::OperatorStateStores> stores;
  std::string local_root;

  bool prepared = false;
  engine::Schema input_schema;
  std::vector<size_t> key_indexes;
  std::string late_sql;  // a condition over the input; empty: nothing is late
  std::vector<std::unique_ptr<StatefulProcessor>> processors;  // per partition
  std::vector<std::unique_ptr<PartitionHandle>> handles;       // per partition
  StateOperatorProgress progress;
  int64_t earliest_timer_ms = std::numeric_limits<int64_t>::max();

  ~Impl() {
    processors.clear();
    handles.clear();
    stores.reset();
    if (!local_root.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(local_root, ec);
    }
  }

  std::string Describe() const {
    return std::string("operator ") + kTransformWithStateOperatorName;
  }

  Status Prepare(const engine::Schema& schema);
  // Value rows and key bytes of `batch` (registered as `view`) for key columns `keys`.
  Status Convert(const std::string& view, const engine::Batch& batch,
                 const std::vector<size_t>& keys, std::vector<Row>* rows,
                 std::vector<std::string>* gks);
  Result<engine::Batch> Process(const OperatorBatch& batch, const engine::Batch& input);
};

Status TransformWithState::Impl::Prepare(const engine::Schema& schema) {
  auto find = [&](const std::string& name) -> Result<size_t> {
    for (size_t i = 0; i < schema.size(); ++i) {
      if (schema[i].name == name) return i;
    }
    return Status::InvalidArgument(Describe() + ": the input has no column " + name);
  };
  key_indexes.clear();
  for (const std::string& k : options.key_columns) {
    SLUICE_ASSIGN_OR_RETURN(size_t i, find(k));
    key_indexes.push_back(i);
  }
  late_sql.clear();
  if (options.time_mode == TimeMode::kEventTime && !options.event_time_column.empty()) {
    SLUICE_ASSIGN_OR_RETURN(size_t i, find(options.event_time_column));
    const engine::TypeId t = schema[i].type.id;
    if (t != engine::TypeId::kTimestamp && t != engine::TypeId::kTimestampTz) {
      return Status::InvalidArgument(Describe() + ": event-time column " + schema[i].name +
                                     " has type " + schema[i].type.ToSql() +
                                     "; it must be a TIMESTAMP");
    }
    late_sql = "epoch_us(" + QuoteIdentifier(schema[i].name) + ") <= ";  // + threshold
  }
  std::vector<Column> columns;
  for (const engine::Field& f : schema) columns.push_back({f.name, f.type.ToSql()});

  const int32_t n = context.num_partitions;
  processors.clear();
  handles.clear();
  for (int32_t p = 0; p < n; ++p) {
    std::unique_ptr<StatefulProcessor> proc;
    try {
      proc = options.factory();
    } catch (const std::exception& e) {
      return Status::Internal(std::string("the StatefulProcessor factory threw: ") + e.what());
    } catch (...) {
      return Status::Internal("the StatefulProcessor factory threw an exception");
    }
    if (proc == nullptr) {
      return Status::InvalidArgument("the StatefulProcessor factory returned no processor");
    }
    auto handle = std::make_unique<PartitionHandle>(options.time_mode, columns);
    SLUICE_RETURN_NOT_OK_CTX(Guard([&] { return proc->Init(*handle); }, "StatefulProcessor::Init"),
                             "StatefulProcessor::Init");
    handle->SealDeclarations();
    if (p > 0 && !(handle->declarations() == handles[0]->declarations())) {
      return Status::InvalidArgument(
          "StatefulProcessor::Init declared different state variables in two instances made by "
          "the factory; every instance must declare the same variables");
    }
    processors.push_back(std::move(proc));
    handles.push_back(std::move(handle));
  }

  state::OperatorStateOptions o;
  o.checkpoint_root = context.checkpoint_root;
  o.operator_id = context.operator_id;
  o.operator_name = kTransformWithStateOperatorName;
  o.num_partitions = n;
  for (size_t i : key_indexes)
    o.schema.key.push_back({schema[i].name, schema[i].type.ToSql(), true});
  for (const StateVarDecl& d : handles[0]->declarations()) {
    o.schema.value.push_back({d.name, d.Describe(), true});
  }
  o.schema.value.push_back({"__timeMode", TimeModeName(options.time_mode), true});
  o.store.kind = StateProviderFromConf(context.conf);
  const bool rocksdb = o.store.kind == state::StateStoreProviderKind::kRocksDb;
  o.store.fs = context.fs;
  if (rocksdb) {
    SLUICE_ASSIGN_OR_RETURN(local_root, CreateStateWorkDir(context.checkpoint_root, "tws-state"));
    o.local_root = local_root;
  }
  SLUICE_ASSIGN_OR_RETURN(stores, state::OperatorStateStores::Open(std::move(o)));
  input_schema = schema;
  prepared = true;
  return Status::OK();
}

Status TransformWithState::Impl::Convert(const std::string& view, const engine::Batch& batch,
                                         const std::vector<size_t>& keys, std::vector<Row>* rows,
                                         std::vector<std::string>* gks) {
  SLUICE_ASSIGN_OR_RETURN(*gks, engine::EncodeRows(batch, keys));
  SLUICE_RETURN_NOT_OK(conn->RegisterBatch(view, batch));
  auto cast = conn->Query("SELECT " + CastList(batch.schema()) + " FROM " + view);
  Status un = conn->UnregisterBatch(view);
  if (!cast.ok()) return cast.status();
  SLUICE_RETURN_NOT_OK(un);
  SLUICE_ASSIGN_OR_RETURN(*rows, BatchToValueRows(*cast));
  return Status::OK();
}

Result<engine::Batch> TransformWithState::Impl::Process(const OperatorBatch& batch,
                                                        const engine::Batch& input) {
  // 1. Late rows.
  int64_t late_rows = 0;
  engine::Batch kept = input;
  if (!late_sql.empty()) {
    const std::string late = late_sql + std::to_string(MillisToMicros(batch.late_watermark_ms));
    SLUICE_RETURN_NOT_OK(conn->RegisterBatch(kInputView, input));
    auto count = conn->Query(std::string("SELECT count(*) FROM ") + kInputView + " WHERE " + late);
    auto rest = conn->Query(std::string("SELECT * FROM ") + kInputView + " WHERE NOT coalesce(" +
                            late + ", false)");
    Status un = conn->UnregisterBatch(kInputView);
    if (!count.ok()) return count.status();
    if (!rest.ok()) return rest.status();
    SLUICE_RETURN_NOT_OK(un);
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> c, count->GetInt64(0, 0));
    late_rows = c.value_or(0);
    kept = std::move(*rest);
  }

  // 2. Value rows grouped by key, by partition.
  const int32_t n = stores->num_partitions();
  std::vector<Row> rows;
  std::vector<std::string> gks;
  SLUICE_RETURN_NOT_OK(Convert(kRowsView, kept, key_indexes, &rows, &gks));
  std::vector<std::vector<Group>> groups(static_cast<size_t>(n));
  {
    std::unordered_map<std::string, std::pair<int32_t, size_t>> index;  // gk -> (p, group)
    for (size_t r = 0; r < rows.size(); ++r) {
      auto it = index.find(gks[r]);
      if (it == index.end()) {
        const int32_t p = state::PartitionForKey(gks[r], n);
        Row key;
        for (size_t k : key_indexes) key.push_back(rows[r][k]);
        auto& g = groups[static_cast<size_t>(p)];
        g.push_back({gks[r], std::move(key), {}});
        it = index.emplace(gks[r], std::make_pair(p, g.size() - 1)).first;
      }
      groups[static_cast<size_t>(it->second.first)][it->second.second].rows.push_back(r);
    }
  }

  // Initial state (batch 0 only): (gk, key, state row) by partition.
  struct Initial {
    std::string gk;
    Row key, state;
  };
  std::vector<std::vector<Initial>> initial(static_cast<size_t>(n));
  if (batch.batch_id.value() == 0 && options.initial_state.has_value()) {
    const engine::Batch& init = *options.initial_state;
    std::vector<size_t> keys;
    for (size_t k = 0; k < key_indexes.size(); ++k) {
      const engine::Field& f = input_schema[key_indexes[k]];
      std::optional<size_t> i = init.ColumnIndex(f.name);
      if (!i || !(init.schema()[*i].type == f.type)) {
        return Status::InvalidArgument(
            "the initial state must have the grouping key column " + f.name + " of type " +
            f.type.ToSql() +
            (i ? " (it has " + init.schema()[*i].type.ToSql() + ")" : " (it has no such column)"));
      }
      keys.push_back(*i);
    }
    std::vector<Row> init_rows;
    std::vector<std::string> init_gks;
    SLUICE_RETURN_NOT_OK_CTX(Convert(kInitialView, init, keys, &init_rows, &init_gks),
                             "the initial state");
    for (size_t r = 0; r < init_rows.size(); ++r) {
      Initial item;
      item.gk = init_gks[r];
      for (size_t c = 0; c < init_rows[r].size(); ++c) {
        if (std::find(keys.begin(), keys.end(), c) != keys.end()) continue;
        item.state.push_back(init_rows[r][c]);
      }
      for (size_t k : keys) item.key.push_back(init_rows[r][k]);
      initial[static_cast<size_t>(state::PartitionForKey(item.gk, n))].push_back(std::move(item));
    }
  }

  // 3-5. Per partition: handlers, timers, TTL.
  TimerValues tv;
  tv.current_processing_time_ms = batch.batch_timestamp_ms;
  if (options.time_mode == TimeMode::kEventTime)
    tv.current_watermark_ms = batch.eviction_watermark_ms;
  const int64_t threshold = options.time_mode == TimeMode::kEventTime ? batch.eviction_watermark_ms
                                                                      : batch.batch_timestamp_ms;
  std::vector<std::vector<Row>> outputs(static_cast<size_t>(n));
  std::vector<CustomStateCounters> counters(static_cast<size_t>(n));
  std::vector<int64_t> earliest(static_cast<size_t>(n), std::numeric_limits<int64_t>::max());
  std::atomic<int64_t> update_ns{0}, removal_ns{0};
  auto fn = [&](int32_t p, state::StateStore& store) -> Status {
    const auto pi = static_cast<size_t>(p);
    PartitionHandle& h = *handles[pi];
    StatefulProcessor& proc = *processors[pi];
    std::vector<Row>& out = outputs[pi];
    auto append = [&](Result<std::vector<Row>> r) -> Status {
      if (!r.ok()) return r.status();
      for (Row& row : *r) out.push_back(std::move(row));
      return Status::OK();
    };
    const auto start = std::chrono::steady_clock::now();
    h.BeginBatch(&store, batch.batch_timestamp_ms);
    Status st;
    for (const Initial& item : initial[pi]) {
      h.SetKey(item.gk, item.key);
      st = Guard([&] { return proc.HandleInitialState(item.key, item.state, tv); },
                 "HandleInitialState");
      if (!st.ok()) break;
    }
    for (size_t gi = 0; st.ok() && gi < groups[pi].size(); ++gi) {
      const Group& g = groups[pi][gi];
      std::vector<Row> key_rows;
      key_rows.reserve(g.rows.size());
      for (size_t r : g.rows) key_rows.push_back(rows[r]);
      h.SetKey(g.gk, g.key);
      st = append(
               Guard([&] { return proc.HandleInputRows(g.key, key_rows, tv); }, "HandleInputRows"))
               .WithContext("HandleInputRows for key " + RowToString(g.key));
    }
    if (st.ok() && options.time_mode != TimeMode::kNone) {
      auto expired = h.TakeExpiredTimers(threshold);
      if (!expired.ok()) st = expired.status();
      for (size_t i = 0; st.ok() && expired.ok() && i < expired->size(); ++i) {
        const PartitionHandle::Expired& e = (*expired)[i];
        h.SetKey(e.gk, e.key);
        st = append(Guard(
                        [&] {
                          return proc.HandleExpiredTimer(e.key, tv, ExpiredTimerInfo{e.time_ms});
                        },
                        "HandleExpiredTimer"))
                 .WithContext("HandleExpiredTimer for key " + RowToString(e.key) + " at " +
                              std::to_string(e.time_ms) + " ms");
      }
    }
    h.ClearKey();
    const auto mid = std::chrono::steady_clock::now();
    update_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(mid - start).count();
    if (st.ok() && h.has_ttl()) {
      st = h.RemoveExpired();
      removal_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - mid)
                        .count();
    }
    if (st.ok() && options.time_mode != TimeMode::kNone) {
      auto e = h.EarliestTimer();
      if (!e.ok()) {
        st = e.status();
      } else if (e->has_value()) {
        earliest[pi] = **e;
      }
    }
    counters[pi] = h.counters();
    h.EndBatch();
    return st;
  };
  const int parallelism = std::max(1, std::min<int>(options.parallelism, n));
  SLUICE_RETURN_NOT_OK(stores->RunBatch(batch.batch_id.value(), fn, parallelism).status());
  earliest_timer_ms = *std::min_element(earliest.begin(), earliest.end());

  std::vector<Row> all;
  for (std::vector<Row>& o : outputs) {
    for (Row& r : o) all.push_back(std::move(r));
  }
  SLUICE_ASSIGN_OR_RETURN(engine::Batch output,
                          ValueRowsToBatch(options.output_schema, all, "the StatefulProcessor"));

  const state::StateStoreMetrics m = stores->LastMetrics();
  StateOperatorProgress p;
  p.operator_name = kTransformWithStateOperatorName;
  p.num_rows_total = m.num_keys;
  p.num_rows_updated = m.num_updated;
  p.all_updates_time_ms = update_ns.load() / 1000000;
  p.num_rows_removed = m.num_removed;
  p.all_removals_time_ms = removal_ns.load() / 1000000;
  p.commit_time_ms = m.commit_time_ms;
  p.memory_used_bytes = m.memory_used_bytes;
  p.num_rows_dropped_by_watermark = late_rows;
  p.num_shuffle_partitions = n;
  p.num_state_store_instances = n;
  p.custom_metrics = m.custom;
  int64_t values = 0, lists = 0, maps = 0;
  for (const StateVarDecl& d : handles[0]->declarations()) {
    if (d.kind == StateVarDecl::Kind::kValue) ++values;
    if (d.kind == StateVarDecl::Kind::kList) ++lists;
    if (d.kind == StateVarDecl::Kind::kMap) ++maps;
  }
  CustomStateCounters sum;
  for (const CustomStateCounters& c : counters) {
    sum.timers_registered += c.timers_registered;
    sum.timers_deleted += c.timers_deleted;
    sum.timers_expired += c.timers_expired;
    sum.ttl_removed += c.ttl_removed;
  }
  p.custom_metrics["numValueStateVars"] = values;
  p.custom_metrics["numListStateVars"] = lists;
  p.custom_metrics["numMapStateVars"] = maps;
  p.custom_metrics["numRegisteredTimers"] = sum.timers_registered;
  p.custom_metrics["numDeletedTimers"] = sum.timers_deleted;
  p.custom_metrics["numExpiredTimers"] = sum.timers_expired;
  p.custom_metrics["numValuesRemovedDueToTTLExpiry"] = sum.ttl_removed;
  progress = std::move(p);
  return output;
}

TransformWithState::TransformWithState(TransformWithStateOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->progress.operator_name = kTransformWithStateOperatorName;
}

TransformWithState::~TransformWithState() = default;

Status TransformWithState::Open(const OperatorContext& context) {
  const std::string what = impl_->Describe();
  if (context.engine == nullptr) return Status::InvalidArgument(what + ": no engine");
  if (context.num_partitions < 1) {
    return Status::InvalidArgument(what + ": the number of state partitions must be >= 1");
  }
  if (impl_->options.key_columns.empty()) {
    return Status::InvalidArgument(what + ": TransformWithState needs at least one grouping key");
  }
  if (!impl_->options.factory) {
    return Status::InvalidArgument(what + ": no StatefulProcessor factory");
  }
  if (impl_->options.output_schema.empty()) {
    return Status::InvalidArgument(what + ": the output schema has no columns");
  }
  impl_->context = context;
  SLUICE_ASSIGN_OR_RETURN(impl_->conn, context.engine->Connect());
  if (impl_->options.input_schema.has_value()) {
    SLUICE_RETURN_NOT_OK(impl_->Prepare(*impl_->options.input_schema));
  }
  return Status::OK();
}

Result<engine::Batch> TransformWithState::Process(const OperatorBatch& batch,
                                                  const std::vector<engine::Batch>& inputs) {
  const std::string ctx = impl_->Describe() + ", batch " + batch.batch_id.ToString();
  if (impl_->conn == nullptr) return Status::InvalidArgument(ctx + ": Process before Open");
  if (inputs.size() != 1) {
    return Status::InvalidArgument(ctx + ": expects one input, got " +
                                   std::to_string(inputs.size()));
  }
  const engine::Batch& input = inputs[0];
  if (input.num_columns() == 0) return Status::InvalidArgument(ctx + ": input has no columns");
  if (!impl_->prepared) {
    SLUICE_RETURN_NOT_OK_CTX(impl_->Prepare(input.schema()), ctx);
  } else if (!(input.schema() == impl_->input_schema)) {
    std::string was, now;
    for (const auto& f : impl_->input_schema)
      was += (was.empty() ? "" : ", ") + f.name + " " + f.type.ToSql();
    for (const auto& f : input.schema())
      now += (now.empty() ? "" : ", ") + f.name + " " + f.type.ToSql();
    return Status::InvalidArgument(ctx + ": the input's columns changed (were " + was + ", now " +
                                   now + ")");
  }
  auto out = impl_->Process(batch, input);
  if (!out.ok()) return out.status().WithContext(ctx);
  return out;
}

bool TransformWithState::WantsNoDataBatch(int64_t used_watermark_ms,
                                          int64_t next_watermark_ms) const {
  switch (impl_->options.time_mode) {
    case TimeMode::kEventTime:
      return next_watermark_ms > used_watermark_ms;
    case TimeMode::kProcessingTime: {
      const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
      return impl_->earliest_timer_ms <= now;
    }
    case TimeMode::kNone:
      break;
  }
  return false;
}

StateOperatorProgress TransformWithState::Progress() const { return impl_->progress; }

}  // namespace sluice::ops
