// JsonDecoder: DuckDB's yyjson + DuckDB's casts into a DataChunk that is appended to a
// ColumnDataCollection of the standalone database every 2,048 rows (as BatchBuilder).
//
// Each step mirrors the code of DuckDB 1.4.4's JSON extension that the files source's SQL ran
// (extension/json/json_functions/json_transform.cpp: GetValueNumerical, GetValueString,
// GetStringVector + the default cast; json_common.hpp: READ_FLAG, WRITE_FLAG, WriteVal).
#include "engine/json_decoder.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "common/strings.h"
#include "duckdb/common/operator/cast_operators.hpp"
#include "duckdb/common/operator/decimal_cast_operators.hpp"
#include "duckdb/common/operator/string_cast.hpp"
#include "duckdb/common/types/column/column_data_collection.hpp"
#include "duckdb/common/types/data_chunk.hpp"
#include "duckdb/function/cast/default_casts.hpp"
#include "duckdb/storage/buffer_manager.hpp"
#include "engine/duckdb_convert.h"
#include "engine/standalone_db.h"
#include "yyjson.hpp"

namespace sluice::engine {
namespace {

namespace yy = duckdb_yyjson;

// DuckDB's JSONCommon::READ_FLAG and WRITE_FLAG (json_common.hpp).
constexpr yy::yyjson_read_flag kReadFlag = yy::YYJSON_READ_ALLOW_INF_AND_NAN |
                                           yy::YYJSON_READ_ALLOW_TRAILING_COMMAS |
                                           yy::YYJSON_READ_BIGNUM_AS_RAW;
constexpr yy::yyjson_write_flag kWriteFlag = yy::YYJSON_WRITE_ALLOW_INF_AND_NAN;

// Bump allocation for yyjson documents and written values, released all at once when the
// chunk that points into it has been copied into the collection.
class Arena {
 public:
  Arena() {
    alc_.malloc = [](void* ctx, size_t size) { return static_cast<Arena*>(ctx)->Alloc(size); };
    alc_.realloc = [](void* ctx, void* ptr, size_t old_size, size_t size) -> void* {
      void* out = static_cast<Arena*>(ctx)->Alloc(size);
      if (out && ptr) std::memcpy(out, ptr, std::min(old_size, size));
      return out;
    };
    alc_.free = [](void*, void*) {};
    alc_.ctx = this;
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  yy::yyjson_alc* alc() { return &alc_; }

  void* Alloc(size_t size) {
    size = (size + 15) & ~size_t{15};
    if (size > left_) {
      if (size > kBlockBytes) {
        big_.emplace_back(new char[size]);
        return big_.back().get();
      }
      if (used_ < blocks_.size()) {
        cur_ = blocks_[used_].get();
      } else {
        blocks_.emplace_back(new char[kBlockBytes]);
        cur_ = blocks_.back().get();
      }
      ++used_;
      left_ = kBlockBytes;
    }
    void* out = cur_;
    cur_ += size;
    left_ -= size;
    return out;
  }

  // Everything allocated so far is dead; blocks are kept for reuse (big ones freed).
  void Reset() {
    used_ = 0;
    left_ = 0;
    cur_ = nullptr;
    big_.clear();
    if (blocks_.size() > 8) blocks_.resize(8);
  }

 private:
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  yy::yyjson_alc alc_{};
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::vector<std::unique_ptr<char[]>> big_;
  size_t used_ = 0;  // blocks_[0, used_) hold live data
  char* cur_ = nullptr;
  size_t left_ = 0;
};

enum class Kind : uint8_t {
  kBool,
  kTinyInt,
  kSmallInt,
  kInteger,
  kBigInt,
  kFloat,
  kDouble,
  kVarchar,
  kDate,
  kTimestamp,
  kTimestampTz,
  kDecimal16,  // DECIMAL by its physical type (width <= 4, 9, 18, 38)
  kDecimal32,
  kDecimal64,
  kDecimal128,
};

std::optional<Kind> KindOf(const DataType& type) {
  switch (type.id) {
    case TypeId::kBoolean:
      return Kind::kBool;
    case TypeId::kTinyInt:
      return Kind::kTinyInt;
    case TypeId::kSmallInt:
      return Kind::kSmallInt;
    case TypeId::kInteger:
      return Kind::kInteger;
    case TypeId::kBigInt:
      return Kind::kBigInt;
    case TypeId::kFloat:
      return Kind::kFloat;
    case TypeId::kDouble:
      return Kind::kDouble;
    case TypeId::kVarchar:
      return Kind::kVarchar;
    case TypeId::kDate:
      return Kind::kDate;
    case TypeId::kTimestamp:
      return Kind::kTimestamp;
    case TypeId::kTimestampTz:
      return Kind::kTimestampTz;
    case TypeId::kDecimal:
      if (type.precision < 1 || type.precision > 38 || type.scale > type.precision) {
        return std::nullopt;
      }
      return type.precision <= 4    ? Kind::kDecimal16
             : type.precision <= 9  ? Kind::kDecimal32
             : type.precision <= 18 ? Kind::kDecimal64
                                    : Kind::kDecimal128;
    default:
      return std::nullopt;
  }
}

bool IsIntegerKind(Kind k) {
  return k == Kind::kTinyInt || k == Kind::kSmallInt || k == Kind::kInteger || k == Kind::kBigInt;
}

duckdb::string_t ValString(yy::yyjson_val* val) {
  return duckdb::string_t(yy::unsafe_yyjson_get_str(val),
                          static_cast<uint32_t>(yy::unsafe_yyjson_get_len(val)));
}

// json_transform.cpp GetValueNumerical with OP = TryCast, strict = false.
template <typename T>
bool GetValueNumerical(yy::yyjson_val* val, T& out) {
  using duckdb::TryCast;
  switch (yy::unsafe_yyjson_get_tag(val)) {
    case YYJSON_TYPE_STR | YYJSON_SUBTYPE_NOESC:
    case YYJSON_TYPE_STR | YYJSON_SUBTYPE_NONE:
    case YYJSON_TYPE_RAW | YYJSON_SUBTYPE_NONE:
      return TryCast::Operation<duckdb::string_t, T>(ValString(val), out, false);
    case YYJSON_TYPE_BOOL | YYJSON_SUBTYPE_TRUE:
    case YYJSON_TYPE_BOOL | YYJSON_SUBTYPE_FALSE:
      return TryCast::Operation<bool, T>(yy::unsafe_yyjson_get_bool(val), out, false);
    case YYJSON_TYPE_NUM | YYJSON_SUBTYPE_UINT:
      return TryCast::Operation<uint64_t, T>(yy::unsafe_yyjson_get_uint(val), out, false);
    case YYJSON_TYPE_NUM | YYJSON_SUBTYPE_SINT:
      return TryCast::Operation<int64_t, T>(yy::unsafe_yyjson_get_sint(val), out, false);
    case YYJSON_TYPE_NUM | YYJSON_SUBTYPE_REAL:
      return TryCast::Operation<double, T>(yy::unsafe_yyjson_get_real(val), out, false);
    default:  // arrays, objects
      return false;
  }
}

// json_transform.cpp GetValueDecimal with OP = TryCastToDecimal (non-strict parameters).
template <typename T>
bool GetValueDecimal(yy::yyjson_val* val, T& out, uint8_t width, uint8_t scale,
                     std::string* error) {
  using duckdb::TryCastToDecimal;
  duckdb::CastParameters params(false, error);
  switch (yy::unsafe_yyjson_get_tag(val)) {
    case YYJSON_TYPE_STR | YYJSON_SUBTYPE_NOESC:
    case YYJSON_TYPE_STR | YYJSON_SUBTYPE_NONE:
    case YYJSON_TYPE_RAW | YYJSON_SUBTYPE_NONE:
      return TryCastToDecimal::Operation<duckdb::string_t, T>(ValString(val), out, params, width,
                                                              scale);
    case YYJSON_TYPE_BOOL | YYJSON_SUBTYPE_TRUE:
    case YYJSON_TYPE_BOOL | YYJSON_SUBTYPE_FALSE:
      return TryCastToDecimal::Operation<bool, T>(yy::unsafe_yyjson_get_bool(val), out, params,
                                                  width, scale);
    case YYJSON_TYPE_NUM | YYJSON_SUBTYPE_UINT:
      return TryCastToDecimal::Operation<uint64_t, T>(yy::unsafe_yyjson_get_uint(val), out, params,
                                                      width, scale);
    case YYJSON_TYPE_NUM | YYJSON_SUBTYPE_SINT:
      return TryCastToDecimal::Operation<int64_t, T>(yy::unsafe_yyjson_get_sint(val), out, params,
                                                     width, scale);
    case YYJSON_TYPE_NUM | YYJSON_SUBTYPE_REAL:
      return TryCastToDecimal::Operation<double, T>(yy::unsafe_yyjson_get_real(val), out, params,
                                                    width, scale);
    default:  // arrays, objects
      return false;
  }
}

// GetStringVector (strings only) + the default VARCHAR -> T cast (TryCastErrorMessage).
template <typename T>
bool GetValueFromString(yy::yyjson_val* val, T& out, std::string* error) {
  if (!yy::unsafe_yyjson_is_str(val)) return false;
  duckdb::CastParameters params(false, error);
  return duckdb::TryCastErrorMessage::Operation<duckdb::string_t, T>(ValString(val), out, params);
}

bool ValidUtf8(std::string_view s) { return internal::IsValidUtf8(s.data(), s.size()); }

}  // namespace

struct JsonDecoder::State {
  Schema columns;
  std::vector<Kind> kinds;
  JsonDecoderOptions options;
  Schema schema;                                       // columns + extras
  std::unordered_map<std::string_view, size_t> index;  // name -> column (views into `columns`)

  duckdb::shared_ptr<duckdb::DatabaseInstance> db;
  duckdb::vector<duckdb::LogicalType> types;
  std::vector<std::string> names;
  std::unique_ptr<duckdb::ColumnDataCollection> collection;
  duckdb::ColumnDataAppendState append;
  duckdb::DataChunk chunk;
  duckdb::idx_t row = 0;  // row of the chunk being built
  bool in_row = false;    // Decode done, EndRow not yet
  int64_t rows = 0;       // ended rows since the last Finish
  Arena arena;
  std::vector<yy::yyjson_val*> vals;  // per column: the first member with its key, or null
  std::string cast_error;             // scratch for TryCastErrorMessage

  void Init() {
    db = internal::StandaloneDatabase();
    chunk.Initialize(duckdb::Allocator::Get(*db), types);
    NewCollection();
  }

  void NewCollection() {
    collection = std::make_unique<duckdb::ColumnDataCollection>(
        duckdb::BufferManager::GetBufferManager(*db), types);
    append = duckdb::ColumnDataAppendState();
    collection->InitializeAppend(append);
  }

  void Flush() {
    if (row == 0) return;
    chunk.SetCardinality(row);
    collection->Append(append, chunk);
    chunk.Reset();
    row = 0;
    arena.Reset();  // the chunk's strings pointed into it; the collection has copies now
  }

  // Column `c` of the current row, from the first member with its key (or null).
  // Returns false when the value is bad (not null, did not convert); the caller sets NULL.
  bool Convert(size_t c, yy::yyjson_val* val) {
    duckdb::Vector& v = chunk.data[c];
    const Kind kind = kinds[c];
    if (IsIntegerKind(kind) && options.reject_fractional_integers) {
      const auto tag = yy::unsafe_yyjson_get_tag(val);
      if (tag == (YYJSON_TYPE_NUM | YYJSON_SUBTYPE_REAL) ||
          tag == (YYJSON_TYPE_RAW | YYJSON_SUBTYPE_NONE)) {
        return false;  // json_type 'DOUBLE'
      }
    }
    switch (kind) {
      case Kind::kBool:
        return GetValueNumerical<bool>(val, duckdb::FlatVector::GetData<bool>(v)[row]);
      case Kind::kTinyInt:
        return GetValueNumerical<int8_t>(val, duckdb::FlatVector::GetData<int8_t>(v)[row]);
      case Kind::kSmallInt:
        return GetValueNumerical<int16_t>(val, duckdb::FlatVector::GetData<int16_t>(v)[row]);
      case Kind::kInteger:
        return GetValueNumerical<int32_t>(val, duckdb::FlatVector::GetData<int32_t>(v)[row]);
      case Kind::kBigInt:
        return GetValueNumerical<int64_t>(val, duckdb::FlatVector::GetData<int64_t>(v)[row]);
      case Kind::kFloat:
        return GetValueNumerical<float>(val, duckdb::FlatVector::GetData<float>(v)[row]);
      case Kind::kDouble:
        return GetValueNumerical<double>(val, duckdb::FlatVector::GetData<double>(v)[row]);
      case Kind::kVarchar:
        return GetVarchar(val, v);
      case Kind::kDate:
        return GetValueFromString<duckdb::date_t>(
            val, duckdb::FlatVector::GetData<duckdb::date_t>(v)[row], &cast_error);
      case Kind::kTimestamp:
        return GetValueFromString<duckdb::timestamp_t>(
            val, duckdb::FlatVector::GetData<duckdb::timestamp_t>(v)[row], &cast_error);
      case Kind::kTimestampTz:
        return GetValueFromString<duckdb::timestamp_tz_t>(
            val, duckdb::FlatVector::GetData<duckdb::timestamp_tz_t>(v)[row], &cast_error);
      case Kind::kDecimal16:
        return GetValueDecimal<int16_t>(val, duckdb::FlatVector::GetData<int16_t>(v)[row],
                                        columns[c].type.precision, columns[c].type.scale,
                                        &cast_error);
      case Kind::kDecimal32:
        return GetValueDecimal<int32_t>(val, duckdb::FlatVector::GetData<int32_t>(v)[row],
                                        columns[c].type.precision, columns[c].type.scale,
                                        &cast_error);
      case Kind::kDecimal64:
        return GetValueDecimal<int64_t>(val, duckdb::FlatVector::GetData<int64_t>(v)[row],
                                        columns[c].type.precision, columns[c].type.scale,
                                        &cast_error);
      case Kind::kDecimal128:
        return GetValueDecimal<duckdb::hugeint_t>(
            val, duckdb::FlatVector::GetData<duckdb::hugeint_t>(v)[row], columns[c].type.precision,
            columns[c].type.scale, &cast_error);
    }
    return false;
  }

  // json_transform.cpp GetValueString: always succeeds. Strings point into the arena (the
  // yyjson document) until Flush copies the chunk.
  bool GetVarchar(yy::yyjson_val* val, duckdb::Vector& v) {
    auto& out = duckdb::FlatVector::GetData<duckdb::string_t>(v)[row];
    switch (yy::unsafe_yyjson_get_tag(val)) {
      case YYJSON_TYPE_STR | YYJSON_SUBTYPE_NOESC:
      case YYJSON_TYPE_STR | YYJSON_SUBTYPE_NONE:
      case YYJSON_TYPE_RAW | YYJSON_SUBTYPE_NONE:
        out = ValString(val);
        return true;
      case YYJSON_TYPE_ARR | YYJSON_SUBTYPE_NONE:
      case YYJSON_TYPE_OBJ | YYJSON_SUBTYPE_NONE: {
        size_t len = 0;
        char* text = yy::yyjson_val_write_opts(val, kWriteFlag, arena.alc(), &len, nullptr);
        out = duckdb::string_t(text, static_cast<uint32_t>(len));
        return true;
      }
      case YYJSON_TYPE_BOOL | YYJSON_SUBTYPE_TRUE:
      case YYJSON_TYPE_BOOL | YYJSON_SUBTYPE_FALSE:
        out = duckdb::StringCast::Operation<bool>(yy::unsafe_yyjson_get_bool(val), v);
        return true;
      case YYJSON_TYPE_NUM | YYJSON_SUBTYPE_UINT:
        out = duckdb::StringCast::Operation<uint64_t>(yy::unsafe_yyjson_get_uint(val), v);
        return true;
      case YYJSON_TYPE_NUM | YYJSON_SUBTYPE_SINT:
        out = duckdb::StringCast::Operation<int64_t>(yy::unsafe_yyjson_get_sint(val), v);
        return true;
      case YYJSON_TYPE_NUM | YYJSON_SUBTYPE_REAL:
        out = duckdb::StringCast::Operation<double>(yy::unsafe_yyjson_get_real(val), v);
        return true;
      default:
        return false;
    }
  }

  // JSONCommon::WriteVal: the value as DuckDB's json_extract writes it.
  std::string Write(yy::yyjson_val* val) {
    size_t len = 0;
    char* text = yy::yyjson_val_write_opts(val, kWriteFlag, arena.alc(), &len, nullptr);
    return text ? std::string(text, len) : std::string();
  }

  void SetNull(size_t c) { duckdb::FlatVector::SetNull(chunk.data[c], row, true); }

  void DecodeObject(yy::yyjson_val* root, JsonRow* out) {
    using namespace duckdb_yyjson;  // NOLINT: yyjson_obj_foreach names unqualified functions
    std::fill(vals.begin(), vals.end(), nullptr);
    const size_t ncols = columns.size();
    size_t hint = 0;  // keys usually come in column order
    size_t idx = 0, max = 0;
    yyjson_val *key = nullptr, *val = nullptr;
    yyjson_obj_foreach(root, idx, max, key, val) {
      const std::string_view k(unsafe_yyjson_get_str(key), unsafe_yyjson_get_len(key));
      size_t c = ncols;
      if (hint < ncols && columns[hint].name == k) {
        c = hint;
      } else {
        auto it = index.find(k);
        if (it != index.end()) c = it->second;
      }
      if (c < ncols) {
        if (!vals[c]) vals[c] = val;  // the first member wins (json_transform, json_extract)
        hint = c + 1;
        continue;
      }
      if (options.unknown_keys == JsonUnknownKeys::kIgnore) continue;
      JsonUnknownKey& u = out->unknown_keys.emplace_back();
      u.key.assign(k);
      u.key_json = QuoteKey(key);
      if (options.unknown_keys == JsonUnknownKeys::kKeysAndValues) {
        u.value_json = Write(yyjson_obj_getn(root, k.data(), k.size()));
      }
    }
    for (size_t c = 0; c < ncols; ++c) {
      yyjson_val* v = vals[c];
      if (!v || unsafe_yyjson_is_null(v)) {
        SetNull(c);
        continue;
      }
      if (!Convert(c, v)) {
        SetNull(c);
        out->bad_values.push_back(JsonBadValue{c, Write(v)});
      }
    }
  }

  // to_json(key): the key written as a JSON string value (escaped by the writer).
  std::string QuoteKey(yy::yyjson_val* key) {
    yy::yyjson_val s = *key;
    s.tag = (s.tag & ~uint64_t{0xFF}) | (YYJSON_TYPE_STR | YYJSON_SUBTYPE_NONE);
    return Write(&s);
  }
};

JsonDecoder::JsonDecoder(std::unique_ptr<State> state) : state_(std::move(state)) {}
JsonDecoder::~JsonDecoder() = default;

bool JsonDecoder::Supports(const Schema& columns) {
  if (columns.empty()) return false;
  std::vector<std::string> seen;
  for (const Field& f : columns) {
    if (f.name.empty() || !KindOf(f.type)) return false;
    seen.push_back(AsciiLower(f.name));
  }
  std::sort(seen.begin(), seen.end());
  return std::adjacent_find(seen.begin(), seen.end()) == seen.end();
}

Result<std::unique_ptr<JsonDecoder>> JsonDecoder::Make(Schema columns, JsonDecoderOptions options) {
  if (!Supports(columns)) {
    return Status::InvalidArgument(
        "JsonDecoder: the columns need distinct non-empty names and types among BOOLEAN, "
        "TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, DOUBLE, DECIMAL, VARCHAR, DATE, TIMESTAMP, "
        "TIMESTAMPTZ");
  }
  auto s = std::make_unique<State>();
  s->columns = std::move(columns);
  s->options = std::move(options);
  s->schema = s->columns;
  for (const Field& f : s->columns) s->kinds.push_back(*KindOf(f.type));
  for (const std::string& name : s->options.extra_columns) {
    s->schema.push_back(Field{name, DataType{TypeId::kVarchar}, true});
  }
  for (size_t c = 0; c < s->columns.size(); ++c) s->index.emplace(s->columns[c].name, c);
  s->vals.assign(s->columns.size(), nullptr);
  SLUICE_RETURN_NOT_OK(internal::CatchAll([&]() -> Status {
    for (const Field& f : s->schema) {
      SLUICE_ASSIGN_OR_RETURN(auto t, internal::ToLogicalType(f.type));
      s->types.push_back(t);
      s->names.push_back(f.name);
    }
    s->Init();
    return Status::OK();
  }));
  return std::unique_ptr<JsonDecoder>(new JsonDecoder(std::move(s)));
}

Status JsonDecoder::Decode(std::string_view text, JsonRow* row) {
  State& s = *state_;
  if (s.in_row) return Status::InvalidArgument("JsonDecoder: Decode with a row in progress");
  if (!ValidUtf8(text)) return Status::InvalidArgument("JsonDecoder: text is not valid UTF-8");
  row->is_object = false;
  row->bad_values.clear();
  row->unknown_keys.clear();
  Status st = internal::CatchAll([&]() -> Status {
    // yyjson does not write into the text without YYJSON_READ_INSITU.
    yy::yyjson_doc* doc = yy::yyjson_read_opts(const_cast<char*>(text.data()), text.size(),
                                               kReadFlag, s.arena.alc(), nullptr);
    yy::yyjson_val* root = doc ? yy::yyjson_doc_get_root(doc) : nullptr;
    if (root && yy::yyjson_is_obj(root)) {
      row->is_object = true;
      s.DecodeObject(root, row);
    } else {
      for (size_t c = 0; c < s.columns.size(); ++c) s.SetNull(c);
    }
    for (size_t c = s.columns.size(); c < s.types.size(); ++c) s.SetNull(c);
    return Status::OK();
  });
  if (!st.ok()) {
    // Leave the row clean: values set so far are overwritten by the next row; NULLs are not.
    for (size_t c = 0; c < s.types.size(); ++c) {
      duckdb::FlatVector::Validity(s.chunk.data[c]).SetValid(s.row);
    }
    return st;
  }
  s.in_row = true;
  return Status::OK();
}

Status JsonDecoder::SetExtra(size_t i, std::optional<std::string_view> value) {
  State& s = *state_;
  if (!s.in_row) return Status::InvalidArgument("JsonDecoder: SetExtra with no row in progress");
  if (i >= s.options.extra_columns.size()) {
    return Status::InvalidArgument("JsonDecoder: SetExtra(" + std::to_string(i) + ") with " +
                                   std::to_string(s.options.extra_columns.size()) +
                                   " extra columns");
  }
  const size_t c = s.columns.size() + i;
  duckdb::Vector& v = s.chunk.data[c];
  if (!value) {
    duckdb::FlatVector::SetNull(v, s.row, true);
    return Status::OK();
  }
  if (!ValidUtf8(*value)) {
    return Status::InvalidArgument("JsonDecoder: extra column " + s.options.extra_columns[i] +
                                   ": value is not valid UTF-8");
  }
  return internal::CatchAll([&]() -> Status {
    duckdb::FlatVector::Validity(v).SetValid(s.row);
    duckdb::FlatVector::GetData<duckdb::string_t>(v)[s.row] =
        duckdb::StringVector::AddString(v, value->data(), value->size());
    return Status::OK();
  });
}

Status JsonDecoder::EndRow() {
  State& s = *state_;
  if (!s.in_row) return Status::InvalidArgument("JsonDecoder: EndRow with no row in progress");
  s.in_row = false;
  ++s.rows;
  if (++s.row == STANDARD_VECTOR_SIZE) {
    return internal::CatchAll([&]() -> Status {
      s.Flush();
      return Status::OK();
    });
  }
  return Status::OK();
}

int64_t JsonDecoder::num_rows() const { return state_->rows; }
const Schema& JsonDecoder::schema() const { return state_->schema; }

Result<Batch> JsonDecoder::Finish() {
  State& s = *state_;
  if (s.in_row) return Status::InvalidArgument("JsonDecoder: Finish with a row in progress");
  return internal::CatchAll([&]() -> Result<Batch> {
    s.Flush();
    s.rows = 0;
    Batch out = internal::MakeBatch(s.db, std::move(s.collection), s.names);
    s.NewCollection();
    return out;
  });
}

Result<Batch> JsonDecoder::FinishAll(std::span<JsonDecoder* const> decoders) {
  if (decoders.empty()) return Status::InvalidArgument("JsonDecoder::FinishAll: no decoders");
  for (JsonDecoder* d : decoders) {
    if (d->state_->in_row) {
      return Status::InvalidArgument("JsonDecoder::FinishAll: a decoder has a row in progress");
    }
    if (d->state_->types != decoders[0]->state_->types ||
        d->state_->names != decoders[0]->state_->names) {
      return Status::InvalidArgument("JsonDecoder::FinishAll: the decoders' schemas differ");
    }
  }
  return internal::CatchAll([&]() -> Result<Batch> {
    State& first = *decoders[0]->state_;
    first.Flush();
    for (size_t i = 1; i < decoders.size(); ++i) {
      State& s = *decoders[i]->state_;
      s.Flush();
      first.collection->Combine(*s.collection);  // moves the segments
      s.rows = 0;
      s.NewCollection();
    }
    first.rows = 0;
    Batch out = internal::MakeBatch(first.db, std::move(first.collection), first.names);
    first.NewCollection();
    return out;
  });
}

Result<std::string> JsonDecoder::QuoteJsonString(std::string_view value) {
  if (!ValidUtf8(value)) {
    return Status::InvalidArgument("QuoteJsonString: value is not valid UTF-8");
  }
  yy::yyjson_val s;
  s.tag = (static_cast<uint64_t>(value.size()) << YYJSON_TAG_BIT) |
          (YYJSON_TYPE_STR | YYJSON_SUBTYPE_NONE);
  s.uni.str = value.data();
  Arena arena;
  size_t len = 0;
  char* text = yy::yyjson_val_write_opts(&s, kWriteFlag, arena.alc(), &len, nullptr);
  if (!text) return Status::InvalidArgument("QuoteJsonString: the JSON writer failed");
  return std::string(text, len);
}

}  // namespace sluice::engine
