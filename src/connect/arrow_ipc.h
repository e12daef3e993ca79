// Arrow IPC stream writer: the bytes of an Arrow "streaming format" message sequence (a schema
// message, record batch messages, the end-of-stream marker), as Spark Connect sends results in
// ExecutePlanResponse.arrow_batch.data and as pyarrow.ipc.open_stream reads them.
//
// Layout (Arrow's columnar format, version V5, little-endian; docs/pyspark.md says more):
//   message := 0xFFFFFFFF, int32 metadata size, Message flatbuffer padded to a multiple of 8,
//              then the body: every buffer of the batch, each padded to a multiple of 8
//   stream  := schema message, record batch message*, 0xFFFFFFFF 0x00000000
// Buffers per column: validity bitmap (bit i set = row i is valid; empty when nothing is NULL),
// then values (fixed width: little-endian; boolean: a bitmap) or, for strings and binary, int32
// offsets (rows + 1) and the bytes. The null type has no buffers. Decimals are 16-byte two's
// complement integers of the unscaled value; dates are int32 days since 1970-01-01; timestamps
// int64 microseconds since 1970-01-01 UTC (with a time zone name: an instant; without: local).
//
// Ownership: plain values. Thread safety: none needed (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sluice::connect {

enum class ArrowTypeId {
  kNull,
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat,
  kDouble,
  kString,
  kBinary,
  kDate32,
  kTimestampMicros,
  kDecimal128,
};

struct ArrowType {
  ArrowTypeId id = ArrowTypeId::kNull;
  int32_t precision = 0;  // kDecimal128
  int32_t scale = 0;      // kDecimal128
  std::string timezone;   // kTimestampMicros: "UTC" for an instant, empty for a local time
};

struct ArrowField {
  std::string name;
  ArrowType type;
  bool nullable = true;
};

// One column's values, appended row by row. Append calls must match the column's type (a
// mismatch is a programmer error, caught by Finish's length checks as InvalidArgument).
class ArrowColumnBuilder {
 public:
  explicit ArrowColumnBuilder(ArrowType type);

  void AppendNull();
  void AppendBool(bool v);
  // kInt8..kInt64, kDate32 (days), kTimestampMicros (microseconds): the value, narrowed to the
  // column's width.
  void AppendInt(int64_t v);
  void AppendDouble(double v);            // kFloat (narrowed) and kDouble
  void AppendBytes(std::string_view v);   // kString (UTF-8) and kBinary
  void AppendDecimal(__int128 unscaled);  // kDecimal128

  int64_t length() const { return length_; }
  int64_t null_count() const { return null_count_; }
  const ArrowType& type() const { return type_; }

 private:
  friend class ArrowStreamWriter;
  void MarkValid(bool valid);

  ArrowType type_;
  int64_t length_ = 0;
  int64_t null_count_ = 0;
  std::string validity_;  // bits, LSB first
  std::string values_;    // fixed-width values, boolean bits, or string bytes
  std::vector<int32_t> offsets_{0};
};

class ArrowStreamWriter {
 public:
  // The schema message.
  static std::string SchemaMessage(const std::vector<ArrowField>& fields);
  // One record batch message. Every column must have `num_rows` values and the type of its
  // field; InvalidArgument otherwise (naming the column).
  static Result<std::string> RecordBatchMessage(const std::vector<ArrowField>& fields,
                                                const std::vector<ArrowColumnBuilder>& columns,
                                                int64_t num_rows);
  static std::string EndOfStream();
  // SchemaMessage + RecordBatchMessage + EndOfStream: a whole stream of one batch.
  static Result<std::string> Stream(const std::vector<ArrowField>& fields,
                                    const std::vector<ArrowColumnBuilder>& columns,
                                    int64_t num_rows);
};

}  // namespace sluice::connect
