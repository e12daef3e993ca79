// The Kafka form of a Nexmark query file (bench/nexmark/qN.sql) for `sluice bench nexmark
// --source kafka` (docs/nexmark.md "Kafka-fed runs"). The generator form reads a kind as
//   STREAM @BID@ WATERMARK <w> DELAY OF <interval> AS <alias>
// (every query file spells its streams so). Each such phrase becomes a subquery with the same
// columns, in the same order, with the same types as the generator source's, over the kind's
// topic (NexmarkKafkaFeed):
//   (SELECT __e.bid.auction AS auction, ..., dateTime, __e.bid.extra AS extra
//    FROM (SELECT from_json(decode(value), 'bid STRUCT<auction: BIGINT, ...>') AS __e, dateTime
//          FROM STREAM read_kafka(bootstrapServers => ..., subscribe => 'nexmark-bid',
//                                 startingOffsets => 'earliest', maxOffsetsPerTrigger => ...)
//          WATERMARK timestamp AS dateTime DELAY OF <interval> AS __k)) AS <alias>
// dateTime is the record's timestamp, which the feed sets to the event's dateTime; every other
// column is parsed from the JSON value. <w> = dateTime watermarks it; <w> = another time column
// of the kind (q4's `expires`) is parsed at the Kafka relation for the watermark (a second,
// partial parse); <w> = `<expr> AS <col>` (q12's processing time) keeps that watermark and adds
// <col> after the kind's columns.
// maxOffsetsPerTrigger is the kind's share of `batch_events` (1 : 3 : 46 of every 50 events), so
// the streams of a join advance through event time together.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "common/status.h"

namespace sluice::cli {

struct NexmarkKafkaStreams {
  std::string bootstrap;     // kafka.bootstrap.servers
  int64_t batch_events = 1;  // M: events of the unified stream per micro-batch
};

// `text` with every stream phrase replaced. InvalidArgument when a placeholder remains in another
// form (naming it).
Result<std::string> NexmarkKafkaQueryText(const std::string& text,
                                          const NexmarkKafkaStreams& streams);

}  // namespace sluice::cli
