#include "connect/local_relation.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "connect/arrow_ipc_reader.h"
#include "connect/plan_translator.h"
#include "spark/connect/relations.pb.h"

namespace sluice::connect {

namespace sc = spark::connect;

namespace {

struct Column {
  std::string name;
  std::string type;  // Spark SQL type name; "VOID": the NULL type, not cast
};

Result<std::string> JsonTypeToSql(const nlohmann::json& type) {
  if (!type.is_string()) {
    std::string kind = type.dump();
    if (type.is_object() && type.contains("type") && type["type"].is_string()) {
      kind = type["type"].get<std::string>();
    }
    return Status::NotSupported(
        "Spark Connect: a local relation with a column of the nested type " + kind +
        " is not supported by Sluice yet");
  }
  const std::string name = type.get<std::string>();
  static const std::pair<const char*, const char*> kNames[] = {
      {"boolean", "BOOLEAN"}, {"byte", "TINYINT"},        {"short", "SMALLINT"},
      {"integer", "INT"},     {"long", "BIGINT"},         {"float", "FLOAT"},
      {"double", "DOUBLE"},   {"string", "STRING"},       {"binary", "BINARY"},
      {"date", "DATE"},       {"timestamp", "TIMESTAMP"}, {"timestamp_ntz", "TIMESTAMP_NTZ"},
      {"void", "VOID"},       {"null", "VOID"},
  };
  for (const auto& [spark, sql] : kNames) {
    if (name == spark) return std::string(sql);
  }
  int p = 0, s = 0;
  char tail = 0;
  if (name == "decimal") return std::string("DECIMAL(10,0)");
  if (std::sscanf(name.c_str(), "decimal(%d,%d)%c", &p, &s, &tail) == 2 && p >= 1 && p <= 38 &&
      s >= 0 && s <= p) {
    return "DECIMAL(" + std::to_string(p) + "," + std::to_string(s) + ")";
  }
  return Status::NotSupported("Spark Connect: a local relation with a column of type '" + name +
                              "' is not supported by Sluice yet");
}

Result<std::string> ArrowTypeToSql(const ArrowField& f) {
  switch (f.type.id) {
    case ArrowTypeId::kNull:
      return std::string("VOID");
    case ArrowTypeId::kBool:
      return std::string("BOOLEAN");
    case ArrowTypeId::kInt8:
      return std::string("TINYINT");
    case ArrowTypeId::kInt16:
      return std::string("SMALLINT");
    case ArrowTypeId::kInt32:
      return std::string("INT");
    case ArrowTypeId::kInt64:
      return std::string("BIGINT");
    case ArrowTypeId::kFloat:
      return std::string("FLOAT");
    case ArrowTypeId::kDouble:
      return std::string("DOUBLE");
    case ArrowTypeId::kString:
      return std::string("STRING");
    case ArrowTypeId::kBinary:
      return std::string("BINARY");
    case ArrowTypeId::kDate32:
      return std::string("DATE");
    case ArrowTypeId::kTimestampMicros:
      return std::string(f.type.timezone.empty() ? "TIMESTAMP_NTZ" : "TIMESTAMP");
    case ArrowTypeId::kDecimal128:
      return "DECIMAL(" + std::to_string(f.type.precision) + "," + std::to_string(f.type.scale) +
             ")";
  }
  return Status::Internal("Spark Connect: an Arrow type without a Spark name");
}

// The unscaled value with `scale` digits after the point.
std::string DecimalText(__int128 v, int32_t scale) {
  bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : v;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  if (scale > 0) {
    if (digits.size() <= static_cast<size_t>(scale)) {
      digits.insert(0, static_cast<size_t>(scale) - digits.size() + 1, '0');
    }
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  }
  return (negative ? "-" : "") + digits;
}

// Row r of column c as a Spark SQL literal.
Result<std::string> CellSql(const ArrowField& f, const ArrowColumnValues& col, size_t r) {
  if (!col.valid[r]) return std::string("NULL");
  sc::Expression e;
  sc::Expression::Literal* l = e.mutable_literal();
  switch (f.type.id) {
    case ArrowTypeId::kNull:
      return std::string("NULL");
    case ArrowTypeId::kBool:
      l->set_boolean(col.ints[r] != 0);
      break;
    case ArrowTypeId::kInt8:
      l->set_byte(static_cast<int32_t>(col.ints[r]));
      break;
    case ArrowTypeId::kInt16:
      l->set_short_(static_cast<int32_t>(col.ints[r]));
      break;
    case ArrowTypeId::kInt32:
      l->set_integer(static_cast<int32_t>(col.ints[r]));
      break;
    case ArrowTypeId::kInt64:
      l->set_long_(col.ints[r]);
      break;
    case ArrowTypeId::kFloat:
      l->set_float_(static_cast<float>(col.doubles[r]));
      break;
    case ArrowTypeId::kDouble:
      l->set_double_(col.doubles[r]);
      break;
    case ArrowTypeId::kString:
      l->set_string(col.bytes[r]);
      break;
    case ArrowTypeId::kBinary:
      l->set_binary(col.bytes[r]);
      break;
    case ArrowTypeId::kDate32:
      l->set_date(static_cast<int32_t>(col.ints[r]));
      break;
    case ArrowTypeId::kTimestampMicros:
      if (f.type.timezone.empty()) {
        l->set_timestamp_ntz(col.ints[r]);
      } else {
        l->set_timestamp(col.ints[r]);
      }
      break;
    case ArrowTypeId::kDecimal128: {
      sc::Expression::Literal::Decimal* d = l->mutable_decimal();
      d->set_value(DecimalText(col.decimals[r], f.type.scale));
      d->set_precision(f.type.precision);
      d->set_scale(f.type.scale);
      break;
    }
  }
  return LiteralToSql(e);
}

Result<std::vector<Column>> SchemaColumns(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') {
    return Status::NotSupported(
        "Spark Connect: a local relation whose schema is not Spark's JSON of a "
        "struct type (a DDL string) is not supported by Sluice yet");
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("type", "") != "struct" ||
      !j.contains("fields") || !j["fields"].is_array()) {
    return Status::InvalidArgument(
        "Spark Connect: the schema of a local relation is not Spark's JSON "
        "of a struct type: " +
        text.substr(0, 200));
  }
  std::vector<Column> out;
  for (const nlohmann::json& f : j["fields"]) {
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("type")) {
      return Status::InvalidArgument(
          "Spark Connect: a field of a local relation's schema has no "
          "name or type: " +
          f.dump());
    }
    Column c;
    c.name = f["name"].get<std::string>();
    SLUICE_ASSIGN_OR_RETURN(c.type, JsonTypeToSql(f["type"]));
    out.push_back(std::move(c));
  }
  return out;
}

std::string Projection(const std::vector<Column>& columns, const std::string& source_prefix) {
  std::string out;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c) out += ", ";
    std::string source = source_prefix.empty() ? "NULL" : source_prefix + std::to_string(c);
    if (columns[c].type == "VOID") {
      out += source_prefix.empty() ? "NULL" : source;
    } else {
      out += "CAST(" + source + " AS " + columns[c].type + ")";
    }
    out += " AS " + QuoteName(columns[c].name);
  }
  return out;
}

}  // namespace

Result<std::string> SparkJsonTypeToSql(const std::string& json_type_text) {
  nlohmann::json j = nlohmann::json::parse(json_type_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::InvalidArgument("Spark Connect: not a JSON type: " + json_type_text);
  }
  return JsonTypeToSql(j);
}

Result<std::string> LocalRelationSql(const sc::LocalRelation& local) {
  std::vector<Column> columns;
  if (local.has_schema()) {
    SLUICE_ASSIGN_OR_RETURN(columns, SchemaColumns(local.schema()));
  }
  if (!local.has_data()) {
    if (columns.empty()) {
      return Status::InvalidArgument(
          "Spark Connect: a local relation with neither data nor schema");
    }
    return "SELECT " + Projection(columns, "") + " LIMIT 0";
  }
  SLUICE_ASSIGN_OR_RETURN(ArrowTableValues table, ReadArrowStream(local.data()));
  if (!local.has_schema()) {
    for (const ArrowField& f : table.fields) {
      Column c;
      c.name = f.name;
      SLUICE_ASSIGN_OR_RETURN(c.type, ArrowTypeToSql(f));
      columns.push_back(std::move(c));
    }
  }
  if (columns.size() != table.fields.size()) {
    return Status::InvalidArgument("Spark Connect: a local relation's schema has " +
                                   std::to_string(columns.size()) + " columns, its data " +
                                   std::to_string(table.fields.size()));
  }
  if (columns.empty()) {
    return Status::NotSupported(
        "Spark Connect: a local relation without columns is not supported by "
        "Sluice yet");
  }
  if (table.num_rows == 0) return "SELECT " + Projection(columns, "") + " LIMIT 0";
  std::string values;
  for (int64_t r = 0; r < table.num_rows; ++r) {
    values += r ? ", (" : "(";
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c) values += ", ";
      SLUICE_ASSIGN_OR_RETURN(std::string cell,
                              CellSql(table.fields[c], table.columns[c], static_cast<size_t>(r)));
      values += cell;
    }
    values += ")";
  }
  std::string names;
  for (size_t c = 0; c < columns.size(); ++c) names += (c ? ", _c" : "_c") + std::to_string(c);
  return "SELECT " + Projection(columns, "_c") + " FROM (VALUES " + values + ") AS _local(" +
         names + ")";
}

}  // namespace sluice::connect
