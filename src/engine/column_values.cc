#include "engine/column_values.h"

#include <algorithm>
#include <type_traits>

#include "engine/duckdb_convert.h"

namespace sluice::engine {

namespace {

using duckdb::LogicalTypeId;
using duckdb::PhysicalType;

__int128 Int128Of(const duckdb::hugeint_t& v) {
  return static_cast<__int128>(
      static_cast<unsigned __int128>(static_cast<uint64_t>(v.upper)) << 64 | v.lower);
}

// Appends row `idx` of `format` (of `type`) to `out`. `valid` is the row's validity.
Status AppendValue(const duckdb::LogicalType& type, const duckdb::UnifiedVectorFormat& format,
                   duckdb::idx_t idx, bool valid, const std::string& column, int64_t row,
                   ColumnValues* out) {
  const auto* data = format.data;
  auto at = [&](auto* typed) {
    return valid ? typed[idx] : std::remove_cvref_t<decltype(typed[idx])>{};
  };
  switch (type.id()) {
    case LogicalTypeId::SQLNULL:
      return Status::OK();
    case LogicalTypeId::BOOLEAN:
      out->ints.push_back(at(reinterpret_cast<const bool*>(data)) ? 1 : 0);
      return Status::OK();
    case LogicalTypeId::TINYINT:
      out->ints.push_back(at(reinterpret_cast<const int8_t*>(data)));
      return Status::OK();
    case LogicalTypeId::SMALLINT:
      out->ints.push_back(at(reinterpret_cast<const int16_t*>(data)));
      return Status::OK();
    case LogicalTypeId::INTEGER:
      out->ints.push_back(at(reinterpret_cast<const int32_t*>(data)));
      return Status::OK();
    case LogicalTypeId::BIGINT:
      out->ints.push_back(at(reinterpret_cast<const int64_t*>(data)));
      return Status::OK();
    case LogicalTypeId::FLOAT:
      out->doubles.push_back(at(reinterpret_cast<const float*>(data)));
      return Status::OK();
    case LogicalTypeId::DOUBLE:
      out->doubles.push_back(at(reinterpret_cast<const double*>(data)));
      return Status::OK();
    case LogicalTypeId::HUGEINT:
      out->int128s.push_back(valid ? Int128Of(reinterpret_cast<const duckdb::hugeint_t*>(data)[idx])
                                   : 0);
      return Status::OK();
    case LogicalTypeId::DECIMAL: {
      __int128 v = 0;
      if (valid) {
        switch (type.InternalType()) {
          case PhysicalType::INT16:
            v = reinterpret_cast<const int16_t*>(data)[idx];
            break;
          case PhysicalType::INT32:
            v = reinterpret_cast<const int32_t*>(data)[idx];
            break;
          case PhysicalType::INT64:
            v = reinterpret_cast<const int64_t*>(data)[idx];
            break;
          default:
            v = Int128Of(reinterpret_cast<const duckdb::hugeint_t*>(data)[idx]);
            break;
        }
      }
      out->int128s.push_back(v);
      return Status::OK();
    }
    case LogicalTypeId::DATE: {
      duckdb::date_t d =
          valid ? reinterpret_cast<const duckdb::date_t*>(data)[idx] : duckdb::date_t(0);
      if (!duckdb::Date::IsFinite(d)) {
        return Status::InvalidArgument("column '" + column + "', row " + std::to_string(row) +
                                       ": the date is infinite");
      }
      out->ints.push_back(d.days);
      return Status::OK();
    }
    case LogicalTypeId::TIMESTAMP:
    case LogicalTypeId::TIMESTAMP_TZ: {
      duckdb::timestamp_t t =
          valid ? reinterpret_cast<const duckdb::timestamp_t*>(data)[idx] : duckdb::timestamp_t(0);
      if (!duckdb::Timestamp::IsFinite(t)) {
        return Status::InvalidArgument("column '" + column + "', row " + std::to_string(row) +
                                       ": the timestamp is infinite");
      }
      out->ints.push_back(t.value);
      return Status::OK();
    }
    case LogicalTypeId::VARCHAR:
    case LogicalTypeId::BLOB: {
      if (!valid) {
        out->bytes.emplace_back();
      } else {
        const auto& s = reinterpret_cast<const duckdb::string_t*>(data)[idx];
        out->bytes.emplace_back(s.GetData(), s.GetSize());
      }
      return Status::OK();
    }
    default:  // IsReadable refused it before
      return Status::Internal("column '" + column + "' has type " + type.ToString() +
                              ", whose values are not read as C++ values");
  }
}

bool IsReadable(LogicalTypeId id) {
  switch (id) {
    case LogicalTypeId::SQLNULL:
    case LogicalTypeId::BOOLEAN:
    case LogicalTypeId::TINYINT:
    case LogicalTypeId::SMALLINT:
    case LogicalTypeId::INTEGER:
    case LogicalTypeId::BIGINT:
    case LogicalTypeId::FLOAT:
    case LogicalTypeId::DOUBLE:
    case LogicalTypeId::HUGEINT:
    case LogicalTypeId::DECIMAL:
    case LogicalTypeId::DATE:
    case LogicalTypeId::TIMESTAMP:
    case LogicalTypeId::TIMESTAMP_TZ:
    case LogicalTypeId::VARCHAR:
    case LogicalTypeId::BLOB:
      return true;
    default:
      return false;
  }
}

}  // namespace

Result<ColumnValues> ReadColumnValues(const Batch& batch, size_t column, int64_t offset,
                                      int64_t length) {
  if (column >= batch.num_columns()) {
    return Status::InvalidArgument("ReadColumnValues: column index " + std::to_string(column) +
                                   " out of range (the batch has " +
                                   std::to_string(batch.num_columns()) + " columns)");
  }
  ColumnValues out;
  const int64_t begin = std::clamp<int64_t>(offset, 0, batch.num_rows());
  const int64_t end =
      std::clamp<int64_t>(begin + std::max<int64_t>(length, 0), begin, batch.num_rows());
  const auto& type = batch.data()->types[column];
  if (!IsReadable(type.id())) {
    return Status::NotSupported("column '" + batch.data()->names[column] + "' has type " +
                                type.ToString() + ", whose values are not read as C++ values");
  }
  if (begin == end) return out;
  return internal::CatchAll([&]() -> Result<ColumnValues> {
    const auto& data = *batch.data();
    const std::string& name = data.names[column];
    duckdb::vector<duckdb::column_t> ids = {column};
    duckdb::ColumnDataScanState state;
    data.collection->InitializeScan(state, ids);
    duckdb::DataChunk chunk;
    data.collection->InitializeScanChunk(state, chunk);
    int64_t row = 0;  // the first row of the chunk
    while (row < end && data.collection->Scan(state, chunk)) {
      const int64_t n = static_cast<int64_t>(chunk.size());
      if (row + n > begin) {
        duckdb::UnifiedVectorFormat format;
        chunk.data[0].ToUnifiedFormat(chunk.size(), format);
        for (int64_t i = std::max<int64_t>(begin - row, 0); i < n && row + i < end; ++i) {
          duckdb::idx_t idx = format.sel->get_index(static_cast<duckdb::idx_t>(i));
          bool valid = format.validity.RowIsValid(idx);
          out.valid.push_back(valid);
          SLUICE_RETURN_NOT_OK(AppendValue(type, format, idx, valid, name, row + i, &out));
        }
      }
      row += n;
    }
    return std::move(out);
  });
}

}  // namespace sluice::engine
