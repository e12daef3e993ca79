// StreamStreamJoin (stream_stream_join.h). Per batch, as named phases (docs/operators.md):
// PrepareInputs (each side's hidden columns resolved, the keys cast to their common type, the
// state opened by the first batch), ReadSide per side (keys and rows encoded, late rows
// dropped), then inside the runtime's OperatorState::RunBatchOverAll (which loads every
// partition and commits after): AddAndMatch for the left side, then the right (the side's new
// rows against the other side's stored rows, the rows stored), Evict per side, and the output
// decoded. The state layout and its operations are JoinStateTable (join_state_table.h); the SQL
// is stream_stream_join_sql.cc.
#include "ops/stream_stream_join.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "engine/registered_batch.h"
#include "engine/row_codec.h"
#include "ops/join_state_table.h"
#include "ops/operator_state.h"
#include "ops/stream_stream_join_sql.h"

namespace sluice::ops {
namespace {

constexpr char kOperatorName[] = "symmetricHashJoin";

int64_t ElapsedMs(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               since)
      .count();
}

// The row {left: STRUCT(...), right: STRUCT(...)} from the sides' encoded rows (nullptr = NULL).
// Row codec v1 (docs/formats/row-codec.md): a format byte, then per column a tag byte (0 NULL, 1
// value) and the payload; a STRUCT's payload is its children in order. So the joined row is the
// format byte, then per side 0x00, or 0x01 followed by the side's encoded row minus its format
// byte (taken from the side that is present; both sides' rows carry the same one).
std::string JoinedRow(const std::string* left, const std::string* right) {
  std::string out;
  out.reserve(3 + (left ? left->size() : 0) + (right ? right->size() : 0));
  constexpr char kFormatV1 = 1;
  out.push_back(left != nullptr ? (*left)[0] : right != nullptr ? (*right)[0] : kFormatV1);
  for (const std::string* side : {left, right}) {
    if (side == nullptr) {
      out.push_back(0);
    } else {
      out.push_back(1);
      out.append(side->data() + 1, side->size() - 1);
    }
  }
  return out;
}

// Which columns of a side's input batch are what.
struct SideLayout {
  std::vector<size_t> own;  // the side's own columns, in input order
  std::vector<size_t> keys;
  std::optional<size_t> late;
  std::optional<size_t> state;
  std::optional<size_t> pre;
  engine::Schema own_schema;
};

Result<SideLayout> ResolveLayout(const engine::Schema& schema, const JoinSideSpec& spec,
                                 const char* side) {
  auto find = [&](const std::string& name) -> Result<size_t> {
    for (size_t i = 0; i < schema.size(); ++i) {
      if (schema[i].name == name) return i;
    }
    return Status::InvalidArgument(std::string("stream-stream join: the ") + side +
                                   " input has no column " + name);
  };
  SideLayout l;
  for (const std::string& k : spec.key_columns) {
    SLUICE_ASSIGN_OR_RETURN(size_t i, find(k));
    l.keys.push_back(i);
  }
  if (!spec.late_time_column.empty()) {
    SLUICE_ASSIGN_OR_RETURN(size_t i, find(spec.late_time_column));
    l.late = i;
  }
  if (!spec.state_time_column.empty()) {
    SLUICE_ASSIGN_OR_RETURN(size_t i, find(spec.state_time_column));
    l.state = i;
  }
  if (!spec.pre_filter_column.empty()) {
    SLUICE_ASSIGN_OR_RETURN(size_t i, find(spec.pre_filter_column));
    l.pre = i;
  }
  for (size_t i = 0; i < schema.size(); ++i) {
    if (spec.IsHidden(schema[i].name)) continue;
    l.own.push_back(i);
    l.own_schema.push_back(schema[i]);
  }
  if (l.own.empty()) {
    return Status::InvalidArgument(std::string("stream-stream join: the ") + side +
                                   " input has no columns of its own");
  }
  return l;
}

// One side's new rows of this batch, prepared for the passes.
struct SideInput {
  std::vector<std::string> keys;  // encoded join key
  std::vector<std::string> rows;  // encoded own columns
  std::vector<bool> late;
  std::vector<bool> usable;  // key without NULL and pre-join filter passed
  std::vector<int64_t> state_us;
};

Result<SideInput> ReadSide(const engine::Batch& batch, const SideLayout& layout,
                           int64_t late_watermark_ms, int64_t* dropped) {
  SideInput in;
  SLUICE_ASSIGN_OR_RETURN(in.keys, engine::EncodeRows(batch, layout.keys));
  SLUICE_ASSIGN_OR_RETURN(in.rows, engine::EncodeRows(batch, layout.own));
  const int64_t n = batch.num_rows();
  in.late.assign(static_cast<size_t>(n), false);
  in.usable.assign(static_cast<size_t>(n), true);
  in.state_us.assign(static_cast<size_t>(n), JoinStoredValue::kNoTime);
  // Each helper column is read once for the whole batch (engine/row_codec.h).
  std::vector<std::optional<int64_t>> late, state;
  std::vector<std::optional<bool>> pre;
  std::vector<std::vector<bool>> key_nulls;
  if (layout.late) {
    SLUICE_ASSIGN_OR_RETURN(late, engine::Int64ColumnValues(batch, *layout.late));
  }
  if (layout.state) {
    SLUICE_ASSIGN_OR_RETURN(state, engine::Int64ColumnValues(batch, *layout.state));
  }
  if (layout.pre) {
    SLUICE_ASSIGN_OR_RETURN(pre, engine::BoolColumnValues(batch, *layout.pre));
  }
  for (size_t k : layout.keys) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<bool> nulls, engine::ColumnNulls(batch, k));
    key_nulls.push_back(std::move(nulls));
  }
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    if (layout.late && late[i] && *late[i] <= late_watermark_ms * 1000) {
      in.late[i] = true;
      ++*dropped;
      continue;
    }
    for (const std::vector<bool>& nulls : key_nulls) {
      if (nulls[i]) in.usable[i] = false;
    }
    if (layout.pre && !pre[i].value_or(false)) in.usable[i] = false;
    if (layout.state && state[i]) in.state_us[i] = *state[i];
  }
  return in;
}

}  // namespace

const char* JoinTypeName(JoinType type) {
  switch (type) {
    case JoinType::kInner:
      return "Inner";
    case JoinType::kLeftOuter:
      return "LeftOuter";
    case JoinType::kRightOuter:
      return "RightOuter";
    case JoinType::kFullOuter:
      return "FullOuter";
    case JoinType::kLeftSemi:
      return "LeftSemi";
  }
  return "Inner";
}

bool JoinSideSpec::IsHidden(const std::string& name) const {
  if (name == late_time_column || name == state_time_column || name == pre_filter_column) {
    return !name.empty();
  }
  for (const std::string& k : key_columns) {
    if (name == k) return true;
  }
  return false;
}

// One batch's inputs and output, shared by the phases.
struct JoinBatchState {
  engine::Batch left_batch, right_batch;  // keys cast to their common type
  SideLayout left_layout, right_layout;
  SideInput left_in, right_in;
  engine::Schema output_schema;
  std::vector<std::string> out;  // encoded output rows
  int64_t dropped = 0;           // late rows of both sides
  int64_t removed = 0;           // evicted rows of both sides
};

struct StreamStreamJoin::Impl {
  const StreamStreamJoinOptions& options;
  OperatorContext context;
  std::unique_ptr<engine::Connection> conn;
  std::unique_ptr<OperatorState> state;  // opened by the first batch
  // What the state was opened for: each side's own columns and the key types. Rows in state
  // are encoded with these types, so every batch must bring the same.
  engine::Schema left_own;
  engine::Schema right_own;
  std::vector<engine::DataType> key_types;
  std::map<std::pair<std::string, std::string>, std::string> common_types;

  Impl(const StreamStreamJoinOptions& o, const OperatorContext& c) : options(o), context(c) {}

  // Phase PrepareInputs: layouts, keys cast to common types, the state opened or checked.
  Status PrepareInputs(const std::vector<engine::Batch>& inputs, const std::string& ctx,
                       JoinBatchState* b);
  Status OpenState(const JoinBatchState& b, const std::vector<engine::DataType>& key_types,
                   const std::string& ctx);
  // Phase AddAndMatch: one side's new rows against the other side's state (steps 2 and 3 of
  // the header).
  Status AddAndMatch(bool this_is_left, JoinStateTable& table, JoinBatchState& b,
                     const OperatorBatch& batch);
  // Phase Evict: both sides by their state watermarks (step 4).
  Status Evict(JoinStateTable& table, JoinBatchState& b, const OperatorBatch& batch);

  // Evaluates condition_sql on (this row, state row) pairs; all true without a condition.
  Result<std::vector<bool>> EvaluateCondition(
      bool this_is_left, const SideInput& in, const engine::Schema& output_schema,
      const std::vector<std::pair<size_t, const JoinStateRow*>>& pairs);
  // The common type of two key types (DuckDB's UNION rule), cached.
  Result<std::string> CommonType(const engine::DataType& a, const engine::DataType& b);
  // `batch` with its key columns cast where `casts` says so.
  Result<engine::Batch> CastKeys(const engine::Batch& batch, const char* table,
                                 const std::vector<std::pair<std::string, std::string>>& casts);

  bool Evicts(const JoinSideSpec& spec, int64_t state_us, const OperatorBatch& batch) const {
    const int64_t threshold_us =
        (batch.eviction_watermark_ms + spec.state_watermark_offset_ms) * 1000;
    return !spec.state_time_column.empty() && state_us != JoinStoredValue::kNoTime &&
           state_us <= threshold_us;
  }
  bool LeftPreserved() const {
    return options.type == JoinType::kLeftOuter || options.type == JoinType::kFullOuter;
  }
  bool RightPreserved() const {
    return options.type == JoinType::kRightOuter || options.type == JoinType::kFullOuter;
  }
};

Result<std::string> StreamStreamJoin::Impl::CommonType(const engine::DataType& a,
                                                       const engine::DataType& b) {
  const auto cache_key = std::make_pair(a.ToSql(), b.ToSql());
  auto it = common_types.find(cache_key);
  if (it != common_types.end()) return it->second;
  SLUICE_ASSIGN_OR_RETURN(engine::Batch t,
                          conn->Query(JoinCommonTypeSql(cache_key.first, cache_key.second)));
  if (t.num_columns() != 1) return Status::Internal("stream-stream join: no common key type");
  std::string common = t.schema()[0].type.ToSql();
  common_types.emplace(cache_key, common);
  return common;
}

Result<engine::Batch> StreamStreamJoin::Impl::CastKeys(
    const engine::Batch& batch, const char* table,
    const std::vector<std::pair<std::string, std::string>>& casts) {
  if (casts.empty()) return batch;
  return engine::QueryOver(conn.get(), table, batch, JoinCastKeysSql(table, casts));
}

StreamStreamJoin::StreamStreamJoin(StreamStreamJoinOptions options) : options_(std::move(options)) {
  progress_.operator_name = kOperatorName;
}

StreamStreamJoin::~StreamStreamJoin() = default;

Status StreamStreamJoin::Open(const OperatorContext& context) {
  if (options_.left.key_columns.size() != options_.right.key_columns.size() ||
      options_.left.key_columns.empty()) {
    return Status::InvalidArgument(
        "stream-stream join: both sides need the same number (>= 1) of join keys");
  }
  if (options_.left.alias.empty() || options_.right.alias.empty() ||
      options_.left.alias == options_.right.alias) {
    return Status::InvalidArgument("stream-stream join: the sides need two different aliases");
  }
  if (context.engine == nullptr) {
    return Status::InvalidArgument("stream-stream join: no engine");
  }
  if (context.num_partitions < 1) {
    return Status::InvalidArgument("stream-stream join: partitions must be >= 1");
  }
  context_ = context;
  impl_ = std::make_unique<Impl>(options_, context_);
  SLUICE_ASSIGN_OR_RETURN(impl_->conn, context.engine->Connect());
  progress_.num_shuffle_partitions = context.num_partitions;
  progress_.num_state_store_instances = context.num_partitions;
  return Status::OK();
}

bool StreamStreamJoin::WantsNoDataBatch(int64_t used_watermark_ms,
                                        int64_t next_watermark_ms) const {
  const bool has_state_watermark =
      !options_.left.state_time_column.empty() || !options_.right.state_time_column.empty();
  return has_state_watermark && next_watermark_ms > used_watermark_ms;
}

Result<engine::Batch> StreamStreamJoin::Process(const OperatorBatch& batch,
                                                const std::vector<engine::Batch>& inputs) {
  if (impl_ == nullptr) return Status::InvalidArgument("stream-stream join: not open");
  if (inputs.size() != 2) {
    return Status::InvalidArgument("stream-stream join: expects 2 inputs, got " +
                                   std::to_string(inputs.size()));
  }
  const std::string context = "stream-stream join, batch " + batch.batch_id.ToString();
  const auto update_start = std::chrono::steady_clock::now();
  StateOperatorProgress progress;
  progress.operator_name = kOperatorName;
  progress.num_shuffle_partitions = context_.num_partitions;
  progress.num_state_store_instances = context_.num_partitions;

  JoinBatchState b;
  SLUICE_RETURN_NOT_OK(impl_->PrepareInputs(inputs, context, &b));

  // The runtime loads version batch_id of every partition (in partition order), runs the phases
  // over them and commits batch_id + 1 (the output must decode before the state moves on).
  engine::Batch output;
  int64_t appended = 0;
  std::chrono::steady_clock::time_point removal_start;
  auto phases = [&](const std::vector<state::StateStore*>& stores) -> Status {
    SLUICE_ASSIGN_OR_RETURN_CTX(
        b.left_in, ReadSide(b.left_batch, b.left_layout, batch.late_watermark_ms, &b.dropped),
        context);
    SLUICE_ASSIGN_OR_RETURN_CTX(
        b.right_in, ReadSide(b.right_batch, b.right_layout, batch.late_watermark_ms, &b.dropped),
        context);
    JoinStateTable table(stores);
    SLUICE_RETURN_NOT_OK_CTX(impl_->AddAndMatch(/*this_is_left=*/true, table, b, batch), context);
    SLUICE_RETURN_NOT_OK_CTX(impl_->AddAndMatch(/*this_is_left=*/false, table, b, batch), context);
    progress.all_updates_time_ms = ElapsedMs(update_start);
    removal_start = std::chrono::steady_clock::now();
    SLUICE_RETURN_NOT_OK_CTX(impl_->Evict(table, b, batch), context);
    progress.all_removals_time_ms = ElapsedMs(removal_start);
    appended = table.appended();
    std::vector<std::string_view> views(b.out.begin(), b.out.end());
    SLUICE_ASSIGN_OR_RETURN_CTX(output, engine::DecodeRows(b.output_schema, views), context);
    return Status::OK();
  };
  SLUICE_RETURN_NOT_OK_CTX(
      impl_->state->RunBatchOverAll(batch.batch_id.value(), phases, /*parallelism=*/1).status(),
      context);
  progress.commit_time_ms = impl_->state->last_commit_wall_ms();

  const state::StateStoreMetrics metrics = impl_->state->LastMetrics();
  progress.num_rows_total = metrics.num_keys;
  progress.num_rows_updated = appended;
  progress.num_rows_removed = b.removed;
  progress.num_rows_dropped_by_watermark = b.dropped;
  progress.memory_used_bytes = metrics.memory_used_bytes;
  progress.custom_metrics = metrics.custom;
  progress_ = std::move(progress);
  return output;
}

Status StreamStreamJoin::Impl::PrepareInputs(const std::vector<engine::Batch>& inputs,
                                             const std::string& ctx, JoinBatchState* b) {
  b->left_batch = inputs[0];
  b->right_batch = inputs[1];
  if (b->left_batch.num_columns() == 0 || b->right_batch.num_columns() == 0) {
    return Status::InvalidArgument(ctx + ": an input has no columns");
  }
  {
    SLUICE_ASSIGN_OR_RETURN(SideLayout l,
                            ResolveLayout(b->left_batch.schema(), options.left, "left"));
    SLUICE_ASSIGN_OR_RETURN(SideLayout r,
                            ResolveLayout(b->right_batch.schema(), options.right, "right"));
    std::vector<std::pair<std::string, std::string>> left_casts;
    std::vector<std::pair<std::string, std::string>> right_casts;
    for (size_t k = 0; k < l.keys.size(); ++k) {
      const engine::DataType& lt = b->left_batch.schema()[l.keys[k]].type;
      const engine::DataType& rt = b->right_batch.schema()[r.keys[k]].type;
      if (lt == rt) continue;
      SLUICE_ASSIGN_OR_RETURN(std::string common, CommonType(lt, rt));
      if (lt.ToSql() != common) left_casts.emplace_back(options.left.key_columns[k], common);
      if (rt.ToSql() != common) right_casts.emplace_back(options.right.key_columns[k], common);
    }
    SLUICE_ASSIGN_OR_RETURN_CTX(b->left_batch,
                                CastKeys(b->left_batch, kJoinLeftInputTable, left_casts), ctx);
    SLUICE_ASSIGN_OR_RETURN_CTX(b->right_batch,
                                CastKeys(b->right_batch, kJoinRightInputTable, right_casts), ctx);
  }
  SLUICE_ASSIGN_OR_RETURN(b->left_layout,
                          ResolveLayout(b->left_batch.schema(), options.left, "left"));
  SLUICE_ASSIGN_OR_RETURN(b->right_layout,
                          ResolveLayout(b->right_batch.schema(), options.right, "right"));

  std::vector<engine::DataType> batch_key_types;
  for (size_t k : b->left_layout.keys) batch_key_types.push_back(b->left_batch.schema()[k].type);
  if (state != nullptr) {
    if (b->left_layout.own_schema != left_own || b->right_layout.own_schema != right_own ||
        batch_key_types != key_types) {
      return Status::InvalidArgument(ctx +
                                     ": the inputs' columns or key types changed since the "
                                     "operator's state was opened");
    }
  } else {
    SLUICE_RETURN_NOT_OK(OpenState(*b, batch_key_types, ctx));
  }

  engine::DataType lt{engine::TypeId::kStruct};
  lt.children = b->left_layout.own_schema;
  engine::DataType rt{engine::TypeId::kStruct};
  rt.children = b->right_layout.own_schema;
  b->output_schema.push_back({options.left.alias, lt, true});
  b->output_schema.push_back({options.right.alias, rt, true});
  return Status::OK();
}

Status StreamStreamJoin::Impl::OpenState(const JoinBatchState& b,
                                         const std::vector<engine::DataType>& batch_key_types,
                                         const std::string& ctx) {
  left_own = b.left_layout.own_schema;
  right_own = b.right_layout.own_schema;
  key_types = batch_key_types;
  OperatorStateSpec spec;
  spec.operator_name = kOperatorName;
  spec.work_dir_kind = "join-state";
  spec.force_in_memory = options.force_in_memory_state;
  spec.schema.key.push_back(
      {std::string("side of the ") + JoinTypeName(options.type) + " join", "VARCHAR", false});
  for (size_t k = 0; k < b.left_layout.keys.size(); ++k) {
    const engine::Field& f = b.left_batch.schema()[b.left_layout.keys[k]];
    const bool described =
        k < options.key_descriptions.size() && !options.key_descriptions[k].empty();
    spec.schema.key.push_back({described ? options.key_descriptions[k] : "key" + std::to_string(k),
                               f.type.ToSql(), true});
  }
  spec.schema.key.push_back({"index", "BIGINT", false});
  spec.schema.value.push_back({"matched", "BOOLEAN", false});
  spec.schema.value.push_back({"stateTimeUs", "BIGINT", false});
  for (const auto& [prefix, layout] : {std::make_pair(options.left.alias, &b.left_layout),
                                       std::make_pair(options.right.alias, &b.right_layout)}) {
    for (const engine::Field& f : layout->own_schema) {
      spec.schema.value.push_back({prefix + "." + f.name, f.type.ToSql(), true});
    }
  }
  SLUICE_ASSIGN_OR_RETURN_CTX(state, OperatorState::Open(context, std::move(spec)), ctx);
  return Status::OK();
}

Result<std::vector<bool>> StreamStreamJoin::Impl::EvaluateCondition(
    bool this_is_left, const SideInput& in, const engine::Schema& output_schema,
    const std::vector<std::pair<size_t, const JoinStateRow*>>& pairs) {
  std::vector<bool> pass(pairs.size(), true);
  if (options.condition_sql.empty() || pairs.empty()) return pass;
  std::vector<std::string> rows;
  rows.reserve(pairs.size());
  for (const auto& [i, state_row] : pairs) {
    const std::string* mine = &in.rows[i];
    const std::string* theirs = &state_row->value.row;
    rows.push_back(this_is_left ? JoinedRow(mine, theirs) : JoinedRow(theirs, mine));
  }
  std::vector<std::string_view> views(rows.begin(), rows.end());
  SLUICE_ASSIGN_OR_RETURN(engine::Batch candidates, engine::DecodeRows(output_schema, views));
  auto result = engine::QueryOver(conn.get(), kJoinCandidatesTable, candidates,
                                  JoinConditionSql(options.condition_sql));
  if (!result.ok()) return result.status().WithContext("join condition");
  const engine::Batch& m = *result;
  if (m.num_rows() != static_cast<int64_t>(pairs.size())) {
    return Status::Internal("join condition: got " + std::to_string(m.num_rows()) +
                            " results for " + std::to_string(pairs.size()) + " pairs");
  }
  for (size_t r = 0; r < pairs.size(); ++r) {
    SLUICE_ASSIGN_OR_RETURN(std::optional<bool> v, m.GetBool(static_cast<int64_t>(r), 0));
    pass[r] = v.value_or(false);
  }
  return pass;
}

Status StreamStreamJoin::Impl::AddAndMatch(bool this_is_left, JoinStateTable& table,
                                           JoinBatchState& b, const OperatorBatch& batch) {
  const SideInput& in = this_is_left ? b.left_in : b.right_in;
  const JoinSideSpec& spec = this_is_left ? options.left : options.right;
  const JoinSide this_side = this_is_left ? JoinSide::kLeft : JoinSide::kRight;
  const JoinSide other_side = this_is_left ? JoinSide::kRight : JoinSide::kLeft;
  const bool preserved = this_is_left ? LeftPreserved() : RightPreserved();
  const bool semi = options.type == JoinType::kLeftSemi;
  std::vector<std::string>& out = b.out;

  // Distinct keys of the usable rows: their stored rows on the other side are read (one
  // iterator per partition), and this side's next row indexes found, before any write. The
  // other side does not change in this pass, except for matched flags, which the table tracks.
  std::unordered_map<std::string_view, size_t> key_slot;  // key -> index in distinct
  std::vector<const std::string*> distinct;
  std::vector<size_t> slot_of_row(in.rows.size(), 0);
  for (size_t i = 0; i < in.rows.size(); ++i) {
    if (in.late[i] || !in.usable[i]) continue;
    auto [it, inserted] = key_slot.emplace(in.keys[i], distinct.size());
    if (inserted) distinct.push_back(&in.keys[i]);
    slot_of_row[i] = it->second;
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::vector<JoinStateRow>> other_rows,
                          table.Scan(other_side, distinct));
  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> next_index, table.NextIndexes(this_side, distinct));
  std::vector<size_t> rows_per_key(distinct.size(), 0);
  for (size_t i = 0; i < in.rows.size(); ++i) {
    if (!in.late[i] && in.usable[i]) ++rows_per_key[slot_of_row[i]];
  }
  SLUICE_RETURN_NOT_OK(table.AnnounceNewRows(this_side, distinct, rows_per_key, next_index));
  std::vector<std::pair<size_t, const JoinStateRow*>> pairs;
  std::vector<size_t> first_pair(in.rows.size() + 1, 0);
  for (size_t i = 0; i < in.rows.size(); ++i) {
    first_pair[i] = pairs.size();
    if (in.late[i] || !in.usable[i]) continue;
    for (const JoinStateRow& row : other_rows[slot_of_row[i]]) pairs.emplace_back(i, &row);
  }
  first_pair[in.rows.size()] = pairs.size();
  SLUICE_ASSIGN_OR_RETURN(std::vector<bool> ok,
                          EvaluateCondition(this_is_left, in, b.output_schema, pairs));

  for (size_t i = 0; i < in.rows.size(); ++i) {
    if (in.late[i]) continue;
    const std::string* mine = &in.rows[i];
    if (!in.usable[i]) {
      if (preserved) {
        out.push_back(this_is_left ? JoinedRow(mine, nullptr) : JoinedRow(nullptr, mine));
      }
      continue;
    }
    bool any = false;
    for (size_t q = first_pair[i]; q < first_pair[i + 1]; ++q) {
      if (!ok[q]) continue;
      const JoinStateRow& other = *pairs[q].second;
      if (semi && !this_is_left) {
        // Right rows emit the stored left rows they match for the first time.
        if (table.IsMatched(other)) continue;
        any = true;
        out.push_back(JoinedRow(&other.value.row, nullptr));
        SLUICE_RETURN_NOT_OK(table.SetMatched(other));
        continue;
      }
      any = true;
      if (!semi) {
        out.push_back(this_is_left ? JoinedRow(mine, &other.value.row)
                                   : JoinedRow(&other.value.row, mine));
      }
      SLUICE_RETURN_NOT_OK(table.SetMatched(other));
    }
    if (semi && this_is_left && any) out.push_back(JoinedRow(mine, nullptr));
    // Whether this row goes to state (Spark's AddingProcessedRowToStateCompletionIterator).
    bool store;
    if (this_is_left) {
      store = !(semi && any);
    } else {
      store = !Evicts(spec, in.state_us[i], batch) || (RightPreserved() && !any);
    }
    if (store) {
      SLUICE_RETURN_NOT_OK(table.Append(this_side, in.keys[i], &next_index[slot_of_row[i]], any,
                                        in.state_us[i], *mine));
    }
  }
  return Status::OK();
}

Status StreamStreamJoin::Impl::Evict(JoinStateTable& table, JoinBatchState& b,
                                     const OperatorBatch& batch) {
  for (bool left_side : {true, false}) {
    const JoinSideSpec& spec = left_side ? options.left : options.right;
    if (spec.state_time_column.empty()) continue;
    const bool preserved = left_side ? LeftPreserved() : RightPreserved();
    SLUICE_ASSIGN_OR_RETURN(int64_t removed,
                            table.Evict(
                                left_side ? JoinSide::kLeft : JoinSide::kRight,
                                [&](int64_t state_us) { return Evicts(spec, state_us, batch); },
                                [&](const JoinStoredValue& value) {
                                  if (preserved && !value.matched) {
                                    b.out.push_back(left_side ? JoinedRow(&value.row, nullptr)
                                                              : JoinedRow(nullptr, &value.row));
                                  }
                                }));
    b.removed += removed;
  }
  return Status::OK();
}

}  // namespace sluice::ops
