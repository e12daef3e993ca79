// Which Delta tables Sluice can read (PROTOCOL.md "Protocol Evolution", "Table Features").
//
// Accepted: reader versions 1 and 2; reader version 3 whose readerFeatures are all implemented
// by Sluice (today: vacuumProtocolCheck, deletionVectors (applied by scan.h), columnMapping
// (column_mapping.h, physical names read by scan.h), timestampNtz, typeWidening and
// typeWidening-preview (old files cast to the widened type by scan.h), v2Checkpoint
// (checkpoint_reader.cc)), with delta.columnMapping.mode none, name or id at any reader version.
// Everything else is refused with NotSupported naming the feature (variantType,
// variantShredding, catalogManaged, unknown names, an unknown column mapping mode) or the reader
// version ("Unsupported Delta protocol reader version 99 ...").
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "delta/actions.h"

namespace sluice::delta {

// The reader features this build implements.
const std::vector<std::string>& SupportedReaderFeatures();

// OK when Sluice can read a table with this protocol and metadata.
Status CheckReadSupported(const Protocol& protocol, const Metadata& metadata);

}  // namespace sluice::delta
