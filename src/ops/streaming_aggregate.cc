#include "ops/streaming_aggregate.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "common/strings.h"
#include "engine/row_codec.h"
#include "ops/aggregate_merge.h"
#include "ops/hll_sql.h"
#include "ops/operator_conf.h"
#include "ops/session_window.h"
#include "ops/state_rows.h"
#include "ops/state_work_dir.h"

namespace sluice::ops {
namespace {

using engine::Batch;

bool IsIntegral(engine::TypeId id) {
  using engine::TypeId;
  return id == TypeId::kTinyInt || id == TypeId::kSmallInt || id == TypeId::kInteger ||
         id == TypeId::kBigInt || id == TypeId::kBoolean;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// Runs fn(0..n-1) on up to `threads` threads (state partitions are independent: each store is
// used by one thread at a time); returns the first error by index.
Status ParallelFor(int32_t n, int threads, const std::function<Status(int32_t)>& fn) {
  std::vector<Status> results(static_cast<size_t>(n));
  std::atomic<int32_t> next{0};
  auto worker = [&]() {
    for (int32_t i = next++; i < n; i = next++) results[static_cast<size_t>(i)] = fn(i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(threads, n); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (int32_t i = 0; i < n; ++i) {
    if (!results[static_cast<size_t>(i)].ok()) {
      return results[static_cast<size_t>(i)].WithContext("partition " + std::to_string(i));
    }
  }
  return Status::OK();
}

// Partitions loaded and committed at once (their file I/O and fsyncs overlap).
constexpr int kStateParallelism = 16;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Partial aggregate columns of one call: their names and the SQL to compute them.
struct Partial {
  std::string name;
  std::string batch_sql;    // over the input rows, grouped (windowed) or per row (session)
  std::string merge_fn;     // "sum", "min", "max", "first", "last"; "" = merge_sql
  std::string merge_sql;    // the merge aggregate when merge_fn is empty (sketches)
  std::string schema_name;  // the column's name in the state schema
};

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

StreamingAggregate::~StreamingAggregate() {
  stores_.reset();
  if (!local_dir_.empty()) {
    Status st = fs::LocalFileSystem()->DeleteRecursive(local_dir_);
    (void)st;
  }
}

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

bool StreamingAggregate::WantsNoDataBatch(int64_t used_watermark_ms,
                                          int64_t next_watermark_ms) const {
  return has_watermark() && context_.output_mode != sinks::OutputMode::kComplete &&
         next_watermark_ms > used_watermark_ms;
}

Status StreamingAggregate::PrepareSql(const engine::Schema& input_schema) {
  auto sql = std::make_unique<Sql>();
  const auto& w = options_.window;
  sql->session = w && w->kind == TimeWindowSpec::Kind::kSession;
  auto type_of = [&](const std::string& column) -> Result<engine::DataType> {
    for (const auto& f : input_schema) {
      if (f.name == column) return f.type;
    }
    return Status::Internal("aggregate input has no column " + column);
  };

  std::vector<Partial> partials;
  std::vector<std::string> finals;
  for (size_t j = 0; j < options_.aggregates.size(); ++j) {
    const AggregateCall& call = options_.aggregates[j];
    std::string p = "__p" + std::to_string(j);
    std::string x = call.argument.empty() ? "" : QuoteIdentifier(call.argument);
    engine::DataType type;
    if (!x.empty()) {
      SLUICE_ASSIGN_OR_RETURN(type, type_of(call.argument));
    }
    bool per_row = sql->session;
    switch (call.function) {
      case AggregateFunction::kCountStar:
        partials.push_back({p, per_row ? "1::BIGINT" : "count(*)", "sum"});
        finals.push_back(QuoteIdentifier(p));
        break;
      case AggregateFunction::kCount:
        partials.push_back(
            {p, per_row ? "(" + x + " IS NOT NULL)::BIGINT" : "count(" + x + ")", "sum"});
        finals.push_back(QuoteIdentifier(p));
        break;
      case AggregateFunction::kSum: {
        std::string v = per_row ? x : "sum(" + x + ")";
        if (IsIntegral(type.id)) v = "CAST(" + v + " AS BIGINT)";
        if (type.id == engine::TypeId::kFloat) v = "CAST(" + v + " AS DOUBLE)";
        partials.push_back({p, v, "sum"});
        finals.push_back(QuoteIdentifier(p));
        break;
      }
      case AggregateFunction::kMin:
      case AggregateFunction::kMax: {
        std::string fn = call.function == AggregateFunction::kMin ? "min" : "max";
        partials.push_back({p, per_row ? x : fn + "(" + x + ")", fn});
        finals.push_back(QuoteIdentifier(p));
        break;
      }
      case AggregateFunction::kAvg:
        partials.push_back(
            {p + "_sum", per_row ? "CAST(" + x + " AS DOUBLE)" : "CAST(sum(" + x + ") AS DOUBLE)",
             "sum"});
        partials.push_back(
            {p + "_cnt", per_row ? "(" + x + " IS NOT NULL)::BIGINT" : "count(" + x + ")", "sum"});
        finals.push_back("CASE WHEN " + QuoteIdentifier(p + "_cnt") + " = 0 THEN NULL ELSE " +
                         QuoteIdentifier(p + "_sum") + " / " + QuoteIdentifier(p + "_cnt") +
                         " END");
        break;
      case AggregateFunction::kFirst:
      case AggregateFunction::kLast: {
        std::string fn = call.function == AggregateFunction::kFirst ? "first" : "last";
        partials.push_back({p, per_row ? x : fn + "(" + x + ")", fn});
        finals.push_back(QuoteIdentifier(p));
        break;
      }
      case AggregateFunction::kApproxCountDistinct: {
        if (call.hll_precision < 4 || call.hll_precision > 16) {
          return Status::InvalidArgument("approx_count_distinct: precision " +
                                         std::to_string(call.hll_precision) + " is outside 4..16");
        }
        Partial partial{p, HllPartialSql(x, call.hll_precision, per_row), ""};
        partial.merge_sql = HllMergeSql(QuoteIdentifier(p), call.hll_precision);
        partials.push_back(std::move(partial));
        finals.push_back(HllEstimateSql(QuoteIdentifier(p), call.hll_precision));
        break;
      }
    }
    // State schema names: the call as written; avg's two partials are <call>.sum / <call>.count.
    const std::string described = call.description.empty() ? call.output : call.description;
    if (call.function == AggregateFunction::kAvg) {
      partials[partials.size() - 2].schema_name = described + ".sum";
      partials.back().schema_name = described + ".count";
    } else {
      partials.back().schema_name = described;
    }
  }

  std::vector<std::string> key_items;
  for (const auto& k : options_.keys) key_items.push_back(QuoteIdentifier(k));
  // The event time's type when it is TIMESTAMP / TIMESTAMPTZ (integer window assignment).
  std::optional<engine::TypeId> time_type;
  if (w && w->kind != TimeWindowSpec::Kind::kSession) {
    SLUICE_ASSIGN_OR_RETURN(auto tt, type_of(w->time_column));
    if (tt.id == engine::TypeId::kTimestamp || tt.id == engine::TypeId::kTimestampTz) {
      time_type = tt.id;
    }
  }
  if (options_.keep_top && w) {  // the per-window top-1 hint, where it applies
    top_ = TopOneFilter::Make(
        *options_.keep_top, context_.output_mode == sinks::OutputMode::kAppend, w->watermarked,
        w->kind != TimeWindowSpec::Kind::kSession, w->size_us, options_.keys, input_schema);
  }
  std::string wcol = w ? QuoteIdentifier(w->output) : "";
  std::string evict = "NULL::BIGINT";
  if (w && w->watermarked) {
    evict = "epoch_us(struct_extract(" + wcol + ", 'end'))";
  } else if (options_.event_time_key) {
    evict = "epoch_us(" + QuoteIdentifier(*options_.event_time_key) + ")";
  }
  std::string gstart = w ? "epoch_us(struct_extract(" + wcol + ", 'start'))" : "0::BIGINT";
  const std::string helpers = gstart + " AS __gstart_us, " + evict + " AS __evict_us";

  // 1. Batch partial rows.
  std::vector<std::string> partial_items;
  for (const auto& p : partials)
    partial_items.push_back(p.batch_sql + " AS " + QuoteIdentifier(p.name));
  if (sql->session) {
    std::string t = QuoteIdentifier(w->time_column);
    std::vector<std::string> items = key_items;
    items.push_back("{'start': " + t + ", 'end': " + t + " + to_microseconds(" +
                    std::to_string(w->gap_us) + ")} AS " + wcol);
    items.insert(items.end(), partial_items.begin(), partial_items.end());
    items.push_back("1 AS __ord");
    items.push_back("row_number() OVER () AS __seq");
    sql->batch = "SELECT *, " + helpers + " FROM (SELECT " + Join(items) + " FROM __agg_in WHERE " +
                 t + " IS NOT NULL)";
  } else if (w && time_type) {
    // Window assignment in integer epoch microseconds: TIMESTAMPTZ +/- INTERVAL runs through
    // ICU's calendar (per row and window, ~10 % of a sliding-window query); the window bounds are
    // made timestamps again only once per group. start = t - (t mod slide) - i * slide for
    // i in [0, n), kept when start + size > t; the same windows as the interval form below.
    const std::string make =
        *time_type == engine::TypeId::kTimestampTz ? "make_timestamptz" : "make_timestamp";
    const int64_t n = (w->size_us + w->slide_us - 1) / w->slide_us;
    const std::string slide = std::to_string(w->slide_us);
    const std::string size = std::to_string(w->size_us);
    const std::string t_us = "epoch_us(" + QuoteIdentifier(w->time_column) + ")";
    const std::string bucket =
        "(" + t_us + " - (((" + t_us + " % " + slide + ") + " + slide + ") % " + slide + "))";
    std::vector<std::string> items = key_items;
    items.push_back("{'start': " + make + "(__ws), 'end': " + make + "(__ws + " + size + ")} AS " +
                    wcol);
    items.insert(items.end(), partial_items.begin(), partial_items.end());
    std::vector<std::string> group = key_items;
    group.push_back("__ws");
    std::string rows;
    if (n == 1) {
      rows = "SELECT *, " + bucket + " AS __ws FROM __agg_in WHERE " +
             QuoteIdentifier(w->time_column) + " IS NOT NULL";
    } else {
      rows = "SELECT * FROM (SELECT *, " + bucket + " - __wi * " + slide + " AS __ws, " + t_us +
             " AS __t_us FROM __agg_in CROSS JOIN range(0, " + std::to_string(n) +
             ") __r(__wi) WHERE " + QuoteIdentifier(w->time_column) +
             " IS NOT NULL) WHERE __ws + " + size + " > __t_us";
    }
    if (top_) rows = top_->PreReduceSql(rows, "__ws");
    sql->batch = "SELECT *, " + helpers + " FROM (SELECT " + Join(items) + " FROM (" + rows +
                 ") GROUP BY " + Join(group) + ")";
  } else if (w) {
    std::string t = QuoteIdentifier(w->time_column);
    int64_t n = (w->size_us + w->slide_us - 1) / w->slide_us;
    std::string slide = std::to_string(w->slide_us);
    std::string start = "(" + t + " - to_microseconds((((epoch_us(" + t + ") % " + slide + ") + " +
                        slide + ") % " + slide + ") + __wi * " + slide + "))";
    std::string size = "to_microseconds(" + std::to_string(w->size_us) + ")";
    std::vector<std::string> items = key_items;
    items.push_back("{'start': __ws, 'end': __ws + " + size + "} AS " + wcol);
    items.insert(items.end(), partial_items.begin(), partial_items.end());
    std::vector<std::string> group = key_items;
    group.push_back("__ws");
    sql->batch = "SELECT *, " + helpers + " FROM (SELECT " + Join(items) + " FROM (SELECT *, " +
                 start + " AS __ws FROM __agg_in CROSS JOIN range(0, " + std::to_string(n) +
                 ") __r(__wi) WHERE " + t + " IS NOT NULL) WHERE __ws + " + size + " > " + t +
                 " GROUP BY " + Join(group) + ")";
  } else {
    std::vector<std::string> items = key_items;
    items.insert(items.end(), partial_items.begin(), partial_items.end());
    sql->batch = "SELECT *, " + helpers + " FROM (SELECT " + Join(items) + " FROM __agg_in" +
                 (key_items.empty() ? "" : " GROUP BY " + Join(key_items)) +
                 " HAVING count(*) > 0)";
  }

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

  // 2. Merge of state rows and batch partial rows.
  std::vector<std::string> row_items;
  for (const auto& name : row_names) row_items.push_back(QuoteIdentifier(name));
  std::vector<std::string> merged_items;
  for (const auto& p : partials) {
    if (p.merge_fn.empty()) {
      merged_items.push_back("CAST(" + p.merge_sql + " AS " + type_sql(p.name) + ") AS " +
                             QuoteIdentifier(p.name));
      continue;
    }
    std::string order =
        p.merge_fn == "first" || p.merge_fn == "last"
            ? (sql->session ? " ORDER BY struct_extract(" + wcol + ", 'start'), __ord, __seq"
                            : " ORDER BY __ord")
            : "";
    merged_items.push_back("CAST(" + p.merge_fn + "(" + QuoteIdentifier(p.name) + order + ") AS " +
                           type_sql(p.name) + ") AS " + QuoteIdentifier(p.name));
  }
  if (sql->session) {
    sql->merge = SessionMergeSql(key_items, wcol, Join(row_items), merged_items, helpers);
  } else {
    std::vector<std::string> group = key_items;
    if (w) group.push_back(wcol);
    std::vector<std::string> items = group;
    items.insert(items.end(), merged_items.begin(), merged_items.end());
    sql->merge = "SELECT *, " + helpers + " FROM (SELECT " + Join(items) + " FROM (SELECT " +
                 Join(row_items) + ", 0 AS __ord FROM __agg_state UNION ALL SELECT " +
                 Join(row_items) + ", 1 AS __ord FROM __agg_batch)" +
                 (group.empty() ? "" : " GROUP BY " + Join(group)) + ")";
  }

  // 3. Final values.
  std::vector<std::string> fin = key_items;
  if (w) fin.push_back(wcol);
  for (size_t j = 0; j < finals.size(); ++j) {
    fin.push_back(finals[j] + " AS " + QuoteIdentifier(options_.aggregates[j].output));
  }
  sql->finalize = "SELECT " + Join(fin) + " FROM __agg_rows";
  sql_ = std::move(sql);

  // The state stores, now that the row schema is known.
  state::OperatorStateOptions so;
  so.checkpoint_root = context_.checkpoint_root;
  so.operator_id = context_.operator_id;
  so.operator_name = name();
  so.num_partitions = context_.num_partitions;
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
  const bool memory =
      StateProviderFromConf(context_.conf) == state::StateStoreProviderKind::kInMemory;
  so.store.kind =
      memory ? state::StateStoreProviderKind::kInMemory : state::StateStoreProviderKind::kRocksDb;
  so.store.fs = context_.fs;
  // With the mirror, the operator counts the state rows itself (numRowsTotal); the store's exact
  // count would read every key it is told to write or remove that this batch did not read, and
  // the mirror exists to avoid those reads. Without it (sessions, turned off) the store counts.
  so.store.track_num_keys = sql_->session || mirror_off_;
  if (!memory) {
    SLUICE_ASSIGN_OR_RETURN(local_dir_, CreateStateWorkDir(context_.checkpoint_root, "agg-state"));
    so.local_root = local_dir_;
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(stores_, state::OperatorStateStores::Open(std::move(so)),
                              "opening the state of operator " +
                                  std::to_string(context_.operator_id) + " (" + name() + ")");
  return Status::OK();
}

Result<Batch> StreamingAggregate::Process(const OperatorBatch& batch,
                                          const std::vector<Batch>& inputs) {
  if (conn_ == nullptr) return Status::Internal("StreamingAggregate::Process before Open");
  if (inputs.size() != 1) return Status::Internal("StreamingAggregate takes one input");
  int64_t start_ms = NowMs();
  SLUICE_RETURN_NOT_OK(conn_->RegisterBatch("__agg_in", inputs[0]));
  if (sql_ == nullptr) SLUICE_RETURN_NOT_OK(PrepareSql(inputs[0].schema()));
  const Sql& sql = *sql_;
  const bool complete = context_.output_mode == sinks::OutputMode::kComplete;
  const bool append = context_.output_mode == sinks::OutputMode::kAppend;
  const bool watermark = has_watermark() && !complete;

  // 1-2. Batch partial rows, late ones dropped.
  SLUICE_ASSIGN_OR_RETURN(Batch partial, conn_->Query(top_ ? TopOneFilter::BindLateWatermark(
                                                                 sql.batch, batch.late_watermark_ms)
                                                           : sql.batch));
  int64_t dropped = 0;
  // The C++ merge skips late rows itself (step 5), unless the top-1 filter needs them gone first.
  const bool late_in_merge = sql.merger.has_value() && !top_;
  if (watermark && partial.num_rows() > 0 && !late_in_merge) {
    SLUICE_RETURN_NOT_OK(conn_->RegisterBatch("__agg_partial", partial));
    SLUICE_ASSIGN_OR_RETURN(Batch kept,
                            conn_->Query("SELECT * FROM __agg_partial WHERE __evict_us IS NULL OR "
                                         "__evict_us > " +
                                         std::to_string(batch.late_watermark_ms * 1000)));
    dropped = partial.num_rows() - kept.num_rows();
    partial = kept;
  }

  // 3. Open every partition's state at version batch_id.
  const int32_t n = stores_->num_partitions();
  std::vector<std::unique_ptr<state::StateStore>> stores(static_cast<size_t>(n));
  SLUICE_RETURN_NOT_OK(ParallelFor(n, kStateParallelism, [&](int32_t p) -> Status {
    SLUICE_ASSIGN_OR_RETURN(stores[static_cast<size_t>(p)],
                            stores_->partition(p).GetStore(batch.batch_id.value()));
    return Status::OK();
  }));
  auto abort_all = [&]() {
    for (auto& s : stores) {
      if (s) s->Abort();
    }
  };
  Batch result;
  const int64_t version = batch.batch_id.value();
  Status st = [&]() -> Status {
    // The mirror (header comment): equal to the stores at `version`, or rebuilt from them.
    bool mirrored = !sql.session && !mirror_off_;
    auto give_up_mirror = [&] {  // too large: the store alone for the operator's lifetime
      mirror_off_ = true;
      mirrored = false;
      mirror_.clear();
    };
    if (mirrored && mirror_version_ != version) {
      mirror_.clear();
      mirror_.resize(static_cast<size_t>(n));
      std::vector<char> fits(static_cast<size_t>(n), 1);
      const size_t per_partition = mirror_max_bytes_ / static_cast<size_t>(n);
      SLUICE_RETURN_NOT_OK(ParallelFor(n, kStateParallelism, [&](int32_t p) -> Status {
        SLUICE_ASSIGN_OR_RETURN(auto it, stores[static_cast<size_t>(p)]->Iterate());
        bool ok = true;
        SLUICE_RETURN_NOT_OK(mirror_[static_cast<size_t>(p)].Load(*it, per_partition, &ok));
        fits[static_cast<size_t>(p)] = ok ? 1 : 0;
        return Status::OK();
      }));
      if (std::find(fits.begin(), fits.end(), 0) != fits.end()) give_up_mirror();
    }
    mirror_version_ = -1;  // set again once this batch has committed
    if (top_) {            // the per-window top-1 plan: prune against the state's best per window
      TopOneFilter::FilterInput in{version,  batch.eviction_watermark_ms * 1000,
                                   &partial, &sql.row_schema,
                                   &stores,  mirrored ? &mirror_ : nullptr};
      SLUICE_ASSIGN_OR_RETURN(partial, top_->Filter(in));
    }
    auto group_keys = [&](const Batch& b) -> Result<std::vector<std::string>> {
      if (sql.key_columns.empty()) return std::vector<std::string>(b.num_rows());
      std::vector<size_t> cols;
      for (const auto& k : options_.keys) cols.push_back(*b.ColumnIndex(k));
      return engine::EncodeRows(b, cols);
    };
    // The BIGINT helper columns (__gstart_us, __evict_us) are decoded once per batch and column:
    // Batch::GetInt64 per cell re-scans the batch, which made it the hot spot of every batch.
    std::map<std::pair<const Batch*, std::string>, std::vector<int64_t>> helper_columns;
    auto helper = [&](const Batch& b, const char* column, int64_t row) -> Result<int64_t> {
      auto key = std::make_pair(&b, std::string(column));
      auto it = helper_columns.find(key);
      if (it == helper_columns.end()) {
        auto idx = b.ColumnIndex(column);
        if (!idx) return Status::Internal(std::string("missing helper column ") + column);
        SLUICE_ASSIGN_OR_RETURN(auto column, engine::Int64ColumnValues(b, *idx));
        std::vector<int64_t> values(column.size());
        for (size_t i = 0; i < column.size(); ++i) values[i] = column[i].value_or(kNeverEvicted);
        it = helper_columns.emplace(std::move(key), std::move(values)).first;
      }
      return it->second[static_cast<size_t>(row)];
    };
    auto store_of = [&](const std::string& gk) -> state::StateStore& {
      return *stores[static_cast<size_t>(state::PartitionForKey(StateKeyPrefix(gk), n))];
    };

    // 4. The state rows of the batch's groups.
    int64_t updates_start = NowMs();
    SLUICE_ASSIGN_OR_RETURN(auto batch_keys, group_keys(partial));
    std::vector<std::string> state_rows;
    std::vector<std::string> old_keys;  // sessions: replaced by the merge
    Batch merged;
    int64_t merged_in_cpp = -1;  // rows the C++ merge wrote (steps 4-6 at once); -1: SQL merge
    if (sql.merger) {
      SLUICE_ASSIGN_OR_RETURN(
          merged_in_cpp,
          MergeInCpp(partial, batch_keys, stores, mirrored,
                     watermark ? batch.late_watermark_ms * 1000 : INT64_MIN,
                     context_.output_mode == sinks::OutputMode::kUpdate, &dropped, &merged));
    } else if (sql.session) {
      std::set<std::string> seen;
      for (const auto& gk : batch_keys) {
        if (!seen.insert(gk).second) continue;
        state::StateStore& s = store_of(gk);
        SLUICE_ASSIGN_OR_RETURN(auto it, s.PrefixScan(StateKeyPrefix(gk)));
        for (; it->Valid(); it->Next()) {
          SLUICE_ASSIGN_OR_RETURN(auto v, ParseStateValue(it->value()));
          state_rows.emplace_back(v.row);
          old_keys.emplace_back(it->key());
        }
        SLUICE_RETURN_NOT_OK(it->status());
      }
    } else {
      // The reads run per partition in parallel; the rows keep the batch's row order.
      std::vector<std::optional<std::string>> found(static_cast<size_t>(partial.num_rows()));
      std::vector<int64_t> gstarts(found.size());
      std::vector<std::vector<size_t>> by_partition(static_cast<size_t>(n));
      for (int64_t r = 0; r < partial.num_rows(); ++r) {
        const size_t i = static_cast<size_t>(r);
        SLUICE_ASSIGN_OR_RETURN(gstarts[i], helper(partial, "__gstart_us", r));
        by_partition[static_cast<size_t>(state::PartitionForKey(StateKeyPrefix(batch_keys[i]), n))]
            .push_back(i);
      }
      SLUICE_RETURN_NOT_OK(ParallelFor(n, kStateParallelism, [&](int32_t p) -> Status {
        state::StateStore& store = *stores[static_cast<size_t>(p)];
        for (size_t i : by_partition[static_cast<size_t>(p)]) {
          if (mirrored) {
            auto v = mirror_[static_cast<size_t>(p)].Find(StateKey(batch_keys[i], gstarts[i]));
            if (v) found[i] = std::string(*v);
            continue;
          }
          SLUICE_ASSIGN_OR_RETURN(found[i], store.Get(StateKey(batch_keys[i], gstarts[i])));
        }
        return Status::OK();
      }));
      for (const auto& value : found) {
        if (!value) continue;
        SLUICE_ASSIGN_OR_RETURN(auto v, ParseStateValue(*value));
        state_rows.emplace_back(v.row);
      }
    }

    // 5. Merge.
    if (merged_in_cpp < 0 && partial.num_rows() > 0) {
      std::vector<std::string_view> views(state_rows.begin(), state_rows.end());
      SLUICE_ASSIGN_OR_RETURN(Batch state_batch, engine::DecodeRows(sql.row_schema, views));
      SLUICE_RETURN_NOT_OK(conn_->RegisterBatch("__agg_state", state_batch));
      SLUICE_RETURN_NOT_OK(conn_->RegisterBatch("__agg_batch", partial));
      SLUICE_ASSIGN_OR_RETURN(merged, conn_->Query(sql.merge));
    }

    // 6. Write.
    for (const auto& k : old_keys) {
      SLUICE_RETURN_NOT_OK(stores[static_cast<size_t>(state::PartitionForKey(
                                      std::string_view(k).substr(0, k.size() - 8), n))]
                               ->Remove(k));
    }
    int64_t updated = merged_in_cpp >= 0 ? merged_in_cpp : merged.num_rows();
    if (merged_in_cpp < 0 && updated > 0) {
      SLUICE_ASSIGN_OR_RETURN(auto keys, group_keys(merged));
      std::vector<size_t> cols;
      for (const auto& f : sql.row_schema) cols.push_back(*merged.ColumnIndex(f.name));
      SLUICE_ASSIGN_OR_RETURN(auto rows, engine::EncodeRows(merged, cols));
      // The puts run per partition in parallel (each partition's store on one thread).
      std::vector<int64_t> gstarts(rows.size()), evicts(rows.size());
      std::vector<std::vector<size_t>> by_partition(static_cast<size_t>(n));
      for (int64_t r = 0; r < merged.num_rows(); ++r) {
        const size_t i = static_cast<size_t>(r);
        SLUICE_ASSIGN_OR_RETURN(gstarts[i], helper(merged, "__gstart_us", r));
        SLUICE_ASSIGN_OR_RETURN(evicts[i], helper(merged, "__evict_us", r));
        by_partition[static_cast<size_t>(state::PartitionForKey(StateKeyPrefix(keys[i]), n))]
            .push_back(i);
      }
      SLUICE_RETURN_NOT_OK(ParallelFor(n, kStateParallelism, [&](int32_t p) -> Status {
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
    if (mirrored) {
      size_t bytes = 0;
      for (const auto& m : mirror_) bytes += m.bytes();
      if (bytes > mirror_max_bytes_) give_up_mirror();
    }
    progress_.all_updates_time_ms = NowMs() - updates_start;

    // 7. Evict (and, in append mode, emit) what the watermark passed.
    int64_t removals_start = NowMs();
    std::vector<std::string> out_rows;
    int64_t removed = 0;
    if (watermark) {
      const int64_t threshold = batch.eviction_watermark_ms * 1000;
      // Partitions are scanned and evicted in parallel; rows are emitted in partition order.
      std::vector<std::vector<std::string>> emitted(static_cast<size_t>(n));
      std::vector<int64_t> removed_in(static_cast<size_t>(n), 0);
      SLUICE_RETURN_NOT_OK(ParallelFor(n, kStateParallelism, [&](int32_t p) -> Status {
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
        removed += removed_in[p];
        for (auto& row : emitted[p]) out_rows.push_back(std::move(row));
      }
    }
    progress_.all_removals_time_ms = NowMs() - removals_start;

    // 8. The output rows per mode.
    Batch rows;
    if (complete) {
      for (auto& s : stores) {
        SLUICE_ASSIGN_OR_RETURN(auto it, s->Iterate());
        for (; it->Valid(); it->Next()) {
          SLUICE_ASSIGN_OR_RETURN(auto v, ParseStateValue(it->value()));
          out_rows.emplace_back(v.row);
        }
        SLUICE_RETURN_NOT_OK(it->status());
      }
    }
    if (context_.output_mode == sinks::OutputMode::kUpdate && merged.num_rows() > 0) {
      rows = merged;
    } else {
      std::vector<std::string_view> views(out_rows.begin(), out_rows.end());
      SLUICE_ASSIGN_OR_RETURN(rows, engine::DecodeRows(sql.row_schema, views));
    }
    SLUICE_RETURN_NOT_OK(conn_->RegisterBatch("__agg_rows", rows));
    SLUICE_ASSIGN_OR_RETURN(result, conn_->Query(sql.finalize));

    // 9. Commit version batch_id + 1 everywhere.
    SLUICE_RETURN_NOT_OK(ParallelFor(n, kStateParallelism, [&](int32_t p) -> Status {
      return stores[static_cast<size_t>(p)]->Commit().status();
    }));
    if (mirrored) mirror_version_ = version + 1;
    state::StateStoreMetrics m;
    for (auto& s : stores) {
      auto sm = s->Metrics();
      m.num_keys += sm.num_keys;
      m.memory_used_bytes += sm.memory_used_bytes;
      m.commit_time_ms += sm.commit_time_ms;
    }
    progress_.num_rows_total = m.num_keys;
    if (mirrored) {
      int64_t rows_total = 0;
      for (const auto& mirror : mirror_) rows_total += static_cast<int64_t>(mirror.size());
      progress_.num_rows_total = rows_total;
    }
    progress_.num_rows_updated = updated;
    progress_.num_rows_removed = removed;
    progress_.num_rows_dropped_by_watermark = dropped;
    progress_.memory_used_bytes = m.memory_used_bytes;
    progress_.commit_time_ms = m.commit_time_ms;
    return Status::OK();
  }();
  if (!st.ok()) {
    abort_all();
    return st.WithContext("batch " + batch.batch_id.ToString() + ", operator " +
                          std::to_string(context_.operator_id) + " (" + name() + ")");
  }
  (void)start_ms;
  return result;
}

Result<int64_t> StreamingAggregate::MergeInCpp(
    const Batch& partial, const std::vector<std::string>& group_keys,
    std::vector<std::unique_ptr<state::StateStore>>& stores, bool mirrored, int64_t late_us,
    bool want_rows, int64_t* dropped, Batch* merged) {
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
  SLUICE_RETURN_NOT_OK(ParallelFor(n, kStateParallelism, [&](int32_t p) -> Status {
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
