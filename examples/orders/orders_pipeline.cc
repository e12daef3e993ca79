// The headline pipeline (examples/orders/pipeline.sql) written with the C++ API: orders from Kafka
// -> bronze -> (dead letters | valid, deduplicated within a 10-minute watermark) -> silver by a
// foreachBatch MERGE -> gold from silver's change data feed (docs/kafka.md, "The headline
// pipeline"; docs/cpp-api.md, "foreachBatch and exactly-once").
//
//   orders_pipeline --bootstrap HOST:PORT --warehouse DIR [--topic orders]
//
// Four streaming queries, each with Trigger.AvailableNow and its own checkpoint under
// <warehouse>/_checkpoints/, run one after the other (each reads what the previous one wrote), so
// one invocation processes what Kafka holds and exits 0; a failed query exits 1 with its error.
// Killed at any moment and started again, it produces the same tables as an uninterrupted run:
//   - bronze, dead letters and gold are Delta sinks (each batch one commit with
//     txn(appId = query id, version = batch id));
//   - silver is written by foreachBatch: one MERGE per batch carrying txn(kSilverAppId, batch id),
//     skipped when silver already records it. The rules that makes this exactly-once: one write
//     per batch to the sink, no error caught inside the function (a failed MERGE fails the
//     batch, which is then re-run with the same rows and id), and a new checkpoint gets a new
//     appId (its batch ids start again at 0).
//
// Difference from the SQL version: AUTO CDC keeps a tombstone for a deleted (cancelled) key, so
// an event older than the delete arriving in a later batch cannot resurrect it; a plain MERGE
// has no tombstones. The events of this example never put an older event after a cancel
// (generate_events.sh), so both versions produce the same silver.
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "sluice/delta_table.h"
#include "sluice/sluice.h"

namespace {

using sluice::DataFrame;
using sluice::Result;
using sluice::Status;

// Changing the silver checkpoint requires a new appId (docs/cpp-api.md).
constexpr char kSilverAppId[] = "orders_pipeline:orders_silver:v1";

struct Options {
  std::string bootstrap;
  std::string warehouse;
  std::string topic = "orders";
};

// The JSON text of a record's value, or '{}' when it is not valid JSON (so that the extracting
// functions never see malformed text); bad_payload keeps the raw text of those.
constexpr char kJson[] = "CASE WHEN json_valid(payload) THEN payload ELSE '{}' END";

std::string Field(const std::string& name, const std::string& type) {
  return "TRY_CAST(json_extract_string(" + std::string(kJson) + ", '$." + name + "') AS " + type +
         ") AS " + name;
}

Status RunToEnd(Result<std::shared_ptr<sluice::StreamingQuery>> started, const std::string& what) {
  if (!started.ok()) return started.status().WithContext(what);
  Status st = (*started)->AwaitTermination();
  if (!st.ok()) return st.WithContext(what);
  std::cout << what << ": done (last batch " << (*started)->LastBatchId().value_or(-1) << ")\n";
  return Status::OK();
}

// Bronze: every record, parsed; payloads that are not JSON keep their raw text in bad_payload.
Status RunBronze(sluice::Session* session, const Options& o) {
  DataFrame bronze =
      session->ReadStream()
          .Format("kafka")
          .Option("kafka.bootstrap.servers", o.bootstrap)
          .Option("subscribe", o.topic)
          .Option("startingOffsets", "earliest")
          .Option("maxOffsetsPerTrigger", 5000)
          .Load()
          .SelectExpr({"decode(value) AS payload", "topic", "`partition`", "`offset`"})
          .SelectExpr({Field("order_id", "BIGINT"), Field("customer", "VARCHAR"),
                       Field("status", "VARCHAR"), Field("amount", "DOUBLE"),
                       Field("ts", "TIMESTAMPTZ"),
                       "CASE WHEN json_valid(payload) THEN NULL ELSE payload END AS bad_payload",
                       "topic", "`partition`", "`offset`"});
  return RunToEnd(bronze.WriteStream()
                      .QueryName("orders_bronze")
                      .Trigger(sluice::Trigger::AvailableNow())
                      .ToTable("orders_bronze"),
                  "orders_bronze");
}

// Dead letters: records that did not parse or lack the key or event time.
Status RunDeadLetters(sluice::Session* session) {
  DataFrame dlq = session->ReadStream()
                      .Table("orders_bronze")
                      .Where("bad_payload IS NOT NULL OR order_id IS NULL OR ts IS NULL")
                      .SelectExpr({"topic", "`partition`", "`offset`", "bad_payload",
                                   "CASE WHEN bad_payload IS NOT NULL THEN 'malformed JSON' "
                                   "WHEN order_id IS NULL THEN 'missing order_id' "
                                   "ELSE 'missing ts' END AS error"});
  return RunToEnd(dlq.WriteStream()
                      .QueryName("orders_dlq")
                      .Trigger(sluice::Trigger::AvailableNow())
                      .ToTable("orders_dlq"),
                  "orders_dlq");
}

// MERGEs one micro-batch of valid, deduplicated events into silver: the latest event per order
// wins over the table's row when it is newer; a newer cancel deletes the order.
class SilverMerger {
 public:
  explicit SilverMerger(sluice::Session* session) : session_(session) {}

  Status operator()(const DataFrame& batch, int64_t batch_id) {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<sluice::DeltaTable> silver,
                            sluice::DeltaTable::ForName(session_, "orders_silver"));
    // A MERGE source must not match a target row twice: the batch's latest event per order.
    DataFrame latest =
        batch.GroupBy({"order_id"})
            .Agg({"arg_max(customer, ts) AS customer", "arg_max(status, ts) AS status",
                  "arg_max(amount, ts) AS amount", "max(ts) AS ts"});
    SLUICE_ASSIGN_OR_RETURN(sluice::DeltaOperationResult result,
                            silver->Merge(latest, "s", "t.order_id = s.order_id")
                                .WhenMatchedDelete("s.ts > t.ts AND s.status = 'cancelled'")
                                .WhenMatchedUpdateAll("s.ts > t.ts")
                                .WhenNotMatchedInsertAll("s.status <> 'cancelled'")
                                .Execute({.txn_app_id = kSilverAppId, .txn_version = batch_id}));
    if (result.skipped) {
      std::cout << "orders_silver: batch " << batch_id << " already merged, skipped\n";
    }
    return Status::OK();
  }

 private:
  sluice::Session* session_;
};

Status RunSilver(sluice::Session* session) {
  if (!session->Table("orders_silver").ok()) {
    SLUICE_RETURN_NOT_OK(session
                             ->Sql("SELECT CAST(NULL AS BIGINT) AS order_id, CAST(NULL AS VARCHAR) "
                                   "AS customer, CAST(NULL AS VARCHAR) AS status, CAST(NULL AS "
                                   "DOUBLE) AS amount, CAST(NULL AS TIMESTAMPTZ) AS ts WHERE false")
                             .Write()
                             .Option("delta.enableChangeDataFeed", "true")
                             .SaveAsTable("orders_silver"));
  }
  // A redelivered event has the same order, status and event time.
  DataFrame valid = session->ReadStream()
                        .Table("orders_bronze")
                        .Where("bad_payload IS NULL AND order_id IS NOT NULL AND ts IS NOT NULL")
                        .SelectExpr({"order_id", "customer", "status", "amount", "ts"})
                        .WithWatermark("ts", "10 minutes")
                        .DropDuplicatesWithinWatermark({"order_id", "status", "ts"});
  return RunToEnd(
      valid.WriteStream()
          .QueryName("orders_silver")
          .Option("checkpointLocation", session->warehouse() + "/_checkpoints/orders_silver_merge")
          .Trigger(sluice::Trigger::AvailableNow())
          .ForeachBatch(SilverMerger(session))
          .Start(),
      "orders_silver");
}

// Gold: revenue and orders per customer from silver's change data feed (an update or delete
// takes back the old row).
Status RunGold(sluice::Session* session) {
  DataFrame gold =
      session->ReadStream()
          .Format("delta")
          .Option("readChangeFeed", "true")
          .Option("startingVersion", 0)
          .Table("orders_silver")
          .GroupBy({"customer"})
          .Agg({"sum(CASE WHEN _change_type IN ('insert', 'update_postimage') THEN 1 ELSE -1 "
                "END) AS orders",
                "round(sum(CASE WHEN _change_type IN ('insert', 'update_postimage') THEN amount "
                "ELSE -amount END), 2) AS revenue"});
  return RunToEnd(gold.WriteStream()
                      .QueryName("revenue_by_customer")
                      .OutputMode(sluice::OutputMode::kComplete)
                      .Trigger(sluice::Trigger::AvailableNow())
                      .ToTable("revenue_by_customer"),
                  "revenue_by_customer");
}

Result<Options> ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) return Status::InvalidArgument("option " + arg + " needs a value");
    if (arg == "--bootstrap") {
      o.bootstrap = argv[++i];
    } else if (arg == "--warehouse") {
      o.warehouse = argv[++i];
    } else if (arg == "--topic") {
      o.topic = argv[++i];
    } else {
      return Status::InvalidArgument("unknown option " + arg);
    }
  }
  if (o.bootstrap.empty() || o.warehouse.empty()) {
    return Status::InvalidArgument(
        "usage: orders_pipeline --bootstrap HOST:PORT --warehouse DIR [--topic orders]");
  }
  return o;
}

Status Run(int argc, char** argv) {
  SLUICE_ASSIGN_OR_RETURN(Options o, ParseArgs(argc, argv));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<sluice::Session> session,
                          sluice::Session::Open({.warehouse = o.warehouse}));
  SLUICE_RETURN_NOT_OK(RunBronze(session.get(), o));
  SLUICE_RETURN_NOT_OK(RunDeadLetters(session.get()));
  SLUICE_RETURN_NOT_OK(RunSilver(session.get()));
  return RunGold(session.get());
}

}  // namespace

int main(int argc, char** argv) {
  Status st = Run(argc, argv);
  if (!st.ok()) {
    std::cerr << "orders_pipeline: error: " << st.ToString() << "\n";
    return 1;
  }
  return 0;
}
