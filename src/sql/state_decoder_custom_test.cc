// read_state / `sluice state dump` decoding of custom state (transformWithStateExec): a query
// started through the C++ API keeps a ValueState with a TTL, a ListState, a MapState and an
// event-time timer per key; ReadCommittedState shows them as rows (sql/state_decoder.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fs/local_file_system.h"
#include "fs/test_util.h"
#include "sluice/sluice.h"
#include "sql/read_state.h"

namespace sluice::sql {
namespace {

// Per user: every click time (ListState), clicks per page (MapState), a running total with a
// one-day TTL (ValueState), and a timer 30 s after the latest click.
class Clicks : public StatefulProcessor {
 public:
  Status Init(StatefulProcessorHandle& handle) override {
    handle_ = &handle;
    SLUICE_ASSIGN_OR_RETURN(times_, handle.GetListState<int64_t>("times"));
    SLUICE_ASSIGN_OR_RETURN(pages_, (handle.GetMapState<std::string, int64_t>("pages")));
    SLUICE_ASSIGN_OR_RETURN(total_,
                            handle.GetValueState<int64_t>("total", TtlConfig{24 * 3600 * 1000}));
    return Status::OK();
  }
  Result<std::vector<Row>> HandleInputRows(const Row&, const std::vector<Row>& rows,
                                           const TimerValues&) override {
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> times, times_.Get());
    for (const Row& r : rows) {
      times.push_back(std::get<int64_t>(r[2]) / 1000);
      const std::string& page = std::get<std::string>(r[1]);
      SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> n, pages_.GetValue(page));
      Status st = pages_.UpdateValue(page, n.value_or(0) + 1);
      if (!st.ok()) return st;
    }
    std::sort(times.begin(), times.end());
    Status st = times_.Put(times);
    if (st.ok()) st = handle_->RegisterTimer(times.back() + 30000);
    SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> total, total_.Get());
    if (st.ok()) st = total_.Update(total.value_or(0) + static_cast<int64_t>(rows.size()));
    if (!st.ok()) return st;
    return std::vector<Row>{};
  }

 private:
  StatefulProcessorHandle* handle_ = nullptr;
  ListState<int64_t> times_;
  MapState<std::string, int64_t> pages_;
  ValueState<int64_t> total_;
};

TEST(StateDecoderCustomTest, ShowsValueListMapEntriesAndTimers) {
  fs::ScopedTempDir dir("sluice-tws-state");
  auto session = Session::Open({.warehouse = dir.Join("wh")});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto stream = (*session)->CreateMemoryStream("user STRING, page STRING, ts TIMESTAMP", "clicks");
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  ASSERT_TRUE((*stream)
                  ->AddSql("VALUES ('a', 'home', TIMESTAMP '2024-01-01 00:00:01'), "
                           "('a', 'cart', TIMESTAMP '2024-01-01 00:00:03'), "
                           "('a', 'home', TIMESTAMP '2024-01-01 00:00:02')")
                  .ok());
  const std::string checkpoint = dir.Join("ck");
  auto q = (*stream)
               ->ToDF()
               .WithWatermark("ts", "10 seconds")
               .GroupBy({"user"})
               .TransformWithState([] { return std::make_unique<Clicks>(); }, TimeMode::kEventTime,
                                   OutputMode::kAppend, "user STRING, n BIGINT")
               .WriteStream()
               .Format("memory")
               .QueryName("out")
               .Option("checkpointLocation", checkpoint)
               .Start();
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_TRUE((*q)->ProcessAllAvailable().ok());
  ASSERT_TRUE((*q)->Stop().ok());

  auto ops = ReadCommittedState(fs::LocalFileSystem(), checkpoint, std::nullopt, "test");
  ASSERT_TRUE(ops.ok()) << ops.status().ToString();
  ASSERT_EQ(ops->size(), 1u);
  const engine::Batch& b = (*ops)[0].rows;
  std::vector<std::string> names;
  for (const auto& f : b.schema()) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"operator_id", "operator_name", "partition_id", "user",
                                             "entry", "variable", "mapKey", "value",
                                             "expiresAtMicros", "timerMs"}));
  std::vector<std::string> rows;
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    std::string line = b.GetString(r, 1).value_or("?");
    for (int c = 3; c <= 7; ++c) line += "|" + b.GetString(r, c).value_or("NULL");
    line += std::string("|") + (b.GetString(r, 8).has_value() ? "ttl" : "NULL");
    line += "|" + b.GetString(r, 9).value_or("NULL");
    rows.push_back(line);
  }
  std::sort(rows.begin(), rows.end());
  // 2024-01-01 00:00:01..03 UTC in ms; the timer 30 s after the latest click.
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "transformWithStateExec|a|list|times|NULL|[1704067201000, 1704067202000, "
                      "1704067203000]|NULL|NULL",
                      "transformWithStateExec|a|map|pages|'cart'|1|NULL|NULL",
                      "transformWithStateExec|a|map|pages|'home'|2|NULL|NULL",
                      "transformWithStateExec|a|timer|NULL|NULL|NULL|NULL|1704067233000",
                      "transformWithStateExec|a|value|total|NULL|3|ttl|NULL"}));
}

}  // namespace
}  // namespace sluice::sql
