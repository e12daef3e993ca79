#include "delta/stats.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

namespace sluice::delta {

using engine::TypeId;

namespace {

// Byte length of the UTF-8 sequence starting with `lead` (1 for invalid bytes).
size_t Utf8Len(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

// Byte offset after `n` code points (s.size() when shorter).
size_t PrefixBytes(std::string_view s, size_t n) {
  size_t pos = 0;
  for (size_t i = 0; i < n && pos < s.size(); ++i)
    pos += Utf8Len(static_cast<unsigned char>(s[pos]));
  return std::min(pos, s.size());
}

std::string JsonString(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool IsInteger(TypeId id) {
  return id == TypeId::kTinyInt || id == TypeId::kSmallInt || id == TypeId::kInteger ||
         id == TypeId::kBigInt;
}

// "2024-01-02 03:04:05.123456+00" (engine rendering in UTC) -> "2024-01-02T03:04:05.123Z".
std::optional<std::string> IsoMillis(std::string_view text, bool with_zone) {
  std::string s(text);
  if (with_zone) {
    size_t z = s.find_last_of("+-");
    // The zone suffix follows the time part (after position 10, the date's own dashes).
    if (z == std::string::npos || z < 11) return std::nullopt;
    if (s.substr(z) != "+00" && s.substr(z) != "+00:00") return std::nullopt;
    s.resize(z);
  }
  if (s.size() < 19 || s[10] != ' ') return std::nullopt;
  s[10] = 'T';
  std::string frac = "000";
  if (s.size() > 19) {
    if (s[19] != '.') return std::nullopt;
    frac = s.substr(20);
    while (frac.size() < 3) frac += '0';
    frac.resize(3);  // truncate to milliseconds, as Spark does
  }
  return s.substr(0, 19) + "." + frac + (with_zone ? "Z" : "");
}

// The JSON text of a min/max value, or nullopt when Delta keeps no such statistic.
Result<std::optional<std::string>> StatValue(const engine::DataType& type, const std::string& text,
                                             bool is_max) {
  using R = std::optional<std::string>;
  if (IsInteger(type.id)) {
    char* end = nullptr;
    (void)std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() || *end != '\0')
      return Status::InvalidArgument("bad integer statistic '" + text + "'");
    return R(text);
  }
  switch (type.id) {
    case TypeId::kFloat:
    case TypeId::kDouble: {
      char* end = nullptr;
      double d = std::strtod(text.c_str(), &end);
      if (end == text.c_str()) return Status::InvalidArgument("bad float statistic '" + text + "'");
      if (!std::isfinite(d)) return R();
      return R(nlohmann::json(d).dump());
    }
    case TypeId::kDecimal:
      return R(text);
    case TypeId::kVarchar:
      if (is_max) {
        auto m = TruncateMaxString(text);
        if (!m) return R();
        return R(JsonString(*m));
      }
      return R(JsonString(TruncateMinString(text)));
    case TypeId::kDate:
      return R(JsonString(text));
    case TypeId::kTimestampTz:
    case TypeId::kTimestamp: {
      auto iso = IsoMillis(text, type.id == TypeId::kTimestampTz);
      if (!iso) return Status::InvalidArgument("bad timestamp statistic '" + text + "'");
      return R(JsonString(*iso));
    }
    default:
      return R();
  }
}

// A JSON object under construction with raw (already serialized) values. Its children are a
// struct of their own, not a std::pair<std::string, Node>: clang (14, with libstdc++ 12) refuses
// a pair of a type that is not complete yet, which g++ accepts (as engine/spark_json.cc's
// Inferred and InferredField).
struct NodeChild;  // a child object: its key and node (after Node, which it holds)
struct Node {
  std::vector<std::pair<std::string, std::string>> raw;  // key -> JSON text
  std::vector<NodeChild> children;
  bool Empty() const;
  std::string Dump() const;
};
struct NodeChild {
  NodeChild(std::string k, Node n) : key(std::move(k)), node(std::move(n)) {}
  std::string key;
  Node node;
};

bool Node::Empty() const { return raw.empty() && children.empty(); }

std::string Node::Dump() const {
  std::string out = "{";
  bool first = true;
  auto sep = [&]() {
    if (!first) out += ",";
    first = false;
  };
  for (const auto& [k, v] : raw) {
    sep();
    out += JsonString(k) + ":" + v;
  }
  for (const auto& [k, n] : children) {
    if (n.Empty()) continue;
    sep();
    out += JsonString(k) + ":" + n.Dump();
  }
  return out + "}";
}

struct Builder {
  const std::map<std::string, const engine::ColumnStats*>& by_label;
  int budget;  // leaves left to index; negative = unlimited
  Status status;

  void Walk(const std::string& label, const engine::Field& field, Node* mins, Node* maxs,
            Node* nulls) {
    if (field.type.id == TypeId::kStruct) {
      Node cmin, cmax, cnull;
      for (const engine::Field& child : field.type.children) {
        Walk(label + "." + child.name, child, &cmin, &cmax, &cnull);
      }
      mins->children.emplace_back(field.name, std::move(cmin));
      maxs->children.emplace_back(field.name, std::move(cmax));
      nulls->children.emplace_back(field.name, std::move(cnull));
      return;
    }
    if (budget == 0) return;
    if (budget > 0) --budget;
    auto it = by_label.find(label);
    if (it == by_label.end()) return;  // the engine kept no stats for it
    const engine::ColumnStats& cs = *it->second;
    nulls->raw.emplace_back(field.name, std::to_string(cs.null_count));
    if (cs.min) {
      auto v = StatValue(field.type, *cs.min, false);
      if (!v.ok()) {
        status = v.status().WithContext("column '" + label + "'");
        return;
      }
      if (*v) mins->raw.emplace_back(field.name, **v);
    }
    if (cs.max) {
      auto v = StatValue(field.type, *cs.max, true);
      if (!v.ok()) {
        status = v.status().WithContext("column '" + label + "'");
        return;
      }
      if (*v) maxs->raw.emplace_back(field.name, **v);
    }
  }
};

}  // namespace

std::string TruncateMinString(std::string_view s, size_t max_code_points) {
  return std::string(s.substr(0, PrefixBytes(s, max_code_points)));
}

std::optional<std::string> TruncateMaxString(std::string_view s, size_t max_code_points) {
  size_t cut = PrefixBytes(s, max_code_points);
  if (cut >= s.size()) return std::string(s);
  // Walk forward from the cut to the first code point that a tie-breaker can exceed.
  static const std::string kFFFD = "\xEF\xBF\xBD";
  static const std::string kMaxCp = "\xF4\x8F\xBF\xBF";
  for (size_t pos = cut; pos < s.size(); pos += Utf8Len(static_cast<unsigned char>(s[pos]))) {
    if (pos > cut + 64) break;  // keep the bound short
    std::string_view next = s.substr(pos, Utf8Len(static_cast<unsigned char>(s[pos])));
    if (next < std::string_view(kFFFD)) return std::string(s.substr(0, pos)) + kFFFD;
    if (next < std::string_view(kMaxCp)) return std::string(s.substr(0, pos)) + kMaxCp;
  }
  return std::nullopt;
}

Result<std::string> BuildStatsJson(const engine::Schema& file_schema,
                                   const engine::ParquetFileInfo& info, int num_indexed_cols) {
  std::map<std::string, const engine::ColumnStats*> by_label;
  for (const engine::ColumnStats& cs : info.stats) by_label[cs.column] = &cs;
  Builder b{by_label, num_indexed_cols < 0 ? -1 : num_indexed_cols, Status::OK()};
  Node mins, maxs, nulls;
  for (const engine::Field& f : file_schema) {
    b.Walk(f.name, f, &mins, &maxs, &nulls);
    if (!b.status.ok()) return b.status;
  }
  return "{\"numRecords\":" + std::to_string(info.num_rows) + ",\"minValues\":" + mins.Dump() +
         ",\"maxValues\":" + maxs.Dump() + ",\"nullCount\":" + nulls.Dump() + "}";
}

}  // namespace sluice::delta
