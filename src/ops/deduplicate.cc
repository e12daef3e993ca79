// Deduplicate and DeduplicateWithinWatermark (deduplicate.h): one implementation, two modes.
//
// Per batch, as named phases (docs/operators.md): Candidates (late rows dropped, each key's
// first row of the batch picked, by a C++ hash pass (dedup_candidates.h) or by SQL), then per
// state partition, in parallel inside the runtime's OperatorState::RunBatch (which loads and
// commits): Rebuild (the mirror or the key count, when the loaded version is not the one this
// operator committed), Probe and Insert (the candidates whose key is absent from the mirror, or
// from one MultiGet, are put into state and kept), Evict (keys the watermark passed); then
// SelectKept (the kept rows of the input, by SQL) and the progress. The SQL is deduplicate_sql.cc.
#include "ops/deduplicate.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include "common/strings.h"
#include "engine/batch_builder.h"
#include "engine/registered_batch.h"
#include "engine/row_codec.h"
#include "ops/dedup_candidates.h"
#include "ops/dedup_state_mirror.h"
#include "ops/deduplicate_sql.h"
#include "ops/operator_conf.h"
#include "ops/operator_state.h"
#include "state/partitions.h"

namespace sluice::ops {

class DeduplicateOperator {
 public:
  enum class Mode { kDedupe, kWithinWatermark };

  DeduplicateOperator(Mode mode, DeduplicateOptions options)
      : mode_(mode), options_(std::move(options)) {
    progress_.operator_name =
        mode_ == Mode::kDedupe ? kDedupeOperatorName : kDedupeWithinWatermarkOperatorName;
  }

  Status Open(const OperatorContext& context);
  Result<engine::Batch> Process(const OperatorBatch& batch,
                                const std::vector<engine::Batch>& inputs);
  bool WantsNoDataBatch(int64_t used_watermark_ms, int64_t next_watermark_ms) const {
    return next_watermark_ms > used_watermark_ms;
  }
  const StateOperatorProgress& progress() const { return progress_; }

 private:
  // This batch's candidates: the first row of each key among the non-late rows.
  struct Candidates {
    int64_t late_rows = 0;
    std::vector<std::string> keys;  // encoded key of each candidate
    // Each candidate's state time (nullopt: never evicted); empty without a state value.
    std::vector<std::optional<int64_t>> times;
    std::optional<engine::Batch> rows;  // the SQL path's candidate rows
    std::vector<int64_t> input_rows;    // the hash pass's: each candidate's input row
    bool from_hash_pass = false;
  };
  // What the partition phases of one batch share (each partition writes only its own slots).
  struct BatchWork {
    std::vector<std::vector<size_t>> by_partition;  // candidate indexes per partition
    std::string threshold;                          // encoded eviction threshold
    std::string null;                               // encoded NULL state time
    int64_t threshold_us = 0;
    size_t per_partition_cap = 0;
    std::vector<uint8_t> kept;       // per candidate: 1 when kept
    std::vector<uint8_t> mirrored;   // per partition: uses its mirror this batch
    std::vector<uint8_t> too_large;  // per partition: its mirror passed the cap
    std::vector<int64_t> removed;    // per partition
    std::atomic<int64_t> update_ns{0};
    std::atomic<int64_t> removal_ns{0};
  };

  // First batch: resolves the columns against the input schema, then opens the state.
  Status Prepare(const engine::Schema& schema);
  Status ResolveColumns(const engine::Schema& schema);
  Status OpenState(const engine::Schema& schema);

  // Phase Candidates.
  Result<Candidates> FindCandidates(const engine::Batch& input, int64_t late_watermark_ms);
  Result<engine::Batch> CandidatesBySql(const engine::Batch& input, int64_t late_watermark_ms,
                                        int64_t* late_rows);
  // The partition phases, on partition p's thread.
  Status RunPartition(int32_t p, state::StateStore& store, const Candidates& c, BatchWork& w);
  Status Rebuild(size_t p, state::StateStore& store, BatchWork& w);
  Status ProbeAndInsertMirrored(size_t p, state::StateStore& store, const Candidates& c,
                                BatchWork& w);
  Status ProbeAndInsertStore(size_t p, state::StateStore& store, const Candidates& c, BatchWork& w);
  Result<int64_t> Evict(size_t p, state::StateStore& store, BatchWork& w);
  // Without the mirror: removes the keys of `store` whose value is <= threshold (encoded);
  // returns how many.
  Result<int64_t> EvictByScan(state::StateStore& store, const std::string& threshold,
                              const std::string& null);
  // Phase SelectKept: the kept rows of the input, in input order.
  Result<engine::Batch> SelectKept(const engine::Batch& input, const Candidates& c,
                                   const BatchWork& w, int64_t* num_kept);
  Result<engine::Batch> QueryKept(const engine::Batch& rows, bool are_candidates,
                                  const engine::Batch& kept);
  void FillProgress(const engine::Batch& input, const Candidates& c, const BatchWork& w,
                    int64_t num_kept);
  std::string Describe() const { return std::string("operator ") + progress_.operator_name; }

  std::string StateValueOf(const Candidates& c, size_t i) const {
    return has_value_ ? EncodeDedupStateTime(c.times[i]) : std::string(kDedupEmptyStateValue);
  }

  const Mode mode_;
  const DeduplicateOptions options_;
  OperatorContext context_;
  std::unique_ptr<engine::Connection> conn_;
  std::unique_ptr<OperatorState> state_;  // opened by the first batch

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
  SLUICE_RETURN_NOT_OK(ResolveColumns(schema));
  SLUICE_RETURN_NOT_OK(OpenState(schema));
  input_schema_ = schema;
  prepared_ = true;
  return Status::OK();
}

Status DeduplicateOperator::ResolveColumns(const engine::Schema& schema) {
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
    SLUICE_ASSIGN_OR_RETURN(event_time_us_sql_,
                            DedupEventTimeMicrosSql(schema[i].name, schema[i].type));
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
      spec.expiry_delay_us = WatermarkMicros(options_.delay_ms);
    }
    fast_spec_ = std::move(spec);
  }
  return Status::OK();
}

Status DeduplicateOperator::OpenState(const engine::Schema& schema) {
  OperatorStateSpec spec;
  spec.operator_name = progress_.operator_name;
  spec.work_dir_kind = "dedup-state";
  for (size_t j = 0; j < key_indexes_.size(); ++j) {
    const size_t i = key_indexes_[j];
    const bool described = options_.key_descriptions.size() == key_indexes_.size() &&
                           !options_.key_descriptions[j].empty();
    spec.schema.key.push_back(
        {described ? options_.key_descriptions[j] : schema[i].name, schema[i].type.ToSql(), true});
  }
  if (has_value_) {
    spec.schema.value.push_back(
        {mode_ == Mode::kDedupe ? "eventTimeMicros" : "expiresAtMicros", "BIGINT", true});
  }
  // The operator counts keys itself (numRowsTotal): it puts only keys it found absent and removes
  // only keys it found present, so the store need not read each written key to count it.
  spec.track_num_keys = false;
  SLUICE_ASSIGN_OR_RETURN(state_, OperatorState::Open(context_, std::move(spec)));
  return Status::OK();
}

Result<DeduplicateOperator::Candidates> DeduplicateOperator::FindCandidates(
    const engine::Batch& input, int64_t late_watermark_ms) {
  Candidates c;
  std::optional<DedupCandidates> fast;
  if (fast_spec_.has_value()) {
    fast_spec_->late_threshold_us = WatermarkMicros(late_watermark_ms);
    SLUICE_ASSIGN_OR_RETURN(fast, ComputeDedupCandidates(input, *fast_spec_));
  }
  if (fast.has_value()) {
    c.from_hash_pass = true;
    c.late_rows = fast->late_rows;
    c.keys = std::move(fast->keys);
    c.times = std::move(fast->times);
    c.input_rows = std::move(fast->rows);
    return c;
  }
  SLUICE_ASSIGN_OR_RETURN(c.rows, CandidatesBySql(input, late_watermark_ms, &c.late_rows));
  SLUICE_ASSIGN_OR_RETURN(c.keys, engine::EncodeRows(*c.rows, key_indexes_));
  if (has_value_) {
    SLUICE_ASSIGN_OR_RETURN(
        c.times, engine::Int64ColumnValues(*c.rows, *c.rows->ColumnIndex(kDedupValueColumn)));
  }
  return c;
}

Result<engine::Batch> DeduplicateOperator::CandidatesBySql(const engine::Batch& input,
                                                           int64_t late_watermark_ms,
                                                           int64_t* late_rows) {
  *late_rows = 0;
  SLUICE_ASSIGN_OR_RETURN(engine::RegisteredBatch in,
                          engine::RegisteredBatch::Make(conn_.get(), kDedupInputView, input));
  DedupCandidatesSqlSpec spec;
  if (event_time_index_.has_value()) {
    spec.late_condition = DedupLateConditionSql(event_time_us_sql_, late_watermark_ms);
    SLUICE_ASSIGN_OR_RETURN(engine::Batch count,
                            conn_->Query(DedupLateCountSql(spec.late_condition)));
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, count.GetInt64(0, 0));
    *late_rows = n.value_or(0);
  }
  if (has_value_) {
    spec.value_sql =
        DedupValueSql(mode_ == Mode::kWithinWatermark, event_time_us_sql_, options_.delay_ms);
  }
  for (size_t i : key_indexes_) spec.key_names.push_back(input_schema_[i].name);
  spec.order_by = options_.order_by;
  SLUICE_ASSIGN_OR_RETURN(engine::Batch candidates, conn_->Query(DedupCandidatesSql(spec)));
  SLUICE_RETURN_NOT_OK(in.Release());
  return candidates;
}

Status DeduplicateOperator::RunPartition(int32_t p, state::StateStore& store, const Candidates& c,
                                         BatchWork& w) {
  const size_t pi = static_cast<size_t>(p);
  auto start = std::chrono::steady_clock::now();
  if (num_keys_[pi] < 0) SLUICE_RETURN_NOT_OK(Rebuild(pi, store, w));
  if (w.mirrored[pi]) {
    SLUICE_RETURN_NOT_OK(ProbeAndInsertMirrored(pi, store, c, w));
  } else {
    SLUICE_RETURN_NOT_OK(ProbeAndInsertStore(pi, store, c, w));
  }
  auto mid = std::chrono::steady_clock::now();
  w.update_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(mid - start).count();
  if (evicts_) {
    SLUICE_ASSIGN_OR_RETURN(int64_t gone, Evict(pi, store, w));
    w.removed[pi] = gone;
    num_keys_[pi] -= gone;
    w.removal_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - mid)
            .count();
  }
  // Past the cap the mirror still equals the store for the rest of this batch, then is given up
  // (Process).
  if (w.mirrored[pi] && mirrors_[pi].bytes() > w.per_partition_cap) w.too_large[pi] = 1;
  return Status::OK();
}

Status DeduplicateOperator::Rebuild(size_t p, state::StateStore& store, BatchWork& w) {
  // The mirror (or only the count) from the loaded version.
  SLUICE_ASSIGN_OR_RETURN(auto it, store.Iterate());
  if (w.mirrored[p]) {
    bool fits = true;
    SLUICE_RETURN_NOT_OK(
        mirrors_[p].Load(*it, has_value_, w.per_partition_cap, &fits, &num_keys_[p]));
    if (!fits) w.mirrored[p] = 0;
    return Status::OK();
  }
  int64_t count = 0;
  for (; it->Valid(); it->Next()) ++count;
  SLUICE_RETURN_NOT_OK(it->status());
  num_keys_[p] = count;
  return Status::OK();
}

Status DeduplicateOperator::ProbeAndInsertMirrored(size_t p, state::StateStore& store,
                                                   const Candidates& c, BatchWork& w) {
  // The mirror says which keys are in state; only new keys are written. Rows go in input order,
  // so that of two equal keys the first is kept. The mirror holds the state, so the store only
  // records the changes in its changelog (no working-copy writes); a snapshot due at this commit
  // is written from the mirror, which then holds the committed version.
  DedupStateMirror& mirror = mirrors_[p];
  const bool timed = has_value_;
  SLUICE_RETURN_NOT_OK(store.DetachWorkingCopy(
      [&mirror, timed](const std::function<void(std::string_view, std::string_view)>& emit) {
        mirror.ForEachInKeyOrder(timed, emit);
        return Status::OK();
      }));
  const std::vector<size_t>& rows = w.by_partition[p];
  // Hashes first, so that each probe's slot is prefetched some keys ahead.
  std::vector<uint64_t> hashes(rows.size());
  for (size_t j = 0; j < rows.size(); ++j) hashes[j] = DedupStateMirror::HashOf(c.keys[rows[j]]);
  constexpr size_t kAhead = 16;
  for (size_t j = 0; j < rows.size(); ++j) {
    if (j + kAhead < rows.size()) mirror.Prefetch(hashes[j + kAhead]);
    const size_t i = rows[j];
    if (!mirror.Insert(c.keys[i], hashes[j], has_value_ ? c.times[i] : std::nullopt)) continue;
    SLUICE_RETURN_NOT_OK(store.Put(c.keys[i], StateValueOf(c, i)));
    w.kept[i] = 1;
    ++num_keys_[p];
  }
  return Status::OK();
}

Status DeduplicateOperator::ProbeAndInsertStore(size_t p, state::StateStore& store,
                                                const Candidates& c, BatchWork& w) {
  // One batched read of the partition's candidate keys in key order (RocksDB MultiGet; the puts
  // then go to the state in order too). Should a key repeat, its first row (input order) is the
  // one kept, as reading and writing row by row would decide.
  std::vector<size_t>& rows = w.by_partition[p];
  std::sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
    const int cmp = c.keys[a].compare(c.keys[b]);
    return cmp != 0 ? cmp < 0 : a < b;
  });
  std::vector<std::string_view> sorted_keys(rows.size());
  for (size_t j = 0; j < rows.size(); ++j) sorted_keys[j] = c.keys[rows[j]];
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::optional<std::string>> present,
                          store.MultiGet(sorted_keys));
  for (size_t j = 0; j < rows.size(); ++j) {
    if (present[j].has_value()) continue;
    if (j > 0 && sorted_keys[j] == sorted_keys[j - 1]) continue;  // put just above
    SLUICE_RETURN_NOT_OK(store.Put(sorted_keys[j], StateValueOf(c, rows[j])));
    w.kept[rows[j]] = 1;
    ++num_keys_[p];
  }
  return Status::OK();
}

Result<int64_t> DeduplicateOperator::Evict(size_t p, state::StateStore& store, BatchWork& w) {
  if (!w.mirrored[p]) return EvictByScan(store, w.threshold, w.null);
  // Only what expires, from the mirror's time index; no scan of the state.
  std::vector<std::string> expired = mirrors_[p].TakeExpired(w.threshold_us);
  for (const std::string& key : expired) SLUICE_RETURN_NOT_OK(store.Remove(key));
  return static_cast<int64_t>(expired.size());
}

Result<int64_t> DeduplicateOperator::EvictByScan(state::StateStore& store,
                                                 const std::string& threshold,
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

  SLUICE_ASSIGN_OR_RETURN_CTX(Candidates c, FindCandidates(input, batch.late_watermark_ms), ctx);

  const int32_t n = state_->num_partitions();
  BatchWork w;
  w.by_partition.resize(static_cast<size_t>(n));
  for (size_t i = 0; i < c.keys.size(); ++i) {
    w.by_partition[static_cast<size_t>(state::PartitionForKey(c.keys[i], n))].push_back(i);
  }
  w.threshold_us = WatermarkMicros(batch.eviction_watermark_ms);
  w.threshold = EncodeDedupStateTime(w.threshold_us);
  w.null = EncodeDedupStateTime(std::nullopt);
  w.per_partition_cap = mirror_max_bytes_ / static_cast<size_t>(n);
  w.kept.assign(c.keys.size(), 0);
  w.removed.assign(static_cast<size_t>(n), 0);
  w.too_large.assign(static_cast<size_t>(n), 0);

  // The mirrors and key counts hold for the version this batch loads only when this operator
  // committed it; otherwise (first batch, restart, a failed or re-run batch) each partition
  // rebuilds them from its store with one scan (Rebuild).
  const int64_t version = batch.batch_id.value();
  const bool known = state_version_ == version;
  state_version_ = -1;  // set again once this batch has committed
  if (!known) {
    num_keys_.assign(static_cast<size_t>(n), -1);
    mirrors_.clear();
    if (!mirror_off_) mirrors_.resize(static_cast<size_t>(n));
  }
  // Per partition: 1 while it uses its mirror this batch, 0 once it cannot (too large).
  w.mirrored.assign(static_cast<size_t>(n), mirror_off_ ? 0 : 1);

  // Probe, Insert and Evict per partition; the runtime loads version `version` and commits.
  const int parallelism = std::max(1, std::min<int>(options_.parallelism, n));
  auto committed = state_->RunBatch(
      version, [&](int32_t p, state::StateStore& store) { return RunPartition(p, store, c, w); },
      parallelism);
  if (!committed.ok()) return committed.status().WithContext(ctx);
  state_version_ = version + 1;
  if (!mirror_off_ && (std::find(w.mirrored.begin(), w.mirrored.end(), 0) != w.mirrored.end() ||
                       std::find(w.too_large.begin(), w.too_large.end(), 1) != w.too_large.end())) {
    mirror_off_ = true;  // too large: the stores alone (MultiGet, scans) from now on
    mirrors_.clear();
  }

  int64_t num_kept = 0;
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch output, SelectKept(input, c, w, &num_kept), ctx);
  FillProgress(input, c, w, num_kept);
  return output;
}

Result<engine::Batch> DeduplicateOperator::SelectKept(const engine::Batch& input,
                                                      const Candidates& c, const BatchWork& w,
                                                      int64_t* num_kept) {
  // The kept rows in input order: by candidate index (SQL path), or (hash pass) a 0/1 mask with
  // one row per input row.
  std::vector<int64_t> kept_ids;
  *num_kept = 0;
  if (c.from_hash_pass) kept_ids.assign(static_cast<size_t>(input.num_rows()), 0);
  for (size_t i = 0; i < w.kept.size(); ++i) {
    if (w.kept[i] == 0) continue;
    if (c.from_hash_pass) {
      kept_ids[static_cast<size_t>(c.input_rows[i])] = 1;
    } else {
      kept_ids.push_back(static_cast<int64_t>(i));
    }
    ++*num_kept;
  }
  if (*num_kept == input.num_rows()) return input;
  engine::BatchBuilder kept_builder(
      {{c.from_hash_pass ? kDedupKeepColumn : "i", engine::DataType{engine::TypeId::kBigInt}}});
  const engine::BulkColumn column = engine::BulkColumn::Int64s(kept_ids);
  SLUICE_RETURN_NOT_OK(
      kept_builder.AppendColumns(static_cast<int64_t>(kept_ids.size()), {&column, 1}));
  SLUICE_ASSIGN_OR_RETURN(engine::Batch kept_batch, kept_builder.Finish());
  return QueryKept(c.from_hash_pass ? input : *c.rows, !c.from_hash_pass, kept_batch);
}

Result<engine::Batch> DeduplicateOperator::QueryKept(const engine::Batch& rows, bool are_candidates,
                                                     const engine::Batch& kept) {
  SLUICE_ASSIGN_OR_RETURN(engine::RegisteredBatch candidates,
                          engine::RegisteredBatch::Make(conn_.get(), kDedupCandidatesView, rows));
  SLUICE_ASSIGN_OR_RETURN(engine::Batch output,
                          engine::QueryOver(conn_.get(), kDedupKeptView, kept,
                                            DedupSelectKeptSql(are_candidates, has_value_)));
  SLUICE_RETURN_NOT_OK(candidates.Release());
  return output;
}

void DeduplicateOperator::FillProgress(const engine::Batch& input, const Candidates& c,
                                       const BatchWork& w, int64_t num_kept) {
  const int32_t n = state_->num_partitions();
  const state::StateStoreMetrics m = state_->LastMetrics();
  StateOperatorProgress p;
  p.operator_name = progress_.operator_name;
  int64_t num_keys = 0, num_removed = 0, mirror_bytes = 0;
  for (int64_t k : num_keys_) num_keys += k;
  for (int64_t r : w.removed) num_removed += r;
  for (const DedupStateMirror& mirror : mirrors_) {
    mirror_bytes += static_cast<int64_t>(mirror.bytes());
  }
  p.num_rows_total = num_keys;
  p.num_rows_updated = m.num_updated;
  p.all_updates_time_ms = w.update_ns.load() / 1000000;
  p.num_rows_removed = num_removed;
  p.all_removals_time_ms = w.removal_ns.load() / 1000000;
  p.commit_time_ms = m.commit_time_ms;
  p.memory_used_bytes = m.memory_used_bytes + mirror_bytes;
  p.num_rows_dropped_by_watermark = c.late_rows;
  p.num_shuffle_partitions = n;
  p.num_state_store_instances = n;
  p.custom_metrics = m.custom;
  p.custom_metrics["numDroppedDuplicateRows"] = input.num_rows() - c.late_rows - num_kept;
  progress_ = std::move(p);
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
