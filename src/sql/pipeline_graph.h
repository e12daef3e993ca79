// A pipeline as a graph (docs/pipelines.md): every statement of a pipeline's files parsed and
// checked whole, before anything is created or runs.
//
// BuildPipelineGraph reads each file's statements (statement_splitter.h), drops the `LIVE.`
// prefix (pipeline_live.h), parses each one with the parser of its kind and records the datasets
// it defines and the names it reads (pipeline_references.h):
//
//   CREATE [OR REFRESH] STREAMING TABLE t ...   dataset t; reads its query's relations
//   CREATE FLOW f AS INSERT INTO | AUTO CDC ... flow f into dataset t; reads its query's relations
//   CREATE [OR REPLACE] SINK s ...              dataset s (flows write to it)
//   CREATE [OR REFRESH] MATERIALIZED VIEW m ... dataset m; reads its query's relations
//   CREATE [OR REPLACE] [TEMPORARY] VIEW v ...  view v: not run; inlined where it is read
//                                               (pipeline_views.h), so readers read its tables
//   SET / RESET ...                             settings, applied first, in file order
//
// Every other statement is refused: a pipeline declares datasets, it does not change data.
// Checks, each error naming the file and line of the statement (`pipeline.sql:6: ...`): a syntax
// error; a dataset or flow defined twice (both places named); a flow into a dataset that is
// neither defined in the pipeline nor existing; a read of a name that is neither a dataset of the
// pipeline nor an existing table (`exists`); a cycle (its members named, each with its place);
// a materialized view read as a STREAM; a materialized view over a streaming table of the
// pipeline that does not stop by itself (a materialized view is refreshed once its inputs have
// stopped, so one over a continuous table would never be).
// The order returned is topological (a dataset after every dataset it reads, a flow after its
// target and its sources), ties in file order, so the order of the statements in the files does
// not matter.
//
// Thread safety: pure function of its arguments (`exists` is called on this thread).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "sql/pipeline_expectations.h"

namespace sluice::sql {

struct PipelineFile {
  std::string path;  // as shown in errors
  std::string text;
};

struct PipelineNode {
  enum class Kind { kSetting, kStreamingTable, kFlow, kSink, kMaterializedView, kView };
  Kind kind = Kind::kSetting;
  std::string file;
  int line = 0;
  // The statement, LIVE. dropped and views inlined: what the session runs (nothing for a view). For
  // a materialized view, the statement of one refresh (pipeline_statement_parser.h), run by sluice
  // run when its inputs are done.
  std::string text;
  std::string name;        // lower-cased; empty for a setting
  std::string target;      // a flow's target, lower-cased
  bool has_query = false;  // a streaming table with AS <query>
  // A streaming table or sink: TRIGGER AVAILABLE NOW | ONCE, or a triggered run.
  bool stops_by_itself = false;
  std::vector<std::string> reads;    // names read (streams and batch relations), lower-cased
  std::vector<std::string> streams;  // the names of `reads` read as STREAM
  std::vector<size_t> depends_on;    // indexes (in PipelineGraph::nodes) of the nodes it needs
  // A materialized view: its query (LIVE. dropped) and expectations, which each refresh counts
  // (pipeline_expectations.h).
  std::string query;
  std::vector<Expectation> expectations;

  std::string Place() const { return file + ":" + std::to_string(line); }
};

struct PipelineGraph {
  std::vector<PipelineNode> nodes;  // in run order: settings, then topological order
};

// "streaming table", "flow", "sink", "materialized view", "view", "setting".
const char* PipelineNodeKindName(PipelineNode::Kind kind);

// `exists(name)`: whether a lower-cased name is a table, streaming table or sink that already
// exists outside the pipeline. `triggered`: the run processes what is available and stops
// (sluice run --triggered), so every streaming table and sink stops by itself. InvalidArgument
// listing every refusal above, one per line, in file order.
Result<PipelineGraph> BuildPipelineGraph(const std::vector<PipelineFile>& files,
                                         const std::function<bool(const std::string&)>& exists,
                                         bool triggered = false);

}  // namespace sluice::sql
