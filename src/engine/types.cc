// DataType <-> SQL text and <-> duckdb::LogicalType.
#include "engine/types.h"

#include <algorithm>
#include <cctype>

#include "common/strings.h"
#include "engine/duckdb_convert.h"

namespace sluice::engine {
namespace {

const char* ScalarSql(TypeId id) {
  switch (id) {
    case TypeId::kNull:
      return "NULL";
    case TypeId::kBoolean:
      return "BOOLEAN";
    case TypeId::kTinyInt:
      return "TINYINT";
    case TypeId::kSmallInt:
      return "SMALLINT";
    case TypeId::kInteger:
      return "INTEGER";
    case TypeId::kBigInt:
      return "BIGINT";
    case TypeId::kHugeInt:
      return "HUGEINT";
    case TypeId::kFloat:
      return "FLOAT";
    case TypeId::kDouble:
      return "DOUBLE";
    case TypeId::kVarchar:
      return "VARCHAR";
    case TypeId::kBlob:
      return "BLOB";
    case TypeId::kDate:
      return "DATE";
    case TypeId::kTime:
      return "TIME";
    case TypeId::kTimestamp:
      return "TIMESTAMP";
    case TypeId::kTimestampTz:
      return "TIMESTAMP WITH TIME ZONE";
    case TypeId::kInterval:
      return "INTERVAL";
    case TypeId::kUuid:
      return "UUID";
    default:
      return nullptr;
  }
}

// True when `type` (or a nested type) is one DuckDB could not resolve without a catalog.
bool HasUnresolvedType(const duckdb::LogicalType& type) {
  switch (type.id()) {
    case duckdb::LogicalTypeId::USER:
    case duckdb::LogicalTypeId::INVALID:
    case duckdb::LogicalTypeId::UNKNOWN:
    case duckdb::LogicalTypeId::ANY:
      return true;
    case duckdb::LogicalTypeId::STRUCT:
    case duckdb::LogicalTypeId::UNION:
      for (auto& child : duckdb::StructType::GetChildTypes(type)) {
        if (HasUnresolvedType(child.second)) return true;
      }
      return false;
    case duckdb::LogicalTypeId::LIST:
      return HasUnresolvedType(duckdb::ListType::GetChildType(type));
    case duckdb::LogicalTypeId::ARRAY:
      return HasUnresolvedType(duckdb::ArrayType::GetChildType(type));
    case duckdb::LogicalTypeId::MAP:
      return HasUnresolvedType(duckdb::MapType::KeyType(type)) ||
             HasUnresolvedType(duckdb::MapType::ValueType(type));
    default:
      return false;
  }
}

}  // namespace

std::string DataType::ToSql() const {
  if (const char* scalar = ScalarSql(id)) return scalar;
  switch (id) {
    case TypeId::kDecimal:
      return "DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
    case TypeId::kStruct: {
      std::string out = "STRUCT(";
      for (size_t i = 0; i < children.size(); ++i) {
        if (i > 0) out += ", ";
        out += QuoteIdentifier(children[i].name) + " " + children[i].type.ToSql();
      }
      return out + ")";
    }
    case TypeId::kList:
      return (children.empty() ? std::string("NULL") : children[0].type.ToSql()) + "[]";
    case TypeId::kMap:
      return "MAP(" + (children.size() > 0 ? children[0].type.ToSql() : std::string("NULL")) +
             ", " + (children.size() > 1 ? children[1].type.ToSql() : std::string("NULL")) + ")";
    case TypeId::kOther:
      return other_sql;
    default:
      return "NULL";
  }
}

Result<DataType> DataType::FromSql(std::string_view sql) {
  std::string text = Trim(sql);
  std::string upper = text;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "NULL" || upper == "\"NULL\"") return DataType{};
  if (text.empty()) return Status::InvalidArgument("empty type text");
  return internal::CatchAll([&]() -> Result<DataType> {
    duckdb::LogicalType type = duckdb::TransformStringToLogicalType(text);
    if (HasUnresolvedType(type)) {
      return Status::InvalidArgument("unknown type: " + text);
    }
    return internal::FromLogicalType(type);
  });
}

bool DataType::operator==(const DataType& other) const {
  if (id != other.id) return false;
  if (id == TypeId::kDecimal && (precision != other.precision || scale != other.scale)) {
    return false;
  }
  if (id == TypeId::kOther && other_sql != other.other_sql) return false;
  return children == other.children;
}

namespace internal {

DataType FromLogicalType(const duckdb::LogicalType& type) {
  using duckdb::LogicalTypeId;
  DataType out;
  switch (type.id()) {
    case LogicalTypeId::SQLNULL:
      out.id = TypeId::kNull;
      break;
    case LogicalTypeId::BOOLEAN:
      out.id = TypeId::kBoolean;
      break;
    case LogicalTypeId::TINYINT:
      out.id = TypeId::kTinyInt;
      break;
    case LogicalTypeId::SMALLINT:
      out.id = TypeId::kSmallInt;
      break;
    case LogicalTypeId::INTEGER:
      out.id = TypeId::kInteger;
      break;
    case LogicalTypeId::BIGINT:
      out.id = TypeId::kBigInt;
      break;
    case LogicalTypeId::HUGEINT:
      out.id = TypeId::kHugeInt;
      break;
    case LogicalTypeId::FLOAT:
      out.id = TypeId::kFloat;
      break;
    case LogicalTypeId::DOUBLE:
      out.id = TypeId::kDouble;
      break;
    case LogicalTypeId::DECIMAL: {
      uint8_t width = 0, scale = 0;
      type.GetDecimalProperties(width, scale);
      out.id = TypeId::kDecimal;
      out.precision = width;
      out.scale = scale;
      break;
    }
    case LogicalTypeId::VARCHAR:
      // JSON and other aliased VARCHARs keep their identity as kOther.
      if (type.HasAlias()) {
        out.id = TypeId::kOther;
        out.other_sql = type.ToString();
      } else {
        out.id = TypeId::kVarchar;
      }
      break;
    case LogicalTypeId::BLOB:
      out.id = TypeId::kBlob;
      break;
    case LogicalTypeId::DATE:
      out.id = TypeId::kDate;
      break;
    case LogicalTypeId::TIME:
      out.id = TypeId::kTime;
      break;
    case LogicalTypeId::TIMESTAMP:
      out.id = TypeId::kTimestamp;
      break;
    case LogicalTypeId::TIMESTAMP_TZ:
      out.id = TypeId::kTimestampTz;
      break;
    case LogicalTypeId::INTERVAL:
      out.id = TypeId::kInterval;
      break;
    case LogicalTypeId::UUID:
      out.id = TypeId::kUuid;
      break;
    case LogicalTypeId::STRUCT:
      out.id = TypeId::kStruct;
      for (auto& child : duckdb::StructType::GetChildTypes(type)) {
        out.children.push_back(Field{child.first, FromLogicalType(child.second), true});
      }
      break;
    case LogicalTypeId::LIST:
      out.id = TypeId::kList;
      out.children.push_back(
          Field{"element", FromLogicalType(duckdb::ListType::GetChildType(type)), true});
      break;
    case LogicalTypeId::MAP:
      out.id = TypeId::kMap;
      out.children.push_back(Field{"key", FromLogicalType(duckdb::MapType::KeyType(type)), true});
      out.children.push_back(
          Field{"value", FromLogicalType(duckdb::MapType::ValueType(type)), true});
      break;
    default:
      out.id = TypeId::kOther;
      out.other_sql = type.ToString();
      break;
  }
  return out;
}

Result<duckdb::LogicalType> ToLogicalType(const DataType& type) {
  using duckdb::LogicalType;
  switch (type.id) {
    case TypeId::kNull:
      return LogicalType(duckdb::LogicalTypeId::SQLNULL);
    case TypeId::kBoolean:
      return LogicalType(LogicalType::BOOLEAN);
    case TypeId::kTinyInt:
      return LogicalType(LogicalType::TINYINT);
    case TypeId::kSmallInt:
      return LogicalType(LogicalType::SMALLINT);
    case TypeId::kInteger:
      return LogicalType(LogicalType::INTEGER);
    case TypeId::kBigInt:
      return LogicalType(LogicalType::BIGINT);
    case TypeId::kHugeInt:
      return LogicalType(LogicalType::HUGEINT);
    case TypeId::kFloat:
      return LogicalType(LogicalType::FLOAT);
    case TypeId::kDouble:
      return LogicalType(LogicalType::DOUBLE);
    case TypeId::kDecimal:
      if (type.precision < 1 || type.precision > 38 || type.scale > type.precision) {
        return Status::InvalidArgument("invalid decimal type " + type.ToSql());
      }
      return LogicalType::DECIMAL(type.precision, type.scale);
    case TypeId::kVarchar:
      return LogicalType(LogicalType::VARCHAR);
    case TypeId::kBlob:
      return LogicalType(LogicalType::BLOB);
    case TypeId::kDate:
      return LogicalType(LogicalType::DATE);
    case TypeId::kTime:
      return LogicalType(LogicalType::TIME);
    case TypeId::kTimestamp:
      return LogicalType(LogicalType::TIMESTAMP);
    case TypeId::kTimestampTz:
      return LogicalType(LogicalType::TIMESTAMP_TZ);
    case TypeId::kInterval:
      return LogicalType(LogicalType::INTERVAL);
    case TypeId::kUuid:
      return LogicalType(LogicalType::UUID);
    case TypeId::kStruct: {
      duckdb::child_list_t<LogicalType> children;
      for (const Field& f : type.children) {
        SLUICE_ASSIGN_OR_RETURN(LogicalType child, ToLogicalType(f.type));
        children.emplace_back(f.name, std::move(child));
      }
      if (children.empty()) return Status::InvalidArgument("STRUCT type without fields");
      return LogicalType::STRUCT(std::move(children));
    }
    case TypeId::kList: {
      if (type.children.size() != 1) {
        return Status::InvalidArgument("LIST type needs exactly one child");
      }
      SLUICE_ASSIGN_OR_RETURN(LogicalType child, ToLogicalType(type.children[0].type));
      return LogicalType::LIST(child);
    }
    case TypeId::kMap: {
      if (type.children.size() != 2) {
        return Status::InvalidArgument("MAP type needs exactly two children (key, value)");
      }
      SLUICE_ASSIGN_OR_RETURN(LogicalType key, ToLogicalType(type.children[0].type));
      SLUICE_ASSIGN_OR_RETURN(LogicalType value, ToLogicalType(type.children[1].type));
      return LogicalType::MAP(std::move(key), std::move(value));
    }
    case TypeId::kOther:
      return CatchAll([&]() -> Result<LogicalType> {
        LogicalType parsed = duckdb::TransformStringToLogicalType(type.other_sql);
        if (HasUnresolvedType(parsed)) {
          return Status::InvalidArgument("unknown type: " + type.other_sql);
        }
        return parsed;
      });
  }
  return Status::Internal("unhandled TypeId");
}

Schema SchemaFromDuckDB(const std::vector<std::string>& names,
                        const duckdb::vector<duckdb::LogicalType>& types) {
  Schema schema;
  schema.reserve(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    schema.push_back(Field{i < names.size() ? names[i] : "col" + std::to_string(i),
                           FromLogicalType(types[i]), true});
  }
  return schema;
}

}  // namespace internal

bool IsNumeric(TypeId id) {
  switch (id) {
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInteger:
    case TypeId::kBigInt:
    case TypeId::kHugeInt:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kDecimal:
      return true;
    default:
      return false;
  }
}

}  // namespace sluice::engine
