// SessionTempViews: the temporary views a Session's SQL creates (CREATE [OR REPLACE]
// TEMP|TEMPORARY VIEW name AS query) and the Delta tables each one reads.
//
// A Delta table is read through a view the Session makes for the one statement that names it
// (sql/delta_references.h), dropped before the next statement. A temporary view stores its
// query's text, which names those per-statement views; so a later statement that reads the
// temporary view, without naming the table itself, needs them again. This class remembers,
// per temporary view, the Delta references of its query and the other temporary views it
// reads, and gives a statement the references of every temporary view it reads (through views
// of views too), so that the Session makes those views again, from the tables' latest
// snapshots (or the version a time travel names): a temporary view is re-read at each use, as
// Spark's SQL temporary views are.
//
// Names ignore case (the engine's and Spark's). A temporary view shadows a table of the same
// name (Contains tells the Session not to take that name for the table).
//
// Thread safety: used by its Session's one thread.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "sql/delta_references.h"

namespace sluice::sql {

class SessionTempViews {
 public:
  // True when `name` is a temporary view made by a statement of this session.
  bool Contains(const std::string& name) const;

  // The name (lower case) of the view `statement` creates (CREATE [OR REPLACE] TEMP[ORARY]
  // VIEW name ...), else nullopt: that name is the new view's, not a table's.
  static Result<std::optional<std::string>> CreatedView(std::string_view statement);

  // The Delta references the temporary views named by `statement` read, directly or through
  // other temporary views; each once (by view name).
  Result<std::vector<DeltaReference>> ReferencesRead(std::string_view statement) const;

  // After `statement` ran: records the view a CREATE [OR REPLACE] TEMP[ORARY] VIEW made, with
  // `references` (the Delta references of its own query), or forgets the view a DROP VIEW
  // dropped. Any other statement changes nothing.
  Status AfterStatement(std::string_view statement, const std::vector<DeltaReference>& references);

 private:
  struct View {
    std::vector<DeltaReference> references;
    std::set<std::string> views;  // the other temporary views its query reads (lower case)
  };
  // The temporary views (lower case) that the tokens of `statement` name, but `except`.
  Result<std::set<std::string>> ViewsNamed(std::string_view statement,
                                           const std::string& except) const;

  std::map<std::string, View> views_;  // by lower-case name
};

}  // namespace sluice::sql
