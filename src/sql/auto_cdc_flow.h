// The AUTO CDC parts of StreamingTableManager (docs/streaming-sql.md "AUTO CDC flows"): the checks
// of CREATE FLOW ... AS AUTO CDC INTO, and the sink its runs write through (auto_cdc_sink.h).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "engine/engine.h"
#include "fs/file_system.h"
#include "sql/streaming_table_catalog.h"
#include "stream/micro_batch_execution.h"

namespace sluice::sql {

// Checks an AUTO CDC flow definition (`flow.auto_cdc` set, `flow.sources` resolved) at CREATE
// FLOW. `target` is the target's streaming table definition (nullopt for a plain Delta table),
// `target_path` its path, `target_exists` whether its Delta table exists. Refuses, naming what is
// wrong: a target streaming table that has its own query; KEYS /
// SEQUENCE BY / COLUMNS naming columns the source does not have (checked here for Delta table and
// change-feed sources, whose schema is known; for other sources when the first batch runs); a
// selected column (or, for SCD type 2, __START_AT / __END_AT) the existing target table does
// not have.
Status CheckAutoCdcFlow(const StreamingDefinition& flow,
                        const std::optional<StreamingDefinition>& target,
                        const std::string& target_path, bool target_exists,
                        const std::shared_ptr<fs::FileSystem>& fs, engine::Engine* engine);

// The sink factory of an AUTO CDC flow's runs: its state table lives at
// <checkpoint>/auto_cdc_state.
stream::SinkFactory AutoCdcSinkFactory(const StreamingDefinition& flow,
                                       const std::string& target_path,
                                       const std::string& checkpoint);

}  // namespace sluice::sql
