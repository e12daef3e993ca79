// The sources a checkpoint was created with, so that a restart with a different set of sources
// or a different source (another table, directory or topic) is refused instead of silently
// mixing offsets of one source with another (docs/formats/checkpoint.md, "sources/identity").
//
// File <root>/sources/identity, written create-if-absent before offsets/0:
//   v1
//   {"sources":[{"description":"DeltaSource[/wh/events]"},...]}
// Thread safety: free functions.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "fs/file_system.h"

namespace sluice::stream {

std::string SourceIdentityPath(const std::string& checkpoint_root);
std::string SerializeSourceIdentities(const std::vector<std::string>& identities);
// Corruption for bytes that are not a v1 identity file.
Result<std::vector<std::string>> ParseSourceIdentities(std::string_view bytes);

// Writes the file when absent; otherwise compares: InvalidArgument naming what changed (number of
// sources, or source i's old and new identity) and saying that a new checkpoint is needed.
// A missing file (a new checkpoint, or one from before this file existed) is written from the
// current sources with no check.
Status CheckOrRecordSourceIdentities(fs::FileSystem& fs, const std::string& checkpoint_root,
                                     const std::vector<std::string>& identities, bool sync);

}  // namespace sluice::stream
