// Batch -> Arrow IPC: the rows of an engine batch as the Arrow stream of Spark Connect's
// ExecutePlanResponse.arrow_batch (connect/arrow_ipc.h for the bytes, connect/spark_types.h for
// the types).
//
// Cells are read with the batch's accessors (GetInt64/GetDouble/GetBool/GetString): dates,
// timestamps, decimals and blobs are parsed from the engine's text of them (a date as
// YYYY-MM-DD, a timestamp as YYYY-MM-DD HH:MM:SS[.ffffff][+00], a decimal as its digits, a blob
// with \xHH escapes). Text that does not parse is an Internal error naming the column and row,
// never a different value. Meant for results of modest size (each cell is converted on its own).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "connect/arrow_ipc.h"
#include "engine/engine.h"

namespace sluice::connect {

// The Arrow fields of `schema` (NotSupported for a type Spark Connect cannot be sent).
Result<std::vector<ArrowField>> ArrowFieldsOf(const engine::Schema& schema);

// Rows [offset, offset + length) of `batch` (clamped) as a whole Arrow stream: schema message,
// one record batch, end of stream. Sets *num_rows to the rows written.
Result<std::string> BatchToArrowStream(const engine::Batch& batch, int64_t offset, int64_t length,
                                       int64_t* num_rows);

// The parsers of the engine's text (exposed for tests).
Result<int32_t> ParseDateDays(std::string_view text);
Result<int64_t> ParseTimestampMicros(std::string_view text);  // "+00" offset or none
Result<__int128> ParseDecimalUnscaled(std::string_view text, int32_t scale);
Result<std::string> ParseBlobText(std::string_view text);

}  // namespace sluice::connect
