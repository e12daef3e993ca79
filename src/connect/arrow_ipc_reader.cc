#include "connect/arrow_ipc_reader.h"

#include <cstring>

namespace sluice::connect {

namespace {

Status Bad(const std::string& what) {
  return Status::InvalidArgument(
      "Spark Connect: the Arrow data of a local relation is not a valid "
      "IPC stream: " +
      what);
}

// A FlatBuffers table inside `buf`, every read bounds-checked (flatbuffer_writer.h has the
// layout). A failed read sets `ok` to false and gives the field's default.
class FbReader {
 public:
  FbReader(std::string_view buf, size_t pos, bool* ok) : buf_(buf), pos_(pos), ok_(ok) {}

  template <typename T>
  T Load(size_t at) const {
    T v{};
    if (at + sizeof(T) > buf_.size() || at + sizeof(T) < at) {
      *ok_ = false;
      return v;
    }
    std::memcpy(&v, buf_.data() + at, sizeof(T));
    return v;
  }

  // The field's position, or 0 when absent.
  size_t Field(uint16_t slot) const {
    int32_t soff = Load<int32_t>(pos_);
    int64_t vt = static_cast<int64_t>(pos_) - soff;
    if (vt < 0 || static_cast<size_t>(vt) >= buf_.size()) {
      *ok_ = false;
      return 0;
    }
    uint16_t vt_size = Load<uint16_t>(static_cast<size_t>(vt));
    if (4u + 2u * slot + 2u > vt_size) return 0;
    uint16_t off = Load<uint16_t>(static_cast<size_t>(vt) + 4 + 2 * slot);
    return off == 0 ? 0 : pos_ + off;
  }
  template <typename T>
  T Scalar(uint16_t slot, T def) const {
    size_t f = Field(slot);
    return f ? Load<T>(f) : def;
  }
  // The object a uoffset field points to, or 0.
  size_t Deref(uint16_t slot) const {
    size_t f = Field(slot);
    if (!f) return 0;
    size_t to = f + Load<uint32_t>(f);
    if (to >= buf_.size()) {
      *ok_ = false;
      return 0;
    }
    return to;
  }
  bool Has(uint16_t slot) const { return Field(slot) != 0; }
  FbReader Child(uint16_t slot) const { return {buf_, Deref(slot), ok_}; }
  std::string String(uint16_t slot) const {
    size_t s = Deref(slot);
    if (!s) return "";
    uint32_t n = Load<uint32_t>(s);
    if (s + 4 + n > buf_.size()) {
      *ok_ = false;
      return "";
    }
    return std::string(buf_.substr(s + 4, n));
  }
  uint32_t VectorSize(uint16_t slot) const {
    size_t v = Deref(slot);
    return v ? Load<uint32_t>(v) : 0;
  }
  FbReader VectorTable(uint16_t slot, uint32_t i) const {
    size_t elem = Deref(slot) + 4 + 4 * static_cast<size_t>(i);
    return {buf_, elem + Load<uint32_t>(elem), ok_};
  }
  // The position of element i of a vector of structs of `size` bytes.
  size_t VectorStruct(uint16_t slot, uint32_t i, size_t size) const {
    return Deref(slot) + 4 + size * i;
  }

 private:
  std::string_view buf_;
  size_t pos_;
  bool* ok_;
};

// Arrow's enums (Schema.fbs, Message.fbs).
constexpr uint8_t kHeaderSchema = 1;
constexpr uint8_t kHeaderDictionaryBatch = 2;
constexpr uint8_t kHeaderRecordBatch = 3;

// How a column's buffers are read.
enum class Layout { kNone, kFixed, kBits, kOffsets32, kOffsets64 };

struct ColumnSpec {
  ArrowField field;
  Layout layout = Layout::kNone;
  int width = 0;                // kFixed: bytes per value
  int64_t micros_per_unit = 1;  // timestamps (a negative value: nanoseconds, divide by 1000)
  bool date64 = false;          // milliseconds: converted to days
};

const char* TypeTagName(uint8_t tag) {
  static const char* kNames[] = {"none",          "null",      "int",           "floatingpoint",
                                 "binary",        "utf8",      "bool",          "decimal",
                                 "date",          "time",      "timestamp",     "interval",
                                 "list",          "struct",    "union",         "fixedsizebinary",
                                 "fixedsizelist", "map",       "duration",      "largebinary",
                                 "largeutf8",     "largelist", "runendencoded", "binaryview",
                                 "utf8view",      "listview",  "largelistview"};
  return tag < sizeof(kNames) / sizeof(kNames[0]) ? kNames[tag] : "unknown";
}

Result<ColumnSpec> ReadField(const FbReader& f, bool* ok) {
  ColumnSpec spec;
  spec.field.name = f.String(0);
  spec.field.nullable = f.Scalar<uint8_t>(1, 1) != 0;
  uint8_t tag = f.Scalar<uint8_t>(2, 0);
  FbReader type = f.Child(3);
  auto refuse = [&](const std::string& type_text) {
    return Status::NotSupported("Spark Connect: column '" + spec.field.name +
                                "' of the local relation has the Arrow type " + type_text +
                                ", which Sluice does not read yet");
  };
  if (f.Has(4)) return refuse(std::string(TypeTagName(tag)) + " (dictionary-encoded)");
  if (f.VectorSize(5) != 0 && tag != 13 && tag != 12 && tag != 17) {
    return Bad("column '" + spec.field.name + "' has children but a scalar type");
  }
  ArrowType& t = spec.field.type;
  switch (tag) {
    case 1:  // Null
      t.id = ArrowTypeId::kNull;
      return spec;
    case 2: {  // Int
      int32_t bits = type.Scalar<int32_t>(0, 0);
      bool is_signed = type.Scalar<uint8_t>(1, 0) != 0;
      if (!is_signed) return refuse("uint" + std::to_string(bits));
      spec.layout = Layout::kFixed;
      spec.width = bits / 8;
      if (bits == 8)
        t.id = ArrowTypeId::kInt8;
      else if (bits == 16)
        t.id = ArrowTypeId::kInt16;
      else if (bits == 32)
        t.id = ArrowTypeId::kInt32;
      else if (bits == 64)
        t.id = ArrowTypeId::kInt64;
      else
        return Bad("column '" + spec.field.name + "' is an int of " + std::to_string(bits) +
                   " bits");
      return spec;
    }
    case 3: {  // FloatingPoint
      int16_t precision = type.Scalar<int16_t>(0, 0);
      if (precision == 0) return refuse("float16");
      spec.layout = Layout::kFixed;
      spec.width = precision == 1 ? 4 : 8;
      t.id = precision == 1 ? ArrowTypeId::kFloat : ArrowTypeId::kDouble;
      return spec;
    }
    case 4:   // Binary
    case 5:   // Utf8
    case 19:  // LargeBinary
    case 20:  // LargeUtf8
      spec.layout = (tag == 4 || tag == 5) ? Layout::kOffsets32 : Layout::kOffsets64;
      t.id = (tag == 5 || tag == 20) ? ArrowTypeId::kString : ArrowTypeId::kBinary;
      return spec;
    case 6:  // Bool
      spec.layout = Layout::kBits;
      t.id = ArrowTypeId::kBool;
      return spec;
    case 7: {  // Decimal
      int32_t bit_width = type.Scalar<int32_t>(2, 128);
      if (bit_width != 128) return refuse("decimal" + std::to_string(bit_width));
      spec.layout = Layout::kFixed;
      spec.width = 16;
      t.id = ArrowTypeId::kDecimal128;
      t.precision = type.Scalar<int32_t>(0, 0);
      t.scale = type.Scalar<int32_t>(1, 0);
      return spec;
    }
    case 8: {  // Date: DAY = 0 (int32), MILLISECOND = 1 (int64, the default)
      int16_t unit = type.Scalar<int16_t>(0, 1);
      spec.layout = Layout::kFixed;
      spec.width = unit == 0 ? 4 : 8;
      spec.date64 = unit != 0;
      t.id = ArrowTypeId::kDate32;
      return spec;
    }
    case 10: {  // Timestamp: SECOND, MILLISECOND, MICROSECOND, NANOSECOND
      int16_t unit = type.Scalar<int16_t>(0, 0);
      static const int64_t kScale[] = {1000000, 1000, 1, -1};
      if (unit < 0 || unit > 3) return Bad("column '" + spec.field.name + "' has a bad unit");
      spec.layout = Layout::kFixed;
      spec.width = 8;
      spec.micros_per_unit = kScale[unit];
      t.id = ArrowTypeId::kTimestampMicros;
      t.timezone = type.String(1);
      return spec;
    }
    default:
      (void)ok;
      return refuse(TypeTagName(tag));
  }
}

// One encapsulated message at *pos; false at the end-of-stream marker or the end of data.
Result<bool> NextMessage(std::string_view data, size_t* pos, std::string_view* metadata,
                         std::string_view* body, uint8_t* header_type, size_t* header_pos) {
  if (*pos >= data.size()) return false;
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    std::memcpy(&v, data.data() + at, 4);
    return v;
  };
  if (*pos + 4 > data.size()) return Bad("a message is cut at byte " + std::to_string(*pos));
  size_t at = *pos;
  uint32_t len = u32(at);
  at += 4;
  if (len == 0xFFFFFFFFu) {  // the continuation marker, then the length
    if (at + 4 > data.size()) return Bad("a message is cut at byte " + std::to_string(*pos));
    len = u32(at);
    at += 4;
  }
  if (len == 0) return false;  // end of stream
  if (at + len > data.size()) return Bad("a message is cut at byte " + std::to_string(*pos));
  *metadata = data.substr(at, len);
  bool ok = true;
  FbReader root(*metadata, 0, &ok);
  FbReader message(*metadata, root.Load<uint32_t>(0), &ok);
  int64_t body_len = message.Scalar<int64_t>(3, 0);
  *header_type = message.Scalar<uint8_t>(1, 0);
  *header_pos = message.Deref(2);
  if (!ok || body_len < 0 || at + len + static_cast<uint64_t>(body_len) > data.size()) {
    return Bad("the message at byte " + std::to_string(*pos) + " is damaged or cut");
  }
  *body = data.substr(at + len, static_cast<size_t>(body_len));
  *pos = at + len + static_cast<size_t>(body_len);
  return true;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

Status ReadBatch(std::string_view metadata, size_t header_pos, std::string_view body,
                 const std::vector<ColumnSpec>& specs, ArrowTableValues* out) {
  bool ok = true;
  FbReader batch(metadata, header_pos, &ok);
  int64_t length = batch.Scalar<int64_t>(0, 0);
  if (batch.Has(3)) {
    return Status::NotSupported(
        "Spark Connect: a local relation with a compressed Arrow body is not "
        "supported by Sluice yet");
  }
  uint32_t num_nodes = batch.VectorSize(1);
  uint32_t num_buffers = batch.VectorSize(2);
  if (!ok || length < 0 || num_nodes != specs.size()) {
    return Bad("a record batch has " + std::to_string(num_nodes) + " columns, the schema " +
               std::to_string(specs.size()));
  }
  uint32_t next_buffer = 0;
  auto buffer = [&](std::string_view* out_buf) -> Status {
    if (next_buffer >= num_buffers) return Bad("a record batch has too few buffers");
    size_t at = batch.VectorStruct(2, next_buffer++, 16);
    int64_t off = batch.Load<int64_t>(at);
    int64_t len = batch.Load<int64_t>(at + 8);
    if (!ok || off < 0 || len < 0 || static_cast<uint64_t>(off) + len > body.size()) {
      return Bad("a buffer lies outside its message's body");
    }
    *out_buf = body.substr(static_cast<size_t>(off), static_cast<size_t>(len));
    return Status::OK();
  };
  for (size_t c = 0; c < specs.size(); ++c) {
    const ColumnSpec& spec = specs[c];
    size_t node = batch.VectorStruct(1, static_cast<uint32_t>(c), 16);
    int64_t n = batch.Load<int64_t>(node);
    int64_t nulls = batch.Load<int64_t>(node + 8);
    if (!ok || n != length) return Bad("column '" + spec.field.name + "' has a wrong length");
    ArrowColumnValues& col = out->columns[c];
    if (spec.field.type.id == ArrowTypeId::kNull) {
      col.valid.insert(col.valid.end(), static_cast<size_t>(n), false);
      continue;
    }
    std::string_view validity, values, data;
    SLUICE_RETURN_NOT_OK(buffer(&validity));
    SLUICE_RETURN_NOT_OK(buffer(&values));
    if (spec.layout == Layout::kOffsets32 || spec.layout == Layout::kOffsets64) {
      SLUICE_RETURN_NOT_OK(buffer(&data));
    }
    auto bit = [](std::string_view bits, int64_t i) {
      return (static_cast<unsigned char>(bits[static_cast<size_t>(i / 8)]) >> (i % 8)) & 1;
    };
    if (!validity.empty() && validity.size() * 8 < static_cast<uint64_t>(n)) {
      return Bad("column '" + spec.field.name + "' has a short validity bitmap");
    }
    if (validity.empty() && nulls != 0) {
      return Bad("column '" + spec.field.name + "' has nulls but no validity bitmap");
    }
    size_t need = 0;
    switch (spec.layout) {
      case Layout::kFixed:
        need = static_cast<size_t>(n) * spec.width;
        break;
      case Layout::kBits:
        need = static_cast<size_t>((n + 7) / 8);
        break;
      case Layout::kOffsets32:
        need = static_cast<size_t>(n + 1) * 4;
        break;
      case Layout::kOffsets64:
        need = static_cast<size_t>(n + 1) * 8;
        break;
      case Layout::kNone:
        break;
    }
    if (values.size() < need) return Bad("column '" + spec.field.name + "' has short values");
    for (int64_t r = 0; r < n; ++r) {
      bool valid = validity.empty() || bit(validity, r);
      col.valid.push_back(valid);
      const char* v = values.data();
      switch (spec.field.type.id) {
        case ArrowTypeId::kBool:
          col.ints.push_back(valid ? bit(values, r) : 0);
          break;
        case ArrowTypeId::kInt8:
          col.ints.push_back(static_cast<int8_t>(v[r]));
          break;
        case ArrowTypeId::kInt16: {
          int16_t x;
          std::memcpy(&x, v + 2 * r, 2);
          col.ints.push_back(x);
          break;
        }
        case ArrowTypeId::kInt32: {
          int32_t x;
          std::memcpy(&x, v + 4 * r, 4);
          col.ints.push_back(x);
          break;
        }
        case ArrowTypeId::kInt64: {
          int64_t x;
          std::memcpy(&x, v + 8 * r, 8);
          col.ints.push_back(x);
          break;
        }
        case ArrowTypeId::kFloat: {
          float x;
          std::memcpy(&x, v + 4 * r, 4);
          col.doubles.push_back(x);
          break;
        }
        case ArrowTypeId::kDouble: {
          double x;
          std::memcpy(&x, v + 8 * r, 8);
          col.doubles.push_back(x);
          break;
        }
        case ArrowTypeId::kDate32: {
          if (spec.date64) {
            int64_t ms;
            std::memcpy(&ms, v + 8 * r, 8);
            col.ints.push_back(FloorDiv(ms, 86400000));
          } else {
            int32_t days;
            std::memcpy(&days, v + 4 * r, 4);
            col.ints.push_back(days);
          }
          break;
        }
        case ArrowTypeId::kTimestampMicros: {
          int64_t x;
          std::memcpy(&x, v + 8 * r, 8);
          if (spec.micros_per_unit < 0) {
            x = FloorDiv(x, 1000);
          } else if (spec.micros_per_unit > 1) {
            if (valid &&
                (x > INT64_MAX / spec.micros_per_unit || x < INT64_MIN / spec.micros_per_unit)) {
              return Bad("column '" + spec.field.name + "' has a timestamp out of range");
            }
            x *= spec.micros_per_unit;
          }
          col.ints.push_back(x);
          break;
        }
        case ArrowTypeId::kDecimal128: {
          __int128 x;
          std::memcpy(&x, v + 16 * r, 16);
          col.decimals.push_back(x);
          break;
        }
        case ArrowTypeId::kString:
        case ArrowTypeId::kBinary: {
          int64_t begin, end;
          if (spec.layout == Layout::kOffsets32) {
            int32_t b, e;
            std::memcpy(&b, v + 4 * r, 4);
            std::memcpy(&e, v + 4 * (r + 1), 4);
            begin = b;
            end = e;
          } else {
            std::memcpy(&begin, v + 8 * r, 8);
            std::memcpy(&end, v + 8 * (r + 1), 8);
          }
          if (begin < 0 || end < begin || static_cast<uint64_t>(end) > data.size()) {
            return Bad("column '" + spec.field.name + "' has offsets out of order at row " +
                       std::to_string(r));
          }
          col.bytes.emplace_back(
              data.substr(static_cast<size_t>(begin), static_cast<size_t>(end - begin)));
          break;
        }
        case ArrowTypeId::kNull:
          break;
      }
    }
  }
  out->num_rows += length;
  return Status::OK();
}

}  // namespace

Result<ArrowTableValues> ReadArrowStream(std::string_view data) {
  ArrowTableValues out;
  std::vector<ColumnSpec> specs;
  bool have_schema = false;
  size_t pos = 0;
  // Every message moves pos forward by at least 8 bytes, so this ends.
  while (true) {
    std::string_view metadata, body;
    uint8_t header_type = 0;
    size_t header_pos = 0;
    SLUICE_ASSIGN_OR_RETURN(bool more,
                            NextMessage(data, &pos, &metadata, &body, &header_type, &header_pos));
    if (!more) break;
    if (header_pos == 0) return Bad("a message without a header");
    if (header_type == kHeaderSchema) {
      if (have_schema) return Bad("a second schema message");
      bool ok = true;
      FbReader schema(metadata, header_pos, &ok);
      if (schema.Scalar<int16_t>(0, 0) != 0) {
        return Status::NotSupported("Spark Connect: big-endian Arrow data is not supported");
      }
      uint32_t n = schema.VectorSize(1);
      for (uint32_t i = 0; i < n && ok; ++i) {
        SLUICE_ASSIGN_OR_RETURN(ColumnSpec spec, ReadField(schema.VectorTable(1, i), &ok));
        specs.push_back(std::move(spec));
      }
      if (!ok) return Bad("the schema message is damaged");
      for (const ColumnSpec& s : specs) out.fields.push_back(s.field);
      out.columns.resize(specs.size());
      have_schema = true;
    } else if (header_type == kHeaderRecordBatch) {
      if (!have_schema) return Bad("a record batch before the schema");
      SLUICE_RETURN_NOT_OK(ReadBatch(metadata, header_pos, body, specs, &out));
    } else if (header_type == kHeaderDictionaryBatch) {
      return Status::NotSupported(
          "Spark Connect: dictionary-encoded Arrow columns are not supported by "
          "Sluice yet");
    } else {
      return Bad("a message of type " + std::to_string(header_type));
    }
  }
  if (!have_schema) return Bad("no schema message");
  return out;
}

}  // namespace sluice::connect
