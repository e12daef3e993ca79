// Creating a source from a format name and the user's options (SQL's STREAM t / read_files /
// read_rate / table_changes, the API's ReadStream().Format(...).Option(...)).
//
// Formats and options (names case-insensitive; docs/sources.md has the defaults):
//   "delta"      path, startingVersion, startingTimestamp, maxFilesPerTrigger, maxBytesPerTrigger,
//                skipChangeCommits
//   "delta_cdf"  path, startingVersion | startingTimestamp, maxFilesPerTrigger,
//                maxBytesPerTrigger, readChangeFeed (must be true when given)
//   "files", "cloudFiles"  path, format (json|csv|parquet), schema, maxFilesPerTrigger,
//                maxBytesPerTrigger, recursive (alias recursiveFileLookup), schemaEvolutionMode
//                (addNewColumns|rescue|none|failOnNewColumns), badRecordsPath, header,
//                delimiter (alias sep); a "cloudFiles." prefix on a name is ignored
//   "rate"       rowsPerSecond, numPartitions, rampUpTime
//   "kafka"      kafka.bootstrap.servers (or bootstrapServers) and other kafka.*, subscribe |
//                subscribePattern | assign, startingOffsets, maxOffsetsPerTrigger,
//                failOnDataLoss, groupIdPrefix, kafkaConsumer.pollTimeoutMs (docs/kafka.md)
//   "memory"     schema (required)
// Errors: InvalidArgument naming the unknown format, the unknown option (with the known ones)
// or the option whose value is wrong.
#pragma once

#include <memory>
#include <string>

#include "sources/source.h"

namespace sluice::sources {

Result<std::unique_ptr<Source>> CreateSource(const std::string& format, const SourceContext& ctx);

// "2024-01-01", "2024-01-01 10:00:00", "2024-01-01T10:00:00Z", "... +02:00" -> epoch ms (UTC
// when no zone is given). InvalidArgument naming `option` otherwise.
Result<int64_t> ParseTimestampOption(engine::Connection* conn, const std::string& text,
                                     const std::string& option);

}  // namespace sluice::sources
