// The temporary views a connection's SQL has created (CREATE TEMP VIEW v AS ...), for SHOW TABLES.
//
// Contract: names as the engine stores them (DuckDB keeps the case written), sorted, without the
// engine's own internal views. Batches registered with Connection::RegisterBatch are temporary
// views too and are listed; callers that register batches under reserved names filter them.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "engine/engine.h"

namespace sluice::engine {

Result<std::vector<std::string>> TemporaryViewNames(Connection* conn);

}  // namespace sluice::engine
