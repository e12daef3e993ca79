#include "engine/spark_json.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "common/json_escape.h"
#include "duckdb/common/types/blob.hpp"
#include "duckdb/common/types/date.hpp"
#include "duckdb/common/types/time.hpp"
#include "duckdb/common/types/timestamp.hpp"
#include "duckdb/common/vector_operations/unary_executor.hpp"
#include "duckdb/planner/expression.hpp"
#include "engine/spark_casts.h"
#include "engine/spark_macros.h"
#include "yyjson.hpp"

namespace sluice::engine::internal {
namespace {

// A JSON string as Jackson writes it: quotes, backslashes and control characters escaped.
void AppendJsonString(std::string* out, std::string_view s) {
  sluice::AppendJsonString(s, JsonEscape::kMinimal, out);
}

// Spark's JSON of a value (to_json): struct fields that are NULL left out, timestamps as
// yyyy-MM-dd'T'HH:mm:ss.SSSZ in UTC, dates yyyy-MM-dd, doubles as Java prints them, binaries in
// base64.
void AppendJson(std::string* out, const duckdb::Value& v) {
  using duckdb::LogicalTypeId;
  if (v.IsNull()) {
    *out += "null";
    return;
  }
  const duckdb::LogicalType& type = v.type();
  if (type.IsJSONType()) {  // a VARIANT (parse_json): its JSON text as it is
    *out += duckdb::StringValue::Get(v);
    return;
  }
  switch (type.id()) {
    case LogicalTypeId::BOOLEAN:
      *out += v.GetValue<bool>() ? "true" : "false";
      return;
    case LogicalTypeId::FLOAT:
      *out += SparkFloatText(v.GetValue<float>());
      return;
    case LogicalTypeId::DOUBLE:
      *out += SparkDoubleText(v.GetValue<double>());
      return;
    case LogicalTypeId::TINYINT:
    case LogicalTypeId::SMALLINT:
    case LogicalTypeId::INTEGER:
    case LogicalTypeId::BIGINT:
    case LogicalTypeId::HUGEINT:
    case LogicalTypeId::UTINYINT:
    case LogicalTypeId::USMALLINT:
    case LogicalTypeId::UINTEGER:
    case LogicalTypeId::UBIGINT:
    case LogicalTypeId::DECIMAL:
      *out += v.ToString();
      return;
    case LogicalTypeId::DATE:
      AppendJsonString(out, duckdb::Date::ToString(v.GetValue<duckdb::date_t>()));
      return;
    case LogicalTypeId::TIMESTAMP:
    case LogicalTypeId::TIMESTAMP_TZ: {
      duckdb::date_t date;
      duckdb::dtime_t time;
      duckdb::Timestamp::Convert(duckdb::timestamp_t(v.GetValueUnsafe<int64_t>()), date, time);
      int32_t h, m, sec, micros;
      duckdb::Time::Convert(time, h, m, sec, micros);
      char buf[32];
      std::snprintf(buf, sizeof(buf), "T%02d:%02d:%02d.%03dZ", h, m, sec, micros / 1000);
      AppendJsonString(out, duckdb::Date::ToString(date) + buf);
      return;
    }
    case LogicalTypeId::BLOB:
      AppendJsonString(out, duckdb::Blob::ToBase64(duckdb::string_t(duckdb::StringValue::Get(v))));
      return;
    case LogicalTypeId::LIST: {
      *out += '[';
      bool first = true;
      for (const auto& e : duckdb::ListValue::GetChildren(v)) {
        if (!first) *out += ',';
        first = false;
        AppendJson(out, e);
      }
      *out += ']';
      return;
    }
    case LogicalTypeId::MAP: {
      *out += '{';
      bool first = true;
      for (const auto& entry : duckdb::MapValue::GetChildren(v)) {
        const auto& kv = duckdb::StructValue::GetChildren(entry);
        if (!first) *out += ',';
        first = false;
        AppendJsonString(out, kv[0].type().id() == LogicalTypeId::VARCHAR
                                  ? duckdb::StringValue::Get(kv[0])
                                  : SparkText(kv[0]));
        *out += ':';
        AppendJson(out, kv[1]);
      }
      *out += '}';
      return;
    }
    case LogicalTypeId::STRUCT: {
      *out += '{';
      bool first = true;
      const auto& fields = duckdb::StructType::GetChildTypes(type);
      const auto& children = duckdb::StructValue::GetChildren(v);
      for (size_t k = 0; k < children.size(); ++k) {
        if (children[k].IsNull()) continue;
        if (!first) *out += ',';
        first = false;
        AppendJsonString(out, fields[k].first);
        *out += ':';
        AppendJson(out, children[k]);
      }
      *out += '}';
      return;
    }
    default:
      AppendJsonString(out, v.ToString());
      return;
  }
}

// The Spark type schema_of_json infers for a JSON value: integers BIGINT, other numbers DOUBLE,
// objects STRUCTs with their fields sorted by name, arrays of the merged type of their elements;
// NULL (and an empty array's element) STRING; types that do not merge become STRING.
struct InferredField;  // a struct field: its name and type (after Inferred, which it holds)
struct Inferred {
  enum Kind { kNull, kBoolean, kBigint, kDouble, kString, kArray, kStruct } kind = kNull;
  std::vector<InferredField> fields;  // kStruct, sorted by name
  std::vector<Inferred> element;      // kArray: one
};
struct InferredField {
  std::string name;
  Inferred type;
};

Inferred Merge(const Inferred& a, const Inferred& b) {
  if (a.kind == Inferred::kNull) return b;
  if (b.kind == Inferred::kNull) return a;
  Inferred out;
  if (a.kind == b.kind) {
    out = a;
    if (a.kind == Inferred::kArray) out.element = {Merge(a.element[0], b.element[0])};
    if (a.kind == Inferred::kStruct) {
      for (const auto& f : b.fields) {
        auto it = std::find_if(out.fields.begin(), out.fields.end(),
                               [&](const auto& g) { return g.name == f.name; });
        if (it == out.fields.end()) {
          out.fields.push_back(f);
        } else {
          it->type = Merge(it->type, f.type);
        }
      }
      std::sort(out.fields.begin(), out.fields.end(),
                [](const auto& x, const auto& y) { return x.name < y.name; });
    }
    return out;
  }
  const bool numbers = (a.kind == Inferred::kBigint || a.kind == Inferred::kDouble) &&
                       (b.kind == Inferred::kBigint || b.kind == Inferred::kDouble);
  out.kind = numbers ? Inferred::kDouble : Inferred::kString;
  return out;
}

Inferred Infer(duckdb_yyjson::yyjson_val* v) {
  namespace yy = duckdb_yyjson;
  Inferred out;
  switch (yy::yyjson_get_type(v)) {
    case YYJSON_TYPE_BOOL:
      out.kind = Inferred::kBoolean;
      break;
    case YYJSON_TYPE_NUM:
      out.kind = yy::yyjson_is_real(v) ? Inferred::kDouble : Inferred::kBigint;
      break;
    case YYJSON_TYPE_STR:
      out.kind = Inferred::kString;
      break;
    case YYJSON_TYPE_ARR: {
      out.kind = Inferred::kArray;
      Inferred element;
      size_t idx, max;
      yy::yyjson_val* e;
      yyjson_arr_foreach(v, idx, max, e) { element = Merge(element, Infer(e)); }
      out.element = {element};
      break;
    }
    case YYJSON_TYPE_OBJ: {
      out.kind = Inferred::kStruct;
      size_t idx, max;
      yy::yyjson_val *key, *val;
      yyjson_obj_foreach(v, idx, max, key, val) {
        Inferred field;
        field.kind = Inferred::kStruct;
        field.fields = {{yy::yyjson_get_str(key), Infer(val)}};
        out = Merge(out, field);
      }
      out.kind = Inferred::kStruct;
      break;
    }
    default:
      break;
  }
  return out;
}

std::string Ddl(const Inferred& t) {
  switch (t.kind) {
    case Inferred::kBoolean:
      return "BOOLEAN";
    case Inferred::kBigint:
      return "BIGINT";
    case Inferred::kDouble:
      return "DOUBLE";
    case Inferred::kArray:
      return "ARRAY<" + Ddl(t.element[0]) + ">";
    case Inferred::kStruct: {
      std::string out = "STRUCT<";
      for (size_t k = 0; k < t.fields.size(); ++k) {
        out += (k ? ", " : "") + t.fields[k].name + ": " + Ddl(t.fields[k].type);
      }
      return out + ">";
    }
    default:
      return "STRING";
  }
}

void SchemaOfJson(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  duckdb::UnaryExecutor::Execute<duckdb::string_t, duckdb::string_t>(
      args.data[0], result, args.size(), [&](duckdb::string_t s) {
        namespace yy = duckdb_yyjson;
        yy::yyjson_doc* doc = yy::yyjson_read(s.GetData(), s.GetSize(), 0);
        if (doc == nullptr) {
          throw duckdb::InvalidInputException("schema_of_json: the text is not JSON: %s",
                                              s.GetString());
        }
        const std::string ddl = Ddl(Infer(yy::yyjson_doc_get_root(doc)));
        yy::yyjson_doc_free(doc);
        return duckdb::StringVector::AddString(result, ddl);
      });
}

void ToJson(duckdb::DataChunk& args, duckdb::ExpressionState&, duckdb::Vector& result) {
  for (duckdb::idx_t row = 0; row < args.size(); ++row) {
    const duckdb::Value v = args.data[0].GetValue(row);
    if (v.IsNull()) {
      duckdb::FlatVector::SetNull(result, row, true);
      continue;
    }
    std::string text;
    AppendJson(&text, v);
    duckdb::FlatVector::GetData<duckdb::string_t>(result)[row] =
        duckdb::StringVector::AddString(result, text);
  }
  if (args.AllConstant()) result.SetVectorType(duckdb::VectorType::CONSTANT_VECTOR);
}

duckdb::unique_ptr<duckdb::FunctionData> BindToJson(
    duckdb::ClientContext&, duckdb::ScalarFunction& bound,
    duckdb::vector<duckdb::unique_ptr<duckdb::Expression>>& arguments) {
  bound.arguments[0] = arguments[0]->return_type;
  return nullptr;
}

const duckdb::DefaultMacro kMacros[] = {
    {DEFAULT_SCHEMA,
     "get_json_object",
     {"j", "p", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN NOT json_valid(j) THEN NULL WHEN NOT contains(p, '*') THEN "
     "CAST(json_extract_string(j, spark_json_path(p)) AS VARCHAR) WHEN "
     "json_array_length(main.to_json(json_extract(j, spark_json_path(p)))) = 0 THEN NULL WHEN "
     "json_array_length(main.to_json(json_extract(j, spark_json_path(p)))) = 1 THEN "
     "json_extract_string(main.to_json(json_extract(j, spark_json_path(p))), "
     "'$[0]') ELSE CAST(main.to_json(json_extract(j, spark_json_path(p))) AS VARCHAR) END"},
    {DEFAULT_SCHEMA,
     "spark_try_parse_json",
     {"j", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN json_valid(j) THEN json(j) END"},
    {DEFAULT_SCHEMA,
     "spark_json_path",
     {"p", nullptr},
     {{nullptr, nullptr}},
     "regexp_replace(p, '\\[''([^'']*)''\\]', '.\"\\1\"', 'g')"},
    {DEFAULT_SCHEMA,
     "json_object_keys",
     {"j", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN json_valid(j) AND json_type(j) = 'OBJECT' THEN json_keys(j) END"},
    {DEFAULT_SCHEMA,
     "spark_json_array_length",
     {"j", nullptr},
     {{nullptr, nullptr}},
     "CASE WHEN json_valid(j) AND json_type(j) = 'ARRAY' THEN CAST(json_array_length(j) AS "
     "INTEGER) END"},
};

}  // namespace

void RegisterSparkJson(duckdb::ExtensionLoader& loader) {
  loader.RegisterFunction(duckdb::ScalarFunction("spark_to_json", {duckdb::LogicalType::ANY},
                                                 duckdb::LogicalType::VARCHAR, ToJson, BindToJson));
  loader.RegisterFunction(duckdb::ScalarFunction("schema_of_json", {duckdb::LogicalType::VARCHAR},
                                                 duckdb::LogicalType::VARCHAR, SchemaOfJson));
  RegisterMacros(loader, kMacros);
}

}  // namespace sluice::engine::internal
