#include "delta/cdc_writer.h"

#include "delta/changes.h"
#include "delta/column_mapping.h"
#include "delta/column_mapping_write.h"
#include "delta/file_writer.h"

namespace sluice::delta {

bool ChangeDataFeedEnabled(const Snapshot& snapshot) {
  return snapshot.metadata.ConfigIsTrue("delta.enableChangeDataFeed");
}

Result<std::vector<AddCdcFile>> WriteCdcFiles(engine::Connection* conn, fs::FileSystem* fs,
                                              const Snapshot& snapshot,
                                              const engine::Batch& changes, bool sync) {
  std::vector<AddCdcFile> out;
  if (changes.num_rows() == 0) return out;
  const engine::Schema& schema = changes.schema();
  if (schema.size() != snapshot.schema.fields.size() + 1 ||
      schema.back().name != kChangeTypeColumn) {
    return Status::InvalidArgument(
        "change rows must have the table columns followed by _change_type");
  }
  DataFileOptions options;
  options.data_change = false;
  options.num_indexed_cols = 0;
  options.sync = sync;
  const std::string root = snapshot.table_root + "/" + kChangeDataDir;
  // Column mapping: cdc files hold the physical names too (_change_type stays).
  SLUICE_ASSIGN_OR_RETURN(ColumnMappingMode mode, ColumnMappingModeOf(snapshot.metadata));
  std::vector<AddFile> files;
  if (mode == ColumnMappingMode::kNone) {
    SLUICE_ASSIGN_OR_RETURN(files, WriteDataFiles(conn, fs, root, changes, schema,
                                                  snapshot.metadata.partition_columns, options));
  } else {
    SLUICE_ASSIGN_OR_RETURN(PhysicalRows physical,
                            ToPhysicalRows(conn, changes, snapshot.schema, snapshot.metadata));
    options.field_ids = std::move(physical.field_ids);
    SLUICE_ASSIGN_OR_RETURN(files, WriteDataFiles(conn, fs, root, physical.rows, physical.schema,
                                                  physical.partition_columns, options));
  }
  for (const AddFile& f : files) {
    AddCdcFile cdc;
    cdc.path = std::string(kChangeDataDir) + "/" + f.path;
    cdc.partition_values = f.partition_values;
    cdc.size = f.size;
    cdc.data_change = false;
    out.push_back(std::move(cdc));
  }
  return out;
}

}  // namespace sluice::delta
