// Batch: immutable rows held in a DuckDB ColumnDataCollection.
#include <algorithm>

#include "common/check.h"
#include "duckdb/common/types/column/column_data_collection.hpp"
#include "duckdb/common/types/data_chunk.hpp"
#include "duckdb/storage/buffer_manager.hpp"
#include "engine/duckdb_convert.h"
#include "engine/engine.h"

namespace sluice::engine {
namespace internal {

BatchData::BatchData(duckdb::shared_ptr<duckdb::DatabaseInstance> db_p,
                     std::unique_ptr<duckdb::ColumnDataCollection> collection_p,
                     std::vector<std::string> names_p)
    : db(std::move(db_p)),
      collection(duckdb::shared_ptr<duckdb::ColumnDataCollection>(collection_p.release())),
      names(std::move(names_p)) {
  types = collection->Types();
  schema = SchemaFromDuckDB(names, types);
}

Batch MakeBatch(duckdb::shared_ptr<duckdb::DatabaseInstance> db,
                std::unique_ptr<duckdb::ColumnDataCollection> collection,
                std::vector<std::string> names) {
  if (!collection || collection->ColumnCount() == 0) return Batch();
  return Batch(
      std::make_shared<const BatchData>(std::move(db), std::move(collection), std::move(names)));
}

namespace {

// The value at (row, col), read by seeking to the chunk that holds the row. Throws on DuckDB
// errors (callers catch).
duckdb::Value CellValue(const BatchData& data, int64_t row, size_t col) {
  const auto& collection = *data.collection;
  duckdb::ColumnDataScanState state;
  collection.InitializeScan(state, duckdb::vector<duckdb::column_t>{col},
                            duckdb::ColumnDataScanProperties::DISALLOW_ZERO_COPY);
  duckdb::DataChunk chunk;
  collection.InitializeScanChunk(state, chunk);
  if (!collection.Seek(static_cast<duckdb::idx_t>(row), state, chunk)) {
    return duckdb::Value(data.types[col]);
  }
  return chunk.GetValue(0, static_cast<duckdb::idx_t>(row) - state.current_row_index);
}

std::unique_ptr<duckdb::ColumnDataCollection> NewCollection(const BatchData& like) {
  return std::make_unique<duckdb::ColumnDataCollection>(
      duckdb::BufferManager::GetBufferManager(*like.db), like.types);
}

template <typename T>
Result<std::optional<T>> CastCell(const std::shared_ptr<const BatchData>& data, int64_t row,
                                  size_t col, const duckdb::LogicalType& target) {
  SLUICE_DCHECK(data != nullptr && row >= 0 &&
                row < static_cast<int64_t>(data->collection->Count()) && col < data->types.size());
  return internal::CatchAll([&]() -> Result<std::optional<T>> {
    duckdb::Value value = CellValue(*data, row, col);
    if (value.IsNull()) return std::optional<T>();
    duckdb::Value cast;
    std::string error;
    if (!value.DefaultTryCastAs(target, cast, &error, /*strict=*/false) || cast.IsNull()) {
      return Status::InvalidArgument("cannot cast " + value.ToString() + " (" +
                                     value.type().ToString() + ") to " + target.ToString() +
                                     (error.empty() ? "" : ": " + error));
    }
    return std::optional<T>(cast.GetValue<T>());
  });
}

}  // namespace
}  // namespace internal

Batch::Batch() = default;

Batch::Batch(std::shared_ptr<const internal::BatchData> data) : data_(std::move(data)) {}

const Schema& Batch::schema() const {
  static const Schema kEmpty;
  return data_ ? data_->schema : kEmpty;
}

int64_t Batch::num_rows() const {
  return data_ ? static_cast<int64_t>(data_->collection->Count()) : 0;
}

size_t Batch::num_columns() const { return data_ ? data_->types.size() : 0; }

std::optional<size_t> Batch::ColumnIndex(std::string_view name) const {
  if (!data_) return std::nullopt;
  for (size_t i = 0; i < data_->names.size(); ++i) {
    if (data_->names[i] == name) return i;
  }
  return std::nullopt;
}

bool Batch::IsNull(int64_t row, size_t col) const {
  SLUICE_DCHECK(data_ != nullptr && row >= 0 && row < num_rows() && col < num_columns());
  try {
    return internal::CellValue(*data_, row, col).IsNull();
  } catch (const std::exception&) {
    return true;
  }
}

std::optional<std::string> Batch::GetString(int64_t row, size_t col) const {
  SLUICE_DCHECK(data_ != nullptr && row >= 0 && row < num_rows() && col < num_columns());
  try {
    duckdb::Value value = internal::CellValue(*data_, row, col);
    if (value.IsNull()) return std::nullopt;
    // Value::ToString is DuckDB's default VARCHAR cast: the same text as CAST(v AS VARCHAR).
    return value.ToString();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Result<std::optional<int64_t>> Batch::GetInt64(int64_t row, size_t col) const {
  return internal::CastCell<int64_t>(data_, row, col, duckdb::LogicalType::BIGINT);
}

Result<std::optional<double>> Batch::GetDouble(int64_t row, size_t col) const {
  return internal::CastCell<double>(data_, row, col, duckdb::LogicalType::DOUBLE);
}

Result<std::optional<bool>> Batch::GetBool(int64_t row, size_t col) const {
  return internal::CastCell<bool>(data_, row, col, duckdb::LogicalType::BOOLEAN);
}

int64_t Batch::memory_bytes() const {
  return data_ ? static_cast<int64_t>(data_->collection->AllocationSize()) : 0;
}

Batch Batch::Slice(int64_t offset, int64_t length) const {
  const int64_t rows = num_rows();
  if (!data_) return Batch();
  offset = std::clamp<int64_t>(offset, 0, rows);
  length = std::clamp<int64_t>(length, 0, rows - offset);
  if (offset == 0 && length == rows) return *this;  // same rows: share them
  try {
    auto out = internal::NewCollection(*data_);
    const int64_t end = offset + length;
    if (length > 0) {
      const auto& collection = *data_->collection;
      duckdb::ColumnDataScanState state;
      collection.InitializeScan(state);
      duckdb::DataChunk chunk;
      collection.InitializeScanChunk(state, chunk);
      while (collection.Scan(state, chunk)) {
        const int64_t chunk_begin = static_cast<int64_t>(state.current_row_index);
        const int64_t chunk_end = static_cast<int64_t>(state.next_row_index);
        if (chunk_end <= offset) continue;
        if (chunk_begin >= end) break;
        const int64_t from = std::max(offset, chunk_begin);
        const int64_t to = std::min(end, chunk_end);
        if (from != chunk_begin || to != chunk_end) {
          chunk.Slice(static_cast<duckdb::idx_t>(from - chunk_begin),
                      static_cast<duckdb::idx_t>(to - from));
        }
        out->Append(chunk);
      }
    }
    return internal::MakeBatch(data_->db, std::move(out), data_->names);
  } catch (const std::exception&) {
    // Only allocation failures can land here; an empty batch with the same columns is the
    // closest honest answer for an API that cannot fail.
    return internal::MakeBatch(data_->db, internal::NewCollection(*data_), data_->names);
  }
}

Result<Batch> Batch::Concat(const std::vector<Batch>& batches) {
  const Batch* first = nullptr;
  for (const Batch& b : batches) {
    if (b.data_) {
      first = &b;
      break;
    }
  }
  if (first == nullptr) return Batch();
  for (const Batch& b : batches) {
    if (b.num_columns() != first->num_columns() ||
        (b.data_ && b.data_->types != first->data_->types)) {
      std::string a, c;
      for (const Field& f : first->schema()) a += (a.empty() ? "" : ", ") + f.type.ToSql();
      for (const Field& f : b.schema()) c += (c.empty() ? "" : ", ") + f.type.ToSql();
      return Status::InvalidArgument("Concat: batches have different column types: (" + a +
                                     ") vs (" + c + ")");
    }
  }
  size_t non_empty = 0;
  for (const Batch& b : batches) non_empty += b.num_rows() > 0 ? 1 : 0;
  if (non_empty <= 1) {
    for (const Batch& b : batches) {
      if (b.num_rows() > 0) return b;
    }
    return *first;
  }
  return internal::CatchAll([&]() -> Result<Batch> {
    auto out = internal::NewCollection(*first->data_);
    duckdb::ColumnDataAppendState append;
    out->InitializeAppend(append);
    for (const Batch& b : batches) {
      if (b.num_rows() == 0) continue;
      const auto& collection = *b.data_->collection;
      duckdb::ColumnDataScanState state;
      collection.InitializeScan(state);
      duckdb::DataChunk chunk;
      collection.InitializeScanChunk(state, chunk);
      while (collection.Scan(state, chunk)) out->Append(append, chunk);
    }
    return internal::MakeBatch(first->data_->db, std::move(out), first->data_->names);
  });
}

}  // namespace sluice::engine
