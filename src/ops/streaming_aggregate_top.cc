#include "ops/streaming_aggregate_top.h"

#include <algorithm>

#include "common/strings.h"
#include "engine/row_codec.h"
#include "ops/state_rows.h"
#include "state/partitions.h"

namespace sluice::ops {
namespace {

using engine::Batch;

// Replaced per batch by BindLateWatermark; valid SQL as it is (no window late), so that the
// unbound text can be probed for its schema.
constexpr char kLatePlaceholder[] = "(-9223372036854775807 /* sluice: late watermark, us */)";

// The row-codec value of a one-column encoding ([version][tag][payload]): nullopt for NULL.
std::optional<std::string_view> Payload(std::string_view encoded) {
  if (encoded.size() < 2 || static_cast<uint8_t>(encoded[1]) == 0) return std::nullopt;
  return encoded.substr(2);
}

// The window start of a state key (ops/state_rows.h: the last 8 bytes, sign bit flipped).
int64_t WindowStartOfKey(std::string_view key) {
  uint64_t v = 0;
  for (size_t i = key.size() - 8; i < key.size(); ++i) v = (v << 8) | static_cast<uint8_t>(key[i]);
  return static_cast<int64_t>(v ^ (uint64_t{1} << 63));
}

}  // namespace

bool TopOneFilter::OrdersByBytes(const engine::DataType& type) {
  using engine::TypeId;
  switch (type.id) {
    case TypeId::kBoolean:
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInteger:
    case TypeId::kBigInt:
    case TypeId::kHugeInt:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
    case TypeId::kDate:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kUuid:
      return true;
    default:  // strings (collations), intervals (not normalized), nested, others
      return false;
  }
}

std::unique_ptr<TopOneFilter> TopOneFilter::Make(const KeepTopSpec& spec, bool append,
                                                 bool window_watermarked, bool tumbling_or_sliding,
                                                 int64_t window_size_us,
                                                 const std::vector<std::string>& keys,
                                                 const engine::Schema& input_schema) {
  if (!append || !window_watermarked || !tumbling_or_sliding || window_size_us <= 0) {
    return nullptr;
  }
  auto k = std::find(keys.begin(), keys.end(), spec.column);
  if (k == keys.end()) return nullptr;
  for (const auto& f : input_schema) {
    if (f.name != spec.column) continue;
    if (!OrdersByBytes(f.type)) return nullptr;
    return std::unique_ptr<TopOneFilter>(
        new TopOneFilter(spec, keys, static_cast<size_t>(k - keys.begin()), window_size_us));
  }
  return nullptr;
}

TopOneFilter::TopOneFilter(KeepTopSpec spec, std::vector<std::string> keys, size_t key_index,
                           int64_t window_size_us)
    : spec_(std::move(spec)),
      keys_(std::move(keys)),
      key_index_(key_index),
      window_size_us_(window_size_us) {}

std::string TopOneFilter::PreReduceSql(const std::string& rows_sql,
                                       const std::string& window_start_column) const {
  const std::string o = QuoteIdentifier(spec_.column);
  const std::string ws = QuoteIdentifier(window_start_column);
  return "SELECT * FROM (" + rows_sql + ") QUALIFY " + o + " IS NULL OR " + ws + " + " +
         std::to_string(window_size_us_) + " <= " + kLatePlaceholder + " OR " + o + " = " +
         (spec_.descending ? "max" : "min") + "(" + o + ") OVER (PARTITION BY " + ws + ")";
}

std::string TopOneFilter::BindLateWatermark(std::string sql, int64_t late_watermark_ms) {
  const std::string value = "(" + std::to_string(late_watermark_ms * 1000) + ")";
  const std::string token = kLatePlaceholder;
  for (size_t pos = sql.find(token); pos != std::string::npos; pos = sql.find(token, pos)) {
    sql.replace(pos, token.size(), value);
    pos += value.size();
  }
  return sql;
}

std::string TopOneFilter::DescribeKey(const std::string& description) const {
  return description + " [kept: top 1 per window, " + (spec_.descending ? "DESC" : "ASC") + "]";
}

bool TopOneFilter::Better(const std::string& a, const std::string& b) const {
  return spec_.descending ? a > b : a < b;  // bytewise: the value order (header comment)
}

Status TopOneFilter::RemoveFromState(const FilterInput& in, const std::string& key) {
  const int32_t n = static_cast<int32_t>(in.stores->size());
  const int32_t p = state::PartitionForKey(std::string_view(key).substr(0, key.size() - 8), n);
  SLUICE_RETURN_NOT_OK((*in.stores)[static_cast<size_t>(p)]->Remove(key));
  if (in.mirror != nullptr) (*in.mirror)[static_cast<size_t>(p)].Remove(key);
  ++pruned_;
  return Status::OK();
}

Status TopOneFilter::Rebuild(const FilterInput& in) {
  windows_.clear();
  std::vector<std::string> keys;
  std::vector<std::string> rows;
  for (auto& store : *in.stores) {
    SLUICE_ASSIGN_OR_RETURN(auto it, store->Iterate());
    for (; it->Valid(); it->Next()) {
      SLUICE_ASSIGN_OR_RETURN(auto v, ParseStateValue(it->value()));
      if (it->key().size() < 8) {
        return Status::Corruption("aggregation state key of " + std::to_string(it->key().size()) +
                                  " bytes has no window start");
      }
      keys.emplace_back(it->key());
      rows.emplace_back(v.row);
    }
    SLUICE_RETURN_NOT_OK(it->status());
  }
  if (keys.empty()) return Status::OK();
  std::vector<std::string_view> views(rows.begin(), rows.end());
  SLUICE_ASSIGN_OR_RETURN(Batch decoded, engine::DecodeRows(*in.row_schema, views));
  SLUICE_ASSIGN_OR_RETURN(auto values, engine::EncodeRows(decoded, {key_index_}));
  std::vector<std::optional<std::string_view>> payloads(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    payloads[i] = Payload(values[i]);
    if (!payloads[i]) continue;
    const int64_t start = WindowStartOfKey(keys[i]);
    auto [w, fresh] = windows_.try_emplace(start);
    std::string value(*payloads[i]);
    if (fresh || Better(value, w->second.best)) w->second.best = std::move(value);
  }
  // Groups below their window's best (a state written before a better group arrived cannot be,
  // but a rebuild does not rely on it): they can never rank first.
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!payloads[i]) continue;
    Window& w = windows_[WindowStartOfKey(keys[i])];
    if (*payloads[i] == w.best) {
      w.keys.insert(keys[i]);
    } else {
      SLUICE_RETURN_NOT_OK(RemoveFromState(in, keys[i]));
    }
  }
  return Status::OK();
}

Result<Batch> TopOneFilter::Filter(const FilterInput& in) {
  const int64_t version = in.version;
  if (version_ != version) {
    version_ = -1;
    SLUICE_RETURN_NOT_OK_CTX(Rebuild(in), "rebuilding the per-window best of the top-1 plan");
  }
  version_ = -1;  // until this batch's decisions are all made (an error: rebuild next time)
  const Batch& partial = *in.partial;
  Batch out = partial;
  const int64_t num_rows = partial.num_rows();
  if (num_rows > 0) {
    auto column = [&](const std::string& name) -> Result<size_t> {
      auto idx = partial.ColumnIndex(name);
      if (!idx) return Status::Internal("top-1 filter: partial rows lack column " + name);
      return *idx;
    };
    SLUICE_ASSIGN_OR_RETURN(size_t order_col, column(spec_.column));
    SLUICE_ASSIGN_OR_RETURN(size_t start_col, column("__gstart_us"));
    std::vector<size_t> key_cols;
    for (const auto& k : keys_) {
      SLUICE_ASSIGN_OR_RETURN(size_t c, column(k));
      key_cols.push_back(c);
    }
    SLUICE_ASSIGN_OR_RETURN(auto values, engine::EncodeRows(partial, {order_col}));
    SLUICE_ASSIGN_OR_RETURN(auto starts, engine::Int64ColumnValues(partial, start_col));
    SLUICE_ASSIGN_OR_RETURN(auto group_keys, engine::EncodeRows(partial, key_cols));
    const size_t n = static_cast<size_t>(num_rows);
    // The batch's best per window, then the state's best updated with it.
    std::map<int64_t, std::string> batch_best;
    for (size_t i = 0; i < n; ++i) {
      auto v = Payload(values[i]);
      if (!v || !starts[i]) continue;
      auto [b, fresh] = batch_best.try_emplace(*starts[i], *v);
      if (!fresh && Better(std::string(*v), b->second)) b->second = std::string(*v);
    }
    for (auto& [start, best] : batch_best) {
      auto [w, fresh] = windows_.try_emplace(start);
      if (fresh) {
        w->second.best = best;
      } else if (Better(best, w->second.best)) {
        for (const auto& key : w->second.keys) SLUICE_RETURN_NOT_OK(RemoveFromState(in, key));
        w->second.keys.clear();
        w->second.best = best;
      }
    }
    std::vector<bool> keep(n, true);
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      auto v = Payload(values[i]);
      if (v && starts[i]) {
        Window& w = windows_[*starts[i]];
        if (*v == w.best) {
          w.keys.insert(StateKey(group_keys[i], *starts[i]));
        } else {
          keep[i] = false;
          ++pruned_;
        }
      }
      kept += keep[i] ? 1 : 0;
    }
    if (kept < n) {
      std::vector<size_t> all(partial.num_columns());
      for (size_t c = 0; c < all.size(); ++c) all[c] = c;
      SLUICE_ASSIGN_OR_RETURN(auto encoded, engine::EncodeRows(partial, all));
      std::vector<std::string_view> rows;
      rows.reserve(kept);
      for (size_t i = 0; i < n; ++i) {
        if (keep[i]) rows.emplace_back(encoded[i]);
      }
      SLUICE_ASSIGN_OR_RETURN(out, engine::DecodeRows(partial.schema(), rows));
    }
  }
  // The windows this batch evicts (window end <= threshold) are forgotten: later rows of theirs
  // are late and dropped before the filter.
  for (auto it = windows_.begin(); it != windows_.end();) {
    it = it->first + window_size_us_ <= in.eviction_threshold_us ? windows_.erase(it)
                                                                 : std::next(it);
  }
  version_ = version + 1;
  return out;
}

}  // namespace sluice::ops
