// Row codec, format version 1 (docs/formats/row-codec.md). Encoding reads DuckDB vectors through
// RecursiveUnifiedVectorFormat; decoding writes straight into DataChunk vectors. Both walk a
// small per-column plan (Node) built once from the column's LogicalType.
#include "engine/row_codec.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <utility>

#include "duckdb/common/types/column/column_data_collection.hpp"
#include "duckdb/common/types/data_chunk.hpp"
#include "duckdb/storage/buffer_manager.hpp"
#include "engine/duckdb_convert.h"
#include "engine/standalone_db.h"

namespace sluice::engine {
namespace {

constexpr uint8_t kFormatVersion = 1;
static_assert(kRowHeaderBytes == sizeof(kFormatVersion), "the header is the version byte");
constexpr uint8_t kNullTag = 0;
constexpr uint8_t kValueTag = 1;

// How a value of a type is encoded (the payload after the tag).
enum class Kind : uint8_t {
  kNull,     // SQLNULL: always the NULL tag
  kBool,     // 1 byte, 0 or 1
  kSigned1,  // big-endian two's complement with the sign bit flipped
  kSigned2,
  kSigned4,
  kSigned8,
  kSigned16,   // hugeint_t: upper (signed, flipped) then lower, both big-endian
  kUnsigned1,  // big-endian
  kUnsigned2,
  kUnsigned4,
  kUnsigned8,
  kUnsigned16,  // uhugeint_t: upper then lower
  kFloat,       // order-preserving IEEE bits, canonical NaN, -0 as +0
  kDouble,
  kInterval,  // months (signed4), days (signed4), micros (signed8)
  kString,    // varint length + bytes (VARCHAR must be UTF-8)
  kEnum,      // as kString: the enum value's text
  kStruct,    // children in order
  kList,      // varint count + elements (MAP: list of key/value structs)
  kArray,     // array_size elements, no count
};

struct Node {
  Kind kind = Kind::kNull;
  duckdb::LogicalType type;
  bool utf8 = false;        // kString: VARCHAR (validated on decode)
  uint32_t array_size = 0;  // kArray
  std::vector<Node> children;
};

Kind SignedKind(duckdb::PhysicalType p) {
  switch (p) {
    case duckdb::PhysicalType::INT16:
      return Kind::kSigned2;
    case duckdb::PhysicalType::INT32:
      return Kind::kSigned4;
    case duckdb::PhysicalType::INT64:
      return Kind::kSigned8;
    default:
      return Kind::kSigned16;
  }
}

Result<Node> BuildNode(const duckdb::LogicalType& type) {
  using Id = duckdb::LogicalTypeId;
  Node node;
  node.type = type;
  switch (type.id()) {
    case Id::SQLNULL:
      node.kind = Kind::kNull;
      break;
    case Id::BOOLEAN:
      node.kind = Kind::kBool;
      break;
    case Id::TINYINT:
      node.kind = Kind::kSigned1;
      break;
    case Id::SMALLINT:
      node.kind = Kind::kSigned2;
      break;
    case Id::INTEGER:
    case Id::DATE:
      node.kind = Kind::kSigned4;
      break;
    case Id::BIGINT:
    case Id::TIME:
    case Id::TIME_NS:
    case Id::TIMESTAMP_SEC:
    case Id::TIMESTAMP_MS:
    case Id::TIMESTAMP:
    case Id::TIMESTAMP_NS:
    case Id::TIMESTAMP_TZ:
      node.kind = Kind::kSigned8;
      break;
    case Id::HUGEINT:
    case Id::UUID:
      node.kind = Kind::kSigned16;
      break;
    case Id::DECIMAL:
      node.kind = SignedKind(type.InternalType());
      break;
    case Id::UTINYINT:
      node.kind = Kind::kUnsigned1;
      break;
    case Id::USMALLINT:
      node.kind = Kind::kUnsigned2;
      break;
    case Id::UINTEGER:
      node.kind = Kind::kUnsigned4;
      break;
    case Id::UBIGINT:
    case Id::TIME_TZ:
      node.kind = Kind::kUnsigned8;
      break;
    case Id::UHUGEINT:
      node.kind = Kind::kUnsigned16;
      break;
    case Id::FLOAT:
      node.kind = Kind::kFloat;
      break;
    case Id::DOUBLE:
      node.kind = Kind::kDouble;
      break;
    case Id::INTERVAL:
      node.kind = Kind::kInterval;
      break;
    case Id::VARCHAR:
    case Id::CHAR:
      node.kind = Kind::kString;
      node.utf8 = true;
      break;
    case Id::BLOB:
    case Id::BIT:
    case Id::BIGNUM:
      node.kind = Kind::kString;
      break;
    case Id::ENUM:
      node.kind = Kind::kEnum;
      break;
    case Id::STRUCT: {
      node.kind = Kind::kStruct;
      for (const auto& child : duckdb::StructType::GetChildTypes(type)) {
        SLUICE_ASSIGN_OR_RETURN(Node c, BuildNode(child.second));
        node.children.push_back(std::move(c));
      }
      break;
    }
    case Id::LIST:
    case Id::MAP: {
      node.kind = Kind::kList;
      SLUICE_ASSIGN_OR_RETURN(Node c, BuildNode(duckdb::ListType::GetChildType(type)));
      node.children.push_back(std::move(c));
      break;
    }
    case Id::ARRAY: {
      node.kind = Kind::kArray;
      node.array_size = static_cast<uint32_t>(duckdb::ArrayType::GetSize(type));
      SLUICE_ASSIGN_OR_RETURN(Node c, BuildNode(duckdb::ArrayType::GetChildType(type)));
      node.children.push_back(std::move(c));
      break;
    }
    default:
      return Status::NotSupported("row codec: type " + type.ToString() + " is not supported");
  }
  return node;
}

// ---- encoding --------------------------------------------------------------------------------

// A growable byte buffer (std::string would zero-fill on resize).
class Buffer {
 public:
  void Clear() { size_ = 0; }
  size_t size() const { return size_; }
  const char* data() const { return data_.get(); }

  char* Grow(size_t n) {
    if (size_ + n > capacity_) {
      size_t cap = std::max<size_t>(capacity_ * 2, std::max<size_t>(size_ + n, 64));
      std::unique_ptr<char[]> d(new char[cap]);
      if (size_ > 0) std::memcpy(d.get(), data_.get(), size_);
      data_ = std::move(d);
      capacity_ = cap;
    }
    char* p = data_.get() + size_;
    size_ += n;
    return p;
  }
  void PutByte(uint8_t b) { *Grow(1) = static_cast<char>(b); }
  void PutBytes(const char* p, size_t n) {
    if (n > 0) std::memcpy(Grow(n), p, n);
  }
  template <typename U>  // an unsigned integer type
  void PutBigEndian(U v) {
    char* p = Grow(sizeof(U));
    for (size_t i = 0; i < sizeof(U); ++i) {
      p[i] = static_cast<char>(static_cast<uint8_t>(v >> (8 * (sizeof(U) - 1 - i))));
    }
  }
  void PutVarint(uint64_t v) {
    while (v >= 0x80) {
      PutByte(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    PutByte(static_cast<uint8_t>(v));
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

template <typename S>
std::make_unsigned_t<S> FlipSign(S v) {
  using U = std::make_unsigned_t<S>;
  return static_cast<U>(v) ^ (U{1} << (8 * sizeof(U) - 1));
}

uint32_t FloatKey(float f) {
  if (std::isnan(f)) return 0x7FC00000u ^ 0x80000000u;  // canonical quiet NaN, positive
  if (f == 0.0f) f = 0.0f;                              // -0 -> +0
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return (bits & 0x80000000u) ? ~bits : (bits ^ 0x80000000u);
}

uint64_t DoubleKey(double d) {
  constexpr uint64_t kSign = 0x8000000000000000ull;
  if (std::isnan(d)) return 0x7FF8000000000000ull ^ kSign;
  if (d == 0.0) d = 0.0;
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return (bits & kSign) ? ~bits : (bits ^ kSign);
}

float FloatFromKey(uint32_t key) {
  uint32_t bits = (key & 0x80000000u) ? (key ^ 0x80000000u) : ~key;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

double DoubleFromKey(uint64_t key) {
  constexpr uint64_t kSign = 0x8000000000000000ull;
  uint64_t bits = (key & kSign) ? (key ^ kSign) : ~key;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

// Encodes the value at index `i` of `f` (before f's selection vector).
void EncodeValue(const Node& node, const duckdb::RecursiveUnifiedVectorFormat& f, duckdb::idx_t i,
                 Buffer* out) {
  const duckdb::idx_t idx = f.unified.sel->get_index(i);
  if (node.kind == Kind::kNull || !f.unified.validity.RowIsValid(idx)) {
    out->PutByte(kNullTag);
    return;
  }
  out->PutByte(kValueTag);
  const auto* data = f.unified.data;
  switch (node.kind) {
    case Kind::kNull:
      break;
    case Kind::kBool:
      out->PutByte(reinterpret_cast<const bool*>(data)[idx] ? 1 : 0);
      break;
    case Kind::kSigned1:
      out->PutBigEndian(FlipSign(reinterpret_cast<const int8_t*>(data)[idx]));
      break;
    case Kind::kSigned2:
      out->PutBigEndian(FlipSign(reinterpret_cast<const int16_t*>(data)[idx]));
      break;
    case Kind::kSigned4:
      out->PutBigEndian(FlipSign(reinterpret_cast<const int32_t*>(data)[idx]));
      break;
    case Kind::kSigned8:
      out->PutBigEndian(FlipSign(reinterpret_cast<const int64_t*>(data)[idx]));
      break;
    case Kind::kSigned16: {
      const auto& v = reinterpret_cast<const duckdb::hugeint_t*>(data)[idx];
      out->PutBigEndian(FlipSign(v.upper));
      out->PutBigEndian(v.lower);
      break;
    }
    case Kind::kUnsigned1:
      out->PutBigEndian(reinterpret_cast<const uint8_t*>(data)[idx]);
      break;
    case Kind::kUnsigned2:
      out->PutBigEndian(reinterpret_cast<const uint16_t*>(data)[idx]);
      break;
    case Kind::kUnsigned4:
      out->PutBigEndian(reinterpret_cast<const uint32_t*>(data)[idx]);
      break;
    case Kind::kUnsigned8:
      out->PutBigEndian(reinterpret_cast<const uint64_t*>(data)[idx]);
      break;
    case Kind::kUnsigned16: {
      const auto& v = reinterpret_cast<const duckdb::uhugeint_t*>(data)[idx];
      out->PutBigEndian(v.upper);
      out->PutBigEndian(v.lower);
      break;
    }
    case Kind::kFloat:
      out->PutBigEndian(FloatKey(reinterpret_cast<const float*>(data)[idx]));
      break;
    case Kind::kDouble:
      out->PutBigEndian(DoubleKey(reinterpret_cast<const double*>(data)[idx]));
      break;
    case Kind::kInterval: {
      const auto& v = reinterpret_cast<const duckdb::interval_t*>(data)[idx];
      out->PutBigEndian(FlipSign(v.months));
      out->PutBigEndian(FlipSign(v.days));
      out->PutBigEndian(FlipSign(v.micros));
      break;
    }
    case Kind::kString: {
      const auto& s = reinterpret_cast<const duckdb::string_t*>(data)[idx];
      out->PutVarint(s.GetSize());
      out->PutBytes(s.GetData(), s.GetSize());
      break;
    }
    case Kind::kEnum: {
      uint64_t pos = 0;
      switch (node.type.InternalType()) {
        case duckdb::PhysicalType::UINT8:
          pos = reinterpret_cast<const uint8_t*>(data)[idx];
          break;
        case duckdb::PhysicalType::UINT16:
          pos = reinterpret_cast<const uint16_t*>(data)[idx];
          break;
        default:
          pos = reinterpret_cast<const uint32_t*>(data)[idx];
          break;
      }
      const auto& dict = duckdb::EnumType::GetValuesInsertOrder(node.type);
      const auto* s = duckdb::FlatVector::GetData<duckdb::string_t>(dict) + pos;
      out->PutVarint(s->GetSize());
      out->PutBytes(s->GetData(), s->GetSize());
      break;
    }
    case Kind::kStruct:
      // Struct children are indexed like the struct's resolved index (see
      // Vector::RecursiveToUnifiedFormat).
      for (size_t c = 0; c < node.children.size(); ++c) {
        EncodeValue(node.children[c], f.children[c], idx, out);
      }
      break;
    case Kind::kList: {
      const auto& entry = reinterpret_cast<const duckdb::list_entry_t*>(data)[idx];
      out->PutVarint(entry.length);
      for (duckdb::idx_t k = 0; k < entry.length; ++k) {
        EncodeValue(node.children[0], f.children[0], entry.offset + k, out);
      }
      break;
    }
    case Kind::kArray:
      for (duckdb::idx_t k = 0; k < node.array_size; ++k) {
        EncodeValue(node.children[0], f.children[0], idx * node.array_size + k, out);
      }
      break;
  }
}

// ---- decoding --------------------------------------------------------------------------------

// Reads one encoded row; the first failure sets `error` and every later read fails.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  bool ok() const { return error_ == nullptr; }
  const char* error() const { return error_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  bool Fail(const char* error) {
    if (error_ == nullptr) error_ = error;
    return false;
  }

  bool Byte(uint8_t* b) {
    if (p_ == end_) return Fail("truncated");
    *b = static_cast<uint8_t>(*p_++);
    return true;
  }
  template <typename U>
  bool BigEndian(U* v) {
    if (remaining() < sizeof(U)) return Fail("truncated");
    U r = 0;
    for (size_t i = 0; i < sizeof(U); ++i)
      r = static_cast<U>((r << 8) | static_cast<uint8_t>(p_[i]));
    p_ += sizeof(U);
    *v = r;
    return true;
  }
  template <typename S>
  bool Signed(S* v) {
    std::make_unsigned_t<S> u;
    if (!BigEndian(&u)) return false;
    *v = static_cast<S>(FlipSign(static_cast<S>(u)));
    return true;
  }
  bool Varint(uint64_t* v) {
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!Byte(&b)) return false;
      if (shift == 63 && b > 1) return Fail("varint overflows 64 bits");
      r |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift > 0) return Fail("non-minimal varint");
        *v = r;
        return true;
      }
    }
    return Fail("varint overflows 64 bits");
  }
  bool Bytes(size_t n, const char** data) {
    if (remaining() < n) return Fail("truncated");
    *data = p_;
    p_ += n;
    return true;
  }

 private:
  const char* p_;
  const char* end_;
  const char* error_ = nullptr;
};

// The flat vector's data as T (by storage layout: TIME_TZ's INT64 storage is read as uint64_t).
template <typename T>
T* Data(duckdb::Vector& v) {
  return reinterpret_cast<T*>(duckdb::FlatVector::GetData(v));
}

// Decodes one value into row `idx` of the flat vector `v`.
bool DecodeValue(const Node& node, Reader* r, duckdb::Vector& v, duckdb::idx_t idx) {
  uint8_t tag;
  if (!r->Byte(&tag)) return false;
  if (tag == kNullTag) {
    duckdb::FlatVector::SetNull(v, idx, true);
    if (node.kind == Kind::kList) {
      Data<duckdb::list_entry_t>(v)[idx] = {duckdb::ListVector::GetListSize(v), 0};
    } else if (node.kind == Kind::kArray) {
      auto& child = duckdb::ArrayVector::GetEntry(v);
      for (uint32_t k = 0; k < node.array_size; ++k) {
        duckdb::FlatVector::SetNull(child, idx * node.array_size + k, true);
      }
    }
    return true;
  }
  if (tag != kValueTag) return r->Fail("wrong tag");
  if (auto& validity = duckdb::FlatVector::Validity(v); !validity.AllValid()) {
    validity.SetValid(idx);  // the chunk is reused: clear a NULL left by an earlier row
  }
  if (node.kind == Kind::kNull) return r->Fail("wrong tag (a SQLNULL column holds a value)");
  switch (node.kind) {
    case Kind::kNull:
      return false;
    case Kind::kBool: {
      uint8_t b;
      if (!r->Byte(&b)) return false;
      if (b > 1) return r->Fail("boolean byte is neither 0 nor 1");
      Data<bool>(v)[idx] = b == 1;
      return true;
    }
    case Kind::kSigned1:
      return r->Signed(&Data<int8_t>(v)[idx]);
    case Kind::kSigned2:
      return r->Signed(&Data<int16_t>(v)[idx]);
    case Kind::kSigned4:
      return r->Signed(&Data<int32_t>(v)[idx]);
    case Kind::kSigned8:
      return r->Signed(&Data<int64_t>(v)[idx]);
    case Kind::kSigned16: {
      auto& h = Data<duckdb::hugeint_t>(v)[idx];
      return r->Signed(&h.upper) && r->BigEndian(&h.lower);
    }
    case Kind::kUnsigned1:
      return r->BigEndian(&Data<uint8_t>(v)[idx]);
    case Kind::kUnsigned2:
      return r->BigEndian(&Data<uint16_t>(v)[idx]);
    case Kind::kUnsigned4:
      return r->BigEndian(&Data<uint32_t>(v)[idx]);
    case Kind::kUnsigned8:
      return r->BigEndian(&Data<uint64_t>(v)[idx]);
    case Kind::kUnsigned16: {
      auto& h = Data<duckdb::uhugeint_t>(v)[idx];
      return r->BigEndian(&h.upper) && r->BigEndian(&h.lower);
    }
    case Kind::kFloat: {
      uint32_t key;
      if (!r->BigEndian(&key)) return false;
      Data<float>(v)[idx] = FloatFromKey(key);
      return true;
    }
    case Kind::kDouble: {
      uint64_t key;
      if (!r->BigEndian(&key)) return false;
      Data<double>(v)[idx] = DoubleFromKey(key);
      return true;
    }
    case Kind::kInterval: {
      auto& iv = Data<duckdb::interval_t>(v)[idx];
      return r->Signed(&iv.months) && r->Signed(&iv.days) && r->Signed(&iv.micros);
    }
    case Kind::kString:
    case Kind::kEnum: {
      uint64_t len;
      const char* s;
      if (!r->Varint(&len)) return false;
      if (len > r->remaining()) return r->Fail("truncated");
      if (!r->Bytes(static_cast<size_t>(len), &s)) return false;
      if (node.kind == Kind::kString) {
        if (node.utf8 && !internal::IsValidUtf8(s, len))
          return r->Fail("VARCHAR is not valid UTF-8");
        Data<duckdb::string_t>(v)[idx] = duckdb::StringVector::AddStringOrBlob(v, s, len);
        return true;
      }
      int64_t pos =
          duckdb::EnumType::GetPos(node.type, duckdb::string_t(s, static_cast<uint32_t>(len)));
      if (pos < 0) return r->Fail("value is not in the ENUM's dictionary");
      switch (node.type.InternalType()) {
        case duckdb::PhysicalType::UINT8:
          Data<uint8_t>(v)[idx] = static_cast<uint8_t>(pos);
          break;
        case duckdb::PhysicalType::UINT16:
          Data<uint16_t>(v)[idx] = static_cast<uint16_t>(pos);
          break;
        default:
          Data<uint32_t>(v)[idx] = static_cast<uint32_t>(pos);
          break;
      }
      return true;
    }
    case Kind::kStruct: {
      auto& entries = duckdb::StructVector::GetEntries(v);
      for (size_t c = 0; c < node.children.size(); ++c) {
        if (!DecodeValue(node.children[c], r, *entries[c], idx)) return false;
      }
      return true;
    }
    case Kind::kList: {
      uint64_t count;
      if (!r->Varint(&count)) return false;
      // Every element takes at least its tag byte.
      if (count > r->remaining()) return r->Fail("truncated (list longer than the bytes left)");
      const duckdb::idx_t offset = duckdb::ListVector::GetListSize(v);
      Data<duckdb::list_entry_t>(v)[idx] = {offset, count};
      duckdb::ListVector::Reserve(v, offset + count);
      auto& child = duckdb::ListVector::GetEntry(v);
      for (uint64_t k = 0; k < count; ++k) {
        if (!DecodeValue(node.children[0], r, child, offset + k)) return false;
      }
      duckdb::ListVector::SetListSize(v, offset + count);
      return true;
    }
    case Kind::kArray: {
      auto& child = duckdb::ArrayVector::GetEntry(v);
      for (uint32_t k = 0; k < node.array_size; ++k) {
        if (!DecodeValue(node.children[0], r, child, idx * node.array_size + k)) return false;
      }
      return true;
    }
  }
  return false;
}

Result<std::vector<Node>> BuildNodes(const duckdb::vector<duckdb::LogicalType>& types,
                                     const std::vector<std::string>& names) {
  std::vector<Node> nodes;
  nodes.reserve(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    auto node = BuildNode(types[i]);
    if (!node.ok())
      return node.status().WithContext("column " + std::to_string(i) + " (" + names[i] + ")");
    nodes.push_back(std::move(node).ValueOrDie());
  }
  return nodes;
}

}  // namespace

// The single-column encodings below: the format byte, then kNullTag or kValueTag + the value
// (BIGINT: 8 bytes big-endian with the sign bit flipped; BOOLEAN: one byte).
Result<std::vector<std::optional<int64_t>>> Int64ColumnValues(const Batch& batch, size_t column) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> encoded, EncodeRows(batch, {column}));
  std::vector<std::optional<int64_t>> out(encoded.size());
  for (size_t i = 0; i < encoded.size(); ++i) {
    const std::string& e = encoded[i];
    if (e.size() < 2 || static_cast<uint8_t>(e[1]) == kNullTag) continue;
    if (e.size() == 10) {
      uint64_t v = 0;
      for (size_t k = 2; k < 10; ++k) v = (v << 8) | static_cast<uint8_t>(e[k]);
      out[i] = static_cast<int64_t>(v ^ 0x8000000000000000ull);
    } else {  // a narrower integer type
      SLUICE_ASSIGN_OR_RETURN(out[i], batch.GetInt64(static_cast<int64_t>(i), column));
    }
  }
  return out;
}

Result<std::vector<std::optional<bool>>> BoolColumnValues(const Batch& batch, size_t column) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> encoded, EncodeRows(batch, {column}));
  std::vector<std::optional<bool>> out(encoded.size());
  for (size_t i = 0; i < encoded.size(); ++i) {
    const std::string& e = encoded[i];
    if (e.size() < 2 || static_cast<uint8_t>(e[1]) == kNullTag) continue;
    if (e.size() == 3) {
      out[i] = e[2] != 0;
    } else {
      SLUICE_ASSIGN_OR_RETURN(out[i], batch.GetBool(static_cast<int64_t>(i), column));
    }
  }
  return out;
}

Result<std::vector<bool>> ColumnNulls(const Batch& batch, size_t column) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> encoded, EncodeRows(batch, {column}));
  std::vector<bool> out(encoded.size());
  for (size_t i = 0; i < encoded.size(); ++i) {
    out[i] = encoded[i].size() < 2 || static_cast<uint8_t>(encoded[i][1]) == kNullTag;
  }
  return out;
}

Schema SelectSchema(const Schema& schema, const std::vector<size_t>& columns) {
  Schema out;
  out.reserve(columns.size());
  for (size_t c : columns) out.push_back(schema.at(c));
  return out;
}

Result<std::vector<std::string>> EncodeRows(const Batch& batch,
                                            const std::vector<size_t>& columns) {
  for (size_t c : columns) {
    if (c >= batch.num_columns()) {
      return Status::InvalidArgument("EncodeRows: column index " + std::to_string(c) +
                                     " out of range (the batch has " +
                                     std::to_string(batch.num_columns()) + " columns)");
    }
  }
  std::vector<std::string> out;
  const int64_t num_rows = batch.num_rows();
  if (num_rows == 0) return out;
  return internal::CatchAll([&]() -> Result<std::vector<std::string>> {
    const auto& data = *batch.data();
    duckdb::vector<duckdb::LogicalType> types;
    std::vector<std::string> names;
    duckdb::vector<duckdb::column_t> column_ids;
    for (size_t c : columns) {
      types.push_back(data.types[c]);
      names.push_back(data.names[c]);
      column_ids.push_back(c);
    }
    SLUICE_ASSIGN_OR_RETURN(std::vector<Node> nodes, BuildNodes(types, names));
    out.reserve(static_cast<size_t>(num_rows));
    Buffer buf;
    if (columns.empty()) {
      const std::string row(1, static_cast<char>(kFormatVersion));
      out.assign(static_cast<size_t>(num_rows), row);
      return std::move(out);
    }
    const auto& collection = *data.collection;
    duckdb::ColumnDataScanState state;
    collection.InitializeScan(state, column_ids);
    duckdb::DataChunk chunk;
    collection.InitializeScanChunk(state, chunk);
    std::vector<duckdb::RecursiveUnifiedVectorFormat> formats(columns.size());
    while (collection.Scan(state, chunk)) {
      const duckdb::idx_t n = chunk.size();
      for (size_t c = 0; c < columns.size(); ++c) {
        formats[c] = duckdb::RecursiveUnifiedVectorFormat();
        duckdb::Vector::RecursiveToUnifiedFormat(chunk.data[c], n, formats[c]);
      }
      for (duckdb::idx_t i = 0; i < n; ++i) {
        buf.Clear();
        buf.PutByte(kFormatVersion);
        for (size_t c = 0; c < columns.size(); ++c) EncodeValue(nodes[c], formats[c], i, &buf);
        out.emplace_back(buf.data(), buf.size());
      }
    }
    return std::move(out);
  });
}

Result<Batch> DecodeRows(const Schema& schema, const std::vector<std::string_view>& rows) {
  if (schema.empty()) {
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].size() != 1 || static_cast<uint8_t>(rows[i][0]) != kFormatVersion) {
        return Status::Corruption(
            "DecodeRows: row " + std::to_string(i) +
            (rows[i].empty() ? ": empty (no version byte)" : ": not an encoding of zero columns"));
      }
    }
    return Batch();
  }
  duckdb::vector<duckdb::LogicalType> types;
  std::vector<std::string> names;
  for (const Field& f : schema) {
    auto t = internal::ToLogicalType(f.type);
    if (!t.ok()) return t.status().WithContext("DecodeRows: column " + f.name);
    types.push_back(*t);
    names.push_back(f.name);
  }
  return internal::CatchAll([&]() -> Result<Batch> {
    SLUICE_ASSIGN_OR_RETURN(std::vector<Node> nodes, BuildNodes(types, names));
    auto db = internal::StandaloneDatabase();
    auto collection = std::make_unique<duckdb::ColumnDataCollection>(
        duckdb::BufferManager::GetBufferManager(*db), types);
    duckdb::ColumnDataAppendState append;
    collection->InitializeAppend(append);
    duckdb::DataChunk chunk;
    chunk.Initialize(duckdb::Allocator::Get(*db), types);
    duckdb::idx_t in_chunk = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      Reader r(rows[i]);
      uint8_t version = 0;
      if (!r.Byte(&version)) {
        return Status::Corruption("DecodeRows: row " + std::to_string(i) +
                                  ": empty (no version byte)");
      }
      if (version != kFormatVersion) {
        return Status::Corruption("DecodeRows: row " + std::to_string(i) +
                                  ": unknown row codec version " + std::to_string(version));
      }
      for (size_t c = 0; c < nodes.size(); ++c) {
        if (!DecodeValue(nodes[c], &r, chunk.data[c], in_chunk)) {
          return Status::Corruption(
              "DecodeRows: row " + std::to_string(i) + ", column " + std::to_string(c) + " (" +
              names[c] + ", " + types[c].ToString() +
              "): " + (r.error() != nullptr ? r.error() : "undecodable value"));
        }
      }
      if (r.remaining() > 0) {
        return Status::Corruption("DecodeRows: row " + std::to_string(i) + ": " +
                                  std::to_string(r.remaining()) +
                                  " trailing bytes after the last column");
      }
      if (++in_chunk == STANDARD_VECTOR_SIZE) {
        chunk.SetCardinality(in_chunk);
        collection->Append(append, chunk);
        chunk.Reset();
        in_chunk = 0;
      }
    }
    if (in_chunk > 0) {
      chunk.SetCardinality(in_chunk);
      collection->Append(append, chunk);
    }
    return internal::MakeBatch(db, std::move(collection), names);
  });
}

}  // namespace sluice::engine
