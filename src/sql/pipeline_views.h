// Views in a pipeline (docs/pipelines.md "Views"): `CREATE [OR REPLACE] [TEMPORARY | TEMP] VIEW
// v [COMMENT '...'] AS <query>` declares a name for a query; it is not materialized. Every
// statement of the pipeline that reads `v` as a relation — `FROM v`, `JOIN v`, `STREAM v`,
// `STREAM(v)` — reads `(<query>) AS v` instead (the alias kept when one is written), so the
// graph and the planner see the tables the view reads. A view over a STREAM is a streaming
// view: reading it (with or without STREAM) reads that stream; reading a view without a STREAM
// as a STREAM is refused. Newlines of the inlined query become spaces, so the lines of the
// statement that reads it stay the file's.
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::sql {

struct ViewDefinition {
  std::string name;  // as written
  std::string query;
  bool streaming = false;  // its query reads a STREAM
};

// nullopt: not a CREATE VIEW statement. InvalidArgument for a syntax error (line and column
// inside `sql`); NotSupported for a column list (names or expectations) on a view.
Result<std::optional<ViewDefinition>> ParseView(std::string_view sql);

// `sql` with every relation reference to a view of `views` (keyed by lower-cased name; their
// own queries already inlined) replaced as above. InvalidArgument naming the view when one
// without a STREAM is read as a STREAM.
Result<std::string> InlineViews(std::string_view sql,
                                const std::map<std::string, ViewDefinition>& views);

}  // namespace sluice::sql
