// kafka_eo_copy: a Kafka -> Kafka streaming query with the transactional (exactly-once) Kafka
// sink, as a process for the SIGKILL test (transactional_sigkill.sh). The SQL of `sluice run` has
// no Kafka sink yet (docs/kafka.md, "Not yet"), so this program runs the same engine through the
// C++ API instead.
//
//   kafka_eo_copy --bootstrap HOST:PORT --warehouse DIR [--dump]
//
// Copies topic "in" to topic "out" (key and value as read), 7 offsets per batch, with
// Trigger.AvailableNow and the checkpoint DIR/_checkpoints/eo_copy; each batch is one Kafka
// transaction (kafka.transactional.id "interop-eo-copy-v1", marker topic "markers"). Exits 0
// when everything "in" held at start is copied, 1 with the error otherwise.
// --dump instead reads "out" with Sluice's Kafka source as a read_committed consumer
// (kafka.isolation.level) and prints "key value" per record, in partition and offset order.
#include <cstring>
#include <iostream>
#include <string>

#include "sluice/sluice.h"

namespace {

sluice::Status Run(const std::string& bootstrap, const std::string& warehouse) {
  SLUICE_ASSIGN_OR_RETURN(auto session, sluice::Session::Open({.warehouse = warehouse}));
  sluice::DataFrame in = session->ReadStream()
                             .Format("kafka")
                             .Option("kafka.bootstrap.servers", bootstrap)
                             .Option("subscribe", "in")
                             .Option("startingOffsets", "earliest")
                             .Option("maxOffsetsPerTrigger", 7)
                             .Load();
  SLUICE_ASSIGN_OR_RETURN(auto query,
                          in.SelectExpr({"key", "value"})
                              .WriteStream()
                              .Format("kafka")
                              .Option("kafka.bootstrap.servers", bootstrap)
                              .Option("topic", "out")
                              .Option("kafka.transactional.id", "interop-eo-copy-v1")
                              .Option("transactionMarkerTopic", "markers")
                              .Option("checkpointLocation", warehouse + "/_checkpoints/eo_copy")
                              .Trigger(sluice::Trigger::AvailableNow())
                              .Start());
  SLUICE_RETURN_NOT_OK(query->AwaitTermination());
  std::cout << "eo_copy: done (last batch " << query->LastBatchId().value_or(-1) << ")\n";
  return sluice::Status::OK();
}

// Reads all of "out" as a read_committed consumer and prints "key value" per record.
sluice::Status Dump(const std::string& bootstrap, const std::string& warehouse) {
  SLUICE_ASSIGN_OR_RETURN(auto session, sluice::Session::Open({.warehouse = warehouse}));
  SLUICE_ASSIGN_OR_RETURN(
      auto query, session->ReadStream()
                      .Format("kafka")
                      .Option("kafka.bootstrap.servers", bootstrap)
                      .Option("kafka.isolation.level", "read_committed")
                      .Option("subscribe", "out")
                      .Option("startingOffsets", "earliest")
                      .Load()
                      .SelectExpr({"decode(key) || ' ' || decode(value) AS line", "\"partition\"",
                                   "\"offset\""})
                      .WriteStream()
                      .Format("memory")
                      .QueryName("dump")
                      .Start());
  SLUICE_RETURN_NOT_OK(query->ProcessAllAvailable());
  SLUICE_RETURN_NOT_OK(query->Stop());
  SLUICE_ASSIGN_OR_RETURN(
      auto rows,
      session->Sql("SELECT line FROM dump ORDER BY \"partition\", \"offset\"").Collect());
  for (const std::string& line : rows.RowStrings()) std::cout << line << "\n";
  return sluice::Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  std::string bootstrap, warehouse;
  bool dump = false;
  bool bad = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--dump") == 0) {
      dump = true;
    } else if (i + 1 < argc && std::strcmp(argv[i], "--bootstrap") == 0) {
      bootstrap = argv[++i];
    } else if (i + 1 < argc && std::strcmp(argv[i], "--warehouse") == 0) {
      warehouse = argv[++i];
    } else {
      bad = true;
    }
  }
  if (bad || bootstrap.empty() || warehouse.empty()) {
    std::cerr << "usage: kafka_eo_copy --bootstrap HOST:PORT --warehouse DIR [--dump]\n";
    return 2;
  }
  sluice::Status st = dump ? Dump(bootstrap, warehouse) : Run(bootstrap, warehouse);
  if (!st.ok()) {
    std::cerr << "kafka_eo_copy: error: " << st.ToString() << "\n";
    return 1;
  }
  return 0;
}
