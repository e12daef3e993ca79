#include "connect/spark_types.h"

#include "delta/schema.h"
#include "spark/connect/types.pb.h"

namespace sluice::connect {

namespace {

using engine::TypeId;

Status Unsupported(const engine::DataType& type, const std::string& column) {
  return Status::NotSupported("Spark Connect: column '" + column + "' has type " + type.ToSql() +
                              ", which Sluice does not send to Spark Connect clients yet");
}

Status TypeToProto(const engine::DataType& type, const std::string& column,
                   spark::connect::DataType* out) {
  switch (type.id) {
    case TypeId::kNull:
      out->mutable_null();
      return Status::OK();
    case TypeId::kBoolean:
      out->mutable_boolean();
      return Status::OK();
    case TypeId::kTinyInt:
      out->mutable_byte();
      return Status::OK();
    case TypeId::kSmallInt:
      out->mutable_short_();
      return Status::OK();
    case TypeId::kInteger:
      out->mutable_integer();
      return Status::OK();
    case TypeId::kBigInt:
      out->mutable_long_();
      return Status::OK();
    case TypeId::kFloat:
      out->mutable_float_();
      return Status::OK();
    case TypeId::kDouble:
      out->mutable_double_();
      return Status::OK();
    case TypeId::kHugeInt:
      out->mutable_decimal()->set_precision(38);
      out->mutable_decimal()->set_scale(0);
      return Status::OK();
    case TypeId::kDecimal:
      out->mutable_decimal()->set_precision(type.precision);
      out->mutable_decimal()->set_scale(type.scale);
      return Status::OK();
    case TypeId::kVarchar:
      out->mutable_string();
      return Status::OK();
    case TypeId::kBlob:
      out->mutable_binary();
      return Status::OK();
    case TypeId::kDate:
      out->mutable_date();
      return Status::OK();
    case TypeId::kTimestampTz:
    case TypeId::kTimestamp:  // Spark's timestamp too (the header says why)
      out->mutable_timestamp();
      return Status::OK();
    default:
      return Unsupported(type, column);
  }
}

}  // namespace

Result<ArrowType> ArrowTypeOf(const engine::DataType& type, const std::string& column) {
  ArrowType t;
  switch (type.id) {
    case TypeId::kNull:
      t.id = ArrowTypeId::kNull;
      return t;
    case TypeId::kBoolean:
      t.id = ArrowTypeId::kBool;
      return t;
    case TypeId::kTinyInt:
      t.id = ArrowTypeId::kInt8;
      return t;
    case TypeId::kSmallInt:
      t.id = ArrowTypeId::kInt16;
      return t;
    case TypeId::kInteger:
      t.id = ArrowTypeId::kInt32;
      return t;
    case TypeId::kBigInt:
      t.id = ArrowTypeId::kInt64;
      return t;
    case TypeId::kFloat:
      t.id = ArrowTypeId::kFloat;
      return t;
    case TypeId::kDouble:
      t.id = ArrowTypeId::kDouble;
      return t;
    case TypeId::kHugeInt:
      t.id = ArrowTypeId::kDecimal128;
      t.precision = 38;
      return t;
    case TypeId::kDecimal:
      t.id = ArrowTypeId::kDecimal128;
      t.precision = type.precision;
      t.scale = type.scale;
      return t;
    case TypeId::kVarchar:
      t.id = ArrowTypeId::kString;
      return t;
    case TypeId::kBlob:
      t.id = ArrowTypeId::kBinary;
      return t;
    case TypeId::kDate:
      t.id = ArrowTypeId::kDate32;
      return t;
    case TypeId::kTimestampTz:
    case TypeId::kTimestamp:  // microseconds read in UTC: the same instant
      t.id = ArrowTypeId::kTimestampMicros;
      t.timezone = "UTC";
      return t;
    default:
      return Unsupported(type, column);
  }
}

Status SchemaToProto(const engine::Schema& schema, spark::connect::DataType* out) {
  spark::connect::DataType::Struct* st = out->mutable_struct_();
  for (const engine::Field& f : schema) {
    spark::connect::DataType::StructField* field = st->add_fields();
    field->set_name(f.name);
    field->set_nullable(f.nullable);
    SLUICE_RETURN_NOT_OK(TypeToProto(f.type, f.name, field->mutable_data_type()));
  }
  return Status::OK();
}

Result<std::string> SparkTypeName(const engine::DataType& type, const std::string& column) {
  switch (type.id) {
    case TypeId::kNull:
      return std::string("VOID");
    case TypeId::kBoolean:
      return std::string("BOOLEAN");
    case TypeId::kTinyInt:
      return std::string("TINYINT");
    case TypeId::kSmallInt:
      return std::string("SMALLINT");
    case TypeId::kInteger:
      return std::string("INT");
    case TypeId::kBigInt:
      return std::string("BIGINT");
    case TypeId::kFloat:
      return std::string("FLOAT");
    case TypeId::kDouble:
      return std::string("DOUBLE");
    case TypeId::kHugeInt:
      return std::string("DECIMAL(38,0)");
    case TypeId::kDecimal:
      return "DECIMAL(" + std::to_string(type.precision) + "," + std::to_string(type.scale) + ")";
    case TypeId::kVarchar:
      return std::string("STRING");
    case TypeId::kBlob:
      return std::string("BINARY");
    case TypeId::kDate:
      return std::string("DATE");
    case TypeId::kTimestampTz:
    case TypeId::kTimestamp:
      return std::string("TIMESTAMP");
    default:
      return Unsupported(type, column);
  }
}

Result<std::string> SparkTypeDisplayName(const engine::DataType& type, const std::string& column) {
  // Spark's typeName is the name Delta's schemaString gives a primitive type; the engine's
  // HUGEINT (a sum of BIGINTs) reaches clients as decimal(38,0).
  if (type.id == TypeId::kHugeInt) return std::string("decimal(38,0)");
  if (type.id == TypeId::kTimestamp) return std::string("timestamp");  // see the header
  Result<std::string> name = delta::DeltaPrimitiveName(type);
  if (!name.ok()) return Unsupported(type, column);
  return name;
}

Result<std::string> ProtoTypeToSql(const spark::connect::DataType& type) {
  using K = spark::connect::DataType::KindCase;
  switch (type.kind_case()) {
    case K::kBoolean:
      return std::string("BOOLEAN");
    case K::kByte:
      return std::string("TINYINT");
    case K::kShort:
      return std::string("SMALLINT");
    case K::kInteger:
      return std::string("INT");
    case K::kLong:
      return std::string("BIGINT");
    case K::kFloat:
      return std::string("FLOAT");
    case K::kDouble:
      return std::string("DOUBLE");
    case K::kDecimal: {
      int32_t p = type.decimal().has_precision() ? type.decimal().precision() : 10;
      int32_t s = type.decimal().has_scale() ? type.decimal().scale() : 0;
      return "DECIMAL(" + std::to_string(p) + "," + std::to_string(s) + ")";
    }
    case K::kString:
      return std::string("STRING");
    case K::kBinary:
      return std::string("BINARY");
    case K::kDate:
      return std::string("DATE");
    case K::kTimestamp:
      return std::string("TIMESTAMP");
    case K::kTimestampNtz:
      return std::string("TIMESTAMP_NTZ");
    case K::kUnparsed:
      return type.unparsed().data_type_string();
    default:
      return Status::NotSupported("Spark Connect: casts to the data type " +
                                  type.ShortDebugString() + " are not supported by Sluice yet");
  }
}

}  // namespace sluice::connect
