// Keyed state in group mode (docs/scale-out.md "Keyed state and partitioning"). A task holds the
// state of the records of its partition only, so a stateful query is correct in group mode only
// when every record of a state key is in one partition. Sluice cannot see how the producer keyed
// the topic: the user declares it with the Kafka source's option `partitionedBy => 'col'` ("the
// record's Kafka key is the value of col"), and
//  - CheckStatePartitioning accepts the query only when `col` is one of the state's keys (a
//    GROUP BY key of the aggregation, a key of the deduplication), and traces `col` down to an
//    expression over the Kafka stream's own columns (through subqueries that project it);
//  - PartitionKeyCheckPlan (partition_key_check.h) then runs the returned check on every batch:
//    a record whose key differs from the column's value fails the task, naming it.
// Refused (NotSupported, the message naming the key the input must be partitioned by): no
// declaration, a declared column that is not a state key, a global aggregation (one state for the
// whole topic), a chain of two stateful operators, an operator other than aggregation or
// deduplication, a column that cannot be traced to the stream.
//
// Thread safety: pure functions over a private SqlAst connection.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"
#include "plan/stream_query_parser.h"

namespace sluice::scaleout {

struct StatePartitioning {
  std::string column;  // the declared column, as the user wrote it
  // SQL over the stream view __stream_0 (plan::StreamingPlan::StreamViewSql): one row
  // (__p partition, __o offset, __k the key as text, __v the column as text) of the first record
  // whose key differs from the column's value; no row when every record agrees.
  std::string check_sql;
};

// `parsed`: the query (plan::ParseStreamingQuery) of one Kafka stream of `topic`; `operators`:
// the planned stateful operators (plan::PlannedStreamingQuery::operators, not empty);
// `declared`: the source's partitionedBy. `what` names the query in errors ("streaming table t").
Result<StatePartitioning> CheckStatePartitioning(engine::Engine* engine,
                                                 const plan::ParsedStreamingQuery& parsed,
                                                 const std::vector<std::string>& operators,
                                                 const std::optional<std::string>& declared,
                                                 const std::string& topic, const std::string& what);

}  // namespace sluice::scaleout
