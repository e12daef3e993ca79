#include "ops/custom_state_codec.h"

#include <cmath>
#include <cstring>

#include "common/strings.h"
#include "engine/batch_builder.h"
#include "engine/row_codec.h"

namespace sluice::ops {
namespace {

constexpr uint8_t kNull = 0, kBool = 1, kInt = 2, kDouble = 3, kString = 4;
constexpr uint64_t kSignBit = uint64_t{1} << 63;

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

Result<uint64_t> GetVarint(std::string_view* in) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in->empty()) return Status::Corruption("custom state value: truncated varint");
    const auto b = static_cast<uint8_t>((*in)[0]);
    in->remove_prefix(1);
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return v;
  }
  return Status::Corruption("custom state value: varint too long");
}

void PutU64(uint64_t v, std::string* out) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

Result<uint64_t> GetU64(std::string_view* in) {
  if (in->size() < 8) return Status::Corruption("custom state value: truncated 8-byte value");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>((*in)[static_cast<size_t>(i)]);
  in->remove_prefix(8);
  return v;
}

// The row codec's order-preserving double bits (docs/formats/row-codec.md).
uint64_t DoubleBits(double d) {
  if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();
  if (d == 0) d = 0.0;
  uint64_t b;
  std::memcpy(&b, &d, 8);
  if (std::isnan(d)) b = 0x7FF8000000000000ULL;
  return (b & kSignBit) ? ~b : (b ^ kSignBit);
}

double BitsDouble(uint64_t e) {
  const uint64_t b = (e & kSignBit) ? (e ^ kSignBit) : ~e;
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

}  // namespace

void EncodeValueRow(const Row& row, std::string* out) {
  PutVarint(row.size(), out);
  for (const Value& v : row) {
    switch (v.index()) {
      case 0:
        out->push_back(static_cast<char>(kNull));
        break;
      case 1:
        out->push_back(static_cast<char>(kBool));
        out->push_back(std::get<bool>(v) ? 1 : 0);
        break;
      case 2:
        out->push_back(static_cast<char>(kInt));
        PutU64(static_cast<uint64_t>(std::get<int64_t>(v)) ^ kSignBit, out);
        break;
      case 3:
        out->push_back(static_cast<char>(kDouble));
        PutU64(DoubleBits(std::get<double>(v)), out);
        break;
      case 4: {
        const std::string& s = std::get<std::string>(v);
        out->push_back(static_cast<char>(kString));
        PutVarint(s.size(), out);
        out->append(s);
        break;
      }
    }
  }
}

std::string EncodeValueRow(const Row& row) {
  std::string out;
  EncodeValueRow(row, &out);
  return out;
}

Result<Row> DecodeValueRow(std::string_view* in) {
  SLUICE_ASSIGN_OR_RETURN(uint64_t n, GetVarint(in));
  if (n > in->size()) return Status::Corruption("custom state value: bad value count");
  Row row;
  row.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (in->empty()) return Status::Corruption("custom state value: truncated row");
    const auto tag = static_cast<uint8_t>((*in)[0]);
    in->remove_prefix(1);
    switch (tag) {
      case kNull:
        row.emplace_back(std::monostate{});
        break;
      case kBool:
        if (in->empty() || static_cast<uint8_t>((*in)[0]) > 1) {
          return Status::Corruption("custom state value: bad bool");
        }
        row.emplace_back((*in)[0] == 1);
        in->remove_prefix(1);
        break;
      case kInt: {
        SLUICE_ASSIGN_OR_RETURN(uint64_t u, GetU64(in));
        row.emplace_back(static_cast<int64_t>(u ^ kSignBit));
        break;
      }
      case kDouble: {
        SLUICE_ASSIGN_OR_RETURN(uint64_t u, GetU64(in));
        row.emplace_back(BitsDouble(u));
        break;
      }
      case kString: {
        SLUICE_ASSIGN_OR_RETURN(uint64_t len, GetVarint(in));
        if (len > in->size()) return Status::Corruption("custom state value: truncated string");
        row.emplace_back(std::string(in->substr(0, len)));
        in->remove_prefix(len);
        break;
      }
      default:
        return Status::Corruption("custom state value: unknown tag " + std::to_string(tag));
    }
  }
  return row;
}

Result<Row> DecodeValueRowExact(std::string_view bytes) {
  SLUICE_ASSIGN_OR_RETURN(Row row, DecodeValueRow(&bytes));
  if (!bytes.empty()) return Status::Corruption("custom state value: trailing bytes");
  return row;
}

std::string EncodeValueRows(const std::vector<Row>& rows) {
  std::string out;
  PutVarint(rows.size(), &out);
  for (const Row& r : rows) EncodeValueRow(r, &out);
  return out;
}

Result<std::vector<Row>> DecodeValueRows(std::string_view bytes) {
  SLUICE_ASSIGN_OR_RETURN(uint64_t n, GetVarint(&bytes));
  if (n > bytes.size()) return Status::Corruption("custom state list: bad count");
  std::vector<Row> rows;
  rows.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    SLUICE_ASSIGN_OR_RETURN(Row r, DecodeValueRow(&bytes));
    rows.push_back(std::move(r));
  }
  if (!bytes.empty()) return Status::Corruption("custom state list: trailing bytes");
  return rows;
}

std::string ValueCastSql(const std::string& name, const engine::DataType& type) {
  const std::string q = QuoteIdentifier(name);
  using engine::TypeId;
  switch (type.id) {
    case TypeId::kBoolean:
      return q;
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInteger:
    case TypeId::kBigInt:
    case TypeId::kHugeInt:
      return "CAST(" + q + " AS BIGINT)";
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
      return "CAST(" + q + " AS DOUBLE)";
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return "epoch_us(" + q + ")";
    default:
      return "CAST(" + q + " AS VARCHAR)";
  }
}

Result<std::vector<Row>> BatchToValueRows(const engine::Batch& batch) {
  using engine::TypeId;
  const engine::Schema& schema = batch.schema();
  std::vector<size_t> cols(schema.size());
  for (size_t i = 0; i < cols.size(); ++i) cols[i] = i;
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> encoded, engine::EncodeRows(batch, cols));
  std::vector<Row> rows;
  rows.reserve(encoded.size());
  for (const std::string& e : encoded) {
    std::string_view in(e);
    if (in.empty() || in[0] != 0x01) return Status::Corruption("input row: bad row codec version");
    in.remove_prefix(1);
    Row row;
    row.reserve(schema.size());
    for (const engine::Field& f : schema) {
      if (in.empty()) return Status::Corruption("input row: truncated");
      const char tag = in[0];
      in.remove_prefix(1);
      if (tag == 0x00) {
        row.emplace_back(std::monostate{});
        continue;
      }
      switch (f.type.id) {
        case TypeId::kBoolean:
          if (in.empty()) return Status::Corruption("input row: truncated bool");
          row.emplace_back(in[0] != 0);
          in.remove_prefix(1);
          break;
        case TypeId::kBigInt: {
          SLUICE_ASSIGN_OR_RETURN(uint64_t u, GetU64(&in));
          row.emplace_back(static_cast<int64_t>(u ^ kSignBit));
          break;
        }
        case TypeId::kDouble: {
          SLUICE_ASSIGN_OR_RETURN(uint64_t u, GetU64(&in));
          row.emplace_back(BitsDouble(u));
          break;
        }
        case TypeId::kVarchar: {
          SLUICE_ASSIGN_OR_RETURN(uint64_t len, GetVarint(&in));
          if (len > in.size()) return Status::Corruption("input row: truncated string");
          row.emplace_back(std::string(in.substr(0, len)));
          in.remove_prefix(len);
          break;
        }
        default:
          return Status::Internal("input column " + f.name + " has type " + f.type.ToSql() +
                                  " after the conversion to state values");
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<engine::Batch> ValueRowsToBatch(const engine::Schema& schema, const std::vector<Row>& rows,
                                       const std::string& what) {
  using engine::TypeId;
  engine::BatchBuilder b(schema);
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    if (row.size() != schema.size()) {
      return Status::InvalidArgument(what + " returned a row of " + std::to_string(row.size()) +
                                     " values " + RowToString(row) + " for an output schema of " +
                                     std::to_string(schema.size()) + " columns");
    }
    for (size_t c = 0; c < row.size(); ++c) {
      const Value& v = row[c];
      const engine::Field& f = schema[c];
      Status st;
      if (std::holds_alternative<std::monostate>(v)) {
        st = b.AppendNull();
      } else if (const auto* i = std::get_if<int64_t>(&v)) {
        if (f.type.id == TypeId::kTimestamp || f.type.id == TypeId::kTimestampTz) {
          st = b.AppendTimestampMicros(*i);
        } else if (f.type.id == TypeId::kDouble || f.type.id == TypeId::kFloat) {
          st = b.AppendDouble(static_cast<double>(*i));
        } else {
          st = b.AppendInt64(*i);
        }
      } else if (const auto* d = std::get_if<double>(&v)) {
        st = b.AppendDouble(*d);
      } else if (const auto* s = std::get_if<std::string>(&v)) {
        st = b.AppendString(*s);
      } else {
        st = b.AppendBool(std::get<bool>(v));
      }
      if (!st.ok()) {
        return Status::InvalidArgument(what + ": output column " + f.name + " (" + f.type.ToSql() +
                                       ") cannot take the value " + ValueToString(v) + " of row " +
                                       RowToString(row) + ": " + st.message());
      }
    }
    SLUICE_RETURN_NOT_OK(b.EndRow());
  }
  return b.Finish();
}

std::string ValueToString(const Value& v) {
  switch (v.index()) {
    case 0:
      return "NULL";
    case 1:
      return std::get<bool>(v) ? "true" : "false";
    case 2:
      return std::to_string(std::get<int64_t>(v));
    case 3: {
      std::string s = std::to_string(std::get<double>(v));
      return s;
    }
    default:
      return "'" + std::get<std::string>(v) + "'";
  }
}

std::string RowToString(const Row& row) {
  std::string out = "(";
  for (size_t i = 0; i < row.size(); ++i) out += (i > 0 ? ", " : "") + ValueToString(row[i]);
  return out + ")";
}

}  // namespace sluice::ops
