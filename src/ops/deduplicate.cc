// Deduplicate and DeduplicateWithinWatermark (deduplicate.h): one implementation, two modes.
//
// Per batch: late rows are dropped and each key's first row of the batch picked (the
// candidates), by a C++ hash pass (dedup_candidates.h) or, for other orderings and types, by SQL
// on the operator's connection; the candidates' keys are looked up per state partition (in
// parallel) in the partition's mirror (dedup_state_mirror.h) or, without it, with one MultiGet;
// the candidates whose key was absent are put into state, the expired keys removed, and the kept
// rows selected from the batch by SQL.
#include "ops/deduplicate.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/strings.h"
#include "engine/batch_builder.h"
#include "engine/row_codec.h"
#include "ops/dedup_candidates.h"
#include "ops/dedup_state_mirror.h"
#include "ops/operator_conf.h"
#include "ops/state_work_dir.h"
#include "state/partitions.h"

namespace sluice::ops {
namespace {

constexpr char kInputView[] = "__sluice_dedup_input";
constexpr char kCandidatesView[] = "__sluice_dedup_candidates";
constexpr char kKeptView[] = "__sluice_dedup_kept";
constexpr char kPosColumn[] = "__sluice_dedup_pos";      // position in the (non-late) input
constexpr char kRankColumn[] = "__sluice_dedup_rank";    // row_number within a key
constexpr char kIndexColumn[] = "__sluice_dedup_index";  // dense candidate index 0, 1, ...
constexpr char kValueColumn[] = "__sluice_dedup_value";  // the state value (BIGINT)
constexpr char kKeepColumn[] = "__sluice_dedup_keep";    // 1: the input row is kept, else 0

// ms -> us, saturating (a watermark is far from the limits, but never overflow).
int64_t MillisToMicros(int64_t ms) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 1000;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min() / 1000;
  return std::clamp(ms, kMin, kMax) * 1000;
}

// SQL giving the event time in microseconds of column `quoted` of type `type`.
Result<std::string> EventTimeMicrosSql(const std::string& name, const engine::DataType& type) {
  const std::string q = QuoteIdentifier(name);
  switch (type.id) {
    case engine::TypeId::kTimestamp:
    case engine::TypeId::kTimestampTz:
      return "epoch_us(" + q + ")";
    case engine::TypeId::kDate:
      return "epoch_us(CAST(" + q + " AS TIMESTAMP))";
    case engine::TypeId::kStruct:
      for (const engine::Field& f : type.children) {
        if (f.name == "end" && (f.type.id == engine::TypeId::kTimestamp ||
                                f.type.id == engine::TypeId::kTimestampTz)) {
          return "epoch_us(" + q + ".\"end\")";
        }
      }
      break;
    default:
      break;
  }
  return Status::InvalidArgument("event-time column " + name + " has type " + type.ToSql() +
                                 "; deduplication needs TIMESTAMP, TIMESTAMP WITH TIME ZONE, DATE "
                                 "or a window STRUCT with an \"end\" field");
}

}  // namespace

class DeduplicateOperator {
 public:
  enum class Mode { kDedupe, kWithinWatermark };

  DeduplicateOperator(Mode mode, DeduplicateOptions options)
      : mode_(mode), options_(std::move(options)) {
    progress_.operator_name =
        mode_ == Mode::kDedupe ? kDedupeOperatorName : kDedupeWithinWatermarkOperatorName;
  }

  ~DeduplicateOperator() {
    stores_.reset();
    if (!local_root_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(local_root_, ec);
    }
  }

  Status Open(const OperatorContext& context);
  Result<engine::Batch> Process(const OperatorBatch& batch,
                                const std::vector<engine::Batch>& inputs);
  bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const {
    return next_watermark_ms > used_watermark_ms;
  }
  const StateOperatorProgress& progress() const { return progress_; }

 private:
  // First batch: resolves the columns against the input schema and opens the state stores.
  Status Prepare(const engine::Schema& schema);
  // The candidates of this batch (see the file comment) and the number of late rows.
  Result<engine::Batch> Candidates(const engine::Batch& input, int64_t late_watermark_ms,
                                   int64_t* late_rows);
  // The kept rows of `rows`, in order. `rows` is the candidates when `are_candidates`, and `kept`
  // lists their kIndexColumn values (one BIGINT column "i"); else `rows` is the input and `kept`
  // a 0/1 mask (BIGINT kKeepColumn) with one row per input row, joined by position.
  Result<engine::Batch> SelectKept(const engine::Batch& rows, bool are_candidates,
                                   const engine::Batch& kept);
  // Without the mirror: removes the keys of `store` whose value is <= threshold (encoded);
  // returns how many.
  Result<int64_t> Evict(state::StateStore& store, const std::string& threshold,
                        const std::string& null);
  std::string Describe() const { return std::string("operator ") + progress_.operator_name; }

  const Mode mode_;
  const DeduplicateOptions options_;
  OperatorContext context_;
  std::unique_ptr<engine::Connection> conn_;
  std::unique_ptr<state::OperatorStateStores> stores_;
  std::string local_root_;

  // Resolved at the first batch.
  bool prepared_ = false;
  engine::Schema input_schema_;
  std::vector<size_t> key_indexes_;
  std::optional<size_t> event_time_index_;
  std::string event_time_us_sql_;  // over the input's columns; empty without event time
  bool evicts_ = false;            // this operator removes state by the watermark
  bool has_value_ = false;         // the state value is a BIGINT (else zero columns)
  // Set when the candidates can come from the C++ hash pass (dedup_candidates.h).
  std::optional<DedupCandidateSpec> fast_spec_;

  // The mirror (deduplicate.h): one per partition, equal to the stores at state_version_.
  std::vector<DedupStateMirror> mirrors_;
  bool mirror_off_ = false;  // turned off, or given up (too large) for the operator's lifetime
  size_t mirror_max_bytes_ = size_t{256} << 20;
  // Exact keys per partition at state_version_ (numRowsTotal); -1: no version is known.
  std::vector<int64_t> num_keys_;
  int64_t state_version_ = -1;

  StateOperatorProgress progress_;
};

Status DeduplicateOperator::Open(const OperatorContext& context) {
  if (context.engine == nullptr) return Status::InvalidArgument(Describe() + ": no engine");
  if (context.num_partitions < 1) {
    return Status::InvalidArgument(Describe() + ": the number of state partitions must be >= 1");
  }
  if (mode_ == Mode::kWithinWatermark) {
    if (options_.event_time_column.empty()) {
      return Status::InvalidArgument(
          "dropDuplicatesWithinWatermark needs a watermarked event-time column in its input");
    }
    if (options_.delay_ms < 0) {
      return Status::InvalidArgument(Describe() + ": negative watermark delay");
    }
  }
  SLUICE_ASSIGN_OR_RETURN(auto cap, ByteCountConf(context.conf, kDedupMirrorMaxBytesConf));
  if (cap) {
    mirror_max_bytes_ = static_cast<size_t>(*cap);
    mirror_off_ = *cap == 0;
  }
  context_ = context;
  SLUICE_ASSIGN_OR_RETURN(conn_, context.engine->Connect());
  return Status::OK();
}

Status DeduplicateOperator::Prepare(const engine::Schema& schema) {
  auto find = [&](const std::string& name) -> Result<size_t> {
    for (size_t i = 0; i < schema.size(); ++i) {
      if (schema[i].name == name) return i;
    }
    return Status::InvalidArgument(Describe() + ": the input has no column " + name);
  };
  key_indexes_.clear();
  if (options_.key_columns.empty()) {
    for (size_t i = 0; i < schema.size(); ++i) key_indexes_.push_back(i);
  } else {
    for (const std::string& k : options_.key_columns) {
      SLUICE_ASSIGN_OR_RETURN(size_t i, find(k));
      key_indexes_.push_back(i);
    }
  }
  if (key_indexes_.empty()) return Status::InvalidArgument(Describe() + ": no key columns");
  if (!options_.event_time_column.empty()) {
    SLUICE_ASSIGN_OR_RETURN(size_t i, find(options_.event_time_column));
    event_time_index_ = i;
    SLUICE_ASSIGN_OR_RETURN(event_time_us_sql_, EventTimeMicrosSql(schema[i].name, schema[i].type));
  }
  if (mode_ == Mode::kWithinWatermark) {
    evicts_ = true;
  } else {
    evicts_ = event_time_index_.has_value() && std::find(key_indexes_.begin(), key_indexes_.end(),
                                                         *event_time_index_) != key_indexes_.end();
  }
  has_value_ = evicts_;
  fast_spec_.reset();
  const bool timestamp_event_time =
      event_time_index_.has_value() &&
      (schema[*event_time_index_].type.id == engine::TypeId::kTimestamp ||
       schema[*event_time_index_].type.id == engine::TypeId::kTimestampTz);
  const std::string et_asc = event_time_index_.has_value()
                                 ? QuoteIdentifier(schema[*event_time_index_].name) + " ASC"
                                 : std::string();
  const bool order_by_event_time =
      !et_asc.empty() &&
      (options_.order_by == et_asc || options_.order_by == et_asc + " NULLS LAST" ||
       options_.order_by == et_asc + " NULLS FIRST");
  if ((!event_time_index_.has_value() || timestamp_event_time) &&
      (options_.order_by.empty() || order_by_event_time)) {
    DedupCandidateSpec spec;
    spec.key_indexes = key_indexes_;
    spec.event_time_index = event_time_index_;
    spec.order_by_event_time = order_by_event_time;
    if (has_value_) {
      spec.state_time = mode_ == Mode::kDedupe ? DedupCandidateSpec::StateTime::kEventTime
                                               : DedupCandidateSpec::StateTime::kExpiry;
      spec.expiry_delay_us = MillisToMicros(options_.delay_ms);
    }
    fast_spec_ = std::move(spec);
  }

  state::OperatorStateOptions o;
  o.checkpoint_root = context_.checkpoint_root;
  o.operator_id = context_.operator_id;
  o.operator_name = progress_.operator_name;
  o.num_partitions = context_.num_partitions;
  for (size_t j = 0; j < key_indexes_.size(); ++j) {
    const size_t i = key_indexes_[j];
    const bool described = options_.key_descriptions.size() == key_indexes_.size() &&
                           !options_.key_descriptions[j].empty();
    o.schema.key.push_back(
        {described ? options_.key_descriptions[j] : schema[i].name, schema[i].type.ToSql(), true});
  }
  if (has_value_) {
    o.schema.value.push_back(
        {mode_ == Mode::kDedupe ? "eventTimeMicros" : "expiresAtMicros", "BIGINT", true});
  }
  o.store.kind = StateProviderFromConf(context_.conf);
  const bool rocksdb = o.store.kind == state::StateStoreProviderKind::kRocksDb;
  o.store.fs = context_.fs;
  // The operator counts keys itself (numRowsTotal): it puts only keys it found absent and removes
  // only keys it found present, so the store need not read each written key to count it.
  o.store.track_num_keys = false;
  if (rocksdb) {
    SLUICE_ASSIGN_OR_RETURN(local_root_,
                            CreateStateWorkDir(context_.checkpoint_root, "dedup-state"));
    o.local_root = local_root_;
  }
  SLUICE_ASSIGN_OR_RETURN(stores_, state::OperatorStateStores::Open(std::move(o)));
  input_schema_ = schema;
  prepared_ = true;
  return Status::OK();
}

Result<engine::Batch> DeduplicateOperator::Candidates(const engine::Batch& input,
                                                      int64_t late_watermark_ms,
                                                      int64_t* late_rows) {
  *late_rows = 0;
  SLUICE_RETURN_NOT_OK(conn_->RegisterBatch(kInputView, input));
  std::string where;
  if (event_time_index_.has_value()) {
    const std::string late =
        event_time_us_sql_ + " <= " + std::to_string(MillisToMicros(late_watermark_ms));
    SLUICE_ASSIGN_OR_RETURN(engine::Batch count, conn_->Query(std::string("SELECT count(*) FROM ") +
                                                              kInputView + " WHERE " + late));
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, count.GetInt64(0, 0));
    *late_rows = n.value_or(0);
    where = " WHERE NOT coalesce(" + late + ", false)";
  }
  std::string value;
  if (has_value_) {
    const std::string et = event_time_us_sql_;
    value = mode_ == Mode::kDedupe
                ? "CAST(" + et + " AS BIGINT)"
                : "CAST(coalesce(" + et + ", 0) + " +
                      std::to_string(MillisToMicros(options_.delay_ms)) + " AS BIGINT)";
    value = ", " + value + " AS " + kValueColumn;
  }
  std::string partition_by;
  for (size_t i : key_indexes_) {
    if (!partition_by.empty()) partition_by += ", ";
    partition_by += QuoteIdentifier(input_schema_[i].name);
  }
  std::string order_by = options_.order_by.empty() ? "" : options_.order_by + ", ";
  order_by += kPosColumn;
  const std::string sql = std::string("SELECT * EXCLUDE (") + kRankColumn +
                          "), row_number() OVER (ORDER BY " + kPosColumn + ") - 1 AS " +
                          kIndexColumn + " FROM (SELECT *, row_number() OVER (PARTITION BY " +
                          partition_by + " ORDER BY " + order_by + ") AS " + kRankColumn +
                          " FROM (SELECT *" + value + ", row_number() OVER () AS " + kPosColumn +
                          " FROM " + kInputView + where + ")) WHERE " + kRankColumn +
                          " = 1 ORDER BY " + kPosColumn;
  auto candidates = conn_->Query(sql);
  Status unregister = conn_->UnregisterBatch(kInputView);
  if (!candidates.ok()) return candidates.status();
  SLUICE_RETURN_NOT_OK(unregister);
  return candidates;
}

Result<engine::Batch> DeduplicateOperator::SelectKept(const engine::Batch& rows,
                                                      bool are_candidates,
                                                      const engine::Batch& kept) {
  SLUICE_RETURN_NOT_OK(conn_->RegisterBatch(kCandidatesView, rows));
  Status registered = conn_->RegisterBatch(kKeptView, kept);
  Result<engine::Batch> output = Status::Internal("not queried");
  if (!registered.ok()) {
    output = registered;
  } else {
    std::string sql;
    if (are_candidates) {
      std::string exclude = std::string(kPosColumn) + ", " + kIndexColumn;
      if (has_value_) exclude += std::string(", ") + kValueColumn;
      sql = std::string("SELECT * EXCLUDE (") + exclude + ") FROM " + kCandidatesView + " WHERE " +
            kIndexColumn + " IN (SELECT i FROM " + kKeptView + ") ORDER BY " + kIndexColumn;
    } else {
      // A mask row per input row, joined by position: no window, hash join or sort.
      sql = std::string("SELECT * EXCLUDE (") + kKeepColumn + ") FROM " + kCandidatesView +
            " POSITIONAL JOIN " + kKeptView + " WHERE " + kKeepColumn + " = 1";
    }
    output = conn_->Query(sql);
  }
  Status u1 = conn_->UnregisterBatch(kCandidatesView);
  Status u2 = registered.ok() ? conn_->UnregisterBatch(kKeptView) : Status::OK();
  if (!output.ok()) return output.status();
  SLUICE_RETURN_NOT_OK(u1);
  SLUICE_RETURN_NOT_OK(u2);
  return output;
}

Result<int64_t> DeduplicateOperator::Evict(state::StateStore& store, const std::string& threshold,
                                           const std::string& null) {
  std::vector<std::string> doomed;
  SLUICE_ASSIGN_OR_RETURN(auto it, store.Iterate());
  for (; it->Valid(); it->Next()) {
    std::string_view v = it->value();
    if (v.size() == threshold.size() && v != null &&
        std::memcmp(v.data(), threshold.data(), v.size()) <= 0) {
      doomed.emplace_back(it->key());
    }
  }
  SLUICE_RETURN_NOT_OK(it->status());
  it.reset();
  for (const std::string& key : doomed) SLUICE_RETURN_NOT_OK(store.Remove(key));
  return static_cast<int64_t>(doomed.size());
}

Result<engine::Batch> DeduplicateOperator::Process(const OperatorBatch& batch,
                                                   const std::vector<engine::Batch>& inputs) {
  const std::string ctx = Describe() + ", batch " + batch.batch_id.ToString();
  if (conn_ == nullptr) return Status::InvalidArgument(ctx + ": Process before Open");
  if (inputs.size() != 1) {
    return Status::InvalidArgument(ctx + ": expects one input, got " +
                                   std::to_string(inputs.size()));
  }
  const engine::Batch& input = inputs[0];
  if (input.num_columns() == 0) return Status::InvalidArgument(ctx + ": input has no columns");
  if (!prepared_) {
    SLUICE_RETURN_NOT_OK_CTX(Prepare(input.schema()), ctx);
  } else if (!(input.schema() == input_schema_)) {
    return Status::InvalidArgument(ctx + ": the input's columns changed between batches");
  }

  // The candidates: by a C++ hash pass when it applies (dedup_candidates.h), else by SQL.
  int64_t late_rows = 0;
  std::vector<std::string> keys;
  // Each candidate's state time (nullopt: never evicted); empty without a state value.
  std::vector<std::optional<int64_t>> times;
  std::optional<engine::Batch> candidates;  // the SQL path's candidate rows
  std::vector<int64_t> candidate_rows;      // the hash pass's: input rows
  std::optional<DedupCandidates> fast;
  if (fast_spec_.has_value()) {
    fast_spec_->late_threshold_us = MillisToMicros(batch.late_watermark_ms);
    SLUICE_ASSIGN_OR_RETURN_CTX(fast, ComputeDedupCandidates(input, *fast_spec_), ctx);
  }
  if (fast.has_value()) {
    late_rows = fast->late_rows;
    keys = std::move(fast->keys);
    times = std::move(fast->times);
    candidate_rows = std::move(fast->rows);
  } else {
    SLUICE_ASSIGN_OR_RETURN_CTX(candidates, Candidates(input, batch.late_watermark_ms, &late_rows),
                                ctx);
    SLUICE_ASSIGN_OR_RETURN_CTX(keys, engine::EncodeRows(*candidates, key_indexes_), ctx);
    if (has_value_) {
      SLUICE_ASSIGN_OR_RETURN_CTX(
          times, engine::Int64ColumnValues(*candidates, *candidates->ColumnIndex(kValueColumn)),
          ctx);
    }
  }

  const int32_t n = stores_->num_partitions();
  std::vector<std::vector<size_t>> by_partition(static_cast<size_t>(n));
  for (size_t i = 0; i < keys.size(); ++i) {
    by_partition[static_cast<size_t>(state::PartitionForKey(keys[i], n))].push_back(i);
  }
  const int64_t threshold_us = MillisToMicros(batch.eviction_watermark_ms);
  const std::string threshold = EncodeDedupStateTime(threshold_us);
  const std::string null = EncodeDedupStateTime(std::nullopt);
  auto value_of = [&](size_t i) {
    return has_value_ ? EncodeDedupStateTime(times[i]) : std::string(kDedupEmptyStateValue);
  };

  // The mirrors and key counts hold for the version this batch loads only when this operator
  // committed it; otherwise (first batch, restart, a failed or re-run batch) each partition
  // rebuilds them from its store with one scan.
  const int64_t version = batch.batch_id.value();
  const bool known = state_version_ == version;
  state_version_ = -1;  // set again once this batch has committed
  if (!known) {
    num_keys_.assign(static_cast<size_t>(n), -1);
    mirrors_.clear();
    if (!mirror_off_) mirrors_.resize(static_cast<size_t>(n));
  }
  // Per partition: 1 while it uses its mirror this batch, 0 once it cannot (too large).
  std::vector<uint8_t> mirrored(static_cast<size_t>(n), mirror_off_ ? 0 : 1);
  std::vector<uint8_t> too_large(static_cast<size_t>(n), 0);
  const size_t per_partition_cap = mirror_max_bytes_ / static_cast<size_t>(n);

  std::vector<uint8_t> kept(keys.size(), 0);
  std::vector<int64_t> removed(static_cast<size_t>(n), 0);
  std::atomic<int64_t> update_ns{0}, removal_ns{0};
  auto fn = [&](int32_t p, state::StateStore& store) -> Status {
    const size_t pi = static_cast<size_t>(p);
    auto start = std::chrono::steady_clock::now();
    int64_t& num_keys = num_keys_[pi];
    if (num_keys < 0) {  // rebuild the mirror (or only the count) from the loaded version
      SLUICE_ASSIGN_OR_RETURN(auto it, store.Iterate());
      if (mirrored[pi]) {
        bool fits = true;
        SLUICE_RETURN_NOT_OK(
            mirrors_[pi].Load(*it, has_value_, per_partition_cap, &fits, &num_keys));
        if (!fits) mirrored[pi] = 0;
      } else {
        int64_t count = 0;
        for (; it->Valid(); it->Next()) ++count;
        SLUICE_RETURN_NOT_OK(it->status());
        num_keys = count;
      }
    }
    std::vector<size_t>& rows = by_partition[pi];
    if (mirrored[pi]) {
      // The mirror says which keys are in state; only new keys are written. Rows go in input
      // order, so that of two equal keys the first is kept. The mirror holds the state, so the
      // store only records the changes in its changelog (no working-copy writes); a snapshot due
      // at this commit is written from the mirror, which then holds the committed version.
      DedupStateMirror& mirror = mirrors_[pi];
      const bool timed = has_value_;
      SLUICE_RETURN_NOT_OK(store.DetachWorkingCopy(
          [&mirror, timed](const std::function<void(std::string_view, std::string_view)>& emit) {
            mirror.ForEachInKeyOrder(timed, emit);
            return Status::OK();
          }));
      // Hashes first, so that each probe's slot is prefetched some keys ahead.
      std::vector<uint64_t> hashes(rows.size());
      for (size_t j = 0; j < rows.size(); ++j) hashes[j] = DedupStateMirror::HashOf(keys[rows[j]]);
      constexpr size_t kAhead = 16;
      for (size_t j = 0; j < rows.size(); ++j) {
        if (j + kAhead < rows.size()) mirror.Prefetch(hashes[j + kAhead]);
        const size_t i = rows[j];
        if (!mirror.Insert(keys[i], hashes[j], has_value_ ? times[i] : std::nullopt)) continue;
        SLUICE_RETURN_NOT_OK(store.Put(keys[i], value_of(i)));
        kept[i] = 1;
        ++num_keys;
      }
    } else {
      // One batched read of the partition's candidate keys in key order (RocksDB MultiGet; the
      // puts then go to the state in order too). Should a key repeat, its first row (input
      // order) is the one kept, as reading and writing row by row would decide.
      std::sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
        const int c = keys[a].compare(keys[b]);
        return c != 0 ? c < 0 : a < b;
      });
      std::vector<std::string_view> sorted_keys(rows.size());
      for (size_t j = 0; j < rows.size(); ++j) sorted_keys[j] = keys[rows[j]];
      SLUICE_ASSIGN_OR_RETURN(std::vector<std::optional<std::string>> present,
                              store.MultiGet(sorted_keys));
      for (size_t j = 0; j < rows.size(); ++j) {
        if (present[j].has_value()) continue;
        if (j > 0 && sorted_keys[j] == sorted_keys[j - 1]) continue;  // put just above
        SLUICE_RETURN_NOT_OK(store.Put(sorted_keys[j], value_of(rows[j])));
        kept[rows[j]] = 1;
        ++num_keys;
      }
    }
    auto mid = std::chrono::steady_clock::now();
    update_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(mid - start).count();
    if (evicts_) {
      int64_t gone = 0;
      if (mirrored[pi]) {
        // Only what expires, from the mirror's time index; no scan of the state.
        std::vector<std::string> expired = mirrors_[pi].TakeExpired(threshold_us);
        for (const std::string& key : expired) SLUICE_RETURN_NOT_OK(store.Remove(key));
        gone = static_cast<int64_t>(expired.size());
      } else {
        SLUICE_ASSIGN_OR_RETURN(gone, Evict(store, threshold, null));
      }
      removed[pi] = gone;
      num_keys -= gone;
      removal_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - mid)
                        .count();
    }
    // Past the cap the mirror still equals the store for the rest of this batch, then is given
    // up (below).
    if (mirrored[pi] && mirrors_[pi].bytes() > per_partition_cap) too_large[pi] = 1;
    return Status::OK();
  };
  const int parallelism = std::max(1, std::min<int>(options_.parallelism, n));
  auto committed = stores_->RunBatch(version, fn, parallelism);
  if (!committed.ok()) return committed.status().WithContext(ctx);
  state_version_ = version + 1;
  if (!mirror_off_ && (std::find(mirrored.begin(), mirrored.end(), 0) != mirrored.end() ||
                       std::find(too_large.begin(), too_large.end(), 1) != too_large.end())) {
    mirror_off_ = true;  // too large: the stores alone (MultiGet, scans) from now on
    mirrors_.clear();
  }

  // The kept rows in input order: by candidate index (SQL path), or (hash pass) a 0/1 mask with
  // one row per input row.
  std::vector<int64_t> kept_ids;
  int64_t num_kept = 0;
  if (fast.has_value()) kept_ids.assign(static_cast<size_t>(input.num_rows()), 0);
  for (size_t i = 0; i < kept.size(); ++i) {
    if (kept[i] == 0) continue;
    if (fast.has_value()) {
      kept_ids[static_cast<size_t>(candidate_rows[i])] = 1;
    } else {
      kept_ids.push_back(static_cast<int64_t>(i));
    }
    ++num_kept;
  }
  engine::Batch output = input;
  if (num_kept != input.num_rows()) {
    engine::BatchBuilder kept_builder(
        {{fast.has_value() ? kKeepColumn : "i", engine::DataType{engine::TypeId::kBigInt}}});
    const engine::BulkColumn column = engine::BulkColumn::Int64s(kept_ids);
    SLUICE_RETURN_NOT_OK_CTX(
        kept_builder.AppendColumns(static_cast<int64_t>(kept_ids.size()), {&column, 1}), ctx);
    SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch kept_batch, kept_builder.Finish(), ctx);
    SLUICE_ASSIGN_OR_RETURN_CTX(
        output, SelectKept(fast.has_value() ? input : *candidates, !fast.has_value(), kept_batch),
        ctx);
  }

  const state::StateStoreMetrics m = stores_->LastMetrics();
  StateOperatorProgress p;
  p.operator_name = progress_.operator_name;
  int64_t num_keys = 0, num_removed = 0, mirror_bytes = 0;
  for (int64_t k : num_keys_) num_keys += k;
  for (int64_t r : removed) num_removed += r;
  for (const DedupStateMirror& mirror : mirrors_) {
    mirror_bytes += static_cast<int64_t>(mirror.bytes());
  }
  p.num_rows_total = num_keys;
  p.num_rows_updated = m.num_updated;
  p.all_updates_time_ms = update_ns.load() / 1000000;
  p.num_rows_removed = num_removed;
  p.all_removals_time_ms = removal_ns.load() / 1000000;
  p.commit_time_ms = m.commit_time_ms;
  p.memory_used_bytes = m.memory_used_bytes + mirror_bytes;
  p.num_rows_dropped_by_watermark = late_rows;
  p.num_shuffle_partitions = n;
  p.num_state_store_instances = n;
  p.custom_metrics = m.custom;
  p.custom_metrics["numDroppedDuplicateRows"] = input.num_rows() - late_rows - num_kept;
  progress_ = std::move(p);
  return output;
}

// ---- The public classes ----

Deduplicate::Deduplicate(DeduplicateOptions options)
    : impl_(std::make_unique<DeduplicateOperator>(DeduplicateOperator::Mode::kDedupe,
                                                  std::move(options))) {}
Deduplicate::~Deduplicate() = default;
Status Deduplicate::Open(const OperatorContext& context) { return impl_->Open(context); }
Result<engine::Batch> Deduplicate::Process(const OperatorBatch& batch,
                                           const std::vector<engine::Batch>& inputs) {
  return impl_->Process(batch, inputs);
}
bool Deduplicate::WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const {
  return impl_->WantsNoDataBatch(used_watermark_ms, next_watermark_ms);
}
StateOperatorProgress Deduplicate::Progress() const { return impl_->progress(); }

DeduplicateWithinWatermark::DeduplicateWithinWatermark(DeduplicateOptions options)
    : impl_(std::make_unique<DeduplicateOperator>(DeduplicateOperator::Mode::kWithinWatermark,
                                                  std::move(options))) {}
DeduplicateWithinWatermark::~DeduplicateWithinWatermark() = default;
Status DeduplicateWithinWatermark::Open(const OperatorContext& context) {
  return impl_->Open(context);
}
Result<engine::Batch> DeduplicateWithinWatermark::Process(
    const OperatorBatch& batch, const std::vector<engine::Batch>& inputs) {
  return impl_->Process(batch, inputs);
}
bool DeduplicateWithinWatermark::WantsNoDataBatch(int64_t used_watermark_ms,
                                                  int64_t next_watermark_ms) const {
  return impl_->WantsNoDataBatch(used_watermark_ms, next_watermark_ms);
}
StateOperatorProgress DeduplicateWithinWatermark::Progress() const { return impl_->progress(); }

}  // namespace sluice::ops
