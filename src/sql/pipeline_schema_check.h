// The schema check of a pipeline (docs/pipelines.md "What is checked when"): after its graph is
// built (pipeline_graph.h) and before anything is created, every query of the pipeline is bound
// against its inputs' schemas, in the graph's order.
//
//   setting                   applied to the checking session (a bad setting is an error)
//   streaming table, flow     Session::CheckStreamingDefinition: the planner's refusals, the
//                             query over empty inputs (unknown column or function, type error,
//                             WATERMARK on a non-timestamp), its expectations, its output
//                             against the target's schema
//   materialized view         its query and its expectations' counts query bound with LIMIT 0;
//                             its columns storable in Delta
//   view, sink                nothing (a view is inlined into its readers)
//
// Each streaming table and materialized view gives its readers its schema (the existing
// tables' come from their Delta logs), so a reader of a dataset defined in the same pipeline is
// checked before that dataset has a table. A dataset whose check failed, or whose schema cannot
// be known before it runs, leaves its readers unchecked here (checked when they run), so that
// one mistake is reported once.
//
// Thread safety: uses `session` on the calling thread.
#pragma once

#include "common/result.h"
#include "sql/pipeline_graph.h"
#include "sql/session.h"

namespace sluice::sql {

// `session`: a session on the pipeline's warehouse (or an empty scratch one when the warehouse
// does not exist yet) used only for this check: it creates, runs and writes nothing, but its
// settings are changed by the pipeline's SET statements. InvalidArgument listing every error,
// one per line, "<file>:<line>: <kind> '<name>': <error>", in graph order.
Status CheckPipelineSchemas(const PipelineGraph& graph, Session& session);

}  // namespace sluice::sql
