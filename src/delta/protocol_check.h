// Which Delta tables Sluice can read (PROTOCOL.md "Protocol Evolution", "Table Features").
//
// Accepted: reader version 1; reader version 2 with column mapping mode none (or absent);
// reader version 3 whose readerFeatures are all implemented by Sluice (today:
// vacuumProtocolCheck, deletionVectors (applied by scan.h), and columnMapping while the mode is
// none). Everything else is refused with NotSupported naming the feature (columnMapping with mode
// id/name, v2Checkpoint, typeWidening, timestampNtz, variantType, catalogManaged, unknown names) or
// the reader version ("Unsupported Delta protocol reader version 99 ...").
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
