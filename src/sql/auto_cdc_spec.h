// AutoCdcSpec: what a `CREATE FLOW name AS AUTO CDC INTO target FROM STREAM src KEYS (...)
// SEQUENCE BY col [APPLY AS DELETE WHEN cond] [COLUMNS ...] [STORED AS SCD TYPE 1 | 2]` flow
// applies (docs/sql-reference.md "Streaming tables and flows", docs/streaming-sql.md "AUTO CDC
// flows"), and how the flow's stored definition records it (streaming_table_catalog.h).
//
// Column names are kept as written; they are matched case-insensitively against the source's
// columns when a batch runs (ResolveAutoCdcColumns) and, for Delta sources, at CREATE FLOW.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "engine/types.h"

namespace sluice::sql {

struct AutoCdcSpec {
  enum class Columns { kAll, kExcept, kList };
  std::vector<std::string> keys;           // KEYS (k, ...): at least one
  std::string sequence_by;                 // SEQUENCE BY col
  std::optional<std::string> delete_when;  // APPLY AS DELETE WHEN <SQL condition>
  Columns columns_mode = Columns::kAll;    // COLUMNS * | * EXCEPT (...) | (...)
  std::vector<std::string> columns;        // the EXCEPT list or the column list
  int scd_type = 1;                        // STORED AS SCD TYPE 1 | 2

  bool operator==(const AutoCdcSpec&) const = default;
};

nlohmann::ordered_json AutoCdcSpecToJson(const AutoCdcSpec& spec);
// InvalidArgument naming the malformed member.
Result<AutoCdcSpec> AutoCdcSpecFromJson(const nlohmann::json& j);

// The source columns an AUTO CDC flow uses, resolved against the source schema.
struct AutoCdcColumns {
  std::vector<std::string> keys;      // as the source spells them
  std::string sequence_by;            // as the source spells it
  std::vector<std::string> selected;  // the columns written to the target, in source order
};

// Checks the spec against `source` (the columns of the flow's source): InvalidArgument naming
// `flow` and the offending column when a key, the sequence column or a COLUMNS entry is not a
// source column, when a key is left out of the selected columns, or when a column is listed
// twice.
Result<AutoCdcColumns> ResolveAutoCdcColumns(const AutoCdcSpec& spec, const engine::Schema& source,
                                             const std::string& flow);

}  // namespace sluice::sql
