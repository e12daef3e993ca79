// Batch -> Arrow IPC: the rows of an engine batch as the Arrow stream of Spark Connect's
// ExecutePlanResponse.arrow_batch (connect/arrow_ipc.h for the bytes, connect/spark_types.h for
// the types).
//
// Each column is read once as typed values (engine/column_values.h: integers, days,
// microseconds, unscaled decimals, bytes) and appended to its Arrow buffers: no value goes
// through text. A HUGEINT (a sum of BIGINTs, sent as decimal(38,0)) beyond 38 digits is
// InvalidArgument naming the column and row, never a different value.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
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

}  // namespace sluice::connect
