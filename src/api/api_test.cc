// Tests of the public C++ API (include/sluice/sluice.h), through the public headers only (plus a
// temporary directory helper).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "fs/test_util.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

#define ASSERT_OK(expr)                              \
  do {                                               \
    ::sluice::Status _st = ::sluice::ToStatus(expr); \
    ASSERT_TRUE(_st.ok()) << _st.ToString();         \
  } while (false)

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Session::Open({.warehouse = dir_.Join("wh")});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(*s);
  }

  // Rows of a batch frame, sorted, as "a,b" strings.
  std::vector<std::string> Sorted(const DataFrame& df) {
    auto rows = df.Collect();
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok()) return {};
    std::vector<std::string> out = rows->RowStrings();
    std::sort(out.begin(), out.end());
    return out;
  }

  std::shared_ptr<MemoryStream> NewStream(const std::string& name) {
    auto s = session_->CreateMemoryStream("id BIGINT, name STRING", name);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : nullptr;
  }

  fs::ScopedTempDir dir_{"sluice-api"};
  std::unique_ptr<Session> session_;
};

TEST_F(ApiTest, BatchFramesRunSqlTransformations) {
  DataFrame people = session_->Sql(
      "SELECT * FROM (VALUES (1, 'ann', 10), (2, 'bob', 20), "
      "(3, 'cy', 30)) AS t(id, name, dept)");
  ASSERT_OK(people.status());
  EXPECT_FALSE(people.IsStreaming());
  DataFrame depts =
      session_->Sql("SELECT * FROM (VALUES (10, 'eng'), (20, 'ops')) AS d(dept, dname)");

  EXPECT_EQ(Sorted(people.Where("id > 1").Select({"name"})),
            (std::vector<std::string>{"bob", "cy"}));
  EXPECT_EQ(Sorted(people.WithColumn("name", "upper(name)").Select({"id", "name"})),
            (std::vector<std::string>{"1,ANN", "2,BOB", "3,CY"}));
  EXPECT_EQ(Sorted(people.WithColumn("twice", "id * 2").SelectExpr({"twice"})),
            (std::vector<std::string>{"2", "4", "6"}));
  EXPECT_EQ(
      Sorted(people.Join(depts, std::vector<std::string>{"dept"}).SelectExpr({"name", "dname"})),
      (std::vector<std::string>{"ann,eng", "bob,ops"}));
  EXPECT_EQ(Sorted(people.Alias("p")
                       .Join(depts.Alias("d"), "p.dept = d.dept", "left")
                       .SelectExpr({"p.name", "coalesce(d.dname, '-')"})),
            (std::vector<std::string>{"ann,eng", "bob,ops", "cy,-"}));
  EXPECT_EQ(Sorted(people.Select({"id"}).Union(people.Select({"id"})).GroupBy({"id"}).Count()),
            (std::vector<std::string>{"1,2", "2,2", "3,2"}));
  EXPECT_EQ(Sorted(people.Drop({"dept", "name"})), (std::vector<std::string>{"1", "2", "3"}));
  auto n = people.Count();
  ASSERT_OK(n);
  EXPECT_EQ(*n, 3);
  auto schema = people.Select({"id", "name"}).Schema();
  ASSERT_OK(schema);
  EXPECT_EQ(*schema, (std::vector<Column>{{"id", "INTEGER"}, {"name", "VARCHAR"}}));
}

// Expression strings are Spark SQL, rewritten by the one dialect layer (dialect/spark_sql.h) as
// the SQL front end's statements are: typed literals, Spark's casts and type names, array(),
// struct(x AS a), offset as a column name, div.
TEST_F(ApiTest, ExpressionStringsAreSparkSql) {
  DataFrame df = session_->Sql("SELECT * FROM (VALUES (7, 100), (8, 0)) AS t(id, `offset`)");
  ASSERT_OK(df.status());
  EXPECT_EQ(Sorted(df.Where("offset > 0")
                       .WithColumn("half", "id div 2")
                       .SelectExpr({"half", "CAST(5L AS STRING) AS s", "len(array(1, 2)) AS n",
                                    "struct(offset AS a).a AS a", "CAST('3' AS LONG) AS l"})),
            (std::vector<std::string>{"3,5,2,100,3"}));
  EXPECT_EQ(Sorted(df.GroupBy({"id div 2"}).Agg({"sum(offset) AS o"})),
            (std::vector<std::string>{"3,100", "4,0"}));
}

TEST_F(ApiTest, TransformationErrorsAreKeptInTheFrame) {
  DataFrame df = session_->Sql("SELECT 1 AS id");
  DataFrame bad = df.Where("no_such_column > 1");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no_such_column"), std::string::npos)
      << bad.status().ToString();
  // Later transformations and actions return the first error.
  DataFrame later = bad.Select({"id"});
  EXPECT_EQ(later.status(), bad.status());
  EXPECT_EQ(later.Collect().status(), bad.status());
  EXPECT_FALSE(df.Join(df, "x", "sideways").ok());
  EXPECT_TRUE(DataFrame().status().IsInvalidArgument());
  EXPECT_TRUE(session_->Table("missing").status().IsNotFound());
}

TEST_F(ApiTest, MemoryStreamToMemorySinkWithProcessAllAvailable) {
  auto input = NewStream("people");
  ASSERT_NE(input, nullptr);
  ASSERT_OK(input->AddSql("VALUES (1, 'ann'), (2, 'bob')"));
  DataFrame df = input->ToDF().Where("id > 1").WithColumn("upper", "upper(name)");
  ASSERT_OK(df.status());
  EXPECT_TRUE(df.IsStreaming());
  EXPECT_TRUE(df.Collect().status().IsInvalidArgument());

  auto q = df.WriteStream().Format("memory").QueryName("out").Start();
  ASSERT_OK(q);
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted(session_->Table("out")), (std::vector<std::string>{"2,bob,BOB"}));
  ASSERT_OK(input->AddSql("VALUES (3, 'cy'), (0, 'zed')"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted(session_->Sql("SELECT * FROM out")),
            (std::vector<std::string>{"2,bob,BOB", "3,cy,CY"}));
  EXPECT_TRUE((*q)->IsActive());
  EXPECT_EQ((*q)->Name(), "out");
  EXPECT_EQ((*q)->LastBatchId(), 1);
  auto progress = (*q)->LastProgress();
  ASSERT_TRUE(progress.has_value());
  EXPECT_NE(progress->Json().find("\"name\":\"out\""), std::string::npos) << progress->Json();
  EXPECT_EQ(progress->name, "out");
  EXPECT_EQ(progress->id, (*q)->Id());
  EXPECT_EQ(progress->run_id, (*q)->RunId());
  EXPECT_EQ(progress->duration_ms.count("triggerExecution"), 1u) << progress->Json();
  // The batch that read (3, cy) and (0, zed): 2 input rows before the filter; the struct's
  // figures are those of its JSON.
  bool found = false;
  for (const StreamingQueryProgress& p : (*q)->RecentProgress()) {
    EXPECT_NE(p.Json().find("\"batchId\":" + std::to_string(p.batch_id) + ","), std::string::npos);
    EXPECT_NE(p.Json().find("\"numInputRows\":" + std::to_string(p.num_input_rows) + ","),
              std::string::npos)
        << p.Json();
    if (p.batch_id == 1 && p.num_input_rows == 2) found = true;
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(session_->ActiveQueries().size(), 1u);
  ASSERT_OK((*q)->Stop());
  EXPECT_FALSE((*q)->IsActive());
  EXPECT_EQ((*q)->CurrentStatus().message, "Stopped");
  EXPECT_FALSE((*q)->Exception().has_value());
}

TEST_F(ApiTest, FilesStreamWithAvailableNowTrigger) {
  std::string landing = dir_.Join("landing");
  ASSERT_OK(fs::LocalFileSystem()->CreateDirectories(landing));
  ASSERT_OK(fs::LocalFileSystem()->CreateIfAbsent(fs::JoinPath(landing, "a.json"),
                                                  "{\"id\": 1, \"kind\": \"click\"}\n"
                                                  "{\"id\": 2, \"kind\": \"view\"}\n"));
  ASSERT_OK(fs::LocalFileSystem()->CreateIfAbsent(fs::JoinPath(landing, "b.json"),
                                                  "{\"id\": 3, \"kind\": \"click\"}\n"));
  DataFrame clicks = session_->ReadStream()
                         .Format("files")
                         .Option("format", "json")
                         .Option("maxFilesPerTrigger", 1)
                         .Schema("id BIGINT, kind STRING")
                         .Load(landing)
                         .Where("kind = 'click'")
                         .Select({"id"});
  ASSERT_OK(clicks.status());
  auto q = clicks.WriteStream()
               .Format("memory")
               .QueryName("clicks")
               .Option("checkpointLocation", dir_.Join("cp_files"))
               .Trigger(Trigger::AvailableNow())
               .Start();
  ASSERT_OK(q);
  ASSERT_OK((*q)->AwaitTermination());  // AvailableNow ends by itself
  EXPECT_FALSE((*q)->IsActive());
  EXPECT_EQ(Sorted(session_->Table("clicks")), (std::vector<std::string>{"1", "3"}));
  EXPECT_EQ((*q)->LastBatchId(), 1);  // one file per batch
}

// Spark's readStream.format("json"): the files source of JSON files; a second file format
// given as an option is refused.
TEST_F(ApiTest, FormatJsonReadsJsonFiles) {
  std::string landing = dir_.Join("landing_json");
  ASSERT_OK(fs::LocalFileSystem()->CreateDirectories(landing));
  ASSERT_OK(fs::LocalFileSystem()->CreateIfAbsent(fs::JoinPath(landing, "a.json"),
                                                  "{\"id\": 1}\n{\"id\": 2}\n"));
  DataFrame rows = session_->ReadStream().Format("json").Schema("id BIGINT").Load(landing);
  ASSERT_OK(rows.status());
  auto q = rows.Select({"id"})
               .WriteStream()
               .Format("memory")
               .QueryName("json_rows")
               .Option("checkpointLocation", dir_.Join("cp_json"))
               .Trigger(Trigger::AvailableNow())
               .Start();
  ASSERT_OK(q);
  ASSERT_OK((*q)->AwaitTermination());
  EXPECT_EQ(Sorted(session_->Table("json_rows")), (std::vector<std::string>{"1", "2"}));
  DataFrame both = session_->ReadStream()
                       .Format("json")
                       .Option("format", "csv")
                       .Schema("id BIGINT")
                       .Load(landing);
  EXPECT_TRUE(both.status().IsInvalidArgument()) << both.status().ToString();
}

// Option(key, bool) and Option(key, double) send Spark's text (Option("mergeSchema", true) sent
// "1", which the writer read as false).
TEST_F(ApiTest, OptionValuesAreSparksText) {
  EXPECT_EQ(api::OptionText(true), "true");
  EXPECT_EQ(api::OptionText(false), "false");
  EXPECT_EQ(api::OptionText(0.5), "0.5");
  EXPECT_EQ(api::OptionText(1.0), "1.0");
  EXPECT_EQ(api::OptionText(-2.25), "-2.25");
  EXPECT_EQ(api::OptionText(1234567.0), "1234567.0");
  EXPECT_EQ(api::OptionText(1e7), "1.0E7");
  EXPECT_EQ(api::OptionText(0.001), "0.001");
  EXPECT_EQ(api::OptionText(1.5e-4), "1.5E-4");
  EXPECT_EQ(api::OptionText(0.0), "0.0");

  ASSERT_OK(session_->Sql("SELECT 1 AS id").Write().SaveAsTable("merged"));
  // Without mergeSchema the new column is refused; with Option("mergeSchema", true) it is added.
  EXPECT_FALSE(session_->Sql("SELECT 2 AS id, 'x' AS tag")
                   .Write()
                   .Mode("append")
                   .SaveAsTable("merged")
                   .ok());
  ASSERT_OK(session_->Sql("SELECT 2 AS id, 'x' AS tag")
                .Write()
                .Mode("append")
                .Option("mergeSchema", true)
                .SaveAsTable("merged"));
  EXPECT_EQ(Sorted(session_->Table("merged")), (std::vector<std::string>{"1,NULL", "2,x"}));
  // A boolean option with another value is refused, as the stream writer refuses it.
  Status bad = session_->Sql("SELECT 3 AS id, 'y' AS tag")
                   .Write()
                   .Mode("append")
                   .Option("mergeSchema", "yes")
                   .SaveAsTable("merged");
  EXPECT_TRUE(bad.IsInvalidArgument()) << bad.ToString();
  // Integral values of any width go through the integer overload.
  DataStreamReader reader = session_->ReadStream();
  reader.Option("maxFilesPerTrigger", 2).Option("n", 3u).Option("m", int16_t{4});
}

TEST_F(ApiTest, TriggerOnceRunsOneBatchAndContinuousIsRefused) {
  auto input = NewStream("s");
  ASSERT_OK(input->AddSql("VALUES (1, 'a')"));
  ASSERT_OK(input->AddSql("VALUES (2, 'b')"));
  auto once = input->ToDF()
                  .WriteStream()
                  .Format("memory")
                  .QueryName("once")
                  .Trigger(Trigger::Once())
                  .Start();
  ASSERT_OK(once);
  auto ended = (*once)->AwaitTermination(milliseconds(60000));
  ASSERT_OK(ended);
  EXPECT_TRUE(*ended);
  EXPECT_EQ((*once)->LastBatchId(), 0);
  EXPECT_EQ(Sorted(session_->Table("once")), (std::vector<std::string>{"1,a", "2,b"}));

  auto continuous = input->ToDF()
                        .WriteStream()
                        .Format("console")
                        .Trigger(Trigger::Continuous(milliseconds(1000)))
                        .Start();
  ASSERT_FALSE(continuous.ok());
  EXPECT_TRUE(continuous.status().IsNotSupported()) << continuous.status().ToString();

  auto bad_interval = input->ToDF()
                          .WriteStream()
                          .Format("console")
                          .Trigger(Trigger::ProcessingTime("ten seconds"))
                          .Start();
  EXPECT_TRUE(bad_interval.status().IsInvalidArgument()) << bad_interval.status().ToString();
}

TEST_F(ApiTest, StartRefusals) {
  auto input = NewStream("s");
  // A batch frame cannot be started; a Delta sink needs a checkpoint and a path.
  EXPECT_TRUE(session_->Sql("SELECT 1")
                  .WriteStream()
                  .Format("memory")
                  .QueryName("x")
                  .Start()
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(input->ToDF().WriteStream().Start(dir_.Join("t")).status().IsInvalidArgument());
  EXPECT_TRUE(input->ToDF().WriteStream().Format("memory").Start().status().IsInvalidArgument());
  EXPECT_TRUE(input->ToDF().WriteStream().Format("kafkaa").Start().status().IsInvalidArgument());
  EXPECT_TRUE(input->ToDF()
                  .WriteStream()
                  .OutputMode("sideways")
                  .Format("console")
                  .Start()
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(session_->ReadStream()
                  .Format("nope")
                  .Load("x")
                  .WriteStream()
                  .Format("console")
                  .Start()
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(input->ToDF()
                  .WriteStream()
                  .OutputMode("complete")
                  .Format("console")
                  .Start()
                  .status()
                  .IsInvalidArgument());
  // What the output mode does not support is refused at Start, not at the first batch.
  auto agg = input->ToDF().GroupBy({"name"}).Count().WriteStream().Format("console").Start();
  EXPECT_TRUE(agg.status().IsInvalidArgument()) << agg.status().ToString();
  // Two queries on one checkpoint.
  std::string cp = dir_.Join("cp_shared");
  auto q1 = input->ToDF().WriteStream().Format("console").Option("checkpointLocation", cp).Start();
  ASSERT_OK(q1);
  auto q2 = input->ToDF().WriteStream().Format("console").Option("checkpointLocation", cp).Start();
  EXPECT_TRUE(q2.status().IsConflict()) << q2.status().ToString();
  ASSERT_OK(session_->StopAll());
  EXPECT_FALSE((*q1)->IsActive());
}

TEST_F(ApiTest, DeltaSinkIsExactlyOnceAcrossStopAndRestart) {
  auto input = NewStream("orders");
  std::string table = dir_.Join("wh/orders_out");
  std::string cp = dir_.Join("cp_delta");
  auto start = [&]() {
    return input->ToDF()
        .WithColumn("name", "upper(name)")
        .WriteStream()
        .Option("checkpointLocation", cp)
        .Start(table);
  };
  ASSERT_OK(input->AddSql("VALUES (1, 'a'), (2, 'b')"));
  auto q1 = start();
  ASSERT_OK(q1);
  ASSERT_OK((*q1)->ProcessAllAvailable());
  ASSERT_OK(input->AddSql("VALUES (3, 'c')"));
  ASSERT_OK((*q1)->ProcessAllAvailable());
  std::string id = (*q1)->Id(), run = (*q1)->RunId();
  ASSERT_OK((*q1)->Stop());

  ASSERT_OK(input->AddSql("VALUES (4, 'd')"));
  auto q2 = start();
  ASSERT_OK(q2);
  EXPECT_EQ((*q2)->Id(), id);  // the checkpoint's query id
  EXPECT_NE((*q2)->RunId(), run);
  ASSERT_OK((*q2)->ProcessAllAvailable());
  ASSERT_OK((*q2)->Stop());
  EXPECT_EQ(Sorted(session_->ReadDelta(table)),
            (std::vector<std::string>{"1,A", "2,B", "3,C", "4,D"}));
  // Readable by name from the warehouse.
  EXPECT_EQ(Sorted(session_->Sql("SELECT count(*) FROM orders_out")),
            (std::vector<std::string>{"4"}));

  // A third run with nothing new writes nothing.
  auto q3 = start();
  ASSERT_OK(q3);
  ASSERT_OK((*q3)->ProcessAllAvailable());
  ASSERT_OK((*q3)->Stop());
  EXPECT_EQ(*session_->ReadDelta(table).Count(), 4);
}

TEST_F(ApiTest, ToTableDerivesTheCheckpointFromTheWarehouse) {
  auto input = NewStream("s");
  ASSERT_OK(input->AddSql("VALUES (7, 'x')"));
  auto q = input->ToDF().WriteStream().Trigger(Trigger::AvailableNow()).ToTable("events");
  ASSERT_OK(q);
  ASSERT_OK((*q)->AwaitTermination());
  EXPECT_EQ(Sorted(session_->Table("events")), (std::vector<std::string>{"7,x"}));
  auto cp = fs::LocalFileSystem()->Exists(dir_.Join("wh/_checkpoints/events/metadata"));
  ASSERT_OK(cp);
  EXPECT_TRUE(*cp);
}

// A table that SQL's CREATE TABLE ... LOCATION put elsewhere: its location record
// (docs/formats/warehouse.md) names it for Table and Sql alike, in any case.
TEST_F(ApiTest, ALocationRecordNamesATableStoredElsewhere) {
  const std::string elsewhere = dir_.Join("elsewhere/silver");
  ASSERT_OK(session_->Sql("SELECT * FROM (VALUES (1), (2)) AS t(id)").Write().Save(elsewhere));
  ASSERT_OK(fs::LocalFileSystem()->AtomicReplace(
      dir_.Join("wh/_sluice/tables/silver.json"),
      "{\"location\":\"" + elsewhere + "\",\"name\":\"silver\"}"));
  EXPECT_EQ(Sorted(session_->Table("Silver")), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(Sorted(session_->Sql("SELECT sum(id) AS s FROM SILVER")),
            (std::vector<std::string>{"3"}));
  ASSERT_OK(fs::LocalFileSystem()->AtomicReplace(dir_.Join("wh/_sluice/tables/silver.json"),
                                                 "{\"name\":\"silver\"}"));
  EXPECT_TRUE(session_->Table("silver").status().IsCorruption());
}

TEST_F(ApiTest, StreamStaticJoinReadsTheLatestTable) {
  ASSERT_OK(session_->Sql("SELECT * FROM (VALUES (1, 'gold'), (2, 'silver')) AS t(id, tier)")
                .Write()
                .SaveAsTable("tiers"));
  auto input = NewStream("s");
  ASSERT_OK(input->AddSql("VALUES (1, 'ann'), (3, 'cy')"));
  DataFrame joined =
      input->ToDF().Join(session_->Table("tiers"), std::vector<std::string>{"id"}, "left");
  ASSERT_OK(joined.status());
  auto q = joined.WriteStream().Format("memory").QueryName("joined").Start();
  ASSERT_OK(q);
  ASSERT_OK((*q)->ProcessAllAvailable());
  // The static side is re-read in every batch.
  ASSERT_OK(session_->Sql("SELECT 3 AS id, 'bronze' AS tier").Write().SaveAsTable("tiers"));
  ASSERT_OK(input->AddSql("VALUES (3, 'cy2')"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted(session_->Table("joined")),
            (std::vector<std::string>{"1,ann,gold", "3,cy,NULL", "3,cy2,bronze"}));
  ASSERT_OK((*q)->Stop());
}

TEST_F(ApiTest, ForeachBatchGetsEachBatchAsADataFrame) {
  auto input = NewStream("s");
  ASSERT_OK(input->AddSql("VALUES (1, 'a'), (2, 'b')"));
  std::mutex mu;
  std::vector<std::string> seen;
  std::string target = dir_.Join("wh/fb_target");
  auto q = input->ToDF()
               .WriteStream()
               .Option("checkpointLocation", dir_.Join("cp_fb"))
               .ForeachBatch([&](const DataFrame& batch, int64_t batch_id) -> Status {
                 SLUICE_ASSIGN_OR_RETURN(int64_t n, batch.Count());
                 {
                   std::lock_guard<std::mutex> lock(mu);
                   seen.push_back(std::to_string(batch_id) + ":" + std::to_string(n));
                 }
                 // Twice with the same txn: the second write is skipped.
                 for (int i = 0; i < 2; ++i) {
                   SLUICE_RETURN_NOT_OK(batch.Write()
                                            .Format("delta")
                                            .Option("txnAppId", "fb-test")
                                            .Option("txnVersion", batch_id)
                                            .Save(target));
                 }
                 return Status::OK();
               })
               .Start();
  ASSERT_OK(q);
  ASSERT_OK((*q)->ProcessAllAvailable());
  ASSERT_OK(input->AddSql("VALUES (3, 'c')"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  ASSERT_OK((*q)->Stop());
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(seen, (std::vector<std::string>{"0:2", "1:1"}));
  }
  EXPECT_EQ(Sorted(session_->ReadDelta(target)), (std::vector<std::string>{"1,a", "2,b", "3,c"}));
  // Bad txn options are refused.
  EXPECT_TRUE(session_->Sql("SELECT 1 AS id")
                  .Write()
                  .Option("txnAppId", "x")
                  .Save(target)
                  .IsInvalidArgument());
}

TEST_F(ApiTest, ForeachBatchFailureFailsTheQuery) {
  auto input = NewStream("s");
  ASSERT_OK(input->AddSql("VALUES (1, 'a')"));
  auto q = input->ToDF()
               .WriteStream()
               .Option("checkpointLocation", dir_.Join("cp_fail"))
               .ForeachBatch([](const DataFrame&, int64_t batch_id) -> Status {
                 if (batch_id == 1) return Status::IOError("destination unavailable");
                 return Status::OK();
               })
               .Start();
  ASSERT_OK(q);
  ASSERT_OK((*q)->ProcessAllAvailable());
  ASSERT_OK(input->AddSql("VALUES (2, 'b')"));
  Status st = (*q)->AwaitTermination();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("destination unavailable"), std::string::npos) << st.ToString();
  EXPECT_FALSE((*q)->IsActive());
  ASSERT_TRUE((*q)->Exception().has_value());
  EXPECT_EQ(*(*q)->Exception(), st);
  EXPECT_EQ((*q)->LastBatchId(), 0);  // batch 1 was not committed
}

class RecordingListener : public StreamingQueryListener {
 public:
  void OnQueryStarted(const QueryStartedEvent& e) override { Add("started " + e.id); }
  void OnQueryProgress(const QueryProgressEvent& e) override {
    const StreamingQueryProgress& p = e.progress;
    Add("progress " + std::to_string(p.batch_id) + " " + std::to_string(p.num_input_rows));
    EXPECT_NE(p.Json().find("\"batchId\":" + std::to_string(p.batch_id)), std::string::npos);
  }
  void OnQueryTerminated(const QueryTerminatedEvent& e) override {
    Add("terminated " + e.id + (e.exception ? " " + *e.exception : ""));
  }
  std::vector<std::string> events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

 private:
  void Add(std::string e) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(e));
  }
  std::mutex mu_;
  std::vector<std::string> events_;
};

TEST_F(ApiTest, ListenersGetStartedProgressAndTerminated) {
  auto listener = std::make_shared<RecordingListener>();
  session_->AddListener(listener);
  auto input = NewStream("s");
  ASSERT_OK(input->AddSql("VALUES (1, 'a'), (2, 'b')"));
  auto q = input->ToDF()
               .WriteStream()
               .Format("memory")
               .QueryName("l")
               .Trigger(Trigger::AvailableNow())
               .Start();
  ASSERT_OK(q);
  ASSERT_OK((*q)->AwaitTermination());
  ASSERT_TRUE(session_->WaitForListenerEvents(milliseconds(60000)));
  std::string id = (*q)->Id();
  EXPECT_EQ(listener->events(),
            (std::vector<std::string>{"started " + id, "progress 0 2", "terminated " + id}));
  session_->RemoveListener(listener.get());
  auto q2 = input->ToDF().WriteStream().Format("console").Trigger(Trigger::AvailableNow()).Start();
  ASSERT_OK(q2);
  ASSERT_OK((*q2)->AwaitTermination());
  ASSERT_TRUE(session_->WaitForListenerEvents(milliseconds(60000)));
  EXPECT_EQ(listener->events().size(), 3u);  // removed: no more events
}

}  // namespace
}  // namespace sluice
