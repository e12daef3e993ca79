// Arrow IPC stream reader: the rows a Spark Connect client sends in LocalRelation.data
// (createDataFrame of local rows, a pandas DataFrame or an Arrow table): pyarrow's
// ipc.new_stream output, a schema message, record batches, the end-of-stream marker
// (connect/arrow_ipc.h has the layout; this is its inverse, with every offset checked).
//
// Read: the types of Spark's scalar columns: null, bool, int8/16/32/64 (signed), float, double,
// utf8 and binary (and their large forms), date32 / date64, timestamp of any unit (as
// microseconds; nanoseconds truncated toward negative infinity, as Spark does), decimal128.
// Refused with NotSupported naming the column and the type: nested types, dictionary-encoded
// columns, compressed bodies, unsigned integers, other types. Bytes that break the format's
// rules (a cut message, a buffer outside the body, offsets out of order) are InvalidArgument
// saying what and where, never a value made up.
//
// Ownership: the result holds copies of the values. Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "connect/arrow_ipc.h"

namespace sluice::connect {

// One column of every record batch of the stream, row by row.
struct ArrowColumnValues {
  std::vector<bool> valid;         // one per row; false: NULL
  std::vector<int64_t> ints;       // bool (0/1), integers, date32 days, timestamp micros
  std::vector<double> doubles;     // float, double
  std::vector<std::string> bytes;  // utf8, binary
  std::vector<__int128> decimals;  // decimal128 (unscaled)
};

struct ArrowTableValues {
  std::vector<ArrowField> fields;
  std::vector<ArrowColumnValues> columns;  // one per field
  int64_t num_rows = 0;
};

// Reads a whole IPC stream. An empty `data` is InvalidArgument (no schema).
Result<ArrowTableValues> ReadArrowStream(std::string_view data);

}  // namespace sluice::connect
