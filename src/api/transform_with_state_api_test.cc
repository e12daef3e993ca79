// GroupBy(...).TransformWithState(...) through the public C++ API (sluice/stateful_processor.h):
// running counts with ValueState, event-time sessions, restarts, crashes at every crash point of
// a batch (the loop's and the state store's) followed by a restart, and the refusals at Start.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/api_internal.h"
#include "fs/fault_injection_file_system.h"
#include "fs/test_util.h"
#include "ops/test_processors.h"
#include "sluice/sluice.h"

namespace sluice {
namespace {

#define ASSERT_OK(expr)                              \
  do {                                               \
    ::sluice::Status _st = ::sluice::ToStatus(expr); \
    ASSERT_TRUE(_st.ok()) << _st.ToString();         \
  } while (false)

using ops::testing::RunningCount;

// The same key, other state variables (a changed processor).
class RunningSum : public StatefulProcessor {
 public:
  Status Init(StatefulProcessorHandle& handle) override {
    SLUICE_ASSIGN_OR_RETURN(sum_, handle.GetValueState<double>("sum"));
    return Status::OK();
  }
  Result<std::vector<Row>> HandleInputRows(const Row& key, const std::vector<Row>&,
                                           const TimerValues&) override {
    return std::vector<Row>{{key[0], int64_t{0}}};
  }

 private:
  ValueState<double> sum_;
};

// Emits (user, events, last event time in s) once the user was inactive for 10 s of event time.
class Sessions : public StatefulProcessor {
 public:
  Status Init(StatefulProcessorHandle& handle) override {
    handle_ = &handle;
    SLUICE_ASSIGN_OR_RETURN(events_, handle.GetListState<int64_t>("events"));
    return Status::OK();
  }
  Result<std::vector<Row>> HandleInputRows(const Row&, const std::vector<Row>& rows,
                                           const TimerValues&) override {
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> seen, events_.Get());
    const size_t ts = *ColumnOf("ts");
    for (const Row& r : rows) seen.push_back(std::get<int64_t>(r[ts]) / 1000);  // us -> ms
    std::sort(seen.begin(), seen.end());
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> timers, handle_->ListTimers());
    for (int64_t t : timers) SLUICE_RETURN_NOT_OK(handle_->DeleteTimer(t));
    SLUICE_RETURN_NOT_OK(handle_->RegisterTimer(seen.back() + 10000));
    SLUICE_RETURN_NOT_OK(events_.Put(seen));
    return std::vector<Row>{};
  }
  Result<std::vector<Row>> HandleExpiredTimer(const Row& key, const TimerValues&,
                                              const ExpiredTimerInfo&) override {
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> seen, events_.Get());
    SLUICE_RETURN_NOT_OK(events_.Clear());
    return std::vector<Row>{{key[0], static_cast<int64_t>(seen.size()), seen.back() / 1000}};
  }

 private:
  std::optional<size_t> ColumnOf(const std::string& name) const {
    const auto& cols = handle_->input_columns();
    for (size_t i = 0; i < cols.size(); ++i) {
      if (cols[i].name == name) return i;
    }
    return std::nullopt;
  }
  StatefulProcessorHandle* handle_ = nullptr;
  ListState<int64_t> events_;
};

// Processing time: user a's first row sets a timer 50 ms after the batch time (other users get
// none, so that the result does not depend on how long batches take); when it fires the
// processor emits (user, rows seen).
class Reminder : public StatefulProcessor {
 public:
  Status Init(StatefulProcessorHandle& handle) override {
    handle_ = &handle;
    SLUICE_ASSIGN_OR_RETURN(seen_, handle.GetValueState<int64_t>("seen"));
    return Status::OK();
  }
  Result<std::vector<Row>> HandleInputRows(const Row& key, const std::vector<Row>& rows,
                                           const TimerValues& timers) override {
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, seen_.Get());
    if (!n && std::get<std::string>(key[0]) == "a") {
      SLUICE_RETURN_NOT_OK(handle_->RegisterTimer(timers.current_processing_time_ms + 50));
    }
    SLUICE_RETURN_NOT_OK(seen_.Update(n.value_or(0) + static_cast<int64_t>(rows.size())));
    return std::vector<Row>{};
  }
  Result<std::vector<Row>> HandleExpiredTimer(const Row& key, const TimerValues& timers,
                                              const ExpiredTimerInfo& timer) override {
    if (timers.current_processing_time_ms < timer.expiry_time_ms) {
      return Status::Internal("a processing-time timer fired early");
    }
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, seen_.Get());
    return std::vector<Row>{{key[0], n.value_or(-1)}};
  }

 private:
  StatefulProcessorHandle* handle_ = nullptr;
  ValueState<int64_t> seen_;
};

// The example of docs/cpp-api.md ("Custom state"), verbatim.
class ClickSessions : public sluice::StatefulProcessor {
 public:
  sluice::Status Init(sluice::StatefulProcessorHandle& handle) override {
    handle_ = &handle;
    SLUICE_ASSIGN_OR_RETURN(clicks_, handle.GetListState<int64_t>("clicks"));
    // A comma inside the macro needs parentheses around the call.
    SLUICE_ASSIGN_OR_RETURN(pages_, (handle.GetMapState<std::string, int64_t>("pages")));
    SLUICE_ASSIGN_OR_RETURN(
        total_, handle.GetValueState<int64_t>("total", sluice::TtlConfig{24 * 3600 * 1000}));
    return sluice::Status::OK();
  }

  sluice::Result<std::vector<sluice::Row>> HandleInputRows(
      const sluice::Row& /*key*/, const std::vector<sluice::Row>& rows,
      const sluice::TimerValues& /*timer_values*/) override {
    // Input columns in frame order: user, page, ts (a TIMESTAMP arrives as int64 microseconds).
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> clicks, clicks_.Get());
    for (const sluice::Row& r : rows) {
      clicks.push_back(std::get<int64_t>(r[2]) / 1000);
      const std::string& page = std::get<std::string>(r[1]);
      SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, pages_.GetValue(page));
      SLUICE_RETURN_NOT_OK(pages_.UpdateValue(page, n.value_or(0) + 1));
    }
    std::sort(clicks.begin(), clicks.end());
    SLUICE_RETURN_NOT_OK(clicks_.Put(clicks));
    // One timer per user: 30 s after the latest click.
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> old, handle_->ListTimers());
    for (int64_t t : old) SLUICE_RETURN_NOT_OK(handle_->DeleteTimer(t));
    SLUICE_RETURN_NOT_OK(handle_->RegisterTimer(clicks.back() + 30000));
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> total, total_.Get());
    SLUICE_RETURN_NOT_OK(total_.Update(total.value_or(0) + static_cast<int64_t>(rows.size())));
    return std::vector<sluice::Row>{};  // nothing yet: sessions are emitted by the timer
  }

  sluice::Result<std::vector<sluice::Row>> HandleExpiredTimer(
      const sluice::Row& key, const sluice::TimerValues& /*timer_values*/,
      const sluice::ExpiredTimerInfo& /*timer*/) override {
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> clicks, clicks_.Get());
    SLUICE_RETURN_NOT_OK(clicks_.Clear());
    SLUICE_RETURN_NOT_OK(pages_.Clear());
    return std::vector<sluice::Row>{
        {key[0], static_cast<int64_t>(clicks.size()), clicks.back() / 1000}};
  }

 private:
  sluice::StatefulProcessorHandle* handle_ = nullptr;
  sluice::ListState<int64_t> clicks_;
  sluice::MapState<std::string, int64_t> pages_;
  sluice::ValueState<int64_t> total_;
};

StatefulProcessorFactory CountFactory() {
  return [] { return std::make_unique<RunningCount>(); };
}

class TransformWithStateApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Session::Open({.warehouse = dir_.Join("wh")});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(*s);
    auto m = session_->CreateMemoryStream("user STRING, value BIGINT", "events");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    input_ = *m;
  }

  DataFrame Counts(StatefulProcessorFactory factory = CountFactory()) {
    return input_->ToDF().GroupBy({"user"}).TransformWithState(
        std::move(factory), TimeMode::kNone, OutputMode::kUpdate, "user STRING, count BIGINT");
  }

  std::vector<std::string> Sorted(const std::string& sql) {
    auto rows = session_->Sql(sql).Collect();
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok()) return {};
    std::vector<std::string> out = rows->RowStrings();
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::ScopedTempDir dir_{"sluice-tws-api"};
  std::unique_ptr<Session> session_;
  std::shared_ptr<MemoryStream> input_;
};

using V = std::vector<std::string>;

TEST_F(TransformWithStateApiTest, RunningCountPerKeyInUpdateMode) {
  auto q = Counts().WriteStream().Format("memory").QueryName("counts").OutputMode("update").Start();
  ASSERT_OK(q);
  ASSERT_OK(input_->AddSql("VALUES ('a', 1), ('b', 2), ('a', 3)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM counts"), (V{"a,2", "b,1"}));
  ASSERT_OK(input_->AddSql("VALUES ('a', 4), ('c', 5)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM counts"), (V{"a,2", "a,3", "b,1", "c,1"}));
  auto last = (*q)->LastProgress();
  ASSERT_TRUE(last.has_value());
  EXPECT_NE(last->Json().find("\"operatorName\":\"transformWithStateExec\""), std::string::npos)
      << last->Json();
  EXPECT_NE(last->Json().find("\"numRowsTotal\":3"), std::string::npos) << last->Json();
  EXPECT_NE(last->Json().find("\"numValueStateVars\":1"), std::string::npos) << last->Json();
  ASSERT_OK((*q)->Stop());
}

TEST_F(TransformWithStateApiTest, RowTransformationsAfterIt) {
  auto q = Counts()
               .Where("count > 1")
               .SelectExpr({"upper(user) AS u", "count * 10 AS c"})
               .WriteStream()
               .Format("memory")
               .QueryName("big")
               .OutputMode("update")
               .Start();
  ASSERT_OK(q);
  ASSERT_OK(input_->AddSql("VALUES ('a', 1), ('b', 2), ('a', 3)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM big"), (V{"A,20"}));
}

TEST_F(TransformWithStateApiTest, EventTimeSessionsCloseAfterTenSecondsOfInactivity) {
  DataFrame sessions =
      input_->ToDF()
          .WithColumn("ts", "to_timestamp(value)")
          .WithWatermark("ts", "10 seconds")
          .GroupBy({"user"})
          .TransformWithState([] { return std::make_unique<Sessions>(); }, TimeMode::kEventTime,
                              OutputMode::kAppend, "user STRING, events BIGINT, last_s BIGINT");
  auto q = sessions.WriteStream().Format("memory").QueryName("sessions").Start();
  ASSERT_OK(q);
  ASSERT_OK(input_->AddSql("VALUES ('a', 10), ('b', 12)"));  // timers a 20 s, b 22 s; wm 2 s
  ASSERT_OK((*q)->ProcessAllAvailable());
  ASSERT_OK(input_->AddSql("VALUES ('a', 30)"));  // a's timer moves to 40 s; wm 20 s
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM sessions"), V{});
  // wm 40 s: the no-data batch after this one fires b (22 s) and a (40 s).
  ASSERT_OK(input_->AddSql("VALUES ('c', 50)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM sessions"), (V{"a,2,30", "b,1,12"}));
  // A late row (<= 40 s) is dropped and counted.
  ASSERT_OK(input_->AddSql("VALUES ('d', 35)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  bool dropped = false, expired = false;
  for (const StreamingQueryProgress& progress : (*q)->RecentProgress()) {
    const std::string& p = progress.Json();
    if (p.find("\"numRowsDroppedByWatermark\":1") != std::string::npos) dropped = true;
    if (p.find("\"numExpiredTimers\":2") != std::string::npos) expired = true;
  }
  EXPECT_TRUE(dropped);
  EXPECT_TRUE(expired);
  EXPECT_EQ(Sorted("SELECT * FROM sessions"), (V{"a,2,30", "b,1,12"}));
}

TEST_F(TransformWithStateApiTest, ProcessingTimeTimersFireOnceTheirTimeHasPassed) {
  auto q = input_->ToDF()
               .GroupBy({"user"})
               .TransformWithState([] { return std::make_unique<Reminder>(); },
                                   TimeMode::kProcessingTime, OutputMode::kAppend,
                                   "user STRING, seen BIGINT")
               .WriteStream()
               .Format("memory")
               .QueryName("reminders")
               .Start();
  ASSERT_OK(q);
  ASSERT_OK(input_->AddSql("VALUES ('a', 1), ('a', 2)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // The next batch's timestamp is past a's timer: it fires (after b's rows are handled).
  ASSERT_OK(input_->AddSql("VALUES ('b', 3)"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM reminders"), (V{"a,2"}));
  bool registered = false;
  for (const StreamingQueryProgress& progress : (*q)->RecentProgress()) {
    const std::string& p = progress.Json();
    if (p.find("\"numRegisteredTimers\":1") != std::string::npos) registered = true;
  }
  EXPECT_TRUE(registered);
}

TEST_F(TransformWithStateApiTest, TheDocumentedExampleRuns) {
  auto made = session_->CreateMemoryStream("user STRING, page STRING, ts TIMESTAMP", "clicks");
  ASSERT_OK(made);
  std::shared_ptr<MemoryStream> clicks = *made;
  DataFrame sessions =
      clicks->ToDF()
          .WithWatermark("ts", "10 seconds")
          .GroupBy({"user"})
          .TransformWithState([] { return std::make_unique<ClickSessions>(); },
                              sluice::TimeMode::kEventTime, sluice::OutputMode::kAppend,
                              "user STRING, clicks BIGINT, last_click_s BIGINT");
  auto q = sessions.WriteStream().Format("memory").QueryName("click_sessions").Start();
  ASSERT_OK(q);
  ASSERT_OK(
      clicks->AddSql("VALUES ('u', 'home', to_timestamp(100)), ('u', 'cart', "
                     "to_timestamp(110)), ('v', 'home', to_timestamp(105))"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  // The watermark reaches 150 s: u (last click 110 s, timer 140 s) closes; v (135 s) too.
  ASSERT_OK(clicks->AddSql("VALUES ('w', 'home', to_timestamp(160))"));
  ASSERT_OK((*q)->ProcessAllAvailable());
  EXPECT_EQ(Sorted("SELECT * FROM click_sessions"), (V{"u,2,110", "v,1,105"}));
  auto last = (*q)->LastProgress();
  ASSERT_TRUE(last.has_value());
  EXPECT_NE(last->Json().find("\"numMapStateVars\":1"), std::string::npos) << last->Json();
}

TEST_F(TransformWithStateApiTest, RestartContinuesTheStateAndRefusesAnotherOperator) {
  const std::string cp = dir_.Join("cp");
  auto start = [&](const DataFrame& frame, const std::string& name,
                   const std::string& mode = "update") {
    return frame.WriteStream()
        .Format("memory")
        .QueryName(name)
        .OutputMode(mode)
        .Option("checkpointLocation", cp)
        .Start();
  };
  {
    auto q = start(Counts(), "c1");
    ASSERT_OK(q);
    ASSERT_OK(input_->AddSql("VALUES ('a', 1), ('a', 2)"));
    ASSERT_OK((*q)->ProcessAllAvailable());
    ASSERT_OK((*q)->Stop());
  }
  {
    auto q = start(Counts(), "c2");
    ASSERT_OK(q);
    ASSERT_OK(input_->AddSql("VALUES ('a', 3), ('b', 4)"));
    ASSERT_OK((*q)->ProcessAllAvailable());
    EXPECT_EQ(Sorted("SELECT * FROM c2"), (V{"a,3", "b,1"}));
    ASSERT_OK((*q)->Stop());
  }
  // Another stateful operator on this checkpoint: refused at Start.
  auto other = start(input_->ToDF().DropDuplicates({"user"}), "c3", "append");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find(
                "stateful operator 0 is 'dedupe' in this query but 'transformWithStateExec'"),
            std::string::npos)
      << other.status().ToString();
  // A processor with other state variables: refused at Start.
  auto changed = start(Counts([] { return std::make_unique<RunningSum>(); }), "c4");
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("field 1 was `count` ValueState<BIGINT>, now `sum` "
                                            "ValueState<DOUBLE>"),
            std::string::npos)
      << changed.status().ToString();
}

// A crash at each point of a batch, then a restart on the same checkpoint: every batch's output,
// as the sink finally holds it, is exactly that of a run without crash.
TEST_F(TransformWithStateApiTest, CrashAtEveryPointThenRestartGivesTheSameOutput) {
  auto faulty = std::make_shared<fs::FaultInjectingFileSystem>(fs::LocalFileSystem());
  api::FrameAccess::State(*session_)->fs = faulty;
  const std::vector<std::string> points = {"after_offsets_write",
                                           "state.before_changelog_write",
                                           "state.after_changelog_write",
                                           "after_state_commit",
                                           "after_sink_write",
                                           "after_commit_write"};
  for (size_t run = 0; run <= points.size(); ++run) {
    const bool crash = run < points.size();
    SCOPED_TRACE(crash ? points[run] : "no crash");
    auto made =
        session_->CreateMemoryStream("user STRING, value BIGINT", "events" + std::to_string(run));
    ASSERT_OK(made);
    std::shared_ptr<MemoryStream> input = *made;
    std::mutex mu;
    std::map<int64_t, V> batches;  // batch id -> rows; a re-run replaces its batch
    auto start = [&]() {
      return input->ToDF()
          .GroupBy({"user"})
          .TransformWithState(CountFactory(), TimeMode::kNone, OutputMode::kUpdate,
                              "user STRING, count BIGINT")
          .WriteStream()
          .OutputMode("update")
          .Option("checkpointLocation", dir_.Join("crash" + std::to_string(run)))
          .ForeachBatch([&](const DataFrame& batch, int64_t id) -> Status {
            SLUICE_ASSIGN_OR_RETURN(Rows rows, batch.Collect());
            V r = rows.RowStrings();
            std::sort(r.begin(), r.end());
            std::lock_guard<std::mutex> lock(mu);
            batches[id] = r;
            return Status::OK();
          })
          .Start();
    };
    auto q = start();
    ASSERT_OK(q);
    ASSERT_OK(input->AddSql("VALUES ('a', 1), ('b', 2)"));
    ASSERT_OK((*q)->ProcessAllAvailable());
    if (crash) faulty->SetCrashPoint(points[run]);
    ASSERT_OK(input->AddSql("VALUES ('a', 3)"));
    Status st = (*q)->ProcessAllAvailable();
    if (crash) {
      EXPECT_FALSE(st.ok()) << "no crash at " << points[run];
      EXPECT_TRUE(faulty->crashed());
      faulty->Restart();
      faulty->ClearCrashPoints();
      q = start();
      ASSERT_OK(q);
      ASSERT_OK((*q)->ProcessAllAvailable());
    }
    ASSERT_OK(input->AddSql("VALUES ('a', 4), ('b', 5)"));
    ASSERT_OK((*q)->ProcessAllAvailable());
    ASSERT_OK((*q)->Stop());
    EXPECT_EQ(batches,
              (std::map<int64_t, V>{{0, {"a,1", "b,1"}}, {1, {"a,2"}}, {2, {"a,3", "b,2"}}}));
  }
}

TEST_F(TransformWithStateApiTest, StartRefusesWhatIsNotSupported) {
  auto refused = [&](const DataFrame& frame, const std::string& mode, const std::string& what) {
    auto q = frame.WriteStream().Format("memory").QueryName("r").OutputMode(mode).Start();
    ASSERT_FALSE(q.ok()) << what;
    EXPECT_NE(q.status().message().find(what), std::string::npos) << q.status().ToString();
  };
  refused(Counts(), "complete", "Complete output mode not supported");
  refused(Counts(), "append", "was given OutputMode Update but the query runs in Append mode");
  refused(input_->ToDF().GroupBy({"user"}).TransformWithState(
              CountFactory(), TimeMode::kEventTime, OutputMode::kAppend, "user STRING, n BIGINT"),
          "append", "needs a watermark");
  refused(input_->ToDF()
              .GroupBy({"lower(user)"})
              .TransformWithState(CountFactory(), TimeMode::kNone, OutputMode::kAppend,
                                  "user STRING, n BIGINT"),
          "append", "the GroupBy key \"lower(user)\" is not a column of the frame");
  refused(input_->ToDF().DropDuplicates({"user"}).GroupBy({"user"}).TransformWithState(
              CountFactory(), TimeMode::kNone, OutputMode::kAppend, "user STRING, n BIGINT"),
          "append", "one stateful operation per query");
  // Batch frames: not supported.
  DataFrame batch = session_->Sql("SELECT 'a' AS user")
                        .GroupBy({"user"})
                        .TransformWithState(CountFactory(), TimeMode::kNone, OutputMode::kAppend,
                                            "user STRING, n BIGINT");
  EXPECT_TRUE(batch.status().IsNotSupported()) << batch.status().ToString();
}

}  // namespace
}  // namespace sluice
