// Row codec: encodes the values of selected columns of a Batch as one byte string per row, and
// decodes such strings back into a Batch. Used for state store keys/values and for hashing rows
// into partitions. The byte format is versioned and documented in docs/formats/row-codec.md.
//
// Contract: encodings are deterministic (equal values of equal types give equal bytes, whatever
// batch or chunk they come from), so an encoded key can be a state store key and hashing it gives
// a stable partition. Floating-point values are encoded exactly, except that every NaN is
// encoded as the canonical quiet NaN and -0.0 as +0.0 (so SQL-equal values give equal keys; the
// decoder gives those back). Intervals are encoded field by field, not normalized (1 month and
// 30 days differ). A fixed-width value's bytes sort like the value (NULL first).
// Types: every DuckDB type Sluice's DataType can name (kOther included: unsigned integers,
// UHUGEINT, TIMESTAMP_S/MS/NS, TIME_NS, TIMETZ, BIT, ENUM, fixed-size ARRAY), nested STRUCT /
// LIST / MAP recursively; UNION and VARIANT give NotSupported naming the column.
// Decoded batches hold their rows in a process-wide in-memory DuckDB database (not an Engine's),
// so they do not count against EngineOptions::memory_limit; they can be registered on any
// Connection.
// Thread safety: the functions are reentrant; Batches are immutable.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"
#include "engine/types.h"

namespace sluice::engine {

// Every encoded row starts with this many header bytes (the format's version byte, 0x01); the
// column values follow. Code that splices the values of encoded rows skips the header.
inline constexpr size_t kRowHeaderBytes = 1;

// Encodes the values of `columns` (indexes into batch.schema()) of every row of `batch`: one
// string per row, in row order. Deterministic: equal values of equal types give equal bytes, so an
// encoded key can be a state store key (and hashing it gives a stable partition). Versioned format:
// docs/formats/row-codec.md.
Result<std::vector<std::string>> EncodeRows(const Batch& batch, const std::vector<size_t>& columns);
// The inverse: a Batch with `schema` whose row i holds the values encoded in rows[i] (which must
// have been encoded from columns of exactly these types, in this order). Corruption naming the row
// for bytes that do not decode (truncated, wrong tag, trailing bytes).
Result<Batch> DecodeRows(const Schema& schema, const std::vector<std::string_view>& rows);
// One column of `batch` for all rows at once (Batch::GetInt64 / GetBool / IsNull per cell re-scan
// the batch's chunks; these read the column once). Int64ColumnValues: an integer column's values,
// nullopt for NULL. BoolColumnValues: a BOOLEAN column's. ColumnNulls: whether each row is NULL.
Result<std::vector<std::optional<int64_t>>> Int64ColumnValues(const Batch& batch, size_t column);
Result<std::vector<std::optional<bool>>> BoolColumnValues(const Batch& batch, size_t column);
Result<std::vector<bool>> ColumnNulls(const Batch& batch, size_t column);
// Convenience: the schema of `columns` of `batch`.
Schema SelectSchema(const Schema& schema, const std::vector<size_t>& columns);

}  // namespace sluice::engine
