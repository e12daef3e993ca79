// The standard upsert pattern: stream files, transform, and MERGE every micro-batch into a Delta
// table from foreachBatch, exactly once (docs/cpp-api.md, "foreachBatch and exactly-once").
//
//   foreach_batch_merge [work_dir]     (default: a new temporary directory, removed at the end)
//
// 1. Customer updates arrive as JSON files in <work_dir>/landing.
// 2. A streaming query reads them (format "files"), drops rows without an id, normalizes the
//    e-mail, and hands every micro-batch to a foreachBatch function.
// 3. The function keeps the latest update per customer in the batch and MERGEs it into the Delta
//    table `customers`: matched rows are updated when the update is newer, new ids inserted.
//    The MERGE commit records txn(appId, version = batch id), and a batch whose id the table
//    already records for the appId is skipped, so a batch re-run after a crash (or, below, on
//    purpose) changes nothing.
// 4. The query runs with Trigger.AvailableNow twice (a second file arrives in between) on the
//    same checkpoint; then batch 0 is replayed by hand to show that it is skipped.
// The program prints the table and exits with 0 when it holds the expected rows, 1 otherwise.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sluice/delta_table.h"
#include "sluice/sluice.h"

namespace {

using sluice::Result;
using sluice::Status;

// A fixed id for this pipeline and its checkpoint: a new checkpoint needs a new appId, because
// its batch ids start again at 0 (docs/cpp-api.md).
constexpr char kAppId[] = "foreach_batch_merge:customers:v1";

// MERGEs one micro-batch into the Delta table `customers`, once per batch id.
class CustomerUpserter {
 public:
  explicit CustomerUpserter(sluice::Session* session) : session_(session) {}

  Status operator()(const sluice::DataFrame& batch, int64_t batch_id) {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<sluice::DeltaTable> customers,
                            sluice::DeltaTable::ForName(session_, "customers"));
    // The latest update per customer in this batch (a MERGE source must not match a target row
    // twice).
    sluice::DataFrame latest = batch.GroupBy({"id"}).Agg({"arg_max(name, updated_at) AS name",
                                                          "arg_max(email, updated_at) AS email",
                                                          "max(updated_at) AS updated_at"});
    // One MERGE commit carrying txn(appId, batch id); skipped when the table already records
    // the batch (a re-run after a crash between the MERGE commit and the query's commits/<N>).
    // Errors are returned, never swallowed: a failed batch must fail the query so that it is
    // re-run.
    SLUICE_ASSIGN_OR_RETURN(sluice::DeltaOperationResult result,
                            customers->Merge(latest, "s", "t.id = s.id")
                                .WhenMatchedUpdateAll("s.updated_at > t.updated_at")
                                .WhenNotMatchedInsertAll()
                                .Execute({.txn_app_id = kAppId, .txn_version = batch_id}));
    if (result.skipped) {
      std::cout << "batch " << batch_id << ": already merged (txn " << kAppId << "), skipped\n";
      return Status::OK();
    }
    std::cout << "batch " << batch_id << ": " << result.metrics["numSourceRows"] << " source rows, "
              << result.metrics["numTargetRowsInserted"] << " inserted, "
              << result.metrics["numTargetRowsUpdated"] << " updated\n";
    return Status::OK();
  }

 private:
  sluice::Session* session_;
};

// Lands a file the way producers should: written elsewhere, then renamed into the directory.
Status LandFile(const std::string& dir, const std::string& name, const std::string& text) {
  std::string tmp = dir + "/../." + name + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) return Status::IOError("writing " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, dir + "/" + name, ec);
  if (ec) return Status::IOError("renaming " + tmp + ": " + ec.message());
  return Status::OK();
}

Result<int> Run(const std::string& work_dir) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<sluice::Session> session,
                          sluice::Session::Open({.warehouse = work_dir + "/warehouse"}));
  std::string landing = work_dir + "/landing";
  std::error_code ec;
  std::filesystem::create_directories(landing, ec);
  if (ec) return Status::IOError("creating " + landing + ": " + ec.message());

  // The target table, created empty with its schema when absent.
  if (!session->Table("customers").ok()) {
    SLUICE_RETURN_NOT_OK(session
                             ->Sql("SELECT CAST(NULL AS BIGINT) AS id, CAST(NULL AS VARCHAR) AS "
                                   "name, CAST(NULL AS VARCHAR) AS email, CAST(NULL AS "
                                   "TIMESTAMPTZ) AS updated_at WHERE false")
                             .Write()
                             .SaveAsTable("customers"));
  }

  // The stream: JSON files -> rows with an id, e-mail lower-cased.
  sluice::DataFrame updates =
      session->ReadStream()
          .Format("files")
          .Option("format", "json")
          .Option("maxFilesPerTrigger", 1)
          .Schema("id BIGINT, name STRING, email STRING, updated_at TIMESTAMP")
          .Load(landing)
          .Where("id IS NOT NULL")
          .WithColumn("email", "lower(email)")
          .Drop({"_rescued_data"});
  SLUICE_RETURN_NOT_OK(updates.status());

  CustomerUpserter upsert(session.get());
  auto run_once = [&]() -> Status {
    SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<sluice::StreamingQuery> query,
                            updates.WriteStream()
                                .QueryName("customers_upsert")
                                .Option("checkpointLocation", work_dir + "/checkpoints/customers")
                                .Trigger(sluice::Trigger::AvailableNow())
                                .ForeachBatch(upsert)
                                .Start());
    return query->AwaitTermination();
  };

  SLUICE_RETURN_NOT_OK(
      LandFile(landing, "2024-01-01.json",
               "{\"id\": 1, \"name\": \"Ann\", \"email\": \"ANN@EXAMPLE.COM\", \"updated_at\": "
               "\"2024-01-01T10:00:00Z\"}\n"
               "{\"id\": 2, \"name\": \"Bob\", \"email\": \"bob@example.com\", \"updated_at\": "
               "\"2024-01-01T10:00:00Z\"}\n"
               "{\"id\": 1, \"name\": \"Ann B.\", \"email\": \"ann@example.com\", \"updated_at\": "
               "\"2024-01-01T11:00:00Z\"}\n"
               "{\"name\": \"no id\", \"email\": \"x@example.com\"}\n"));
  std::cout << "-- run 1\n";
  SLUICE_RETURN_NOT_OK(run_once());

  SLUICE_RETURN_NOT_OK(LandFile(
      landing, "2024-01-02.json",
      "{\"id\": 2, \"name\": \"Bob\", \"email\": \"Bob@New.Example\", \"updated_at\": "
      "\"2024-01-02T09:00:00Z\"}\n"
      "{\"id\": 3, \"name\": \"Cy\", \"email\": \"cy@example.com\", \"updated_at\": "
      "\"2024-01-02T09:30:00Z\"}\n"
      "{\"id\": 1, \"name\": \"Ann (stale)\", \"email\": \"old@example.com\", \"updated_at\": "
      "\"2023-12-31T00:00:00Z\"}\n"));
  std::cout << "-- run 2 (same checkpoint: only the new file)\n";
  SLUICE_RETURN_NOT_OK(run_once());

  // What a restart does after a crash between the MERGE commit and commits/0: batch 0 again.
  // The txn makes it a no-op (these rows would change the table if they were merged).
  std::cout << "-- replay of batch 0\n";
  SLUICE_RETURN_NOT_OK(
      upsert(session->Sql("SELECT 1::BIGINT AS id, 'Replayed' AS name, 'r@example.com' AS "
                          "email, TIMESTAMPTZ '2030-01-01 00:00:00+00' AS updated_at"),
             0));

  SLUICE_ASSIGN_OR_RETURN(
      sluice::Rows rows,
      session->Sql("SELECT id, name, email FROM customers ORDER BY id").Collect());
  std::cout << "-- customers\n" << rows.ToString();
  std::vector<std::string> expected = {"1,Ann B.,ann@example.com", "2,Bob,bob@new.example",
                                       "3,Cy,cy@example.com"};
  if (rows.RowStrings() != expected) {
    std::cout << "UNEXPECTED table contents\n";
    return 1;
  }
  std::cout << "OK: every update merged exactly once\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string work_dir;
  bool temporary = argc < 2;
  if (temporary) {
    std::string pattern = "/tmp/sluice-foreach-batch-merge-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      std::cerr << "cannot create a temporary directory\n";
      return 2;
    }
    work_dir = pattern;
  } else {
    work_dir = argv[1];
  }
  Result<int> code = Run(work_dir);
  if (temporary) {
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
  }
  if (!code.ok()) {
    std::cerr << "error: " << code.status().ToString() << "\n";
    return 2;
  }
  return *code;
}
