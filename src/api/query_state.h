// The state behind a public StreamingQuery: the micro-batch execution and what the API added
// around it. Not a public header.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "api/api_internal.h"
#include "sinks/memory_sink.h"
#include "stream/micro_batch_execution.h"

namespace sluice::api {

struct QueryState {
  // Declared first so it is destroyed last: the execution uses the session's engine.
  std::shared_ptr<SessionState> session;
  std::unique_ptr<stream::MicroBatchExecution> execution;
  std::shared_ptr<sinks::MemorySink> memory_sink;  // format "memory"
  std::optional<std::string> temp_checkpoint;      // deleted when the query object goes away
  std::optional<std::string> name;
};

}  // namespace sluice::api
