// The check, when a stateful streaming query starts, that its stateful operators are the ones
// whose state its checkpoint holds (Spark's
// STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA, docs/streaming-sql.md "Changing a
// stateful query"). Operators are numbered top-down (0 = the operator that feeds the sink); the
// checkpoint has state/<id>/_metadata/metadata per operator (state/operator_metadata.h). Refused,
// naming the operator and both operator lists:
// - an operator whose name differs from the checkpoint's (a different operator, or a reordering);
// - an operator id in the checkpoint that the query does not have (an operator was removed);
// - an operator the checkpoint has no state for, when other operators have state and a batch has
//   been committed (an operator was added: its state would start empty in the middle of the
//   stream).
// Changes inside an operator (grouping key, aggregates, deduplication key, join) are refused by
// the state schema check when the operator opens its state (state/operator_metadata.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "fs/file_system.h"

namespace sluice::plan {

// `operators`: the query's operator names by id (top-down). OK for a fresh checkpoint.
// InvalidArgument as described above; I/O and Corruption errors of the metadata files.
Status CheckStatefulOperatorsMatch(fs::FileSystem& fs, std::string_view checkpoint_root,
                                   const std::vector<std::string>& operators);

}  // namespace sluice::plan
