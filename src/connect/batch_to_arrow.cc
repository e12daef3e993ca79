#include "connect/batch_to_arrow.h"

#include <algorithm>

#include "connect/spark_types.h"
#include "engine/column_values.h"

namespace sluice::connect {

namespace {

// 10^38: the first value a decimal(38, s) cannot hold (unscaled).
__int128 Pow10(int32_t n) {
  __int128 v = 1;
  for (int32_t i = 0; i < n; ++i) v *= 10;
  return v;
}

Status AppendColumn(const engine::ColumnValues& v, const ArrowField& field, int64_t first_row,
                    ArrowColumnBuilder* out) {
  const ArrowType& type = field.type;
  const __int128 limit = type.id == ArrowTypeId::kDecimal128 ? Pow10(type.precision) : 0;
  for (size_t r = 0; r < v.valid.size(); ++r) {
    if (!v.valid[r] || type.id == ArrowTypeId::kNull) {
      out->AppendNull();
      continue;
    }
    switch (type.id) {
      case ArrowTypeId::kBool:
        out->AppendBool(v.ints[r] != 0);
        break;
      case ArrowTypeId::kInt8:
      case ArrowTypeId::kInt16:
      case ArrowTypeId::kInt32:
      case ArrowTypeId::kInt64:
      case ArrowTypeId::kDate32:
      case ArrowTypeId::kTimestampMicros:
        out->AppendInt(v.ints[r]);
        break;
      case ArrowTypeId::kFloat:
      case ArrowTypeId::kDouble:
        out->AppendDouble(v.doubles[r]);
        break;
      case ArrowTypeId::kString:
      case ArrowTypeId::kBinary:
        out->AppendBytes(v.bytes[r]);
        break;
      case ArrowTypeId::kDecimal128:
        if (v.int128s[r] >= limit || v.int128s[r] <= -limit) {
          return Status::InvalidArgument(
              "Spark Connect: the value of column '" + field.name + "', row " +
              std::to_string(first_row + static_cast<int64_t>(r)) + " has more than " +
              std::to_string(type.precision) + " digits, more than its Spark type decimal(" +
              std::to_string(type.precision) + "," + std::to_string(type.scale) + ") holds");
        }
        out->AppendDecimal(v.int128s[r]);
        break;
      case ArrowTypeId::kNull:
        break;
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<ArrowField>> ArrowFieldsOf(const engine::Schema& schema) {
  std::vector<ArrowField> fields;
  for (const engine::Field& f : schema) {
    SLUICE_ASSIGN_OR_RETURN(ArrowType type, ArrowTypeOf(f.type, f.name));
    fields.push_back({f.name, type, f.nullable});
  }
  return fields;
}

Result<std::string> BatchToArrowStream(const engine::Batch& batch, int64_t offset, int64_t length,
                                       int64_t* num_rows) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<ArrowField> fields, ArrowFieldsOf(batch.schema()));
  int64_t begin = std::min(std::max<int64_t>(offset, 0), batch.num_rows());
  int64_t end = std::min(batch.num_rows(), begin + std::max<int64_t>(length, 0));
  std::vector<ArrowColumnBuilder> columns;
  columns.reserve(fields.size());
  for (const ArrowField& f : fields) columns.emplace_back(f.type);
  for (size_t c = 0; c < fields.size(); ++c) {
    Result<engine::ColumnValues> values = engine::ReadColumnValues(batch, c, begin, end - begin);
    if (!values.ok()) {
      return values.status().WithContext("Spark Connect: the result's column '" + fields[c].name +
                                         "'");
    }
    SLUICE_RETURN_NOT_OK(AppendColumn(*values, fields[c], begin, &columns[c]));
  }
  *num_rows = end - begin;
  return ArrowStreamWriter::Stream(fields, columns, end - begin);
}

}  // namespace sluice::connect
