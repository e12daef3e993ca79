#include "ops/streaming_aggregate.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "common/clock.h"
#include "common/strings.h"
#include "engine/row_codec.h"
#include "ops/aggregate_merge.h"
#include "ops/operator_conf.h"
#include "ops/state_rows.h"
#include "ops/streaming_aggregate_sql.h"

namespace sluice::ops {
namespace {

using engine::Batch;

// Partitions loaded and committed at once (their file I/O and fsyncs overlap).
constexpr int kStateParallelism = 16;

}  // namespace

std::optional<AggregateFunction> AggregateFunctionFromName(std::string_view name, bool star) {
  if (name == "count_star" || (name == "count" && star)) return AggregateFunction::kCountStar;
  if (name == "count") return AggregateFunction::kCount;
  if (name == "sum") return AggregateFunction::kSum;
  if (name == "min") return AggregateFunction::kMin;
  if (name == "max") return AggregateFunction::kMax;
  if (name == "avg" || name == "mean") return AggregateFunction::kAvg;
  if (name == "first") return AggregateFunction::kFirst;
  if (name == "last") return AggregateFunction::kLast;
  if (name == "approx_count_distinct") return AggregateFunction::kApproxCountDistinct;
  return std::nullopt;
}

struct StreamingAggregate::Sql {
  bool session = false;
  std::string batch;     // over __agg_in: batch partial rows (+ __gstart_us, __evict_us, ...)
  std::string merge;     // over __agg_state and __agg_batch: merged rows (+ helper columns)
  std::string finalize;  // over __agg_rows: the output
  std::vector<size_t> key_columns;  // in the batch partial schema: the plain keys
  std::vector<size_t> row_columns;  // the state row (keys, window, partials)
  engine::Schema row_schema;
  // The C++ merge (ops/aggregate_merge.h) when every partial supports it (not sessions): the
  // state row is the row codec of prefix_columns (keys, window) then of partial_columns.
  std::optional<AggregateMerger> merger;
  std::vector<size_t> prefix_columns, partial_columns;
};

StreamingAggregate::StreamingAggregate(StreamingAggregateOptions options)
    : options_(std::move(options)) {}

StreamingAggregate::~StreamingAggregate() = default;

std::string StreamingAggregate::name() const {
  return options_.window && options_.window->kind == TimeWindowSpec::Kind::kSession
             ? "sessionWindowStateStoreSaveExec"
             : "stateStoreSave";
}

bool StreamingAggregate::has_watermark() const {
  return (options_.window && options_.window->watermarked) || options_.event_time_key.has_value();
}

Status StreamingAggregate::Open(const OperatorContext& context) {
  if (context.engine == nullptr) return Status::InvalidArgument("StreamingAggregate: no engine");
  if (context.num_partitions < 1) {
    return Status::InvalidArgument("StreamingAggregate: shuffle partitions must be >= 1, not " +
                                   std::to_string(context.num_partitions));
  }
  context_ = context;
  SLUICE_ASSIGN_OR_RETURN(conn_, context.engine->Connect());
  progress_.operator_name = name();
  progress_.num_shuffle_partitions = context.num_partitions;
  progress_.num_state_store_instances = context.num_partitions;
  SLUICE_ASSIGN_OR_RETURN(auto cap, ByteCountConf(context.conf, kAggregateMirrorMaxBytesConf));
  if (cap) {
    mirror_max_bytes_ = static_cast<size_t>(*cap);
    mirror_off_ = *cap == 0;
  }
  return Status::OK();
}

// Spark's StateStoreSaveExec.shouldRunAnotherBatch: in APPEND and UPDATE mode, whenever the
// query's watermark moved, also for an aggregation whose keys hold no event time (nothing to
// evict then; a global aggregate emits its row again there, as every batch without input rows
// does). Without a watermark in the query the watermark never moves. The streaming
// differential's keyed_update_watermark_not_key, global_update_watermark.
bool StreamingAggregate::WantsNoDataBatch(int64_t used_watermark_ms,
                                          int64_t next_watermark_ms) const {
  return context_.output_mode != sluice::OutputMode::kComplete &&
         next_watermark_ms > used_watermark_ms;
}

Status StreamingAggregate::KeysFromInput(const engine::Schema& input_schema) {
  if (!options_.keys.empty() || options_.window || !options_.aggregates.empty()) {
    return Status::Internal("an aggregation by every input column takes no keys, window or calls");
  }
  std::optional<std::string> event_time;
  for (const auto& f : input_schema) {
    options_.keys.push_back(f.name);
    if (options_.event_time_key && AsciiLower(f.name) == AsciiLower(*options_.event_time_key)) {
      event_time = f.name;
    }
  }
  if (options_.event_time_key && !event_time &&
      context_.output_mode == sluice::OutputMode::kAppend) {
    return Status::InvalidArgument(
        "Append output mode not supported when there are streaming aggregations on streaming "
        "DataFrames/DataSets without watermark (SELECT DISTINCT * groups by every input column, "
        "and the watermarked column " +
        *options_.event_time_key + " is not among them)");
  }
  options_.event_time_key = event_time;
  if (options_.keys.empty()) return Status::InvalidArgument("SELECT DISTINCT * of no columns");
  return Status::OK();
}

Status StreamingAggregate::PrepareSql(const engine::Schema& input_schema) {
  if (options_.keys_from_input) SLUICE_RETURN_NOT_OK(KeysFromInput(input_schema));
  auto sql = std::make_unique<Sql>();
  const auto& w = options_.window;
  sql->session = w && w->kind == TimeWindowSpec::Kind::kSession;
  auto type_of = [&](const std::string& column) -> Result<engine::DataType> {
    for (const auto& f : input_schema) {
      if (f.name == column) return f.type;
    }
    return Status::Internal("aggregate input has no column " + column);
  };
  SLUICE_ASSIGN_OR_RETURN(AggregatePartials calls,
                          AggregatePartialsSql(options_.aggregates, type_of, sql->session));
  const std::vector<AggregatePartial>& partials = calls.partials;

  std::vector<std::string> key_items;
  for (const auto& k : options_.keys) key_items.push_back(QuoteIdentifier(k));
  AggregateBatchSqlSpec batch_spec;
  if (w && w->kind != TimeWindowSpec::Kind::kSession) {
    SLUICE_ASSIGN_OR_RETURN(auto tt, type_of(w->time_column));
    if (tt.id == engine::TypeId::kTimestamp || tt.id == engine::TypeId::kTimestampTz) {
      batch_spec.time_type = tt.id;
    }
  }
  if (options_.keep_top && w) {  // the per-window top-1 hint, where it applies
    top_ = TopOneFilter::Make(
        *options_.keep_top, context_.output_mode == sluice::OutputMode::kAppend, w->watermarked,
        w->kind != TimeWindowSpec::Kind::kSession, w->size_us, options_.keys, input_schema);
  }
  const std::string wcol = w ? QuoteIdentifier(w->output) : "";
  const std::string helpers = AggregateHelpersSql(w, options_.event_time_key);
  batch_spec.key_items = key_items;
  batch_spec.window = &w;
  batch_spec.partials = &partials;
  batch_spec.helpers = helpers;
  batch_spec.empty_input_row = global();
  if (top_) {
    batch_spec.pre_reduce = [this](const std::string& rows) {
      return top_->PreReduceSql(rows, "__ws");
    };
  }
  sql->batch = AggregateBatchSql(batch_spec);

  // The batch partial schema (from the empty input) gives the state row's columns and types.
  SLUICE_ASSIGN_OR_RETURN(Batch probe, conn_->Query("SELECT * FROM (" + sql->batch + ") LIMIT 0"));
  const engine::Schema& schema = probe.schema();
  std::vector<std::string> row_names;
  for (const auto& k : options_.keys) row_names.push_back(k);
  if (w) row_names.push_back(w->output);
  for (const auto& p : partials) row_names.push_back(p.name);
  for (const auto& name : row_names) {
    auto idx = probe.ColumnIndex(name);
    if (!idx) return Status::Internal("aggregate partial rows lack column " + name);
    sql->row_columns.push_back(*idx);
  }
  for (const auto& k : options_.keys) sql->key_columns.push_back(*probe.ColumnIndex(k));
  sql->row_schema = engine::SelectSchema(schema, sql->row_columns);
  if (!sql->session) {
    std::vector<PartialMergeSpec> specs;
    specs.reserve(partials.size());
    for (const auto& p : partials) {
      specs.push_back({p.merge_fn, schema[*probe.ColumnIndex(p.name)].type.id, p.schema_name});
    }
    sql->merger = AggregateMerger::Make(specs);
    const size_t num_prefix = sql->row_columns.size() - partials.size();
    sql->prefix_columns.assign(sql->row_columns.begin(), sql->row_columns.begin() + num_prefix);
    sql->partial_columns.assign(sql->row_columns.begin() + num_prefix, sql->row_columns.end());
  }
  auto type_sql = [&](const std::string& name) {
    return schema[*probe.ColumnIndex(name)].type.ToSql();
  };

  sql->merge =
      AggregateMergeSql(key_items, wcol, sql->session, row_names, partials, type_sql, helpers);
  sql->finalize = AggregateFinalizeSql(key_items, wcol, calls.finals, options_.aggregates);
  sql_ = std::move(sql);
  return OpenState(partials);
}

Status StreamingAggregate::OpenState(const std::vector<AggregatePartial>& partials) {
  const auto& w = options_.window;
  OperatorStateSpec so;
  so.operator_name = name();
  so.work_dir_kind = "agg-state";
  // Field names as the query wrote them (see the header): keys, window, partial aggregates.
  std::vector<std::string> schema_names;
  for (size_t k = 0; k < options_.keys.size(); ++k) {
    schema_names.push_back(k < options_.key_descriptions.size() &&
                                   !options_.key_descriptions[k].empty()
                               ? options_.key_descriptions[k]
                               : options_.keys[k]);
  }
  if (w) {
    schema_names.push_back(options_.window_description.empty() ? w->output
                                                               : options_.window_description);
  }
  if (top_) schema_names[top_->key_index()] = top_->DescribeKey(schema_names[top_->key_index()]);
  const size_t num_group_fields = schema_names.size();
  for (const auto& p : partials) schema_names.push_back(p.schema_name);
  for (size_t i = 0; i < num_group_fields; ++i) {
    so.schema.key.push_back({schema_names[i], sql_->row_schema[i].type.ToSql(), true});
  }
  for (size_t i = 0; i < sql_->row_schema.size(); ++i) {
    so.schema.value.push_back({schema_names[i], sql_->row_schema[i].type.ToSql(), true});
  }
  // With the mirror, the operator counts the state rows itself (numRowsTotal); the store's exact
  // count would read every key it is told to write or remove that this batch did not read, and
  // the mirror exists to avoid those reads. Without it (sessions, turned off) the store counts.
  so.track_num_keys = sql_->session || mirror_off_;
  SLUICE_ASSIGN_OR_RETURN_CTX(state_, OperatorState::Open(context_, std::move(so)),
                              "opening the state of operator " +
                                  std::to_string(context_.operator_id) + " (" + name() + ")");
  return Status::OK();
}

// One batch's work, shared by the phases of Process.
struct StreamingAggregate::BatchWork {
  const OperatorBatch* batch = nullptr;
  bool watermark = false;               // late rows are dropped and state evicted (not in COMPLETE)
  Batch partial;                        // the batch's partial rows (phase Partial)
  int64_t dropped = 0;                  // late partial rows
  bool mirrored = false;                // the mirror is used this batch
  std::vector<std::string> batch_keys;  // encoded group key of each partial row
  std::vector<std::string> state_rows;  // the stored rows of the batch's groups (SQL merge)
  std::vector<std::string> old_keys;    // sessions: the stored rows the merge replaces
  Batch merged;                         // the merged rows (SQL merge, or the C++ merge in UPDATE)
  int64_t merged_in_cpp = -1;           // rows the C++ merge wrote; -1: SQL merge
  bool empty_global = false;            // a global aggregation's batch without input rows
  bool initial_unstored = false;        // its initial row is emitted but not stored
  int64_t updated = 0;
  std::vector<std::string> out_rows;  // encoded rows to emit (append eviction, complete)
  int64_t removed = 0;
  Batch result;
  // The BIGINT helper columns (__gstart_us, __evict_us) decoded once per batch and column:
  // Batch::GetInt64 per cell re-scans the batch, which made it the hot spot of every batch.
  std::map<std::pair<const Batch*, std::string>, std::vector<int64_t>> helper_columns;

  Result<int64_t> Helper(const Batch& b, const char* column, int64_t row) {
    auto key = std::make_pair(&b, std::string(column));
    auto it = helper_columns.find(key);
    if (it == helper_columns.end()) {
      auto idx = b.ColumnIndex(column);
      if (!idx) return Status::Internal(std::string("missing helper column ") + column);
      SLUICE_ASSIGN_OR_RETURN(auto values, engine::Int64ColumnValues(b, *idx));
      std::vector<int64_t> plain(values.size());
      for (size_t i = 0; i < values.size(); ++i) plain[i] = values[i].value_or(kNeverEvicted);
      it = helper_columns.emplace(std::move(key), std::move(plain)).first;
    }
    return it->second[static_cast<size_t>(row)];
  }
};

Result<Batch> StreamingAggregate::Process(const OperatorBatch& batch,
                                          const std::vector<Batch>& inputs) {
  if (conn_ == nullptr) return Status::Internal("StreamingAggregate::Process before Open");
  if (inputs.size() != 1) return Status::Internal("StreamingAggregate takes one input");
  SLUICE_RETURN_NOT_OK(conn_->RegisterBatch("__agg_in", inputs[0]));
  if (sql_ == nullptr) SLUICE_RETURN_NOT_OK(PrepareSql(inputs[0].schema()));
  BatchWork w;
  w.batch = &batch;
  w.watermark = has_watermark() && context_.output_mode != sluice::OutputMode::kComplete;
  w.empty_global = global() && inputs[0].num_rows() == 0;
  SLUICE_RETURN_NOT_OK(Partial(w));

  // The runtime loads version batch_id of every partition, the phases run over them, and the
  // runtime commits batch_id + 1 everywhere (or aborts every partition on an error).
  const int64_t version = batch.batch_id.value();
  auto phases = [&](const std::vector<state::StateStore*>& stores) -> Status {
    SLUICE_RETURN_NOT_OK(SyncMirror(stores, version, w));
    if (top_) {  // the per-window top-1 plan: prune against the state's best per window
      TopOneFilter::FilterInput in{version,    batch.eviction_watermark_ms * 1000,
                                   &w.partial, &sql_->row_schema,
                                   &stores,    w.mirrored ? &mirror_ : nullptr};
      SLUICE_ASSIGN_OR_RETURN(w.partial, top_->Filter(in));
    }
    int64_t updates_start = MonotonicMs();
    bool unchanged = false;  // a global aggregation over an empty input keeps its stored row
    if (w.empty_global) {
      SLUICE_ASSIGN_OR_RETURN(unchanged, StoredGlobalRow(stores, w));
    }
    if (!unchanged) {
      SLUICE_RETURN_NOT_OK(LoadAndMerge(stores, w));
      SLUICE_RETURN_NOT_OK(Write(stores, w));
    }
    progress_.all_updates_time_ms = MonotonicMs() - updates_start;
    int64_t removals_start = MonotonicMs();
    if (w.watermark) SLUICE_RETURN_NOT_OK(Evict(stores, w));
    progress_.all_removals_time_ms = MonotonicMs() - removals_start;
    return Emit(stores, w);
  };
  auto committed = state_->RunBatchOverAll(version, phases, kStateParallelism);
  if (!committed.ok()) {
    return committed.status().WithContext("batch " + batch.batch_id.ToString() + ", operator " +
                                          std::to_string(context_.operator_id) + " (" + name() +
                                          ")");
  }
  if (w.mirrored) mirror_version_ = version + 1;
  FillProgress(*committed, w);
  return std::move(w.result);
}

bool StreamingAggregate::global() const {
  return options_.keys.empty() && !options_.window && !options_.event_time_key;
}

bool StreamingAggregate::InitialRowStorable() const {
  // DuckDB's first / last keep a NULL as a value, so the initial row's NULL would stay the
  // group's first value (Spark's partial marks it unset instead).
  for (const auto& call : options_.aggregates) {
    if (call.function == AggregateFunction::kFirst || call.function == AggregateFunction::kLast) {
      return false;
    }
  }
  return true;
}

Result<bool> StreamingAggregate::StoredGlobalRow(const std::vector<state::StateStore*>& stores,
                                                 BatchWork& w) {
  // The one group's key: no key columns and no window (group start 0, AggregateHelpersSql).
  const int32_t n = static_cast<int32_t>(stores.size());
  const std::string group;
  const size_t p = static_cast<size_t>(state::PartitionForKey(StateKeyPrefix(group), n));
  const std::string key = StateKey(group, 0);
  std::optional<std::string> stored;
  if (w.mirrored) {
    auto v = mirror_[p].Find(key);
    if (v) stored = std::string(*v);
  } else {
    SLUICE_ASSIGN_OR_RETURN(stored, stores[p]->Get(key));
  }
  if (!stored) {
    // No row yet: the initial row (w.partial) is merged and stored as Spark stores it; where
    // it cannot be stored it is emitted only (the state stays empty).
    if (InitialRowStorable()) return false;
    w.initial_unstored = true;
    w.merged = w.partial;
    w.merged_in_cpp = 0;
    return true;
  }
  SLUICE_ASSIGN_OR_RETURN(auto v, ParseStateValue(*stored));
  std::vector<std::string_view> views{v.row};
  SLUICE_ASSIGN_OR_RETURN(w.merged, engine::DecodeRows(sql_->row_schema, views));
  w.merged_in_cpp = 0;  // nothing written: the stored row is the result
  return true;
}

Status StreamingAggregate::Partial(BatchWork& w) {
  const Sql& sql = *sql_;
  const int64_t late_ms = w.batch->late_watermark_ms;
  SLUICE_ASSIGN_OR_RETURN(
      w.partial,
      conn_->Query(top_ ? TopOneFilter::BindLateWatermark(sql.batch, late_ms) : sql.batch));
  // The C++ merge skips late rows itself, unless the top-1 filter needs them gone first.
  const bool late_in_merge = sql.merger.has_value() && !top_;
  if (w.watermark && w.partial.num_rows() > 0 && !late_in_merge) {
    SLUICE_RETURN_NOT_OK(conn_->RegisterBatch("__agg_partial", w.partial));
    SLUICE_ASSIGN_OR_RETURN(Batch kept, conn_->Query(AggregateNotLateSql(late_ms)));
    w.dropped = w.partial.num_rows() - kept.num_rows();
    w.partial = kept;
  }
  return Status::OK();
}

Status StreamingAggregate::SyncMirror(const std::vector<state::StateStore*>& stores,
                                      int64_t version, BatchWork& w) {
  // The mirror (header comment): equal to the stores at `version`, or rebuilt from them.
  const int32_t n = static_cast<int32_t>(stores.size());
  w.mirrored = !sql_->session && !mirror_off_;
  if (w.mirrored && mirror_version_ != version) {
    mirror_.clear();
    mirror_.resize(static_cast<size_t>(n));
    std::vector<char> fits(static_cast<size_t>(n), 1);
    const size_t per_partition = mirror_max_bytes_ / static_cast<size_t>(n);
    SLUICE_RETURN_NOT_OK(ParallelForPartitions(n, kStateParallelism, [&](int32_t p) -> Status {
      SLUICE_ASSIGN_OR_RETURN(auto it, stores[static_cast<size_t>(p)]->Iterate());
      bool ok = true;
      SLUICE_RETURN_NOT_OK(mirror_[static_cast<size_t>(p)].Load(*it, per_partition, &ok));
      fits[static_cast<size_t>(p)] = ok ? 1 : 0;
      return Status::OK();
    }));
    if (std::find(fits.begin(), fits.end(), 0) != fits.end()) GiveUpMirror(w);
  }
  mirror_version_ = -1;  // set again once this batch has committed
  return Status::OK();
}

void StreamingAggregate::GiveUpMirror(BatchWork& w) {
  // Too large: the store alone for the operator's lifetime.
  mirror_off_ = true;
  w.mirrored = false;
  mirror_.clear();
}

Result<std::vector<std::string>> StreamingAggregate::GroupKeys(const Batch& b) const {
  if (sql_->key_columns.empty()) return std::vector<std::string>(b.num_rows());
  std::vector<size_t> cols;
  for (const auto& k : options_.keys) cols.push_back(*b.ColumnIndex(k));
  return engine::EncodeRows(b, cols);
}

Status StreamingAggregate::LoadAndMerge(const std::vector<state::StateStore*>& stores,
                                        BatchWork& w) {
  const Sql& sql = *sql_;
  const int32_t n = static_cast<int32_t>(stores.size());
  SLUICE_ASSIGN_OR_RETURN(w.batch_keys, GroupKeys(w.partial));
  if (sql.merger) {  // load, merge and write at once, in C++
    SLUICE_ASSIGN_OR_RETURN(
        w.merged_in_cpp,
        MergeInCpp(w.partial, w.batch_keys, stores, w.mirrored,
                   w.watermark ? w.batch->late_watermark_ms * 1000 : INT64_MIN,
                   context_.output_mode == sluice::OutputMode::kUpdate, &w.dropped, &w.merged));
    return Status::OK();
  }
  if (sql.session) {
    std::set<std::string> seen;
    for (const auto& gk : w.batch_keys) {
      if (!seen.insert(gk).second) continue;
      state::StateStore& s =
          *stores[static_cast<size_t>(state::PartitionForKey(StateKeyPrefix(gk), n))];
      SLUICE_ASSIGN_OR_RETURN(auto it, s.PrefixScan(StateKeyPrefix(gk)));
      for (; it->Valid(); it->Next()) {
        SLUICE_ASSIGN_OR_RETURN(auto v, ParseStateValue(it->value()));
        w.state_rows.emplace_back(v.row);
        w.old_keys.emplace_back(it->key());
      }
      SLUICE_RETURN_NOT_OK(it->status());
    }
  } else {
    // The reads run per partition in parallel; the rows keep the batch's row order.
    std::vector<std::optional<std::string>> found(static_cast<size_t>(w.partial.num_rows()));
    std::vector<int64_t> gstarts(found.size());
    std::vector<std::vector<size_t>> by_partition(static_cast<size_t>(n));
    for (int64_t r = 0; r < w.partial.num_rows(); ++r) {
      const size_t i = static_cast<size_t>(r);
      SLUICE_ASSIGN_OR_RETURN(gstarts[i], w.Helper(w.partial, "__gstart_us", r));
      by_partition[static_cast<size_t>(state::PartitionForKey(StateKeyPrefix(w.batch_keys[i]), n))]
          .push_back(i);
    }
    SLUICE_RETURN_NOT_OK(ParallelForPartitions(n, kStateParallelism, [&](int32_t p) -> Status {
      state::StateStore& store = *stores[static_cast<size_t>(p)];
      for (size_t i : by_partition[static_cast<size_t>(p)]) {
        if (w.mirrored) {
          auto v = mirror_[static_cast<size_t>(p)].Find(StateKey(w.batch_keys[i], gstarts[i]));
          if (v) found[i] = std::string(*v);
          continue;
        }
        SLUICE_ASSIGN_OR_RETURN(found[i], store.Get(StateKey(w.batch_keys[i], gstarts[i])));
      }
      return Status::OK();
    }));
    for (const auto& value : found) {
      if (!value) continue;
      SLUICE_ASSIGN_OR_RETURN(auto v, ParseStateValue(*value));
      w.state_rows.emplace_back(v.row);
    }
  }
  // Merge the stored and the batch's partials by SQL.
  if (w.partial.num_rows() > 0) {
    std::vector<std::string_view> views(w.state_rows.begin(), w.state_rows.end());
    SLUICE_ASSIGN_OR_RETURN(Batch state_batch, engine::DecodeRows(sql.row_schema, views));
    SLUICE_RETURN_NOT_OK(conn_->RegisterBatch("__agg_state", state_batch));
    SLUICE_RETURN_NOT_OK(conn_->RegisterBatch("__agg_batch", w.partial));
    SLUICE_ASSIGN_OR_RETURN(w.merged, conn_->Query(sql.merge));
  }
  return Status::OK();
}

Status StreamingAggregate::Write(const std::vector<state::StateStore*>& stores, BatchWork& w) {
  const Sql& sql = *sql_;
  const int32_t n = static_cast<int32_t>(stores.size());
  for (const auto& k : w.old_keys) {
    SLUICE_RETURN_NOT_OK(stores[static_cast<size_t>(state::PartitionForKey(
                                    std::string_view(k).substr(0, k.size() - 8), n))]
                             ->Remove(k));
  }
  w.updated = w.merged_in_cpp >= 0 ? w.merged_in_cpp : w.merged.num_rows();
  if (w.merged_in_cpp < 0 && w.updated > 0) {
    const Batch& merged = w.merged;
    SLUICE_ASSIGN_OR_RETURN(auto keys, GroupKeys(merged));
    std::vector<size_t> cols;
    for (const auto& f : sql.row_schema) cols.push_back(*merged.ColumnIndex(f.name));
    SLUICE_ASSIGN_OR_RETURN(auto rows, engine::EncodeRows(merged, cols));
    // The puts run per partition in parallel (each partition's store on one thread).
    std::vector<int64_t> gstarts(rows.size()), evicts(rows.size());
    std::vector<std::vector<size_t>> by_partition(static_cast<size_t>(n));
    for (int64_t r = 0; r < merged.num_rows(); ++r) {
      const size_t i = static_cast<size_t>(r);
      SLUICE_ASSIGN_OR_RETURN(gstarts[i], w.Helper(merged, "__gstart_us", r));
      SLUICE_ASSIGN_OR_RETURN(evicts[i], w.Helper(merged, "__evict_us", r));
      by_partition[static_cast<size_t>(state::PartitionForKey(StateKeyPrefix(keys[i]), n))]
          .push_back(i);
    }
    const bool mirrored = w.mirrored;
    SLUICE_RETURN_NOT_OK(ParallelForPartitions(n, kStateParallelism, [&](int32_t p) -> Status {
      state::StateStore& store = *stores[static_cast<size_t>(p)];
      for (size_t i : by_partition[static_cast<size_t>(p)]) {
        std::string key = StateKey(keys[i], gstarts[i]);
        std::string value = StateValue(evicts[i], rows[i]);
        SLUICE_RETURN_NOT_OK(store.Put(key, value));
        if (mirrored) mirror_[static_cast<size_t>(p)].Put(key, evicts[i], std::move(value));
      }
      return Status::OK();
    }));
  }
  if (w.mirrored) {
    size_t bytes = 0;
    for (const auto& m : mirror_) bytes += m.bytes();
    if (bytes > mirror_max_bytes_) GiveUpMirror(w);
  }
  return Status::OK();
}

Status StreamingAggregate::Evict(const std::vector<state::StateStore*>& stores, BatchWork& w) {
  // What the watermark passed is removed (and, in append mode, emitted). Partitions are scanned
  // and evicted in parallel; rows are emitted in partition order.
  const int32_t n = static_cast<int32_t>(stores.size());
  const bool append = context_.output_mode == sluice::OutputMode::kAppend;
  const int64_t threshold = w.batch->eviction_watermark_ms * 1000;
  const bool mirrored = w.mirrored;
  std::vector<std::vector<std::string>> emitted(static_cast<size_t>(n));
  std::vector<int64_t> removed_in(static_cast<size_t>(n), 0);
  SLUICE_RETURN_NOT_OK(ParallelForPartitions(n, kStateParallelism, [&](int32_t p) -> Status {
    state::StateStore& s = *stores[static_cast<size_t>(p)];
    if (mirrored) {  // only what expires, in key order as a scan would find it
      auto expired = mirror_[static_cast<size_t>(p)].TakeExpired(threshold);
      for (auto& [key, value] : expired) {
        SLUICE_RETURN_NOT_OK(s.Remove(key));
        if (!append) continue;
        SLUICE_ASSIGN_OR_RETURN(auto v, ParseStateValue(value));
        emitted[static_cast<size_t>(p)].emplace_back(v.row);
      }
      removed_in[static_cast<size_t>(p)] = static_cast<int64_t>(expired.size());
      return Status::OK();
    }
    std::vector<std::string> gone;
    SLUICE_ASSIGN_OR_RETURN(auto it, s.Iterate());
    for (; it->Valid(); it->Next()) {
      SLUICE_ASSIGN_OR_RETURN(auto v, ParseStateValue(it->value()));
      if (v.evict_us > threshold) continue;
      gone.emplace_back(it->key());
      if (append) emitted[static_cast<size_t>(p)].emplace_back(v.row);
    }
    SLUICE_RETURN_NOT_OK(it->status());
    it.reset();
    for (const auto& k : gone) SLUICE_RETURN_NOT_OK(s.Remove(k));
    removed_in[static_cast<size_t>(p)] = static_cast<int64_t>(gone.size());
    return Status::OK();
  }));
  for (size_t p = 0; p < emitted.size(); ++p) {
    w.removed += removed_in[p];
    for (auto& row : emitted[p]) w.out_rows.push_back(std::move(row));
  }
  return Status::OK();
}

Status StreamingAggregate::Emit(const std::vector<state::StateStore*>& stores, BatchWork& w) {
  // The output rows per mode: COMPLETE every group, UPDATE the merged groups, APPEND what Evict
  // emitted.
  if (context_.output_mode == sluice::OutputMode::kComplete) {
    for (state::StateStore* s : stores) {
      SLUICE_ASSIGN_OR_RETURN(auto it, s->Iterate());
      for (; it->Valid(); it->Next()) {
        SLUICE_ASSIGN_OR_RETURN(auto v, ParseStateValue(it->value()));
        w.out_rows.emplace_back(v.row);
      }
      SLUICE_RETURN_NOT_OK(it->status());
    }
    if (w.initial_unstored) {
      SLUICE_ASSIGN_OR_RETURN(auto initial, engine::EncodeRows(w.partial, sql_->row_columns));
      for (auto& row : initial) w.out_rows.push_back(std::move(row));
    }
  }
  Batch rows;
  if (context_.output_mode == sluice::OutputMode::kUpdate && w.merged.num_rows() > 0) {
    rows = w.merged;
  } else {
    std::vector<std::string_view> views(w.out_rows.begin(), w.out_rows.end());
    SLUICE_ASSIGN_OR_RETURN(rows, engine::DecodeRows(sql_->row_schema, views));
  }
  SLUICE_RETURN_NOT_OK(conn_->RegisterBatch("__agg_rows", rows));
  SLUICE_ASSIGN_OR_RETURN(w.result, conn_->Query(sql_->finalize));
  return Status::OK();
}

void StreamingAggregate::FillProgress(const std::vector<state::StateStoreMetrics>& committed,
                                      const BatchWork& w) {
  state::StateStoreMetrics m;
  for (const auto& sm : committed) {
    m.num_keys += sm.num_keys;
    m.memory_used_bytes += sm.memory_used_bytes;
    m.commit_time_ms += sm.commit_time_ms;
  }
  progress_.num_rows_total = m.num_keys;
  if (w.mirrored) {
    int64_t rows_total = 0;
    for (const auto& mirror : mirror_) rows_total += static_cast<int64_t>(mirror.size());
    progress_.num_rows_total = rows_total;
  }
  progress_.num_rows_updated = w.updated;
  progress_.num_rows_removed = w.removed;
  progress_.num_rows_dropped_by_watermark = w.dropped;
  progress_.memory_used_bytes = m.memory_used_bytes;
  progress_.commit_time_ms = m.commit_time_ms;
}

Result<int64_t> StreamingAggregate::MergeInCpp(const Batch& partial,
                                               const std::vector<std::string>& group_keys,
                                               const std::vector<state::StateStore*>& stores,
                                               bool mirrored, int64_t late_us, bool want_rows,
                                               int64_t* dropped, Batch* merged) {
  const Sql& sql = *sql_;
  const int32_t n = static_cast<int32_t>(stores.size());
  const size_t num_rows = static_cast<size_t>(partial.num_rows());
  if (num_rows == 0) return 0;
  // The state row of a group is prefix (keys, window) + partials, so a stored row's partials
  // start where the batch row's prefix ends (equal groups encode to equal bytes).
  SLUICE_ASSIGN_OR_RETURN(auto prefixes, engine::EncodeRows(partial, sql.prefix_columns));
  SLUICE_ASSIGN_OR_RETURN(auto partials, engine::EncodeRows(partial, sql.partial_columns));
  auto helper = [&](const char* column) -> Result<std::vector<std::optional<int64_t>>> {
    auto idx = partial.ColumnIndex(column);
    if (!idx) return Status::Internal(std::string("missing helper column ") + column);
    return engine::Int64ColumnValues(partial, *idx);
  };
  SLUICE_ASSIGN_OR_RETURN(auto gstarts, helper("__gstart_us"));
  SLUICE_ASSIGN_OR_RETURN(auto evicts, helper("__evict_us"));
  std::vector<std::vector<size_t>> by_partition(static_cast<size_t>(n));
  int64_t written = 0;
  for (size_t i = 0; i < num_rows; ++i) {
    if (evicts[i].value_or(kNeverEvicted) <= late_us) {  // step 2: late
      ++*dropped;
      continue;
    }
    by_partition[static_cast<size_t>(state::PartitionForKey(StateKeyPrefix(group_keys[i]), n))]
        .push_back(i);
    ++written;
  }
  std::vector<std::string> rows(want_rows ? num_rows : 0);
  SLUICE_RETURN_NOT_OK(ParallelForPartitions(n, kStateParallelism, [&](int32_t p) -> Status {
    state::StateStore& store = *stores[static_cast<size_t>(p)];
    std::optional<std::string> stored;
    std::string row;
    for (size_t i : by_partition[static_cast<size_t>(p)]) {
      const int64_t evict = evicts[i].value_or(kNeverEvicted);
      const std::string key = StateKey(group_keys[i], gstarts[i].value_or(kNeverEvicted));
      std::optional<std::string_view> old;
      if (mirrored) {
        old = mirror_[static_cast<size_t>(p)].Find(key);
      } else {
        SLUICE_ASSIGN_OR_RETURN(stored, store.Get(key));
        if (stored) old = *stored;
      }
      const std::string& prefix = prefixes[i];
      const std::string_view batch_partials =
          std::string_view(partials[i]).substr(engine::kRowHeaderBytes);
      row.assign(prefix);
      if (old) {
        SLUICE_ASSIGN_OR_RETURN(auto v, ParseStateValue(*old));
        if (v.row.substr(0, prefix.size()) != prefix) {
          return Status::Corruption("state partition " + std::to_string(p) +
                                    ": the aggregation state row of a batch group does not " +
                                    "start with the group's keys and window");
        }
        SLUICE_RETURN_NOT_OK(sql.merger->Merge(v.row.substr(prefix.size()), batch_partials, &row));
      } else {
        row.append(batch_partials);
      }
      std::string value = StateValue(evict, row);
      SLUICE_RETURN_NOT_OK(store.Put(key, value));
      if (mirrored) mirror_[static_cast<size_t>(p)].Put(key, evict, value);
      if (want_rows) rows[i].swap(row);
    }
    return Status::OK();
  }));
  if (want_rows) {
    std::vector<std::string_view> views;
    for (const auto& part : by_partition) {
      for (size_t i : part) views.push_back(rows[i]);
    }
    SLUICE_ASSIGN_OR_RETURN(*merged, engine::DecodeRows(sql.row_schema, views));
  }
  return written;
}

}  // namespace sluice::ops
