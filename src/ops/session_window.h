// Session window merging for StreamingAggregate (Spark's session_window(ts, gap)): each input
// row is the session [ts, ts + gap); sessions of one group key that overlap (or touch) merge into
// one, [min start, max end), across batches: the batch's sessions and the key's sessions in state
// are merged together and replace the key's state entries.
#pragma once

#include <string>
#include <vector>

namespace sluice::ops {

// SQL over __agg_state (state rows: `row_list` columns) and __agg_batch (the batch's per-row
// sessions: `row_list` plus __ord, __seq) that gives one row per merged session: the keys
// (`key_items`, quoted), the session column `wcol` (quoted) as STRUCT(start, "end"), the
// `merged_items` (aggregate SQL over the rows of the session, which may ORDER BY
// struct_extract(wcol, 'start'), __ord, __seq) and then `helpers` (select items over the result).
std::string SessionMergeSql(const std::vector<std::string>& key_items, const std::string& wcol,
                            const std::string& row_list,
                            const std::vector<std::string>& merged_items,
                            const std::string& helpers);

}  // namespace sluice::ops
