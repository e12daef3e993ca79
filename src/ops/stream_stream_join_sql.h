// The SQL of the stream-stream join (ops/stream_stream_join.h), built here so that
// stream_stream_join.cc holds the control flow only. The join registers batches under the table
// names below on its own connection, within one batch. Thread safety: stateless functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sluice::ops {

inline constexpr char kJoinCandidatesTable[] = "__join_candidates";
inline constexpr char kJoinLeftInputTable[] = "__join_left_input";
inline constexpr char kJoinRightInputTable[] = "__join_right_input";

// One row, one column k: the common type of SQL types `a` and `b` (DuckDB's UNION rule).
std::string JoinCommonTypeSql(const std::string& a, const std::string& b);

// `table` with the columns of `casts` (column name, SQL type) cast to their type.
std::string JoinCastKeysSql(const std::string& table,
                            const std::vector<std::pair<std::string, std::string>>& casts);

// Per row of kJoinCandidatesTable (the two sides' STRUCT columns), whether `condition_sql` holds
// (NULL as false), as BOOLEAN column m.
std::string JoinConditionSql(const std::string& condition_sql);

}  // namespace sluice::ops
