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

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "sources/source.h"

namespace sluice::sources {

Result<std::unique_ptr<Source>> CreateSource(const std::string& format, const SourceContext& ctx);

// The Description() a source of `format` made from `options` would have (what a checkpoint
// records as its identity, stream/source_identity.h), for the formats whose description follows
// from their options alone — delta, delta_cdf, kafka — without opening them (no table read, no
// broker contacted). nullopt for the other formats: open the source and ask it. InvalidArgument
// for Kafka options that do not parse.
Result<std::optional<std::string>> DescribeWithoutOpening(
    const std::string& format, const std::map<std::string, std::string>& options);

// "2024-01-01", "2024-01-01 10:00:00", "2024-01-01T10:00:00Z", "... +02:00" -> epoch ms (UTC
// when no zone is given). InvalidArgument naming `option` otherwise.
Result<int64_t> ParseTimestampOption(engine::Connection* conn, const std::string& text,
                                     const std::string& option);

}  // namespace sluice::sources
