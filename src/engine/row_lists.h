// Internal to src/engine: a membership test of (entry, row index) pairs against constant lists of
// row index ranges, as a function of the engine's database. Delta scans drop the rows of deletion
// vectors with it (src/delta/scan.cc; docs/delta.md, "Deletion vectors"): a hash anti join of
// every scanned row against the expanded (entry, row) pairs cost ~40 % of a plain scan, this
// check a few nanoseconds a row.
//
//   sluice_row_listed(entry, row, 'lists')  BOOLEAN: whether `row` is in one of the ranges listed
//       for `entry` (false for an entry the lists do not name; NULL when entry or row is NULL).
//       `lists` must be a constant: "<entry>:<ranges>" items separated by ';', <ranges> is
//       "<first>-<last>" (inclusive, both >= 0) items separated by ',', ascending and disjoint;
//       an entry may appear once; its ranges may be empty ("3:"). Anything else is a binder
//       error naming the offset in the text. Parsed once per query (at bind); each thread keeps
//       a cursor into the ranges, so rows that arrive in ascending order per entry (a file's rows
//       read in order, as read_parquet's file_row_number gives them) cost O(1) each.
//
// Include only from src/engine/*.cc.
#pragma once

#include "duckdb.hpp"

namespace sluice::engine::internal {

// Throws DuckDB exceptions.
void RegisterRowLists(duckdb::DatabaseInstance& db);

}  // namespace sluice::engine::internal
