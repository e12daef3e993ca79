#include "connect/arrow_ipc.h"

#include <cstring>

#include "connect/flatbuffer_writer.h"

namespace sluice::connect {

namespace {

// Arrow's flatbuffer enums (Schema.fbs, Message.fbs).
constexpr int16_t kMetadataV5 = 4;
constexpr uint8_t kHeaderSchema = 1;
constexpr uint8_t kHeaderRecordBatch = 3;
enum TypeTag : uint8_t {
  kTagNull = 1,
  kTagInt = 2,
  kTagFloatingPoint = 3,
  kTagBinary = 4,
  kTagUtf8 = 5,
  kTagBool = 6,
  kTagDecimal = 7,
  kTagDate = 8,
  kTagTimestamp = 10,
};

int FixedWidth(ArrowTypeId id) {
  switch (id) {
    case ArrowTypeId::kInt8:
      return 1;
    case ArrowTypeId::kInt16:
      return 2;
    case ArrowTypeId::kInt32:
    case ArrowTypeId::kFloat:
    case ArrowTypeId::kDate32:
      return 4;
    case ArrowTypeId::kInt64:
    case ArrowTypeId::kDouble:
    case ArrowTypeId::kTimestampMicros:
      return 8;
    case ArrowTypeId::kDecimal128:
      return 16;
    default:
      return 0;
  }
}

void AppendLittleEndian(std::string* out, uint64_t bits, int width) {
  for (int i = 0; i < width; ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

void SetBit(std::string* bits, int64_t i, bool v) {
  if (static_cast<size_t>(i / 8) >= bits->size()) bits->push_back('\0');
  if (v) (*bits)[i / 8] = static_cast<char>((*bits)[i / 8] | (1 << (i % 8)));
}

fb::Table IntType(int32_t bits) {
  fb::Table t;
  return t.Int32(0, bits).Bool(1, true);
}

// The Field table's type tag and type table.
std::pair<uint8_t, fb::Table> TypeTable(const ArrowType& type) {
  fb::Table t;
  switch (type.id) {
    case ArrowTypeId::kNull:
      return {kTagNull, t};
    case ArrowTypeId::kBool:
      return {kTagBool, t};
    case ArrowTypeId::kInt8:
      return {kTagInt, IntType(8)};
    case ArrowTypeId::kInt16:
      return {kTagInt, IntType(16)};
    case ArrowTypeId::kInt32:
      return {kTagInt, IntType(32)};
    case ArrowTypeId::kInt64:
      return {kTagInt, IntType(64)};
    case ArrowTypeId::kFloat:
      return {kTagFloatingPoint, t.Int16(0, 1)};  // SINGLE
    case ArrowTypeId::kDouble:
      return {kTagFloatingPoint, t.Int16(0, 2)};  // DOUBLE
    case ArrowTypeId::kString:
      return {kTagUtf8, t};
    case ArrowTypeId::kBinary:
      return {kTagBinary, t};
    case ArrowTypeId::kDate32:
      return {kTagDate, t.Int16(0, 0)};  // DAY (the default is MILLISECOND)
    case ArrowTypeId::kTimestampMicros:
      t.Int16(0, 2);  // MICROSECOND
      if (!type.timezone.empty()) t.String(1, type.timezone);
      return {kTagTimestamp, t};
    case ArrowTypeId::kDecimal128:
      return {kTagDecimal, t.Int32(0, type.precision).Int32(1, type.scale).Int32(2, 128)};
  }
  return {kTagNull, t};
}

// 0xFFFFFFFF, the metadata size, the flatbuffer padded to 8, then the body.
std::string Frame(const std::string& flatbuffer, const std::string& body) {
  std::string meta = flatbuffer;
  while ((8 + meta.size()) % 8 != 0) meta.push_back('\0');
  std::string out;
  AppendLittleEndian(&out, 0xFFFFFFFFu, 4);
  AppendLittleEndian(&out, static_cast<uint32_t>(meta.size()), 4);
  out += meta;
  out += body;
  return out;
}

fb::Table MessageTable(uint8_t header_type, fb::Table header, int64_t body_length) {
  fb::Table m;
  m.Int16(0, kMetadataV5).UInt8(1, header_type).Child(2, std::move(header)).Int64(3, body_length);
  return m;
}

}  // namespace

ArrowColumnBuilder::ArrowColumnBuilder(ArrowType type) : type_(std::move(type)) {}

void ArrowColumnBuilder::MarkValid(bool valid) {
  SetBit(&validity_, length_, valid);
  if (!valid) ++null_count_;
  ++length_;
}

void ArrowColumnBuilder::AppendNull() {
  switch (type_.id) {
    case ArrowTypeId::kNull:
      break;
    case ArrowTypeId::kBool:
      SetBit(&values_, length_, false);
      break;
    case ArrowTypeId::kString:
    case ArrowTypeId::kBinary:
      offsets_.push_back(offsets_.back());
      break;
    default:
      values_.append(FixedWidth(type_.id), '\0');
  }
  MarkValid(false);
}

void ArrowColumnBuilder::AppendBool(bool v) {
  SetBit(&values_, length_, v);
  MarkValid(true);
}

void ArrowColumnBuilder::AppendInt(int64_t v) {
  AppendLittleEndian(&values_, static_cast<uint64_t>(v), FixedWidth(type_.id));
  MarkValid(true);
}

void ArrowColumnBuilder::AppendDouble(double v) {
  if (type_.id == ArrowTypeId::kFloat) {
    float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    AppendLittleEndian(&values_, bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    AppendLittleEndian(&values_, bits, 8);
  }
  MarkValid(true);
}

void ArrowColumnBuilder::AppendBytes(std::string_view v) {
  values_.append(v);
  offsets_.push_back(static_cast<int32_t>(values_.size()));
  MarkValid(true);
}

void ArrowColumnBuilder::AppendDecimal(__int128 unscaled) {
  auto bits = static_cast<unsigned __int128>(unscaled);
  AppendLittleEndian(&values_, static_cast<uint64_t>(bits), 8);
  AppendLittleEndian(&values_, static_cast<uint64_t>(bits >> 64), 8);
  MarkValid(true);
}

std::string ArrowStreamWriter::SchemaMessage(const std::vector<ArrowField>& fields) {
  std::vector<fb::Table> field_tables;
  for (const ArrowField& f : fields) {
    auto [tag, type] = TypeTable(f.type);
    fb::Table t;
    // Arrow's readers require the children vector, even when empty.
    t.String(0, f.name).Bool(1, f.nullable).UInt8(2, tag).Child(3, std::move(type)).Tables(5, {});
    field_tables.push_back(std::move(t));
  }
  fb::Table schema;
  schema.Int16(0, 0).Tables(1, std::move(field_tables));  // little-endian
  return Frame(fb::Finish(MessageTable(kHeaderSchema, std::move(schema), 0)), "");
}

Result<std::string> ArrowStreamWriter::RecordBatchMessage(
    const std::vector<ArrowField>& fields, const std::vector<ArrowColumnBuilder>& columns,
    int64_t num_rows) {
  if (fields.size() != columns.size()) {
    return Status::InvalidArgument("Arrow record batch: " + std::to_string(columns.size()) +
                                   " columns for a schema of " + std::to_string(fields.size()));
  }
  std::string body;
  std::string nodes;    // FieldNode structs: length, null_count
  std::string buffers;  // Buffer structs: offset, length
  uint32_t num_buffers = 0;
  auto add_buffer = [&](const std::string& bytes, size_t length) {
    AppendLittleEndian(&buffers, body.size(), 8);
    AppendLittleEndian(&buffers, length, 8);
    body.append(bytes, 0, length);
    body.append(length - std::min(length, bytes.size()), '\0');
    while (body.size() % 8 != 0) body.push_back('\0');
    ++num_buffers;
  };
  for (size_t i = 0; i < columns.size(); ++i) {
    const ArrowColumnBuilder& c = columns[i];
    if (c.type().id != fields[i].type.id || c.length() != num_rows) {
      return Status::InvalidArgument("Arrow record batch: column " + std::to_string(i) + " (" +
                                     fields[i].name + ") has " + std::to_string(c.length()) +
                                     " values of " + std::to_string(num_rows) +
                                     " or a type other than its field's");
    }
    int64_t nulls = c.type().id == ArrowTypeId::kNull ? num_rows : c.null_count();
    AppendLittleEndian(&nodes, num_rows, 8);
    AppendLittleEndian(&nodes, nulls, 8);
    if (c.type().id == ArrowTypeId::kNull) continue;
    size_t bitmap_bytes = static_cast<size_t>((num_rows + 7) / 8);
    add_buffer(c.validity_, c.null_count() == 0 ? 0 : bitmap_bytes);
    switch (c.type().id) {
      case ArrowTypeId::kBool:
        add_buffer(c.values_, bitmap_bytes);
        break;
      case ArrowTypeId::kString:
      case ArrowTypeId::kBinary: {
        std::string offsets;
        for (int32_t o : c.offsets_) AppendLittleEndian(&offsets, static_cast<uint32_t>(o), 4);
        add_buffer(offsets, offsets.size());
        add_buffer(c.values_, c.values_.size());
        break;
      }
      default:
        add_buffer(c.values_, c.values_.size());
    }
  }
  fb::Table batch;
  batch.Int64(0, num_rows)
      .Structs(1, std::move(nodes), static_cast<uint32_t>(columns.size()), 8)
      .Structs(2, std::move(buffers), num_buffers, 8);
  int64_t body_length = static_cast<int64_t>(body.size());
  return Frame(fb::Finish(MessageTable(kHeaderRecordBatch, std::move(batch), body_length)), body);
}

std::string ArrowStreamWriter::EndOfStream() {
  std::string out;
  AppendLittleEndian(&out, 0xFFFFFFFFu, 4);
  AppendLittleEndian(&out, 0, 4);
  return out;
}

Result<std::string> ArrowStreamWriter::Stream(const std::vector<ArrowField>& fields,
                                              const std::vector<ArrowColumnBuilder>& columns,
                                              int64_t num_rows) {
  SLUICE_ASSIGN_OR_RETURN(std::string batch, RecordBatchMessage(fields, columns, num_rows));
  return SchemaMessage(fields) + batch + EndOfStream();
}

}  // namespace sluice::connect
