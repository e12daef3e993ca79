// BatchBuilder: values go straight into a DataChunk, which is appended to a ColumnDataCollection
// of the standalone database every 2,048 rows.
#include "engine/batch_builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "duckdb/common/types/column/column_data_collection.hpp"
#include "duckdb/common/types/data_chunk.hpp"
#include "duckdb/storage/buffer_manager.hpp"
#include "engine/duckdb_convert.h"
#include "engine/standalone_db.h"

namespace sluice::engine {

struct BatchBuilder::State {
  Schema schema;
  Status init_status;  // not OK when the schema has a type DuckDB does not know
  duckdb::shared_ptr<duckdb::DatabaseInstance> db;
  duckdb::vector<duckdb::LogicalType> types;
  std::vector<std::string> names;
  std::unique_ptr<duckdb::ColumnDataCollection> collection;
  duckdb::ColumnDataAppendState append;
  duckdb::DataChunk chunk;
  duckdb::idx_t row_in_chunk = 0;  // the row being built
  size_t column = 0;               // the next column of that row
  int64_t rows = 0;

  Status Init() {
    for (const Field& f : schema) {
      auto t = internal::ToLogicalType(f.type);
      if (!t.ok()) return t.status().WithContext("BatchBuilder: column " + f.name);
      types.push_back(*t);
      names.push_back(f.name);
    }
    if (types.empty()) return Status::OK();
    return internal::CatchAll([&]() -> Status {
      db = internal::StandaloneDatabase();
      chunk.Initialize(duckdb::Allocator::Get(*db), types);
      NewCollection();
      return Status::OK();
    });
  }

  void NewCollection() {
    collection = std::make_unique<duckdb::ColumnDataCollection>(
        duckdb::BufferManager::GetBufferManager(*db), types);
    append = duckdb::ColumnDataAppendState();
    collection->InitializeAppend(append);
  }

  // The vector of the next column, or an error naming why no value can go there.
  Result<duckdb::Vector*> Next() {
    SLUICE_RETURN_NOT_OK(init_status);
    if (column >= types.size()) {
      return Status::InvalidArgument("BatchBuilder: the row already has a value for all " +
                                     std::to_string(types.size()) + " columns; call EndRow()");
    }
    return &chunk.data[column];
  }

  Status Mismatch(const char* what) const {
    return Status::InvalidArgument("BatchBuilder: column " + std::to_string(column) + " (" +
                                   names[column] + ") has type " + types[column].ToString() +
                                   "; cannot append " + what);
  }

  template <typename T>
  void Set(duckdb::Vector* v, T value) {
    duckdb::FlatVector::GetData<T>(*v)[row_in_chunk] = value;
    ++column;
  }

  template <typename T>
  Status SetInt(duckdb::Vector* v, int64_t value) {
    if constexpr (std::is_signed_v<T>) {
      if (value < std::numeric_limits<T>::min() || value > std::numeric_limits<T>::max()) {
        return OutOfRange(value);
      }
    } else {
      if (value < 0 || static_cast<uint64_t>(value) > std::numeric_limits<T>::max()) {
        return OutOfRange(value);
      }
    }
    Set<T>(v, static_cast<T>(value));
    return Status::OK();
  }

  Status OutOfRange(int64_t value) const {
    return Status::InvalidArgument("BatchBuilder: column " + std::to_string(column) + " (" +
                                   names[column] + "): " + std::to_string(value) +
                                   " is out of range for " + types[column].ToString());
  }
};

BatchBuilder::BatchBuilder(Schema schema) : state_(std::make_unique<State>()) {
  state_->schema = std::move(schema);
  state_->init_status = state_->Init();
}

BatchBuilder::~BatchBuilder() = default;
BatchBuilder::BatchBuilder(BatchBuilder&&) noexcept = default;
BatchBuilder& BatchBuilder::operator=(BatchBuilder&&) noexcept = default;

const Schema& BatchBuilder::schema() const { return state_->schema; }
int64_t BatchBuilder::num_rows() const { return state_->rows; }

Status BatchBuilder::AppendInt64(int64_t value) {
  SLUICE_ASSIGN_OR_RETURN(duckdb::Vector * v, state_->Next());
  using Id = duckdb::LogicalTypeId;
  switch (v->GetType().id()) {
    case Id::TINYINT:
      return state_->SetInt<int8_t>(v, value);
    case Id::SMALLINT:
      return state_->SetInt<int16_t>(v, value);
    case Id::INTEGER:
      return state_->SetInt<int32_t>(v, value);
    case Id::BIGINT:
      return state_->SetInt<int64_t>(v, value);
    case Id::UTINYINT:
      return state_->SetInt<uint8_t>(v, value);
    case Id::USMALLINT:
      return state_->SetInt<uint16_t>(v, value);
    case Id::UINTEGER:
      return state_->SetInt<uint32_t>(v, value);
    case Id::UBIGINT:
      return state_->SetInt<uint64_t>(v, value);
    case Id::HUGEINT:
      state_->Set<duckdb::hugeint_t>(v, duckdb::hugeint_t(value));
      return Status::OK();
    default:
      return state_->Mismatch("an integer (AppendInt64)");
  }
}

Status BatchBuilder::AppendDouble(double value) {
  SLUICE_ASSIGN_OR_RETURN(duckdb::Vector * v, state_->Next());
  switch (v->GetType().id()) {
    case duckdb::LogicalTypeId::FLOAT:
      state_->Set<float>(v, static_cast<float>(value));
      return Status::OK();
    case duckdb::LogicalTypeId::DOUBLE:
      state_->Set<double>(v, value);
      return Status::OK();
    default:
      return state_->Mismatch("a double (AppendDouble)");
  }
}

Status BatchBuilder::AppendString(std::string_view value) {
  SLUICE_ASSIGN_OR_RETURN(duckdb::Vector * v, state_->Next());
  const auto id = v->GetType().id();
  if (id != duckdb::LogicalTypeId::VARCHAR && id != duckdb::LogicalTypeId::BLOB) {
    return state_->Mismatch("a string (AppendString)");
  }
  return internal::CatchAll([&]() -> Status {
    if (id == duckdb::LogicalTypeId::VARCHAR &&
        !internal::IsValidUtf8(value.data(), value.size())) {
      return Status::InvalidArgument("BatchBuilder: column " + std::to_string(state_->column) +
                                     " (" + state_->names[state_->column] +
                                     "): string is not valid UTF-8");
    }
    state_->Set<duckdb::string_t>(
        v, duckdb::StringVector::AddStringOrBlob(*v, value.data(), value.size()));
    return Status::OK();
  });
}

Status BatchBuilder::AppendBool(bool value) {
  SLUICE_ASSIGN_OR_RETURN(duckdb::Vector * v, state_->Next());
  if (v->GetType().id() != duckdb::LogicalTypeId::BOOLEAN) {
    return state_->Mismatch("a boolean (AppendBool)");
  }
  state_->Set<bool>(v, value);
  return Status::OK();
}

Status BatchBuilder::AppendTimestampMicros(int64_t micros_since_epoch) {
  SLUICE_ASSIGN_OR_RETURN(duckdb::Vector * v, state_->Next());
  const auto id = v->GetType().id();
  if (id != duckdb::LogicalTypeId::TIMESTAMP && id != duckdb::LogicalTypeId::TIMESTAMP_TZ) {
    return state_->Mismatch("a timestamp (AppendTimestampMicros)");
  }
  state_->Set<int64_t>(v, micros_since_epoch);
  return Status::OK();
}

Status BatchBuilder::AppendNull() {
  SLUICE_ASSIGN_OR_RETURN(duckdb::Vector * v, state_->Next());
  return internal::CatchAll([&]() -> Status {
    duckdb::FlatVector::SetNull(*v, state_->row_in_chunk, true);
    if (v->GetType().InternalType() == duckdb::PhysicalType::LIST) {
      duckdb::FlatVector::GetData<duckdb::list_entry_t>(*v)[state_->row_in_chunk] = {
          duckdb::ListVector::GetListSize(*v), 0};
    }
    ++state_->column;
    return Status::OK();
  });
}

Status BatchBuilder::EndRow() {
  State& s = *state_;
  SLUICE_RETURN_NOT_OK(s.init_status);
  if (s.column < s.types.size()) {
    const size_t missing = s.column;
    // Discard the partial row: clear the NULLs it set (the values are overwritten later).
    for (size_t c = 0; c < missing; ++c) {
      duckdb::FlatVector::Validity(s.chunk.data[c]).SetValid(s.row_in_chunk);
    }
    s.column = 0;
    return Status::InvalidArgument("BatchBuilder: EndRow with no value for column " +
                                   std::to_string(missing) + " (" + s.names[missing] + ") and " +
                                   std::to_string(s.types.size() - missing - 1) + " after it");
  }
  s.column = 0;
  ++s.rows;
  if (s.types.empty()) return Status::OK();
  if (++s.row_in_chunk == STANDARD_VECTOR_SIZE) {
    return internal::CatchAll([&]() -> Status {
      s.chunk.SetCardinality(s.row_in_chunk);
      s.collection->Append(s.append, s.chunk);
      s.chunk.Reset();
      s.row_in_chunk = 0;
      return Status::OK();
    });
  }
  return Status::OK();
}

Status BatchBuilder::AppendColumns(int64_t num_rows, std::span<const BulkColumn> columns) {
  State& s = *state_;
  SLUICE_RETURN_NOT_OK(s.init_status);
  if (s.column != 0) {
    return Status::InvalidArgument("BatchBuilder: AppendColumns with a row in progress (" +
                                   std::to_string(s.column) + " of " +
                                   std::to_string(s.types.size()) + " columns set)");
  }
  if (num_rows < 0) return Status::InvalidArgument("BatchBuilder: AppendColumns num_rows < 0");
  if (columns.size() != s.types.size()) {
    return Status::InvalidArgument("BatchBuilder: AppendColumns got " +
                                   std::to_string(columns.size()) + " columns, the schema has " +
                                   std::to_string(s.types.size()));
  }
  using Id = duckdb::LogicalTypeId;
  const auto n = static_cast<size_t>(num_rows);
  for (size_t c = 0; c < columns.size(); ++c) {
    const BulkColumn& col = columns[c];
    const Id id = s.types[c].id();
    const char* what = nullptr;
    size_t size = 0;
    switch (col.kind) {
      case BulkColumn::Kind::kInt64:
        what = id == Id::BIGINT ? nullptr : "integers (BulkColumn::Int64s)";
        size = col.ints.size();
        break;
      case BulkColumn::Kind::kTimestamp:
        what = id == Id::TIMESTAMP || id == Id::TIMESTAMP_TZ
                   ? nullptr
                   : "timestamps (BulkColumn::Timestamps)";
        if (!what && col.timestamp_scale < 1) what = "timestamps with a scale < 1";
        size = col.ints.size();
        break;
      case BulkColumn::Kind::kString:
        what = id == Id::VARCHAR || id == Id::BLOB ? nullptr : "strings (BulkColumn::Strings)";
        size = col.strings.size();
        break;
    }
    if (what) {
      return Status::InvalidArgument("BatchBuilder: column " + std::to_string(c) + " (" +
                                     s.names[c] + ") has type " + s.types[c].ToString() +
                                     "; cannot append " + what);
    }
    if (size != n) {
      return Status::InvalidArgument("BatchBuilder: AppendColumns column " + std::to_string(c) +
                                     " (" + s.names[c] + ") has " + std::to_string(size) +
                                     " values, expected " + std::to_string(n));
    }
  }
  if (n == 0 || s.types.empty()) {
    s.rows += num_rows;
    return Status::OK();
  }
  Status st = internal::CatchAll([&]() -> Status {
    // Row-at-a-time rows first, so that the order is kept.
    if (s.row_in_chunk > 0) {
      s.chunk.SetCardinality(s.row_in_chunk);
      s.collection->Append(s.append, s.chunk);
      s.chunk.Reset();
      s.row_in_chunk = 0;
    }
    for (size_t begin = 0; begin < n; begin += STANDARD_VECTOR_SIZE) {
      const size_t count = std::min<size_t>(STANDARD_VECTOR_SIZE, n - begin);
      for (size_t c = 0; c < columns.size(); ++c) {
        const BulkColumn& col = columns[c];
        duckdb::Vector& v = s.chunk.data[c];
        switch (col.kind) {
          case BulkColumn::Kind::kInt64:
            std::memcpy(duckdb::FlatVector::GetData<int64_t>(v), col.ints.data() + begin,
                        count * sizeof(int64_t));
            break;
          case BulkColumn::Kind::kTimestamp: {
            auto* out = duckdb::FlatVector::GetData<int64_t>(v);
            const int64_t scale = col.timestamp_scale;
            const int64_t limit = std::numeric_limits<int64_t>::max() / scale;
            const int64_t* in = col.ints.data() + begin;
            for (size_t i = 0; i < count; ++i) {
              if (in[i] > limit || in[i] < -limit) {
                return Status::InvalidArgument(
                    "BatchBuilder: column " + std::to_string(c) + " (" + s.names[c] +
                    "): timestamp " + std::to_string(in[i]) + " * " + std::to_string(scale) +
                    " overflows int64 microseconds");
              }
              out[i] = in[i] * scale;
            }
            break;
          }
          case BulkColumn::Kind::kString: {
            // Non-owning string_t: the collection copies the bytes in Append, below.
            auto* out = duckdb::FlatVector::GetData<duckdb::string_t>(v);
            const bool utf8 = s.types[c].id() == Id::VARCHAR && !col.known_valid_utf8;
            const std::string_view* in = col.strings.data() + begin;
            for (size_t i = 0; i < count; ++i) {
              if (utf8 && !internal::IsValidUtf8(in[i].data(), in[i].size())) {
                return Status::InvalidArgument("BatchBuilder: column " + std::to_string(c) + " (" +
                                               s.names[c] + "), row " + std::to_string(begin + i) +
                                               " of AppendColumns: string is not valid UTF-8");
              }
              out[i] = duckdb::string_t(in[i].data(), static_cast<uint32_t>(in[i].size()));
            }
            break;
          }
        }
      }
      s.chunk.SetCardinality(count);
      s.collection->Append(s.append, s.chunk);
      s.chunk.Reset();
    }
    return Status::OK();
  });
  if (!st.ok()) {
    // Earlier slices of this call are already in the collection: start over, empty.
    s.chunk.Reset();
    s.row_in_chunk = 0;
    s.rows = 0;
    Status reset = internal::CatchAll([&]() -> Status {
      s.NewCollection();
      return Status::OK();
    });
    if (!reset.ok()) return reset;
    if (!st.IsInvalidArgument()) return st;
    return Status::InvalidArgument(st.message() + " (the builder was emptied)");
  }
  s.rows += num_rows;
  return Status::OK();
}

Result<Batch> BatchBuilder::Finish() {
  State& s = *state_;
  SLUICE_RETURN_NOT_OK(s.init_status);
  if (s.column != 0) {
    return Status::InvalidArgument("BatchBuilder: Finish with a row in progress (" +
                                   std::to_string(s.column) + " of " +
                                   std::to_string(s.types.size()) + " columns set)");
  }
  s.rows = 0;
  if (s.types.empty()) return Batch();
  return internal::CatchAll([&]() -> Result<Batch> {
    if (s.row_in_chunk > 0) {
      s.chunk.SetCardinality(s.row_in_chunk);
      s.collection->Append(s.append, s.chunk);
      s.chunk.Reset();
      s.row_in_chunk = 0;
    }
    Batch out = internal::MakeBatch(s.db, std::move(s.collection), s.names);
    s.NewCollection();
    return out;
  });
}

}  // namespace sluice::engine
