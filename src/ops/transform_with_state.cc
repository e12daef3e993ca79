// TransformWithState (transform_with_state.h): SQL on the operator's connection drops late rows
// and converts the input to value rows; the rows are grouped by their key's row codec bytes; each
// partition's processor handles its keys, then its expired timers, inside
// OperatorStateStores::RunBatch (which loads and commits the partition's state).
#include "ops/transform_with_state.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <unordered_map>

#include "common/clock.h"
#include "common/strings.h"
#include "engine/registered_batch.h"
#include "engine/row_codec.h"
#include "ops/custom_state_codec.h"
#include "ops/custom_state_vars.h"
#include "ops/operator_conf.h"
#include "ops/operator_state.h"
#include "ops/transform_with_state_sql.h"
#include "state/partitions.h"

namespace sluice::ops {
namespace {

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

// One key's work in a batch.
struct Group {
  std::string gk;
  Row key;
  std::vector<size_t> rows;  // indexes into the batch's value rows
};

// A row of the initial state (batch 0 only).
struct InitialRow {
  std::string gk;
  Row key, state;
};

// One batch's work, shared by the phases; each partition writes only its own slots.
struct TwsBatch {
  int64_t late_rows = 0;
  std::vector<Row> rows;                         // the non-late input rows as values
  std::vector<std::vector<Group>> groups;        // per partition
  std::vector<std::vector<InitialRow>> initial;  // per partition
  TimerValues tv;
  int64_t timer_threshold_ms = 0;             // timers at or before this expire
  std::vector<std::vector<Row>> outputs;      // per partition
  std::vector<CustomStateCounters> counters;  // per partition
  std::vector<int64_t> earliest;              // per partition: its earliest timer
  std::atomic<int64_t> update_ns{0}, removal_ns{0};
};

}  // namespace

struct TransformWithState::Impl {
  TransformWithStateOptions options;
  OperatorContext context;
  std::unique_ptr<engine::Connection> conn;
  std::unique_ptr<OperatorState> state;  // opened by Prepare

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
    state.reset();
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

  // The phases of Process (docs/operators.md). GroupRows: late rows dropped, the rest grouped by
  // key per partition (and the initial state of batch 0 read).
  Status GroupRows(const OperatorBatch& batch, const engine::Batch& input, TwsBatch* b);
  Result<engine::Batch> DropLate(const OperatorBatch& batch, const engine::Batch& input,
                                 int64_t* late_rows);
  Status ReadInitialState(TwsBatch* b);
  // Per partition p on its thread: Call (the initial state and handleInputRows per key), Timers
  // (expired timers fired), Evict (state past its TTL removed).
  Status RunPartition(int32_t p, state::StateStore& store, const OperatorBatch& batch, TwsBatch& b);
  Status Call(size_t p, TwsBatch& b);
  Status Timers(size_t p, TwsBatch& b);
  void FillProgress(const TwsBatch& b);
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

  OperatorStateSpec spec;
  spec.operator_name = kTransformWithStateOperatorName;
  spec.work_dir_kind = "tws-state";
  for (size_t i : key_indexes) {
    spec.schema.key.push_back({schema[i].name, schema[i].type.ToSql(), true});
  }
  for (const StateVarDecl& d : handles[0]->declarations()) {
    spec.schema.value.push_back({d.name, d.Describe(), true});
  }
  spec.schema.value.push_back({"__timeMode", TimeModeName(options.time_mode), true});
  SLUICE_ASSIGN_OR_RETURN(state, OperatorState::Open(context, std::move(spec)));
  input_schema = schema;
  prepared = true;
  return Status::OK();
}

Status TransformWithState::Impl::Convert(const std::string& view, const engine::Batch& batch,
                                         const std::vector<size_t>& keys, std::vector<Row>* rows,
                                         std::vector<std::string>* gks) {
  SLUICE_ASSIGN_OR_RETURN(*gks, engine::EncodeRows(batch, keys));
  SLUICE_ASSIGN_OR_RETURN(engine::Batch cast, engine::QueryOver(conn.get(), view, batch,
                                                                TwsCastSql(batch.schema(), view)));
  SLUICE_ASSIGN_OR_RETURN(*rows, BatchToValueRows(cast));
  return Status::OK();
}

Result<engine::Batch> TransformWithState::Impl::Process(const OperatorBatch& batch,
                                                        const engine::Batch& input) {
  const int32_t n = state->num_partitions();
  TwsBatch b;
  b.groups.resize(static_cast<size_t>(n));
  b.initial.resize(static_cast<size_t>(n));
  b.outputs.resize(static_cast<size_t>(n));
  b.counters.resize(static_cast<size_t>(n));
  b.earliest.assign(static_cast<size_t>(n), std::numeric_limits<int64_t>::max());
  SLUICE_RETURN_NOT_OK(GroupRows(batch, input, &b));
  if (batch.batch_id.value() == 0 && options.initial_state.has_value()) {
    SLUICE_RETURN_NOT_OK(ReadInitialState(&b));
  }

  b.tv.current_processing_time_ms = batch.batch_timestamp_ms;
  if (options.time_mode == TimeMode::kEventTime) {
    b.tv.current_watermark_ms = batch.eviction_watermark_ms;
  }
  b.timer_threshold_ms = options.time_mode == TimeMode::kEventTime ? batch.eviction_watermark_ms
                                                                   : batch.batch_timestamp_ms;
  // Call, Timers and Evict per partition; the runtime loads the version and commits.
  const int parallelism = std::max(1, std::min<int>(options.parallelism, n));
  SLUICE_RETURN_NOT_OK(
      state
          ->RunBatch(
              batch.batch_id.value(),
              [&](int32_t p, state::StateStore& store) { return RunPartition(p, store, batch, b); },
              parallelism)
          .status());
  earliest_timer_ms = *std::min_element(b.earliest.begin(), b.earliest.end());

  std::vector<Row> all;
  for (std::vector<Row>& o : b.outputs) {
    for (Row& r : o) all.push_back(std::move(r));
  }
  SLUICE_ASSIGN_OR_RETURN(engine::Batch output,
                          ValueRowsToBatch(options.output_schema, all, "the StatefulProcessor"));
  FillProgress(b);
  return output;
}

Result<engine::Batch> TransformWithState::Impl::DropLate(const OperatorBatch& batch,
                                                         const engine::Batch& input,
                                                         int64_t* late_rows) {
  *late_rows = 0;
  if (late_sql.empty()) return input;
  const std::string late = TwsLateConditionSql(late_sql, batch.late_watermark_ms);
  SLUICE_ASSIGN_OR_RETURN(engine::RegisteredBatch in,
                          engine::RegisteredBatch::Make(conn.get(), kTwsInputView, input));
  SLUICE_ASSIGN_OR_RETURN(engine::Batch count, conn->Query(TwsLateCountSql(late)));
  SLUICE_ASSIGN_OR_RETURN(engine::Batch rest, conn->Query(TwsNotLateSql(late)));
  SLUICE_RETURN_NOT_OK(in.Release());
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> c, count.GetInt64(0, 0));
  *late_rows = c.value_or(0);
  return rest;
}

Status TransformWithState::Impl::GroupRows(const OperatorBatch& batch, const engine::Batch& input,
                                           TwsBatch* b) {
  SLUICE_ASSIGN_OR_RETURN(engine::Batch kept, DropLate(batch, input, &b->late_rows));
  const int32_t n = static_cast<int32_t>(b->groups.size());
  std::vector<std::string> gks;
  SLUICE_RETURN_NOT_OK(Convert(kTwsRowsView, kept, key_indexes, &b->rows, &gks));
  std::unordered_map<std::string, std::pair<int32_t, size_t>> index;  // gk -> (p, group)
  for (size_t r = 0; r < b->rows.size(); ++r) {
    auto it = index.find(gks[r]);
    if (it == index.end()) {
      const int32_t p = state::PartitionForKey(gks[r], n);
      Row key;
      for (size_t k : key_indexes) key.push_back(b->rows[r][k]);
      auto& g = b->groups[static_cast<size_t>(p)];
      g.push_back({gks[r], std::move(key), {}});
      it = index.emplace(gks[r], std::make_pair(p, g.size() - 1)).first;
    }
    b->groups[static_cast<size_t>(it->second.first)][it->second.second].rows.push_back(r);
  }
  return Status::OK();
}

Status TransformWithState::Impl::ReadInitialState(TwsBatch* b) {
  const int32_t n = static_cast<int32_t>(b->initial.size());
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
  SLUICE_RETURN_NOT_OK_CTX(Convert(kTwsInitialView, init, keys, &init_rows, &init_gks),
                           "the initial state");
  for (size_t r = 0; r < init_rows.size(); ++r) {
    InitialRow item;
    item.gk = init_gks[r];
    for (size_t c = 0; c < init_rows[r].size(); ++c) {
      if (std::find(keys.begin(), keys.end(), c) != keys.end()) continue;
      item.state.push_back(init_rows[r][c]);
    }
    for (size_t k : keys) item.key.push_back(init_rows[r][k]);
    b->initial[static_cast<size_t>(state::PartitionForKey(item.gk, n))].push_back(std::move(item));
  }
  return Status::OK();
}

Status TransformWithState::Impl::RunPartition(int32_t p, state::StateStore& store,
                                              const OperatorBatch& batch, TwsBatch& b) {
  const auto pi = static_cast<size_t>(p);
  PartitionHandle& h = *handles[pi];
  const auto start = std::chrono::steady_clock::now();
  h.BeginBatch(&store, batch.batch_timestamp_ms);
  Status st = Call(pi, b);
  if (st.ok() && options.time_mode != TimeMode::kNone) st = Timers(pi, b);
  h.ClearKey();
  const auto mid = std::chrono::steady_clock::now();
  b.update_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(mid - start).count();
  if (st.ok() && h.has_ttl()) {  // Evict
    st = h.RemoveExpired();
    b.removal_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - mid)
            .count();
  }
  if (st.ok() && options.time_mode != TimeMode::kNone) {
    auto e = h.EarliestTimer();
    if (!e.ok()) {
      st = e.status();
    } else if (e->has_value()) {
      b.earliest[pi] = **e;
    }
  }
  b.counters[pi] = h.counters();
  h.EndBatch();
  return st;
}

Status TransformWithState::Impl::Call(size_t p, TwsBatch& b) {
  PartitionHandle& h = *handles[p];
  StatefulProcessor& proc = *processors[p];
  std::vector<Row>& out = b.outputs[p];
  for (const InitialRow& item : b.initial[p]) {
    h.SetKey(item.gk, item.key);
    SLUICE_RETURN_NOT_OK(Guard([&] { return proc.HandleInitialState(item.key, item.state, b.tv); },
                               "HandleInitialState"));
  }
  for (const Group& g : b.groups[p]) {
    std::vector<Row> key_rows;
    key_rows.reserve(g.rows.size());
    for (size_t r : g.rows) key_rows.push_back(b.rows[r]);
    h.SetKey(g.gk, g.key);
    Result<std::vector<Row>> r =
        Guard([&] { return proc.HandleInputRows(g.key, key_rows, b.tv); }, "HandleInputRows");
    if (!r.ok()) return r.status().WithContext("HandleInputRows for key " + RowToString(g.key));
    for (Row& row : *r) out.push_back(std::move(row));
  }
  return Status::OK();
}

Status TransformWithState::Impl::Timers(size_t p, TwsBatch& b) {
  PartitionHandle& h = *handles[p];
  StatefulProcessor& proc = *processors[p];
  std::vector<Row>& out = b.outputs[p];
  SLUICE_ASSIGN_OR_RETURN(auto expired, h.TakeExpiredTimers(b.timer_threshold_ms));
  for (const PartitionHandle::Expired& e : expired) {
    h.SetKey(e.gk, e.key);
    Result<std::vector<Row>> r =
        Guard([&] { return proc.HandleExpiredTimer(e.key, b.tv, ExpiredTimerInfo{e.time_ms}); },
              "HandleExpiredTimer");
    if (!r.ok()) {
      return r.status().WithContext("HandleExpiredTimer for key " + RowToString(e.key) + " at " +
                                    std::to_string(e.time_ms) + " ms");
    }
    for (Row& row : *r) out.push_back(std::move(row));
  }
  return Status::OK();
}

void TransformWithState::Impl::FillProgress(const TwsBatch& b) {
  const int32_t n = state->num_partitions();
  const state::StateStoreMetrics m = state->LastMetrics();
  StateOperatorProgress p;
  p.operator_name = kTransformWithStateOperatorName;
  p.num_rows_total = m.num_keys;
  p.num_rows_updated = m.num_updated;
  p.all_updates_time_ms = b.update_ns.load() / 1000000;
  p.num_rows_removed = m.num_removed;
  p.all_removals_time_ms = b.removal_ns.load() / 1000000;
  p.commit_time_ms = m.commit_time_ms;
  p.memory_used_bytes = m.memory_used_bytes;
  p.num_rows_dropped_by_watermark = b.late_rows;
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
  for (const CustomStateCounters& c : b.counters) {
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
      const int64_t now = WallClockMs();
      return impl_->earliest_timer_ms <= now;
    }
    case TimeMode::kNone:
      break;
  }
  return false;
}

StateOperatorProgress TransformWithState::Progress() const { return impl_->progress; }

}  // namespace sluice::ops
