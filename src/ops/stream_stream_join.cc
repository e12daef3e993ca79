#include "ops/stream_stream_join.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/strings.h"
#include "engine/row_codec.h"
#include "ops/operator_conf.h"
#include "ops/state_work_dir.h"
#include "state/state_store.h"

namespace sluice::ops {
namespace {

constexpr char kLeftTag = 'L';
constexpr char kRightTag = 'R';
constexpr int64_t kNoTime = std::numeric_limits<int64_t>::max();
constexpr char kCandidatesTable[] = "__join_candidates";
constexpr char kLeftInputTable[] = "__join_left_input";
constexpr char kRightInputTable[] = "__join_right_input";

int64_t ElapsedMs(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               since)
      .count();
}

void PutBigEndian64(std::string* out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetBigEndian64(std::string_view s) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(s[i]);
  return v;
}

// Stored value: matched (1 byte) + state time us (8 bytes, sign-flipped big-endian) + encoded row.
std::string EncodeStoredValue(bool matched, int64_t state_us, std::string_view row) {
  std::string v;
  v.reserve(9 + row.size());
  v.push_back(matched ? 1 : 0);
  PutBigEndian64(&v, static_cast<uint64_t>(state_us) ^ (uint64_t{1} << 63));
  v.append(row);
  return v;
}

struct StoredValue {
  bool matched = false;
  int64_t state_us = kNoTime;
  std::string row;
};

Result<StoredValue> DecodeStoredValue(std::string_view bytes) {
  if (bytes.size() < 10) {
    return Status::Corruption("stream-stream join state: value of " + std::to_string(bytes.size()) +
                              " bytes is too short");
  }
  StoredValue v;
  v.matched = bytes[0] != 0;
  v.state_us = static_cast<int64_t>(GetBigEndian64(bytes.substr(1)) ^ (uint64_t{1} << 63));
  v.row = std::string(bytes.substr(9));
  return v;
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

std::string StatePrefix(char tag, const std::string& key) {
  std::string p;
  p.reserve(1 + key.size() + 8);
  p.push_back(tag);
  p.append(key);
  return p;
}

// A stored row of one side, as a pass reads it.
struct StateRow {
  int32_t partition = 0;
  std::string key;  // the full state key
  StoredValue value;
};

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
  in.state_us.assign(static_cast<size_t>(n), kNoTime);
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

struct StreamStreamJoin::Impl {
  std::unique_ptr<engine::Connection> conn;
  std::unique_ptr<state::OperatorStateStores> stores;
  std::string local_root;  // RocksDB working directories (a cache; removed at the end)
  // What the stores were opened for: each side's own columns and the key types. Rows in state
  // are encoded with these types, so every batch must bring the same.
  engine::Schema left_own;
  engine::Schema right_own;
  std::vector<engine::DataType> key_types;
  std::map<std::pair<std::string, std::string>, std::string> common_types;

  ~Impl() {
    stores.reset();
    if (!local_root.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(local_root, ec);
    }
  }

  // The common type of two key types (DuckDB's UNION rule), cached.
  Result<std::string> CommonType(const engine::DataType& a, const engine::DataType& b) {
    const auto cache_key = std::make_pair(a.ToSql(), b.ToSql());
    auto it = common_types.find(cache_key);
    if (it != common_types.end()) return it->second;
    SLUICE_ASSIGN_OR_RETURN(
        engine::Batch t,
        conn->Query("SELECT * FROM (SELECT NULL::" + cache_key.first +
                    " AS k) UNION ALL SELECT * FROM (SELECT NULL::" + cache_key.second + " AS k)"));
    if (t.num_columns() != 1) return Status::Internal("stream-stream join: no common key type");
    std::string common = t.schema()[0].type.ToSql();
    common_types.emplace(cache_key, common);
    return common;
  }

  // `batch` with its key columns cast where `casts` says so.
  Result<engine::Batch> CastKeys(const engine::Batch& batch, const char* table,
                                 const std::vector<std::pair<std::string, std::string>>& casts) {
    if (casts.empty()) return batch;
    std::string sql = "SELECT * REPLACE (";
    for (size_t i = 0; i < casts.size(); ++i) {
      if (i > 0) sql += ", ";
      sql += "CAST(" + QuoteIdentifier(casts[i].first) + " AS " + casts[i].second + ") AS " +
             QuoteIdentifier(casts[i].first);
    }
    sql += ") FROM ";
    sql += table;
    SLUICE_RETURN_NOT_OK(conn->RegisterBatch(table, batch));
    auto result = conn->Query(sql);
    SLUICE_RETURN_NOT_OK(conn->UnregisterBatch(table));
    return result;
  }
};

StreamStreamJoin::StreamStreamJoin(StreamStreamJoinOptions options) : options_(std::move(options)) {
  progress_.operator_name = "symmetricHashJoin";
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
  impl_ = std::make_unique<Impl>();
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
  progress.operator_name = "symmetricHashJoin";
  progress.num_shuffle_partitions = context_.num_partitions;
  progress.num_state_store_instances = context_.num_partitions;

  // ---- The inputs: layouts, keys cast to common types. ----
  engine::Batch left_batch = inputs[0];
  engine::Batch right_batch = inputs[1];
  if (left_batch.num_columns() == 0 || right_batch.num_columns() == 0) {
    return Status::InvalidArgument(context + ": an input has no columns");
  }
  {
    SLUICE_ASSIGN_OR_RETURN(SideLayout l,
                            ResolveLayout(left_batch.schema(), options_.left, "left"));
    SLUICE_ASSIGN_OR_RETURN(SideLayout r,
                            ResolveLayout(right_batch.schema(), options_.right, "right"));
    std::vector<std::pair<std::string, std::string>> left_casts;
    std::vector<std::pair<std::string, std::string>> right_casts;
    for (size_t k = 0; k < l.keys.size(); ++k) {
      const engine::DataType& lt = left_batch.schema()[l.keys[k]].type;
      const engine::DataType& rt = right_batch.schema()[r.keys[k]].type;
      if (lt == rt) continue;
      SLUICE_ASSIGN_OR_RETURN(std::string common, impl_->CommonType(lt, rt));
      if (lt.ToSql() != common) left_casts.emplace_back(options_.left.key_columns[k], common);
      if (rt.ToSql() != common) right_casts.emplace_back(options_.right.key_columns[k], common);
    }
    SLUICE_ASSIGN_OR_RETURN_CTX(left_batch,
                                impl_->CastKeys(left_batch, kLeftInputTable, left_casts), context);
    SLUICE_ASSIGN_OR_RETURN_CTX(
        right_batch, impl_->CastKeys(right_batch, kRightInputTable, right_casts), context);
  }
  SLUICE_ASSIGN_OR_RETURN(SideLayout left_layout,
                          ResolveLayout(left_batch.schema(), options_.left, "left"));
  SLUICE_ASSIGN_OR_RETURN(SideLayout right_layout,
                          ResolveLayout(right_batch.schema(), options_.right, "right"));

  // ---- The state stores (opened by the first batch, for the inputs' schemas). ----
  std::vector<engine::DataType> key_types;
  for (size_t k : left_layout.keys) key_types.push_back(left_batch.schema()[k].type);
  if (impl_->stores != nullptr) {
    if (left_layout.own_schema != impl_->left_own || right_layout.own_schema != impl_->right_own ||
        key_types != impl_->key_types) {
      return Status::InvalidArgument(context +
                                     ": the inputs' columns or key types changed since the "
                                     "operator's state was opened");
    }
  } else {
    impl_->left_own = left_layout.own_schema;
    impl_->right_own = right_layout.own_schema;
    impl_->key_types = key_types;
    state::OperatorStateOptions so;
    so.checkpoint_root = context_.checkpoint_root;
    so.operator_id = context_.operator_id;
    so.operator_name = "symmetricHashJoin";
    so.num_partitions = context_.num_partitions;
    so.schema.key.push_back(
        {std::string("side of the ") + JoinTypeName(options_.type) + " join", "VARCHAR", false});
    for (size_t k = 0; k < left_layout.keys.size(); ++k) {
      const engine::Field& f = left_batch.schema()[left_layout.keys[k]];
      const bool described =
          k < options_.key_descriptions.size() && !options_.key_descriptions[k].empty();
      so.schema.key.push_back({described ? options_.key_descriptions[k] : "key" + std::to_string(k),
                               f.type.ToSql(), true});
    }
    so.schema.key.push_back({"index", "BIGINT", false});
    so.schema.value.push_back({"matched", "BOOLEAN", false});
    so.schema.value.push_back({"stateTimeUs", "BIGINT", false});
    for (const auto& [prefix, layout] : {std::make_pair(options_.left.alias, &left_layout),
                                         std::make_pair(options_.right.alias, &right_layout)}) {
      for (const engine::Field& f : layout->own_schema) {
        so.schema.value.push_back({prefix + "." + f.name, f.type.ToSql(), true});
      }
    }
    so.store.fs = context_.fs;
    const bool rocksdb =
        !options_.force_in_memory_state &&
        StateProviderFromConf(context_.conf) == state::StateStoreProviderKind::kRocksDb;
    so.store.kind = rocksdb ? state::StateStoreProviderKind::kRocksDb
                            : state::StateStoreProviderKind::kInMemory;
    if (rocksdb) {
      SLUICE_ASSIGN_OR_RETURN(impl_->local_root,
                              CreateStateWorkDir(context_.checkpoint_root, "join-state"));
      so.local_root = impl_->local_root;
    }
    SLUICE_ASSIGN_OR_RETURN_CTX(impl_->stores, state::OperatorStateStores::Open(std::move(so)),
                                context);
  }

  // ---- Load state version batch_id of every partition. ----
  const int32_t num_partitions = impl_->stores->num_partitions();
  std::vector<std::unique_ptr<state::StateStore>> stores(static_cast<size_t>(num_partitions));
  for (int32_t p = 0; p < num_partitions; ++p) {
    SLUICE_ASSIGN_OR_RETURN_CTX(stores[static_cast<size_t>(p)],
                                impl_->stores->partition(p).GetStore(batch.batch_id.value()),
                                context);
  }

  int64_t dropped = 0;
  SLUICE_ASSIGN_OR_RETURN_CTX(SideInput left_in,
                              ReadSide(left_batch, left_layout, batch.late_watermark_ms, &dropped),
                              context);
  SLUICE_ASSIGN_OR_RETURN_CTX(
      SideInput right_in, ReadSide(right_batch, right_layout, batch.late_watermark_ms, &dropped),
      context);

  engine::Schema output_schema;
  {
    engine::DataType lt{engine::TypeId::kStruct};
    lt.children = left_layout.own_schema;
    engine::DataType rt{engine::TypeId::kStruct};
    rt.children = right_layout.own_schema;
    output_schema.push_back({options_.left.alias, lt, true});
    output_schema.push_back({options_.right.alias, rt, true});
  }

  const JoinType type = options_.type;
  const bool left_preserved = type == JoinType::kLeftOuter || type == JoinType::kFullOuter;
  const bool right_preserved = type == JoinType::kRightOuter || type == JoinType::kFullOuter;
  auto threshold_us = [&](const JoinSideSpec& spec) {
    return (batch.eviction_watermark_ms + spec.state_watermark_offset_ms) * 1000;
  };
  auto evicts = [&](const JoinSideSpec& spec, int64_t state_us) {
    return !spec.state_time_column.empty() && state_us != kNoTime && state_us <= threshold_us(spec);
  };

  std::vector<std::string> out;                       // encoded output rows
  std::unordered_map<std::string, bool> matched_now;  // state key -> matched, set in this batch
  int64_t updated = 0;

  auto store_of = [&](const std::string& key) -> state::StateStore& {
    return *stores[static_cast<size_t>(state::PartitionForKey(key, num_partitions))];
  };

  // Calls visit(key index, iterator) for each of `keys` (distinct join keys) positioned at the
  // first stored row of side `tag` with that key, visit reading while the prefix matches: per
  // partition one iterator over the side, seeked to each key in key order (an iterator per key
  // was the join's largest cost).
  auto for_each_prefix =
      [&](char tag, const std::vector<const std::string*>& keys,
          const std::function<Status(size_t, const std::string&, state::StateIterator&)>& visit)
      -> Status {
    std::vector<std::vector<size_t>> by_partition(static_cast<size_t>(num_partitions));
    for (size_t j = 0; j < keys.size(); ++j) {
      by_partition[static_cast<size_t>(state::PartitionForKey(*keys[j], num_partitions))].push_back(
          j);
    }
    for (int32_t p = 0; p < num_partitions; ++p) {
      std::vector<size_t>& js = by_partition[static_cast<size_t>(p)];
      if (js.empty()) continue;
      std::sort(js.begin(), js.end(), [&](size_t a, size_t b) { return *keys[a] < *keys[b]; });
      SLUICE_ASSIGN_OR_RETURN(auto it,
                              stores[static_cast<size_t>(p)]->PrefixScan(std::string(1, tag)));
      for (size_t j : js) {
        const std::string prefix = StatePrefix(tag, *keys[j]);
        it->Seek(prefix);
        SLUICE_RETURN_NOT_OK(visit(j, prefix, *it));
      }
      SLUICE_RETURN_NOT_OK(it->status());
    }
    return Status::OK();
  };
  auto starts_with = [](std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && std::memcmp(s.data(), prefix.data(), prefix.size()) == 0;
  };

  // The stored rows of side `tag` for each of `keys`.
  auto scan = [&](char tag, const std::vector<const std::string*>& keys)
      -> Result<std::vector<std::vector<StateRow>>> {
    std::vector<std::vector<StateRow>> rows(keys.size());
    SLUICE_RETURN_NOT_OK(for_each_prefix(
        tag, keys, [&](size_t j, const std::string& prefix, state::StateIterator& it) -> Status {
          const int32_t p = state::PartitionForKey(*keys[j], num_partitions);
          for (; it.Valid() && starts_with(it.key(), prefix); it.Next()) {
            StateRow row;
            row.partition = p;
            row.key = std::string(it.key());
            SLUICE_ASSIGN_OR_RETURN(row.value, DecodeStoredValue(it.value()));
            rows[j].push_back(std::move(row));
          }
          return it.status();
        }));
    return rows;
  };

  // The next free row index of side `tag` for each of `keys` (each side's rows are appended in
  // its own pass only, so this is read once per batch and side).
  auto find_next_indexes = [&](char tag, const std::vector<const std::string*>& keys,
                               std::vector<int64_t>* next_index) -> Status {
    next_index->assign(keys.size(), 0);
    return for_each_prefix(
        tag, keys, [&](size_t j, const std::string& prefix, state::StateIterator& it) -> Status {
          int64_t next = 0;
          for (; it.Valid() && starts_with(it.key(), prefix); it.Next()) {
            std::string_view k = it.key();
            if (k.size() == prefix.size() + 8) {
              next = std::max<int64_t>(
                  next, static_cast<int64_t>(GetBigEndian64(k.substr(prefix.size()))) + 1);
            }
          }
          SLUICE_RETURN_NOT_OK(it.status());
          (*next_index)[j] = next;
          return Status::OK();
        });
  };

  // The state keys a pass may append (per key, the next indexes, as many as the key's rows) are
  // new. One batched read per partition tells the store so: it counts keys, and would otherwise
  // read each appended key (and, since reads apply the buffered writes, write row by row).
  auto announce_new_keys = [&](char tag, const SideInput& in,
                               const std::vector<const std::string*>& keys,
                               const std::vector<size_t>& slot_of_row,
                               const std::vector<int64_t>& next_index) -> Status {
    std::vector<size_t> rows_per_key(keys.size(), 0);
    for (size_t i = 0; i < in.rows.size(); ++i) {
      if (!in.late[i] && in.usable[i]) ++rows_per_key[slot_of_row[i]];
    }
    std::vector<std::vector<std::string>> by_partition(static_cast<size_t>(num_partitions));
    for (size_t j = 0; j < keys.size(); ++j) {
      const std::string prefix = StatePrefix(tag, *keys[j]);
      auto& out_keys =
          by_partition[static_cast<size_t>(state::PartitionForKey(*keys[j], num_partitions))];
      for (size_t c = 0; c < rows_per_key[j]; ++c) {
        std::string k = prefix;
        PutBigEndian64(&k, static_cast<uint64_t>(next_index[j]) + c);
        out_keys.push_back(std::move(k));
      }
    }
    for (int32_t p = 0; p < num_partitions; ++p) {
      std::vector<std::string>& ks = by_partition[static_cast<size_t>(p)];
      if (ks.empty()) continue;
      std::sort(ks.begin(), ks.end());
      std::vector<std::string_view> views(ks.begin(), ks.end());
      SLUICE_ASSIGN_OR_RETURN(auto got, stores[static_cast<size_t>(p)]->MultiGet(views));
      (void)got;  // absent by construction; the store remembers what it read
    }
    return Status::OK();
  };

  // Stores a row of side `tag` under `key` at index *next (then advanced).
  auto append = [&](char tag, const std::string& key, int64_t* next, bool matched, int64_t state_us,
                    const std::string& row) -> Status {
    std::string state_key = StatePrefix(tag, key);
    state::StateStore& store = store_of(key);
    PutBigEndian64(&state_key, static_cast<uint64_t>(*next));
    ++*next;
    SLUICE_RETURN_NOT_OK(store.Put(state_key, EncodeStoredValue(matched, state_us, row)));
    ++updated;
    return Status::OK();
  };

  auto is_matched = [&](const StateRow& row) {
    auto it = matched_now.find(row.key);
    return it != matched_now.end() ? it->second : row.value.matched;
  };

  auto set_matched = [&](const StateRow& row) -> Status {
    if (is_matched(row)) return Status::OK();
    matched_now[row.key] = true;
    return stores[static_cast<size_t>(row.partition)]->Put(
        row.key, EncodeStoredValue(true, row.value.state_us, row.value.row));
  };

  // Evaluates condition_sql on (this row, state row) pairs; all true without a condition.
  auto evaluate = [&](bool this_is_left, const SideInput& in,
                      const std::vector<std::pair<size_t, const StateRow*>>& pairs)
      -> Result<std::vector<bool>> {
    std::vector<bool> pass(pairs.size(), true);
    if (options_.condition_sql.empty() || pairs.empty()) return pass;
    std::vector<std::string> rows;
    rows.reserve(pairs.size());
    for (const auto& [i, state_row] : pairs) {
      const std::string* mine = &in.rows[i];
      const std::string* theirs = &state_row->value.row;
      rows.push_back(this_is_left ? JoinedRow(mine, theirs) : JoinedRow(theirs, mine));
    }
    std::vector<std::string_view> views(rows.begin(), rows.end());
    SLUICE_ASSIGN_OR_RETURN(engine::Batch candidates, engine::DecodeRows(output_schema, views));
    SLUICE_RETURN_NOT_OK(impl_->conn->RegisterBatch(kCandidatesTable, candidates));
    auto result = impl_->conn->Query("SELECT coalesce((" + options_.condition_sql +
                                     ")::BOOLEAN, false) AS m FROM " + kCandidatesTable);
    SLUICE_RETURN_NOT_OK(impl_->conn->UnregisterBatch(kCandidatesTable));
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
  };

  // One side's new rows against the other side's state (steps 2 and 3 of the header).
  auto pass = [&](bool this_is_left) -> Status {
    const SideInput& in = this_is_left ? left_in : right_in;
    const JoinSideSpec& spec = this_is_left ? options_.left : options_.right;
    const char this_tag = this_is_left ? kLeftTag : kRightTag;
    const char other_tag = this_is_left ? kRightTag : kLeftTag;
    const bool preserved = this_is_left ? left_preserved : right_preserved;
    const bool semi = type == JoinType::kLeftSemi;

    // The other side's stored rows per key (the other side does not change in this pass, except
    // for matched flags, which matched_now tracks).
    // Distinct keys of the usable rows: their stored rows on the other side are read (one
    // iterator per partition), and this side's next row indexes found, before any write.
    std::unordered_map<std::string_view, size_t> key_slot;  // key -> index in distinct
    std::vector<const std::string*> distinct;
    std::vector<size_t> slot_of_row(in.rows.size(), 0);
    for (size_t i = 0; i < in.rows.size(); ++i) {
      if (in.late[i] || !in.usable[i]) continue;
      auto [it, inserted] = key_slot.emplace(in.keys[i], distinct.size());
      if (inserted) distinct.push_back(&in.keys[i]);
      slot_of_row[i] = it->second;
    }
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::vector<StateRow>> other_rows,
                            scan(other_tag, distinct));
    std::vector<int64_t> next_index;  // per distinct key
    SLUICE_RETURN_NOT_OK(find_next_indexes(this_tag, distinct, &next_index));
    SLUICE_RETURN_NOT_OK(announce_new_keys(this_tag, in, distinct, slot_of_row, next_index));
    std::vector<std::pair<size_t, const StateRow*>> pairs;
    std::vector<size_t> first_pair(in.rows.size() + 1, 0);
    for (size_t i = 0; i < in.rows.size(); ++i) {
      first_pair[i] = pairs.size();
      if (in.late[i] || !in.usable[i]) continue;
      for (const StateRow& row : other_rows[slot_of_row[i]]) pairs.emplace_back(i, &row);
    }
    first_pair[in.rows.size()] = pairs.size();
    SLUICE_ASSIGN_OR_RETURN(std::vector<bool> ok, evaluate(this_is_left, in, pairs));

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
        const StateRow& other = *pairs[q].second;
        if (semi && !this_is_left) {
          // Right rows emit the stored left rows they match for the first time.
          if (is_matched(other)) continue;
          any = true;
          out.push_back(JoinedRow(&other.value.row, nullptr));
          SLUICE_RETURN_NOT_OK(set_matched(other));
          continue;
        }
        any = true;
        if (!semi) {
          out.push_back(this_is_left ? JoinedRow(mine, &other.value.row)
                                     : JoinedRow(&other.value.row, mine));
        }
        SLUICE_RETURN_NOT_OK(set_matched(other));
      }
      if (semi && this_is_left && any) out.push_back(JoinedRow(mine, nullptr));
      // Whether this row goes to state (Spark's AddingProcessedRowToStateCompletionIterator).
      bool store;
      if (this_is_left) {
        store = !(semi && any);
      } else {
        store = !evicts(spec, in.state_us[i]) || (right_preserved && !any);
      }
      if (store) {
        SLUICE_RETURN_NOT_OK(
            append(this_tag, in.keys[i], &next_index[slot_of_row[i]], any, in.state_us[i], *mine));
      }
    }
    return Status::OK();
  };

  SLUICE_RETURN_NOT_OK_CTX(pass(/*this_is_left=*/true), context);
  SLUICE_RETURN_NOT_OK_CTX(pass(/*this_is_left=*/false), context);
  progress.all_updates_time_ms = ElapsedMs(update_start);

  // ---- Eviction by the state watermarks (step 4). ----
  const auto removal_start = std::chrono::steady_clock::now();
  int64_t removed = 0;
  for (bool left_side : {true, false}) {
    const JoinSideSpec& spec = left_side ? options_.left : options_.right;
    if (spec.state_time_column.empty()) continue;
    const bool preserved = left_side ? left_preserved : right_preserved;
    const char tag = left_side ? kLeftTag : kRightTag;
    for (int32_t p = 0; p < num_partitions; ++p) {
      state::StateStore& store = *stores[static_cast<size_t>(p)];
      std::vector<std::pair<std::string, StoredValue>> gone;
      {
        SLUICE_ASSIGN_OR_RETURN_CTX(auto it, store.PrefixScan(std::string(1, tag)), context);
        for (; it->Valid(); it->Next()) {
          std::string_view value = it->value();
          if (value.size() < 10) {
            SLUICE_RETURN_NOT_OK_CTX(DecodeStoredValue(value).status(), context);  // Corruption
          }
          // The state time alone decides; the row is copied only for rows that go.
          const int64_t state_us =
              static_cast<int64_t>(GetBigEndian64(value.substr(1)) ^ (uint64_t{1} << 63));
          if (!evicts(spec, state_us)) continue;
          SLUICE_ASSIGN_OR_RETURN_CTX(StoredValue v, DecodeStoredValue(value), context);
          gone.emplace_back(std::string(it->key()), std::move(v));
        }
        SLUICE_RETURN_NOT_OK_CTX(it->status(), context);
      }
      for (const auto& [key, value] : gone) {
        SLUICE_RETURN_NOT_OK_CTX(store.Remove(key), context);
        ++removed;
        if (preserved && !value.matched) {
          out.push_back(left_side ? JoinedRow(&value.row, nullptr)
                                  : JoinedRow(nullptr, &value.row));
        }
      }
    }
  }
  progress.all_removals_time_ms = ElapsedMs(removal_start);

  // ---- Output, then commit (the output must decode before the state moves on). ----
  std::vector<std::string_view> views(out.begin(), out.end());
  SLUICE_ASSIGN_OR_RETURN_CTX(engine::Batch output, engine::DecodeRows(output_schema, views),
                              context);
  const auto commit_start = std::chrono::steady_clock::now();
  for (int32_t p = 0; p < num_partitions; ++p) {
    SLUICE_ASSIGN_OR_RETURN_CTX(int64_t v, stores[static_cast<size_t>(p)]->Commit(), context);
    (void)v;
  }
  progress.commit_time_ms = ElapsedMs(commit_start);
  stores.clear();

  const state::StateStoreMetrics metrics = impl_->stores->LastMetrics();
  progress.num_rows_total = metrics.num_keys;
  progress.num_rows_updated = updated;
  progress.num_rows_removed = removed;
  progress.num_rows_dropped_by_watermark = dropped;
  progress.memory_used_bytes = metrics.memory_used_bytes;
  progress.custom_metrics = metrics.custom;
  progress_ = std::move(progress);
  return output;
}

}  // namespace sluice::ops
