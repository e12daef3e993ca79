// SQL definitions every streaming plan connection gets (docs/streaming-sql.md):
// - __sluice_window(ts, size): Spark's tumbling window(ts, size) as a value, a
//   STRUCT(start, end) of ts's type, windows aligned to the Unix epoch; NULL for a NULL ts. A
//   size in months or years is an error, as in Spark ("Intervals greater than a month is not
//   supported").
//   (The sliding and session forms exist only as GROUP BY keys, planned by the aggregate.)
// - timestamp_seconds(x): Spark's timestamp_seconds, to_timestamp(x) (TIMESTAMP WITH TIME ZONE),
//   defined only when the engine does not have it.
#pragma once

#include <string>

#include "common/status.h"
#include "engine/engine.h"

namespace sluice::plan {

Status DefineWindowMacros(engine::Connection& conn);

// SQL of the start of the window of length `size_us` (slide `slide_us`, 0 = tumbling) that
// contains the event time `ts_sql`, minus `index` slides: an expression of ts's type.
std::string WindowStartSql(const std::string& ts_sql, int64_t slide_us, const std::string& index);

}  // namespace sluice::plan
