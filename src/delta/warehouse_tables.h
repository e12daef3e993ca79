// Where the named tables of a warehouse directory live (docs/formats/warehouse.md), for every
// front end that names tables (sql/table_catalog.h for SQL, the C++ API's Session):
//
// - Table names are case-insensitive as in Spark: stored and looked up lower-cased (ASCII).
// - A name may not be empty, ".", "..", contain '/', or start with '_' or '.', so that no table
//   collides with the catalog's own folders (_sluice/, _checkpoints/).
// - Table `t` is the directory <warehouse>/t, unless a location record
//   <warehouse>/_sluice/tables/t.json ({"location":"<path>","name":"t"}, written by CREATE TABLE
//   ... LOCATION) names another directory.
//
// Stateless functions over the FileSystem they are given (the caller keeps it alive); thread-safe
// as far as that FileSystem is.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::delta {

// OK when `name` (as written) may name a warehouse table; InvalidArgument naming it otherwise.
Status CheckWarehouseTableName(const std::string& name);

// <warehouse>/_sluice/tables/<lower_name>.json.
std::string LocationRecordPath(const std::string& warehouse, const std::string& lower_name);

// The directory of table `name` (whether or not a table exists there): the location of its
// record, or <warehouse>/<lower-cased name>. InvalidArgument for a name CheckWarehouseTableName
// refuses; Corruption naming the record when it does not parse or lacks a string "location";
// other errors of reading the record as they are.
Result<std::string> ResolveWarehouseTable(fs::FileSystem* fs, const std::string& warehouse,
                                          const std::string& name);

// Records that table `name` lives at `location` (written whole, AtomicReplace).
Status WriteLocationRecord(fs::FileSystem* fs, const std::string& warehouse,
                           const std::string& name, const std::string& location);

// Forgets table `name`'s location record; OK when there is none.
Status DeleteLocationRecord(fs::FileSystem* fs, const std::string& warehouse,
                            const std::string& name);

// The names of the warehouse's tables, sorted and without repeats: its directories that hold a
// _delta_log (other than those starting with '_' or '.'), and the names of its location
// records. An empty list when the warehouse does not exist; errors of listing it as they are.
Result<std::vector<std::string>> ListWarehouseTables(fs::FileSystem* fs,
                                                     const std::string& warehouse);

}  // namespace sluice::delta
