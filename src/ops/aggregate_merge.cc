#include "ops/aggregate_merge.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace sluice::ops {
namespace {

using engine::TypeId;

constexpr uint64_t kSign = uint64_t{1} << 63;

// Payload bytes of a fixed-width type that min / max may compare bytewise (the codec's payloads
// of these types sort like their values, docs/formats/row-codec.md "Payloads"); 0 otherwise.
size_t OrderedWidth(TypeId type) {
  switch (type) {
    case TypeId::kBoolean:
    case TypeId::kTinyInt:
      return 1;
    case TypeId::kSmallInt:
      return 2;
    case TypeId::kInteger:
    case TypeId::kFloat:
    case TypeId::kDate:
      return 4;
    case TypeId::kBigInt:
    case TypeId::kDouble:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return 8;
    default:
      return 0;
  }
}

uint64_t LoadBE64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

void AppendBE64(uint64_t v, std::string* out) {
  char buf[8];
  for (int i = 7; i >= 0; --i) {
    buf[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  out->append(buf, 8);
}

// The codec's DOUBLE payload (as engine/row_codec.cc: canonical NaN, -0.0 as +0.0, then
// order-preserving bits) and its inverse.
uint64_t DoubleKey(double d) {
  if (std::isnan(d)) return 0x7FF8000000000000ull ^ kSign;
  if (d == 0.0) d = 0.0;
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return (bits & kSign) ? ~bits : (bits ^ kSign);
}

double DoubleFromKey(uint64_t key) {
  uint64_t bits = (key & kSign) ? (key ^ kSign) : ~key;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

// One encoded value: nullptr payload for NULL.
struct Value {
  const char* payload = nullptr;
};

// Reads the value of a column of `width` payload bytes at *pos of `bytes`.
bool ReadValue(std::string_view bytes, size_t width, size_t* pos, Value* v) {
  if (*pos >= bytes.size()) return false;
  const char tag = bytes[*pos];
  if (tag == 0x00) {
    v->payload = nullptr;
    *pos += 1;
    return true;
  }
  if (tag != 0x01 || bytes.size() - *pos - 1 < width) return false;
  v->payload = bytes.data() + *pos + 1;
  *pos += 1 + width;
  return true;
}

void AppendValue(const char* payload, size_t width, std::string* out) {
  if (payload == nullptr) {
    out->push_back(0x00);
    return;
  }
  out->push_back(0x01);
  out->append(payload, width);
}

}  // namespace

std::optional<AggregateMerger> AggregateMerger::Make(
    const std::vector<PartialMergeSpec>& partials) {
  AggregateMerger m;
  for (const auto& p : partials) {
    Column c;
    c.description = p.description;
    if (p.merge_fn == "sum" && p.type == TypeId::kBigInt) {
      c.op = Op::kSumInt64;
      c.width = 8;
    } else if (p.merge_fn == "sum" && p.type == TypeId::kDouble) {
      c.op = Op::kSumDouble;
      c.width = 8;
    } else if ((p.merge_fn == "min" || p.merge_fn == "max") && OrderedWidth(p.type) > 0) {
      c.op = p.merge_fn == "min" ? Op::kMin : Op::kMax;
      c.width = OrderedWidth(p.type);
    } else {
      return std::nullopt;
    }
    m.columns_.push_back(std::move(c));
  }
  return m;
}

Status AggregateMerger::Merge(std::string_view state, std::string_view batch,
                              std::string* out) const {
  size_t sp = 0, bp = 0;
  for (size_t i = 0; i < columns_.size(); ++i) {
    const Column& c = columns_[i];
    Value s, b;
    if (!ReadValue(state, c.width, &sp, &s)) {
      return Status::Corruption("aggregation state row: partial " + std::to_string(i) + " (" +
                                c.description + ") does not decode");
    }
    if (!ReadValue(batch, c.width, &bp, &b)) {
      return Status::Corruption("aggregation batch row: partial " + std::to_string(i) + " (" +
                                c.description + ") does not decode");
    }
    if (s.payload == nullptr || b.payload == nullptr) {  // NULLs are ignored
      AppendValue(s.payload != nullptr ? s.payload : b.payload, c.width, out);
      continue;
    }
    switch (c.op) {
      case Op::kSumInt64: {
        const int64_t x = static_cast<int64_t>(LoadBE64(s.payload) ^ kSign);
        const int64_t y = static_cast<int64_t>(LoadBE64(b.payload) ^ kSign);
        int64_t sum = 0;
        if (__builtin_add_overflow(x, y, &sum)) {
          return Status::InvalidArgument("Conversion Error: the sum " + std::to_string(x) + " + " +
                                         std::to_string(y) + " of " + c.description +
                                         " is out of range for the destination type BIGINT");
        }
        out->push_back(0x01);
        AppendBE64(static_cast<uint64_t>(sum) ^ kSign, out);
        break;
      }
      case Op::kSumDouble: {
        const double sum = DoubleFromKey(LoadBE64(s.payload)) + DoubleFromKey(LoadBE64(b.payload));
        out->push_back(0x01);
        AppendBE64(DoubleKey(sum), out);
        break;
      }
      case Op::kMin:
      case Op::kMax: {
        const int cmp = std::memcmp(s.payload, b.payload, c.width);
        const bool take_state = c.op == Op::kMin ? cmp <= 0 : cmp >= 0;
        AppendValue(take_state ? s.payload : b.payload, c.width, out);
        break;
      }
    }
  }
  if (sp != state.size()) {
    return Status::Corruption("aggregation state row: " + std::to_string(state.size() - sp) +
                              " trailing bytes after the partial aggregates");
  }
  if (bp != batch.size()) {
    return Status::Corruption("aggregation batch row: " + std::to_string(batch.size() - bp) +
                              " trailing bytes after the partial aggregates");
  }
  return Status::OK();
}

}  // namespace sluice::ops
