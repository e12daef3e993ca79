#include "sql/state_decoder.h"

#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "engine/row_codec.h"
#include "ops/custom_state_codec.h"
#include "ops/global_limit.h"
#include "ops/state_rows.h"

namespace sluice::sql {
namespace {

// Row codec v1 pieces (docs/formats/row-codec.md): a row is the version byte 0x01 followed by one
// value per column; a value is 0x00 (NULL) or 0x01 and the payload. Rows are assembled here by
// concatenating the values of the operator's encoded rows with a few values encoded below.
constexpr char kRowVersion = 0x01;
constexpr char kNull = 0x00;
constexpr char kValue = 0x01;

void PutFlippedBigEndian(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutBigInt(std::string* out, std::optional<int64_t> v) {
  if (!v) {
    out->push_back(kNull);
    return;
  }
  out->push_back(kValue);
  PutFlippedBigEndian(out, static_cast<uint64_t>(*v) ^ (uint64_t{1} << 63), 8);
}
void PutInteger(std::string* out, int32_t v) {
  out->push_back(kValue);
  PutFlippedBigEndian(out, static_cast<uint32_t>(v) ^ (uint32_t{1} << 31), 4);
}
void PutBool(std::string* out, bool v) {
  out->push_back(kValue);
  out->push_back(v ? 1 : 0);
}
// VARCHAR and BLOB: varint (LEB128) byte length, then the bytes.
void PutBytes(std::string* out, std::string_view bytes) {
  out->push_back(kValue);
  uint64_t n = bytes.size();
  do {
    uint8_t b = n & 0x7f;
    n >>= 7;
    out->push_back(static_cast<char>(n ? (b | 0x80) : b));
  } while (n);
  out->append(bytes);
}
uint64_t GetBigEndian64(std::string_view s) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(s[i]);
  return v;
}

// The values of an encoded row (without its version byte).
Result<std::string_view> ValuesOf(std::string_view row, const std::string& what) {
  if (row.empty() || row[0] != kRowVersion) {
    return Status::Corruption(what + ": not a row codec v1 row");
  }
  return row.substr(1);
}

struct OutputColumn {
  std::string name;
  std::string type;
};

class Decoder {
 public:
  Decoder(const state::OperatorMetadata& metadata, const state::StateSchema& schema)
      : metadata_(metadata), schema_(schema) {
    columns_ = {
        {"operator_id", "BIGINT"}, {"operator_name", "VARCHAR"}, {"partition_id", "INTEGER"}};
  }

  Result<engine::Batch> Decode(const std::vector<StateEntry>& entries) {
    const std::string& op = metadata_.operator_name;
    Status layout;
    if (op == "stateStoreSave" || op == "sessionWindowStateStoreSaveExec") {
      layout = AggregateColumns();
    } else if (op == "dedupe" || op == "dedupeWithinWatermark") {
      layout = DedupColumns();
    } else if (op == "symmetricHashJoin") {
      layout = JoinColumns();
    } else if (op == "transformWithStateExec") {
      layout = CustomStateColumns();
    } else if (op == ops::kGlobalLimitOperatorName) {
      layout = LimitColumns();
    } else {
      columns_.push_back({"key", "BLOB"});
      columns_.push_back({"value", "BLOB"});
    }
    SLUICE_RETURN_NOT_OK(layout);
    std::vector<std::string> rows;
    rows.reserve(entries.size());
    for (const StateEntry& e : entries) {
      // The partition's timer index repeats each key's timers: shown once, under the key.
      if (op == "transformWithStateExec" && IsTimerIndexKey(e.key)) continue;
      std::string row(1, kRowVersion);
      PutBigInt(&row, metadata_.operator_id);
      PutBytes(&row, op);
      PutInteger(&row, e.partition);
      const std::string what = Describe() + ", partition " + std::to_string(e.partition);
      if (op == "stateStoreSave" || op == "sessionWindowStateStoreSaveExec") {
        SLUICE_RETURN_NOT_OK(AggregateRow(e, what, &row));
      } else if (op == "dedupe" || op == "dedupeWithinWatermark") {
        SLUICE_RETURN_NOT_OK(DedupRow(e, what, &row));
      } else if (op == "symmetricHashJoin") {
        SLUICE_RETURN_NOT_OK(JoinRow(e, what, &row));
      } else if (op == "transformWithStateExec") {
        SLUICE_RETURN_NOT_OK(CustomStateRow(e, what, &row));
      } else if (op == ops::kGlobalLimitOperatorName) {
        SLUICE_RETURN_NOT_OK(LimitRow(e, what, &row));
      } else {
        PutBytes(&row, e.key);
        PutBytes(&row, e.value);
      }
      rows.push_back(std::move(row));
    }
    engine::Schema schema;
    std::set<std::string> used;
    for (const OutputColumn& c : columns_) {
      SLUICE_ASSIGN_OR_RETURN(engine::DataType type, engine::DataType::FromSql(c.type));
      std::string name = c.name;
      for (int n = 2; !used.insert(name).second; ++n) name = c.name + "_" + std::to_string(n);
      schema.push_back({name, type, true});
    }
    std::vector<std::string_view> views(rows.begin(), rows.end());
    Result<engine::Batch> batch = engine::DecodeRows(schema, views);
    if (!batch.ok()) {
      return Status::Corruption("the state of " + Describe() +
                                " does not match its state schema: " + batch.status().message());
    }
    return batch;
  }

 private:
  std::string Describe() const {
    return "operator " + std::to_string(metadata_.operator_id) + " ('" + metadata_.operator_name +
           "')";
  }
  void AddFields(const std::vector<state::StateField>& fields, size_t from = 0) {
    for (size_t i = from; i < fields.size(); ++i)
      columns_.push_back({fields[i].name, fields[i].type});
  }

  Status AggregateColumns() {
    AddFields(schema_.value);
    columns_.push_back({"evictAtMicros", "BIGINT"});
    return Status::OK();
  }
  Status AggregateRow(const StateEntry& e, const std::string& what, std::string* row) {
    SLUICE_ASSIGN_OR_RETURN(ops::ParsedStateValue v, ops::ParseStateValue(e.value));
    SLUICE_ASSIGN_OR_RETURN(std::string_view values, ValuesOf(v.row, what));
    row->append(values);
    PutBigInt(row,
              v.evict_us == ops::kNeverEvicted ? std::nullopt : std::optional<int64_t>(v.evict_us));
    return Status::OK();
  }

  Status DedupColumns() {
    AddFields(schema_.key);
    AddFields(schema_.value);
    return Status::OK();
  }
  Status DedupRow(const StateEntry& e, const std::string& what, std::string* row) {
    SLUICE_ASSIGN_OR_RETURN(std::string_view key, ValuesOf(e.key, what + ", key"));
    SLUICE_ASSIGN_OR_RETURN(std::string_view value, ValuesOf(e.value, what + ", value"));
    row->append(key);
    row->append(value);
    return Status::OK();
  }

  Status JoinColumns() {
    const auto& key = schema_.key;
    const auto& value = schema_.value;
    if (key.size() < 2 || key.front().type != "VARCHAR" || key.back().type != "BIGINT" ||
        value.size() < 3 || value[0].type != "BOOLEAN" || value[1].type != "BIGINT") {
      return Status::Corruption("the state schema of " + Describe() +
                                " is not a stream-stream join's (side, keys, index; matched, "
                                "stateTimeUs, columns)");
    }
    const std::string& first = value[2].name;
    const std::string prefix = first.substr(0, first.find('.') + 1);
    left_columns_ = 0;
    while (2 + left_columns_ < value.size() && value[2 + left_columns_].name.starts_with(prefix)) {
      ++left_columns_;
    }
    right_columns_ = value.size() - 2 - left_columns_;
    AddFields(key);
    AddFields(value);
    return Status::OK();
  }
  Status JoinRow(const StateEntry& e, const std::string& what, std::string* row) {
    if (e.key.size() < 10 || (e.key[0] != 'L' && e.key[0] != 'R')) {
      return Status::Corruption(what +
                                ": a join state key must be 'L' or 'R', the join key and an "
                                "8-byte index");
    }
    if (e.value.size() < 10) {
      return Status::Corruption(what + ": a join state value of " + std::to_string(e.value.size()) +
                                " bytes is too short");
    }
    const bool left = e.key[0] == 'L';
    std::string_view key(e.key);
    SLUICE_ASSIGN_OR_RETURN(std::string_view join_key,
                            ValuesOf(key.substr(1, key.size() - 9), what + ", key"));
    PutBytes(row, left ? "left" : "right");
    row->append(join_key);
    PutBigInt(row, static_cast<int64_t>(GetBigEndian64(key.substr(key.size() - 8))));
    std::string_view value(e.value);
    PutBool(row, value[0] != 0);
    const int64_t state_us =
        static_cast<int64_t>(GetBigEndian64(value.substr(1)) ^ (uint64_t{1} << 63));
    PutBigInt(row, state_us == std::numeric_limits<int64_t>::max()
                       ? std::nullopt
                       : std::optional<int64_t>(state_us));
    SLUICE_ASSIGN_OR_RETURN(std::string_view side_row, ValuesOf(value.substr(9), what + ", row"));
    if (!left) row->append(left_columns_, kNull);
    row->append(side_row);
    if (left) row->append(right_columns_, kNull);
    return Status::OK();
  }

  // globalLimit (docs/formats/operator-state.md "Global limit"): one entry, key = the row of zero
  // columns, value = the row of `count` BIGINT. Columns: the value fields (count).
  Status LimitColumns() {
    if (!schema_.key.empty() || schema_.value.size() != 1 || schema_.value[0].type != "BIGINT") {
      return Status::Corruption("the state schema of " + Describe() +
                                " is not a globalLimit's (no key fields; value: count BIGINT)");
    }
    AddFields(schema_.value);
    return Status::OK();
  }
  Status LimitRow(const StateEntry& e, const std::string& what, std::string* row) {
    if (e.key != std::string(1, kRowVersion)) {
      return Status::Corruption(
          what + ": a globalLimit state key must be the row of zero columns " +
          "(the one byte 01), got " + std::to_string(e.key.size()) + " bytes");
    }
    SLUICE_ASSIGN_OR_RETURN(std::string_view value, ValuesOf(e.value, what + ", value"));
    row->append(value);
    return Status::OK();
  }

  static bool IsTimerIndexKey(std::string_view key) {
    return key.size() >= 2 && static_cast<uint8_t>(key[0]) == 0xFF && key[1] == 'T';
  }

  // transformWithStateExec (docs/state.md "Custom state"): the grouping key's columns, then
  // entry ('value', 'list', 'map' or 'timer'), variable, mapKey, value (rows as text: one value
  // as itself, several as (a, b)), expiresAtMicros (TTL; NULL without) and timerMs.
  Status CustomStateColumns() {
    AddFields(schema_.key);
    for (const auto& f : schema_.value) {
      if (f.name != "__timeMode") variable_types_[f.name] = f.type;
    }
    columns_.push_back({"entry", "VARCHAR"});
    columns_.push_back({"variable", "VARCHAR"});
    columns_.push_back({"mapKey", "VARCHAR"});
    columns_.push_back({"value", "VARCHAR"});
    columns_.push_back({"expiresAtMicros", "BIGINT"});
    columns_.push_back({"timerMs", "BIGINT"});
    return Status::OK();
  }
  static std::string ShowRow(const sluice::Row& r) {
    return r.size() == 1 ? ops::ValueToString(r[0]) : ops::RowToString(r);
  }
  Status CustomStateRow(const StateEntry& e, const std::string& what, std::string* row) {
    std::string_view key(e.key);
    auto bad = [&](const std::string& why) {
      return Status::Corruption(what + ": a custom state key " + why);
    };
    if (key.size() < 5) return bad("is shorter than its grouping key prefix");
    uint32_t gk_len = 0;
    for (int i = 0; i < 4; ++i) gk_len = (gk_len << 8) | static_cast<uint8_t>(key[i]);
    if (key.size() < 5 + static_cast<size_t>(gk_len))
      return bad("is shorter than its grouping key");
    SLUICE_ASSIGN_OR_RETURN(std::string_view gk, ValuesOf(key.substr(4, gk_len), what + ", key"));
    row->append(gk);
    std::string_view rest = key.substr(4 + gk_len);
    const char tag = rest[0];
    rest.remove_prefix(1);
    if (tag == 't') {
      if (rest.size() != 8)
        return bad("has a timer time of " + std::to_string(rest.size()) + " bytes");
      PutBytes(row, "timer");
      row->append(4, kNull);  // variable, mapKey, value, expiresAtMicros
      PutBigInt(row, static_cast<int64_t>(GetBigEndian64(rest) ^ (uint64_t{1} << 63)));
      return Status::OK();
    }
    if (tag != 'v' || rest.size() < 2) return bad("has an unknown entry tag");
    const size_t name_len = (static_cast<uint8_t>(rest[0]) << 8) | static_cast<uint8_t>(rest[1]);
    if (rest.size() < 2 + name_len) return bad("is shorter than its variable name");
    const std::string name(rest.substr(2, name_len));
    rest.remove_prefix(2 + name_len);
    auto type = variable_types_.find(name);
    if (type == variable_types_.end()) {
      return bad("names variable '" + name + "', which the state schema does not declare");
    }
    SLUICE_ASSIGN_OR_RETURN(ops::ParsedStateValue v, ops::ParseStateValue(e.value));
    std::string entry, map_key, value;
    if (type->second.starts_with("MapState")) {
      entry = "map";
      SLUICE_ASSIGN_OR_RETURN(sluice::Row k, ops::DecodeValueRowExact(rest));
      map_key = ShowRow(k);
      SLUICE_ASSIGN_OR_RETURN(sluice::Row r, ops::DecodeValueRowExact(v.row));
      value = ShowRow(r);
    } else if (type->second.starts_with("ListState")) {
      entry = "list";
      SLUICE_ASSIGN_OR_RETURN(std::vector<sluice::Row> rows, ops::DecodeValueRows(v.row));
      value = "[";
      for (size_t i = 0; i < rows.size(); ++i) value += (i ? ", " : "") + ShowRow(rows[i]);
      value += "]";
    } else {
      entry = "value";
      SLUICE_ASSIGN_OR_RETURN(sluice::Row r, ops::DecodeValueRowExact(v.row));
      value = ShowRow(r);
    }
    PutBytes(row, entry);
    PutBytes(row, name);
    if (entry == "map") {
      PutBytes(row, map_key);
    } else {
      row->push_back(kNull);
    }
    PutBytes(row, value);
    PutBigInt(row,
              v.evict_us == ops::kNeverEvicted ? std::nullopt : std::optional<int64_t>(v.evict_us));
    row->push_back(kNull);  // timerMs
    return Status::OK();
  }

  const state::OperatorMetadata& metadata_;
  const state::StateSchema& schema_;
  std::map<std::string, std::string> variable_types_;  // transformWithStateExec
  std::vector<OutputColumn> columns_;
  size_t left_columns_ = 0;
  size_t right_columns_ = 0;
};

}  // namespace

Result<engine::Batch> DecodeOperatorState(const state::OperatorMetadata& metadata,
                                          const state::StateSchema& schema,
                                          const std::vector<StateEntry>& entries) {
  return Decoder(metadata, schema).Decode(entries);
}

}  // namespace sluice::sql
