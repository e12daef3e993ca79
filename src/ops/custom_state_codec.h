// Values of custom state (transformWithState, ops/transform_with_state.h) and their bytes.
//
// 1. State values: a sluice::Row (include/sluice/stateful_processor.h) is encoded
//    self-describingly, so that a ROW state variable needs no declared schema:
//      row   := varint(count) value*
//      value := 0x00                         NULL
//             | 0x01 u8 (0 / 1)              bool
//             | 0x02 8 bytes                 int64, big-endian with the sign bit flipped
//             | 0x03 8 bytes                 double, the row codec's order-preserving bits
//             | 0x04 varint(len) bytes       string
//    (varint: unsigned LEB128, as the row codec's). Fixed-width values therefore sort by value,
//    so a MapState<int64_t, V> lists its entries in numeric key order. The state store value
//    around it is ops/state_rows.h's StateValue: [i64 BE TTL expiry in us][row bytes].
// 2. Input rows: a batch's columns are cast by SQL to BOOLEAN / BIGINT / DOUBLE / VARCHAR (the
//    conversion rules of stateful_processor.h) and decoded from engine::EncodeRows' bytes.
// 3. Output rows: built into a batch of the declared output schema (engine::BatchBuilder).
// Errors: Corruption for bytes that do not decode; InvalidArgument naming the column and the
// value's type for an output row that does not fit the schema.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"
#include "sluice/stateful_processor.h"

namespace sluice::ops {

// Appends the encoding of `row` to *out.
void EncodeValueRow(const Row& row, std::string* out);
std::string EncodeValueRow(const Row& row);
// Decodes one row from the front of *bytes and advances it. Corruption when truncated or bad.
Result<Row> DecodeValueRow(std::string_view* bytes);
// A whole string holding exactly one row.
Result<Row> DecodeValueRowExact(std::string_view bytes);

// A list of rows: varint(count) row*.
std::string EncodeValueRows(const std::vector<Row>& rows);
Result<std::vector<Row>> DecodeValueRows(std::string_view bytes);

// The SQL expression converting column `name` of type `type` to the Value types (see above).
std::string ValueCastSql(const std::string& name, const engine::DataType& type);
// The rows of `batch` (all of whose columns are BOOLEAN, BIGINT, DOUBLE or VARCHAR, as the
// casts above give them) as Rows.
Result<std::vector<Row>> BatchToValueRows(const engine::Batch& batch);

// A batch with `schema` holding `rows`. `what` names the producer for messages.
Result<engine::Batch> ValueRowsToBatch(const engine::Schema& schema, const std::vector<Row>& rows,
                                       const std::string& what);

// "NULL", "true", "42", "1.5", "'x'" — for messages and tests.
std::string ValueToString(const Value& v);
std::string RowToString(const Row& row);

}  // namespace sluice::ops
