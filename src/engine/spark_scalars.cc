#include "engine/spark_scalars.h"

#include <string>
#include <vector>

#include "duckdb/common/vector_operations/unary_executor.hpp"
#include "duckdb/planner/expression.hpp"
#include "engine/spark_macros.h"

namespace sluice::engine::internal {
namespace {

void CharLength(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::string_t, int32_t>(
      args.data[0], result, args.size(), [](duckdb::string_t s) {
        int32_t n = 0;
        const char* p = s.GetData();
        for (duckdb::idx_t i = 0; i < s.GetSize(); ++i) {
          if ((static_cast<unsigned char>(p[i]) & 0xC0) != 0x80) ++n;  // not a continuation byte
        }
        return n;
      });
}

void ByteLength(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::string_t, int32_t>(
      args.data[0], result, args.size(),
      [](duckdb::string_t s) { return static_cast<int32_t>(s.GetSize()); });
}

duckdb::unique_ptr<duckdb::FunctionData> BindLength(
    duckdb::ClientContext&, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
  if (arguments[0]->return_type.id() == duckdb::LogicalTypeId::BLOB) {
    bound.arguments[0] = duckdb::LogicalType::BLOB;
    bound.function = ByteLength;
  } else {
    bound.arguments[0] = duckdb::LogicalType::VARCHAR;  // the binder adds the cast
    bound.function = CharLength;
  }
  return nullptr;
}

template <std::string (*Convert)(std::string_view)>
void ConvertText(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::string_t, duckdb::string_t>(
      args.data[0], result, args.size(), [&](duckdb::string_t s) {
        return duckdb::StringVector::AddString(result, Convert(s.GetString()));
      });
}

// concat_ws(sep, a, b, ...): the strings and the elements of the string arrays among the
// arguments, NULLs skipped, joined by sep; NULL when sep is NULL.
void ConcatWs(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  const duckdb::idx_t n = args.size();
  std::vector<duckdb::UnifiedVectorFormat> formats(args.ColumnCount());
  std::vector<duckdb::UnifiedVectorFormat> children(args.ColumnCount());
  for (duckdb::idx_t c = 0; c < args.ColumnCount(); ++c) {
    args.data[c].ToUnifiedFormat(n, formats[c]);
    if (args.data[c].GetType().id() == duckdb::LogicalTypeId::LIST) {
      duckdb::Vector& child = duckdb::ListVector::GetEntry(args.data[c]);
      child.ToUnifiedFormat(duckdb::ListVector::GetListSize(args.data[c]), children[c]);
    }
  }
  auto* out = duckdb::FlatVector::GetData<duckdb::string_t>(result);
  auto& validity = duckdb::FlatVector::Validity(result);
  for (duckdb::idx_t row = 0; row < n; ++row) {
    const duckdb::idx_t sep_at = formats[0].sel->get_index(row);
    if (!formats[0].validity.RowIsValid(sep_at)) {
      validity.SetInvalid(row);
      continue;
    }
    const std::string sep =
        duckdb::UnifiedVectorFormat::GetData<duckdb::string_t>(formats[0])[sep_at].GetString();
    std::string text;
    bool first = true;
    auto add = [&](const duckdb::string_t& s) {
      if (!first) text += sep;
      text.append(s.GetData(), s.GetSize());
      first = false;
    };
    for (duckdb::idx_t c = 1; c < args.ColumnCount(); ++c) {
      const duckdb::idx_t at = formats[c].sel->get_index(row);
      if (!formats[c].validity.RowIsValid(at)) continue;
      if (args.data[c].GetType().id() != duckdb::LogicalTypeId::LIST) {
        add(duckdb::UnifiedVectorFormat::GetData<duckdb::string_t>(formats[c])[at]);
        continue;
      }
      const auto entry = duckdb::UnifiedVectorFormat::GetData<duckdb::list_entry_t>(formats[c])[at];
      const auto* values = duckdb::UnifiedVectorFormat::GetData<duckdb::string_t>(children[c]);
      for (duckdb::idx_t k = entry.offset; k < entry.offset + entry.length; ++k) {
        const duckdb::idx_t v = children[c].sel->get_index(k);
        if (children[c].validity.RowIsValid(v)) add(values[v]);
      }
    }
    out[row] = duckdb::StringVector::AddString(result, text);
  }
  if (args.AllConstant()) result.SetVectorType(duckdb::VectorType::CONSTANT_VECTOR);
}

duckdb::unique_ptr<duckdb::FunctionData> BindConcatWs(
    duckdb::ClientContext&, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
  if (arguments.empty()) {
    throw duckdb::BinderException("concat_ws: expects a separator and the values to join");
  }
  bound.arguments.clear();
  for (duckdb::idx_t i = 0; i < arguments.size(); ++i) {
    const bool list = arguments[i]->return_type.id() == duckdb::LogicalTypeId::LIST;
    if (list && i == 0) throw duckdb::BinderException("concat_ws: the separator is an array");
    // The binder casts each argument: a string, or an array of strings.
    bound.arguments.push_back(list ? duckdb::LogicalType::LIST(duckdb::LogicalType::VARCHAR)
                                   : duckdb::LogicalType::VARCHAR);
  }
  return nullptr;
}

// Macros. Spark's NULL rules: a NULL argument gives NULL unless the function says otherwise.
const duckdb::DefaultMacro kMacros[] = {
    {DEFAULT_SCHEMA, "nvl", {"a", "b", nullptr}, {{nullptr, nullptr}}, "coalesce(a, b)"},
    {DEFAULT_SCHEMA,
     "nvl2",
     {"a", "b", "c", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NOT NULL THEN b ELSE c END"},
    {DEFAULT_SCHEMA, "isnull", {"x", nullptr}, {{nullptr, nullptr}}, "x IS NULL"},
    {DEFAULT_SCHEMA, "isnotnull", {"x", nullptr}, {{nullptr, nullptr}}, "x IS NOT NULL"},
    {DEFAULT_SCHEMA,
     "nanvl",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN isnan(a) THEN CAST(b AS DOUBLE) ELSE CAST(a AS DOUBLE) END"},
    {DEFAULT_SCHEMA,
     "equal_null",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "a IS NOT DISTINCT FROM b"},
    {DEFAULT_SCHEMA,
     "try_divide",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN b = 0 THEN NULL ELSE spark_divide(a, b) END"},
    {DEFAULT_SCHEMA,
     "try_mod",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN b = 0 THEN NULL ELSE spark_remainder(a, b) END"},
    {DEFAULT_SCHEMA, "try_add", {"a", "b", nullptr}, {{nullptr, nullptr}}, "try(a + b)"},
    {DEFAULT_SCHEMA, "try_subtract", {"a", "b", nullptr}, {{nullptr, nullptr}}, "try(a - b)"},
    {DEFAULT_SCHEMA, "try_multiply", {"a", "b", nullptr}, {{nullptr, nullptr}}, "try(a * b)"},
    {DEFAULT_SCHEMA, "pmod", {"a", "b", nullptr}, {{nullptr, nullptr}}, "((a % b) + b) % b"},
    {DEFAULT_SCHEMA, "signum", {"x", nullptr}, {{nullptr, nullptr}}, "CAST(sign(x) AS DOUBLE)"},
    {DEFAULT_SCHEMA,
     "spark_sqrt",
     {"x", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN x < 0 THEN CAST('NaN' AS DOUBLE) ELSE sqrt(x) END"},
    {DEFAULT_SCHEMA,
     "bround",
     {"x", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN abs(x - trunc(x)) = 0.5 THEN trunc(x) + CASE WHEN trunc(x) % 2 = 0 THEN 0 ELSE "
     "sign(x) END ELSE round(x) END"},
    {DEFAULT_SCHEMA, "bround", {"x", "d", nullptr}, {{nullptr, nullptr}}, "round_even(x, d)"},
    {DEFAULT_SCHEMA,
     "width_bucket",
     {"v", "lo", "hi", "n", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN n <= 0 THEN error('width_bucket: the number of buckets must be positive, got ' || "
     "n) WHEN lo = hi THEN error('width_bucket: the bounds must differ') WHEN lo < hi THEN (CASE "
     "WHEN v < lo THEN 0 WHEN v >= hi THEN n + 1 ELSE CAST(floor((CAST(v AS DOUBLE) - lo) * n / "
     "(CAST(hi AS DOUBLE) - lo)) AS BIGINT) + 1 END) ELSE (CASE WHEN v > lo THEN 0 WHEN v <= hi "
     "THEN n + 1 ELSE CAST(floor((CAST(lo AS DOUBLE) - v) * n / (CAST(lo AS DOUBLE) - hi)) AS "
     "BIGINT) + 1 END) END"},
    {DEFAULT_SCHEMA,
     "spark_tuple",
     {"a", "b", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE row(a, b) END"},
    {DEFAULT_SCHEMA,
     "spark_tuple",
     {"a", "b", "c", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR b IS NULL OR c IS NULL THEN NULL ELSE row(a, b, c) END"},
    {DEFAULT_SCHEMA,
     "spark_tuple",
     {"a", "b", "c", "d", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN a IS NULL OR b IS NULL OR c IS NULL OR d IS NULL THEN NULL ELSE row(a, b, c, d) "
     "END"},
    {DEFAULT_SCHEMA, "rand", {nullptr}, {{nullptr, nullptr}}, "random()"},
    {DEFAULT_SCHEMA, "rand", {"seed", nullptr}, {{nullptr, nullptr}}, "random()"},
    {DEFAULT_SCHEMA, "shiftleft", {"a", "n", nullptr}, {{nullptr, nullptr}}, "a << n"},
    {DEFAULT_SCHEMA, "shiftright", {"a", "n", nullptr}, {{nullptr, nullptr}}, "a >> n"},
    {DEFAULT_SCHEMA, "startswith", {"a", "b", nullptr}, {{nullptr, nullptr}}, "starts_with(a, b)"},
    {DEFAULT_SCHEMA, "endswith", {"a", "b", nullptr}, {{nullptr, nullptr}}, "suffix(a, b)"},
    {DEFAULT_SCHEMA, "unbase64", {"s", nullptr}, {{nullptr, nullptr}}, "from_base64(s)"},
    {DEFAULT_SCHEMA,
     "sha2",
     {"s", "bits", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN bits IN (0, 256) THEN sha256(s) ELSE error('sha2: only 256 bits (or 0) are "
     "supported, got ' || bits) END"},
    {DEFAULT_SCHEMA, "space", {"n", nullptr}, {{nullptr, nullptr}}, "repeat(' ', n)"},
    {DEFAULT_SCHEMA, "btrim", {"s", nullptr}, {{nullptr, nullptr}}, "trim(s)"},
    {DEFAULT_SCHEMA, "btrim", {"s", "c", nullptr}, {{nullptr, nullptr}}, "trim(s, c)"},
    {DEFAULT_SCHEMA, "elt", {"n", "a", nullptr}, {{nullptr, nullptr}}, "[a][n]"},
    {DEFAULT_SCHEMA, "elt", {"n", "a", "b", nullptr}, {{nullptr, nullptr}}, "[a, b][n]"},
    {DEFAULT_SCHEMA, "elt", {"n", "a", "b", "c", nullptr}, {{nullptr, nullptr}}, "[a, b, c][n]"},
    {DEFAULT_SCHEMA,
     "elt",
     {"n", "a", "b", "c", "d", nullptr},
     {{nullptr, nullptr}},
     "[a, b, c, d][n]"},
    {DEFAULT_SCHEMA,
     "elt",
     {"n", "a", "b", "c", "d", "e", nullptr},
     {{nullptr, nullptr}},
     "[a, b, c, d, e][n]"},
    {DEFAULT_SCHEMA,
     "find_in_set",
     {"s", "l", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN s IS NULL OR l IS NULL THEN NULL WHEN contains(s, ',') THEN 0 ELSE "
     "CAST(coalesce(list_position(string_split(l, ','), s), 0) AS INTEGER) END"},
    {DEFAULT_SCHEMA,
     "initcap",
     {"s", nullptr},
     {{nullptr, nullptr}},
     "array_to_string(list_transform(string_split(lower(s), ' '), lambda w: upper(left(w, 1)) || "
     "substr(w, 2)), ' ')"},
    {DEFAULT_SCHEMA,
     "locate",
     {"sub", "s", nullptr},
     {{nullptr, nullptr}},
     "CAST(instr(s, sub) AS INTEGER)"},
    {DEFAULT_SCHEMA,
     "locate",
     {"sub", "s", "pos", nullptr},
     {{nullptr, nullptr}},
     "CAST(CASE WHEN pos < 1 THEN 0 WHEN instr(substr(s, pos), sub) = 0 THEN 0 ELSE "
     "instr(substr(s, pos), sub) + pos - 1 END AS INTEGER)"},
    {DEFAULT_SCHEMA,
     "substring_index",
     {"s", "d", "n", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN n = 0 OR d = '' THEN '' WHEN n > 0 THEN array_to_string(string_split(s, d)[1:n], "
     "d) ELSE array_to_string(string_split(s, d)[n:], d) END"},
    {DEFAULT_SCHEMA, "format_string", {"f", nullptr}, {{nullptr, nullptr}}, "printf(f)"},
    {DEFAULT_SCHEMA, "format_string", {"f", "a", nullptr}, {{nullptr, nullptr}}, "printf(f, a)"},
    {DEFAULT_SCHEMA,
     "format_string",
     {"f", "a", "b", nullptr},
     {{nullptr, nullptr}},
     "printf(f, a, b)"},
    {DEFAULT_SCHEMA,
     "format_string",
     {"f", "a", "b", "c", nullptr},
     {{nullptr, nullptr}},
     "printf(f, a, b, c)"},
    {DEFAULT_SCHEMA,
     "format_string",
     {"f", "a", "b", "c", "d", nullptr},
     {{nullptr, nullptr}},
     "printf(f, a, b, c, d)"},
    {DEFAULT_SCHEMA,
     "format_number",
     {"x", "d", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN d < 0 THEN NULL ELSE format('{:,.' || CAST(d AS INTEGER) || 'f}', CAST(x AS "
     "DOUBLE)) END"},
    {DEFAULT_SCHEMA,
     "regexp_like",
     {"s", "p", nullptr},
     {{nullptr, nullptr}},
     "regexp_matches(s, spark_java_regex(p))"},
    {DEFAULT_SCHEMA,
     "regexp",
     {"s", "p", nullptr},
     {{nullptr, nullptr}},
     "regexp_matches(s, spark_java_regex(p))"},
    {DEFAULT_SCHEMA,
     "regexp_count",
     {"s", "p", nullptr},
     {{nullptr, nullptr}},
     "CAST(len(regexp_extract_all(s, spark_java_regex(p), 0)) AS INTEGER)"},
    {DEFAULT_SCHEMA,
     "regexp_substr",
     {"s", "p", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN regexp_matches(s, spark_java_regex(p)) THEN regexp_extract(s, "
     "spark_java_regex(p), 0) END"},
    {DEFAULT_SCHEMA,
     "spark_regexp_replace",
     {"s", "p", "r", nullptr},
     {{nullptr, nullptr}},
     "regexp_replace(s, spark_java_regex(p), spark_java_replacement(r), 'g')"},
    {DEFAULT_SCHEMA,
     "spark_regexp_replace",
     {"s", "p", "r", "pos", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN pos < 1 THEN error('regexp_replace: the position must be >= 1, got ' || pos) "
     "ELSE substr(s, 1, pos - 1) || regexp_replace(substr(s, pos), spark_java_regex(p), "
     "spark_java_replacement(r), 'g') END"},
    {DEFAULT_SCHEMA,
     "sort_array",
     {"a", nullptr},
     {{nullptr, nullptr}},
     "list_sort(a, 'ASC', 'NULLS FIRST')"},
    {DEFAULT_SCHEMA,
     "sort_array",
     {"a", "ascending", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN ascending THEN list_sort(a, 'ASC', 'NULLS FIRST') ELSE list_sort(a, 'DESC', 'NULLS "
     "LAST') END"},
    {DEFAULT_SCHEMA,
     "spark_array_sort",
     {"a", nullptr},
     {{nullptr, nullptr}},
     "list_sort(a, 'ASC', 'NULLS LAST')"},
    {DEFAULT_SCHEMA,
     "spark_split",
     {"s", "p", nullptr},
     {{nullptr, nullptr}},
     "regexp_split_to_array(s, spark_java_regex(p))"},
};

}  // namespace

std::string JavaReplacementToRe2(std::string_view r) {
  std::string out;
  for (size_t i = 0; i < r.size(); ++i) {
    const char c = r[i];
    if (c == '\\') {
      if (i + 1 >= r.size()) {
        throw duckdb::InvalidInputException(
            "regexp_replace: the replacement '%s' ends with a lone backslash", std::string(r));
      }
      const char next = r[++i];
      out += next == '\\' ? std::string("\\\\") : std::string(1, next);  // \x is x
      continue;
    }
    if (c == '$') {
      if (i + 1 < r.size() && r[i + 1] >= '0' && r[i + 1] <= '9') {
        out += '\\';
        out += r[++i];
        if (i + 1 < r.size() && r[i + 1] >= '0' && r[i + 1] <= '9') {
          throw duckdb::InvalidInputException(
              "regexp_replace: group references above $9 are not supported (in '%s')",
              std::string(r));
        }
        continue;
      }
      throw duckdb::InvalidInputException(
          "regexp_replace: '$' in the replacement '%s' must name a group ($1) or be escaped (\\$); "
          "named groups (${name}) are not supported",
          std::string(r));
    }
    out += c;
  }
  return out;
}

// A Java regex construct RE2 does not have: refused by name, never matched otherwise.
[[noreturn]] void Unsupported(std::string_view p, const char* construct) {
  throw duckdb::InvalidInputException(
      "the Java regex '%s' uses %s, which Sluice's regex engine (RE2) does not support",
      std::string(p), construct);
}

std::string JavaRegexToRe2(std::string_view p) {
  std::string out;
  bool in_class = false;  // within [...]
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\' && i + 1 < p.size()) {  // an escape: copied as it is
      if (p[i + 1] >= '1' && p[i + 1] <= '9') Unsupported(p, "a backreference (\\1)");
      if ((p[i + 1] == 'p' || p[i + 1] == 'P') && i + 2 < p.size() && p[i + 2] == '{') {
        const size_t close = p.find('}', i + 3);
        const std::string_view name =
            p.substr(i + 3, close == std::string_view::npos ? 0 : close - i - 3);
        // RE2 knows Unicode categories and scripts (\p{L}, \p{Greek}), not Java's POSIX and
        // java.lang.Character classes (\p{Lower}, \p{javaLowerCase}, \p{IsAlphabetic}).
        static const char* const kJava[] = {"Lower", "Upper",  "ASCII", "Alpha", "Digit",
                                            "Alnum", "Punct",  "Graph", "Print", "Blank",
                                            "Cntrl", "XDigit", "Space"};
        bool java = name.substr(0, 4) == "java" || name.substr(0, 2) == "Is";
        for (const char* k : kJava) java = java || name == k;
        if (java) Unsupported(p, "a Java character class (\\p{...})");
      }
      out += p[i];
      out += p[++i];
      continue;
    }
    if (p[i] == '[') in_class = true;
    if (p[i] == ']') in_class = false;
    if (in_class) {
      out += p[i];
      continue;
    }
    if (p.substr(i, 3) == "(?=" || p.substr(i, 3) == "(?!") Unsupported(p, "a lookahead (?=...)");
    if (p.substr(i, 4) == "(?<=" || p.substr(i, 4) == "(?<!") {
      Unsupported(p, "a lookbehind (?<=...)");
    }
    if (p.substr(i, 3) == "(?>") Unsupported(p, "an atomic group (?>...)");
    if (p[i] == '+' && i > 0 &&
        (p[i - 1] == '*' || p[i - 1] == '+' || p[i - 1] == '?' || p[i - 1] == '}') &&
        !(i > 1 && p[i - 2] == '\\')) {
      Unsupported(p, "a possessive quantifier (*+, ++, ?+)");
    }
    if (p.substr(i, 3) == "(?<" && i + 3 < p.size() && p[i + 3] != '=' && p[i + 3] != '!') {
      out += "(?P<";
      i += 2;
      continue;
    }
    out += p[i];
  }
  return out;
}

void RegisterSparkScalars(duckdb::ExtensionLoader& loader) {
  duckdb::ScalarFunction length("spark_length", {duckdb::LogicalType::ANY},
                                duckdb::LogicalType::INTEGER, CharLength, BindLength);
  duckdb::ScalarFunction replacement("spark_java_replacement", {duckdb::LogicalType::VARCHAR},
                                     duckdb::LogicalType::VARCHAR,
                                     ConvertText<JavaReplacementToRe2>);
  duckdb::ScalarFunction regex("spark_java_regex", {duckdb::LogicalType::VARCHAR},
                               duckdb::LogicalType::VARCHAR, ConvertText<JavaRegexToRe2>);
  duckdb::ScalarFunction concat_ws("spark_concat_ws", {}, duckdb::LogicalType::VARCHAR, ConcatWs,
                                   BindConcatWs);
  concat_ws.varargs = duckdb::LogicalType::ANY;
  concat_ws.null_handling = duckdb::FunctionNullHandling::SPECIAL_HANDLING;
  loader.RegisterFunction(concat_ws);
  loader.RegisterFunction(length);
  loader.RegisterFunction(replacement);
  loader.RegisterFunction(regex);
  RegisterMacros(loader, kMacros);
}

}  // namespace sluice::engine::internal
