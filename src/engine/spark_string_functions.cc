#include "engine/spark_string_functions.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "duckdb/common/vector_operations/binary_executor.hpp"
#include "duckdb/common/vector_operations/unary_executor.hpp"
#include "duckdb/planner/expression.hpp"
#include "engine/spark_macros.h"

namespace sluice::engine::internal {
namespace {

// Spark's Murmur3_x86_32 (the hash function; seed 42, each argument's hash the next one's seed).
uint32_t Rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
uint32_t MixK1(uint32_t k1) { return Rotl32(k1 * 0xcc9e2d51u, 15) * 0x1b873593u; }
uint32_t MixH1(uint32_t h1, uint32_t k1) { return Rotl32(h1 ^ k1, 13) * 5 + 0xe6546b64u; }
uint32_t Fmix32(uint32_t h1, uint32_t length) {
  h1 ^= length;
  h1 ^= h1 >> 16;
  h1 *= 0x85ebca6bu;
  h1 ^= h1 >> 13;
  h1 *= 0xc2b2ae35u;
  h1 ^= h1 >> 16;
  return h1;
}
uint32_t MurmurInt(uint32_t v, uint32_t seed) { return Fmix32(MixH1(seed, MixK1(v)), 4); }
uint32_t MurmurLong(uint64_t v, uint32_t seed) {
  uint32_t h1 = MixH1(seed, MixK1(static_cast<uint32_t>(v)));
  h1 = MixH1(h1, MixK1(static_cast<uint32_t>(v >> 32)));
  return Fmix32(h1, 8);
}
// Spark's hashUnsafeBytes: 4-byte words, then each remaining byte (sign-extended) as a word.
uint32_t MurmurBytes(const char* p, size_t n, uint32_t seed) {
  uint32_t h1 = seed;
  const size_t aligned = n - n % 4;
  for (size_t i = 0; i < aligned; i += 4) {
    uint32_t word;
    std::memcpy(&word, p + i, 4);  // little-endian, as Spark reads it on x86 and ARM
    h1 = MixH1(h1, MixK1(word));
  }
  for (size_t i = aligned; i < n; ++i) {
    h1 = MixH1(h1, MixK1(static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(p[i])))));
  }
  return Fmix32(h1, static_cast<uint32_t>(n));
}

// Spark's XxHash64 (the xxhash64 function; seed 42).
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full,
                   kP3 = 0x165667B19E3779F9ull, kP4 = 0x85EBCA77C2B2AE63ull,
                   kP5 = 0x27D4EB2F165667C5ull;
uint64_t Rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
uint64_t Fmix64(uint64_t h) {
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}
uint64_t XxRound(uint64_t acc, uint64_t lane) { return Rotl64(acc + lane * kP2, 31) * kP1; }
uint64_t XxInt(uint32_t v, uint64_t seed) {
  uint64_t h = seed + kP5 + 4;
  h ^= static_cast<uint64_t>(v) * kP1;
  return Fmix64(Rotl64(h, 23) * kP2 + kP3);
}
uint64_t XxLong(uint64_t v, uint64_t seed) {
  uint64_t h = seed + kP5 + 8;
  h ^= XxRound(0, v);
  return Fmix64(Rotl64(h, 27) * kP1 + kP4);
}
uint64_t XxBytes(const char* p, size_t n, uint64_t seed) {
  size_t i = 0;
  uint64_t h;
  auto read64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, p + at, 8);
    return v;
  };
  if (n >= 32) {
    uint64_t v1 = seed + kP1 + kP2, v2 = seed + kP2, v3 = seed, v4 = seed - kP1;
    for (; i + 32 <= n; i += 32) {
      v1 = XxRound(v1, read64(i));
      v2 = XxRound(v2, read64(i + 8));
      v3 = XxRound(v3, read64(i + 16));
      v4 = XxRound(v4, read64(i + 24));
    }
    h = Rotl64(v1, 1) + Rotl64(v2, 7) + Rotl64(v3, 12) + Rotl64(v4, 18);
    for (uint64_t v : {v1, v2, v3, v4}) h = (h ^ XxRound(0, v)) * kP1 + kP4;
  } else {
    h = seed + kP5;
  }
  h += n;
  for (; i + 8 <= n; i += 8) h = Rotl64(h ^ XxRound(0, read64(i)), 27) * kP1 + kP4;
  if (i + 4 <= n) {
    uint32_t v;
    std::memcpy(&v, p + i, 4);
    h = Rotl64(h ^ (static_cast<uint64_t>(v) * kP1), 23) * kP2 + kP3;
    i += 4;
  }
  for (; i < n; ++i)
    h = Rotl64(h ^ (static_cast<uint64_t>(static_cast<uint8_t>(p[i])) * kP5), 11) * kP1;
  return Fmix64(h);
}

// The hash of one value of `type` under `seed`, Spark's way: integers up to INT as an int, BIGINT
// as a long, FLOAT / DOUBLE by their bits (-0.0 as 0.0), DATE as its days, TIMESTAMP as its
// microseconds, DECIMAL(p <= 18) by its unscaled long, strings and binaries by their bytes.
template <typename H, H (*Int)(uint32_t, H), H (*Long)(uint64_t, H),
          H (*Bytes)(const char*, size_t, H)>
H HashValue(const duckdb::Value& v, H seed) {
  using duckdb::LogicalTypeId;
  const duckdb::LogicalType& type = v.type();
  switch (type.id()) {
    case LogicalTypeId::BOOLEAN:
      return Int(v.GetValue<bool>() ? 1 : 0, seed);
    case LogicalTypeId::TINYINT:
    case LogicalTypeId::SMALLINT:
    case LogicalTypeId::INTEGER:
      return Int(static_cast<uint32_t>(v.GetValue<int32_t>()), seed);
    case LogicalTypeId::DATE:
      return Int(static_cast<uint32_t>(v.GetValue<duckdb::date_t>().days), seed);
    case LogicalTypeId::BIGINT:
    case LogicalTypeId::TIMESTAMP:
    case LogicalTypeId::TIMESTAMP_TZ:
      return Long(static_cast<uint64_t>(v.GetValueUnsafe<int64_t>()), seed);
    case LogicalTypeId::FLOAT: {
      float f = v.GetValue<float>();
      if (f == 0.0f) f = 0.0f;
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return Int(bits, seed);
    }
    case LogicalTypeId::DOUBLE: {
      double d = v.GetValue<double>();
      if (d == 0.0) d = 0.0;
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      return Long(bits, seed);
    }
    case LogicalTypeId::DECIMAL: {
      if (duckdb::DecimalType::GetWidth(type) > 18) break;
      const duckdb::Value unscaled =
          v.DefaultCastAs(duckdb::LogicalType::DECIMAL(18, duckdb::DecimalType::GetScale(type)));
      return Long(static_cast<uint64_t>(unscaled.GetValueUnsafe<int64_t>()), seed);
    }
    case LogicalTypeId::VARCHAR:
    case LogicalTypeId::BLOB: {
      const std::string& s = duckdb::StringValue::Get(v);
      return Bytes(s.data(), s.size(), seed);
    }
    default:
      break;
  }
  throw duckdb::InvalidInputException("hash / xxhash64: values of type %s are not supported",
                                      type.ToString());
}

template <typename H, typename Out, H (*Int)(uint32_t, H), H (*Long)(uint64_t, H),
          H (*Bytes)(const char*, size_t, H)>
void Hash(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  auto* out = duckdb::FlatVector::GetData<Out>(result);
  for (duckdb::idx_t row = 0; row < args.size(); ++row) {
    H h = 42;
    for (duckdb::idx_t c = 0; c < args.ColumnCount(); ++c) {
      const duckdb::Value v = args.data[c].GetValue(row);
      if (!v.IsNull()) h = HashValue<H, Int, Long, Bytes>(v, h);
    }
    out[row] = static_cast<Out>(h);
  }
  if (args.AllConstant()) result.SetVectorType(duckdb::VectorType::CONSTANT_VECTOR);
}

duckdb::unique_ptr<duckdb::FunctionData> BindHash(
    duckdb::ClientContext&, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
  bound.arguments.clear();
  for (auto& a : arguments) bound.arguments.push_back(a->return_type);
  return nullptr;
}

// CRC-32 (IEEE, as java.util.zip.CRC32) of a string's UTF-8 bytes or a binary.
void Crc32(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  static const auto kTable = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  duckdb::UnaryExecutor::Execute<duckdb::string_t, int64_t>(
      args.data[0], result, args.size(), [&](duckdb::string_t s) {
        uint32_t c = 0xFFFFFFFFu;
        for (duckdb::idx_t i = 0; i < s.GetSize(); ++i) {
          c = kTable[(c ^ static_cast<uint8_t>(s.GetData()[i])) & 0xFF] ^ (c >> 8);
        }
        return static_cast<int64_t>(c ^ 0xFFFFFFFFu);
      });
}

// Spark's soundex (UTF8String.soundex): the input unchanged when it does not start with a
// letter A-Z; H and W do not separate letters of one code, vowels do.
void Soundex(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  static const char kCodes[] = "01230120022455012623010202";  // A..Z; H, W: '7' below
  duckdb::UnaryExecutor::Execute<duckdb::string_t, duckdb::string_t>(
      args.data[0], result, args.size(), [&](duckdb::string_t in) {
        const std::string s = in.GetString();
        auto upper = [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; };
        if (s.empty() || upper(s[0]) < 'A' || upper(s[0]) > 'Z') {
          return duckdb::StringVector::AddString(result, s);
        }
        auto code = [&](char c) { return c == 'H' || c == 'W' ? '7' : kCodes[c - 'A']; };
        std::string sx(4, '0');
        sx[0] = upper(s[0]);
        char last = code(sx[0]);
        size_t n = 1;
        for (size_t i = 1; i < s.size() && n < 4; ++i) {
          const char c = upper(s[i]);
          if (c < 'A' || c > 'Z') continue;
          const char k = code(c);
          if (k == '7') continue;
          if (k != '0' && k != last) sx[n++] = k;
          last = k;
        }
        return duckdb::StringVector::AddString(result, sx);
      });
}

// The capturing groups of a regex: '(' outside a [...] class and not escaped, except (?...)
// other than the named groups (?<name>...) and (?P<name>...).
int32_t CountGroups(std::string_view p) {
  int32_t n = 0;
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
    } else if (in_class) {
      in_class = p[i] != ']';
    } else if (p[i] == '[') {
      in_class = true;
      if (i + 1 < p.size() && p[i + 1] == ']') ++i;  // []] holds a ]
    } else if (p[i] == '(') {
      const bool named =
          p.compare(i + 1, 2, "?<") == 0 && i + 3 < p.size() && p[i + 3] != '=' && p[i + 3] != '!';
      if (i + 1 >= p.size() || p[i + 1] != '?' || named || p.compare(i + 1, 3, "?P<") == 0) ++n;
    }
  }
  return n;
}

// spark_regex_with_group(p, g): the regex p when it has a group g (0 is the whole match), else
// Spark's INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX error (DuckDB's regexp_extract gives '').
// It wraps the pattern, not the group index, which DuckDB's regexp_extract needs as a constant.
void RegexWithGroup(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::BinaryExecutor::Execute<duckdb::string_t, int32_t, duckdb::string_t>(
      args.data[0], args.data[1], result, args.size(), [](duckdb::string_t p, int32_t g) {
        const int32_t groups = CountGroups(std::string_view(p.GetData(), p.GetSize()));
        if (g < 0 || g > groups) {
          throw duckdb::InvalidInputException(
              "[INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX] regexp_extract: the regex '%s' has %d "
              "group(s), so the group index must be between 0 and %d, got %d",
              p.GetString(), groups, groups, g);
        }
        return p;
      });
}

const duckdb::DefaultMacro kMacros[] = {
    {DEFAULT_SCHEMA,
     "spark_split_limit",
     {"s", "p", "l", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN l <= 0 OR len(regexp_split_to_array(s, spark_java_regex(p))) <= l THEN "
     "regexp_split_to_array(s, spark_java_regex(p)) ELSE "
     "list_concat(regexp_split_to_array(s, spark_java_regex(p))[1:l - 1], [substr(s, CAST("
     "coalesce(list_sum(list_transform(regexp_split_to_array(s, spark_java_regex(p))[1:l - 1], "
     "lambda x_: length(x_))), 0) + coalesce(list_sum(list_transform(regexp_extract_all(s, "
     "spark_java_regex(p), 0)[1:l - 1], lambda x_: length(x_))), 0) + 1 AS BIGINT))]) END"},
    {DEFAULT_SCHEMA,
     "spark_regexp_extract",
     {"s", "p", nullptr},
     {{nullptr, nullptr}},
     "regexp_extract(s, spark_regex_with_group(spark_java_regex(p), 1), 1)"},
    {DEFAULT_SCHEMA,
     "spark_regexp_extract",
     {"s", "p", "g", nullptr},
     {{nullptr, nullptr}},
     "regexp_extract(s, spark_regex_with_group(spark_java_regex(p), g), g)"},
    {DEFAULT_SCHEMA,
     "spark_regexp_extract_all",
     {"s", "p", nullptr},
     {{nullptr, nullptr}},
     "regexp_extract_all(s, spark_regex_with_group(spark_java_regex(p), 1), 1)"},
    {DEFAULT_SCHEMA,
     "spark_regexp_extract_all",
     {"s", "p", "g", nullptr},
     {{nullptr, nullptr}},
     "regexp_extract_all(s, spark_regex_with_group(spark_java_regex(p), g), g)"},
    {DEFAULT_SCHEMA,
     "spark_decode",
     {"b", "cs", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN b IS NULL OR cs IS NULL THEN NULL WHEN upper(replace(cs, '-', '')) = 'UTF8' THEN "
     "spark_string(b) ELSE error('decode: the charset ' || cs || ' is not supported (UTF-8 is)') "
     "END"},
    {DEFAULT_SCHEMA,
     "spark_encode",
     {"s", "cs", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN s IS NULL OR cs IS NULL THEN NULL WHEN upper(replace(cs, '-', '')) = 'UTF8' THEN "
     "spark_binary(s) ELSE error('encode: the charset ' || cs || ' is not supported (UTF-8 is)') "
     "END"},
    {DEFAULT_SCHEMA,
     "spark_octet_length",
     {"s", nullptr},
     {{nullptr, nullptr}},
     "CAST(octet_length(spark_binary(s)) AS INTEGER)"},
    {DEFAULT_SCHEMA,
     "spark_replace",
     {"s", "f", nullptr},
     {{nullptr, nullptr}},
     "replace(s, f, '')"},
    {DEFAULT_SCHEMA,
     "spark_substring",
     {"s", "p", nullptr},
     {{nullptr, nullptr}},
     "substring(s, CASE WHEN p = 0 THEN 1 ELSE p END)"},
    {DEFAULT_SCHEMA,
     "spark_substring",
     {"s", "p", "l", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN l < 0 THEN '' ELSE substring(s, CASE WHEN p = 0 THEN 1 ELSE p END, l) END"},
    {DEFAULT_SCHEMA,
     "overlay",
     {"s", "r", "p", nullptr},
     {{nullptr, nullptr}},
     "left(s, p - 1) || r || substr(s, p + length(r))"},
    {DEFAULT_SCHEMA,
     "overlay",
     {"s", "r", "p", "l", nullptr},
     {{nullptr, nullptr}},
     "left(s, p - 1) || r || substr(s, p + CASE WHEN l < 0 THEN length(r) ELSE l END)"},
    {DEFAULT_SCHEMA,
     "mask",
     {"s", nullptr},
     {{nullptr, nullptr}},
     "regexp_replace(regexp_replace(regexp_replace(s, '[A-Z]', 'X', 'g'), '[a-z]', 'x', 'g'), "
     "'[0-9]', 'n', 'g')"},
    {DEFAULT_SCHEMA,
     "regexp_instr",
     {"s", "p", nullptr},
     {{nullptr, nullptr}},
     "CAST(CASE WHEN s IS NULL OR p IS NULL THEN NULL WHEN regexp_matches(s, spark_java_regex(p)) "
     "THEN length(regexp_replace(s, '(?:' || spark_java_regex(p) || ')(?s:.*)', '')) + 1 ELSE 0 "
     "END AS INTEGER)"},
};

}  // namespace

void RegisterSparkStringFunctions(duckdb::ExtensionLoader& loader) {
  duckdb::ScalarFunction hash("spark_hash", {}, duckdb::LogicalType::INTEGER,
                              Hash<uint32_t, int32_t, MurmurInt, MurmurLong, MurmurBytes>,
                              BindHash);
  hash.varargs = duckdb::LogicalType::ANY;
  hash.null_handling = duckdb::FunctionNullHandling::SPECIAL_HANDLING;
  loader.RegisterFunction(hash);
  duckdb::ScalarFunction xxhash("xxhash64", {}, duckdb::LogicalType::BIGINT,
                                Hash<uint64_t, int64_t, XxInt, XxLong, XxBytes>, BindHash);
  xxhash.varargs = duckdb::LogicalType::ANY;
  xxhash.null_handling = duckdb::FunctionNullHandling::SPECIAL_HANDLING;
  loader.RegisterFunction(xxhash);
  loader.RegisterFunction(duckdb::ScalarFunction("crc32", {duckdb::LogicalType::BLOB},
                                                 duckdb::LogicalType::BIGINT, Crc32));
  loader.RegisterFunction(duckdb::ScalarFunction("crc32", {duckdb::LogicalType::VARCHAR},
                                                 duckdb::LogicalType::BIGINT, Crc32));
  loader.RegisterFunction(duckdb::ScalarFunction("soundex", {duckdb::LogicalType::VARCHAR},
                                                 duckdb::LogicalType::VARCHAR, Soundex));
  loader.RegisterFunction(duckdb::ScalarFunction(
      "spark_regex_with_group", {duckdb::LogicalType::VARCHAR, duckdb::LogicalType::INTEGER},
      duckdb::LogicalType::VARCHAR, RegexWithGroup));
  RegisterMacros(loader, kMacros);
}

}  // namespace sluice::engine::internal
