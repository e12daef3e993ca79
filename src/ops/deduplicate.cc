// Deduplicate and DeduplicateWithinWatermark (deduplicate.h): one implementation, two modes.
//
// Per batch: SQL on the operator's connection drops late rows and picks each key's first row of
// the batch (the candidates); the candidates' keys are looked up in their state partitions (in
// parallel); the candidates whose key was absent are put into state and selected by SQL again.
#include "ops/deduplicate.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/strings.h"
#include "engine/batch_builder.h"
#include "engine/row_codec.h"
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
constexpr char kProviderClassConf[] = "sluice.streaming.stateStore.providerClass";

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

// Row codec bytes of BIGINT `value` and of a BIGINT NULL. The codec's BIGINT encoding is
// order-preserving (docs/formats/row-codec.md: sign-flipped big-endian after a tag, NULL's tag
// below every value's), so encoded values compare with memcmp as the numbers do.
Result<std::pair<std::string, std::string>> EncodeBigIntAndNull(int64_t value) {
  engine::BatchBuilder b({{"v", engine::DataType{engine::TypeId::kBigInt}}});
  SLUICE_RETURN_NOT_OK(b.AppendInt64(value));
  SLUICE_RETURN_NOT_OK(b.EndRow());
  SLUICE_RETURN_NOT_OK(b.AppendNull());
  SLUICE_RETURN_NOT_OK(b.EndRow());
  SLUICE_ASSIGN_OR_RETURN(engine::Batch batch, b.Finish());
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> rows, engine::EncodeRows(batch, {0}));
  return std::make_pair(std::move(rows[0]), std::move(rows[1]));
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
  // Removes the keys of `store` whose value is <= threshold (encoded), counting them.
  Status Evict(state::StateStore& store, const std::string& threshold, const std::string& null);
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
  auto provider = context_.conf.find(kProviderClassConf);
  const bool rocksdb = provider == context_.conf.end() ||
                       AsciiLower(provider->second).find("rocksdb") != std::string::npos;
  o.store.kind =
      rocksdb ? state::StateStoreProviderKind::kRocksDb : state::StateStoreProviderKind::kInMemory;
  o.store.fs = context_.fs;
  if (rocksdb) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "sluice-dedup-state-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      return Status::FromErrno(errno, "creating the local state directory " + tmpl);
    }
    local_root_ = tmpl;
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

Status DeduplicateOperator::Evict(state::StateStore& store, const std::string& threshold,
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
  return Status::OK();
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

  int64_t late_rows = 0;
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch candidates,
                              Candidates(input, batch.late_watermark_ms, &late_rows), ctx);
  SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<std::string> keys,
                              engine::EncodeRows(candidates, key_indexes_), ctx);
  std::vector<size_t> value_columns;
  if (has_value_) value_columns.push_back(*candidates.ColumnIndex(kValueColumn));
  SLUICE_ASSIGN_OR_RETURN_CTX(std::vector<std::string> values,
                              engine::EncodeRows(candidates, value_columns), ctx);

  const int32_t n = stores_->num_partitions();
  std::vector<std::vector<size_t>> by_partition(static_cast<size_t>(n));
  for (size_t i = 0; i < keys.size(); ++i) {
    by_partition[static_cast<size_t>(state::PartitionForKey(keys[i], n))].push_back(i);
  }
  std::string threshold, null;
  if (evicts_) {
    SLUICE_ASSIGN_OR_RETURN_CTX(
        auto encoded, EncodeBigIntAndNull(MillisToMicros(batch.eviction_watermark_ms)), ctx);
    threshold = std::move(encoded.first);
    null = std::move(encoded.second);
  }
  std::vector<uint8_t> kept(keys.size(), 0);
  std::atomic<int64_t> update_ns{0}, removal_ns{0};
  auto fn = [&](int32_t p, state::StateStore& store) -> Status {
    auto start = std::chrono::steady_clock::now();
    // One batched read of the partition's candidate keys in key order (RocksDB MultiGet; the
    // puts then go to the state in order too), then a put per key not in state. Keys of
    // candidates are distinct; should one repeat, its first row (input order) is the one kept,
    // as reading and writing row by row would decide.
    std::vector<size_t>& rows = by_partition[static_cast<size_t>(p)];
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
      SLUICE_RETURN_NOT_OK(store.Put(sorted_keys[j], values[rows[j]]));
      kept[rows[j]] = 1;
    }
    auto mid = std::chrono::steady_clock::now();
    update_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(mid - start).count();
    if (evicts_) {
      SLUICE_RETURN_NOT_OK(Evict(store, threshold, null));
      removal_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - mid)
                        .count();
    }
    return Status::OK();
  };
  const int parallelism = std::max(1, std::min<int>(options_.parallelism, n));
  auto committed = stores_->RunBatch(batch.batch_id.value(), fn, parallelism);
  if (!committed.ok()) return committed.status().WithContext(ctx);

  // The kept candidates, by their dense index, in input order.
  engine::BatchBuilder kept_builder({{"i", engine::DataType{engine::TypeId::kBigInt}}});
  int64_t num_kept = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    if (kept[i] == 0) continue;
    SLUICE_RETURN_NOT_OK_CTX(kept_builder.AppendInt64(static_cast<int64_t>(i)), ctx);
    SLUICE_RETURN_NOT_OK_CTX(kept_builder.EndRow(), ctx);
    ++num_kept;
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch kept_batch, kept_builder.Finish(), ctx);
  SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(kCandidatesView, candidates), ctx);
  SLUICE_RETURN_NOT_OK_CTX(conn_->RegisterBatch(kKeptView, kept_batch), ctx);
  std::string exclude = std::string(kPosColumn) + ", " + kIndexColumn;
  if (has_value_) exclude += std::string(", ") + kValueColumn;
  auto output = conn_->Query(std::string("SELECT * EXCLUDE (") + exclude + ") FROM " +
                             kCandidatesView + " WHERE " + kIndexColumn + " IN (SELECT i FROM " +
                             kKeptView + ") ORDER BY " + kIndexColumn);
  Status u1 = conn_->UnregisterBatch(kCandidatesView);
  Status u2 = conn_->UnregisterBatch(kKeptView);
  if (!output.ok()) return output.status().WithContext(ctx);
  SLUICE_RETURN_NOT_OK_CTX(u1, ctx);
  SLUICE_RETURN_NOT_OK_CTX(u2, ctx);

  const state::StateStoreMetrics m = stores_->LastMetrics();
  StateOperatorProgress p;
  p.operator_name = progress_.operator_name;
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
