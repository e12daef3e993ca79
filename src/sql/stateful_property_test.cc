// Property test of the stateful operators (issue 5): for random event streams cut into random
// batches, with random crashes at the loop's, the state store's and the Delta sink's crash points
// followed by restarts (a new Session on the same warehouse), the APPEND-mode windowed counts
// equal a batch query's counts over the same events restricted to the on-time rows, and the
// streaming deduplication equals the batch DISTINCT over the on-time rows.
//
// Lateness (semantics doc §5-6): a row of batch N is late when its event-time key (the window's
// end for the count, the event time for the dedup) <= the late-events watermark, which is the
// watermark of batch N-1, or the recovered watermark for the first batch after a restart. With
// one Delta commit per batch (maxFilesPerTrigger 1), that threshold lies between W(c-2) and W(c-1),
// where W(i) = max event time of chunks 0..i - delay: which of the two depends on where the
// REFRESHes, no-data batches and restarts fall. The generator keeps every key out of that band,
// so each row is on time or late whatever the batch layout, and the expected result is exact.
//
// SLUICE_PROPERTY_SEEDS=N runs N seeds instead of the default 3.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "fs/test_util.h"
#include "sql/session.h"

namespace sluice::sql {
namespace {

constexpr int64_t kWindowS = 10;
constexpr int64_t kDelayS = 5;
constexpr const char* kCrashPoints[] = {
    "after_offsets_write", "state.before_changelog_write", "state.after_changelog_write",
    "after_state_commit",  "delta.before_commit",          "after_sink_write",
    "after_commit_write"};

struct Row {
  int64_t k, t;  // key, event time in seconds
};

class PropertyRun {
 public:
  PropertyRun(uint64_t seed, const std::string& warehouse) : rng_(seed), warehouse_(warehouse) {}

  void Reopen() {
    session_.reset();
    SessionOptions options;
    options.warehouse = warehouse_;
    auto s = Session::Open(options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(s).ValueOrDie();
  }

  void Exec(const std::string& sql) {
    auto r = session_->Execute(sql);
    ASSERT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
  }

  std::vector<std::string> Rows(const std::string& sql) {
    auto r = session_->Execute(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    std::vector<std::string> out;
    if (!r.ok()) return out;
    for (int64_t i = 0; i < r->num_rows(); ++i) out.push_back(r->GetString(i, 0).value_or("NULL"));
    std::sort(out.begin(), out.end());
    return out;
  }

  // REFRESHes `table`, sometimes with a crash armed first; a crash is followed by a restart and a
  // REFRESH that must succeed.
  void Refresh(const std::string& table) {
    if (std::uniform_int_distribution<int>(0, 3)(rng_) == 0) {
      const char* point =
          kCrashPoints[std::uniform_int_distribution<size_t>(0, std::size(kCrashPoints) - 1)(rng_)];
      Exec(std::string("SET sluice.test.crashAt = '") + point + "'");
      auto r = session_->Execute("REFRESH STREAMING TABLE " + table);
      if (!r.ok()) {
        EXPECT_NE(r.status().ToString().find("injected crash"), std::string::npos)
            << r.status().ToString();
        ++crashes_;
      }
      Reopen();  // a new process: the crash setting is gone, the checkpoint remains
    }
    Exec("REFRESH STREAMING TABLE " + table);
  }

  // The watermark (ms) after chunks 0..i; 0 before any.
  int64_t WatermarkMs(int64_t i) const { return i < 0 ? 0 : watermark_ms_[i]; }

  // One chunk: rows around a frontier that moves forward, some out of order, some far behind
  // (late), some duplicates of earlier rows; no key in the ambiguous band.
  std::vector<Row> Chunk(int64_t c) {
    const int64_t low_ms = WatermarkMs(c - 2), high_ms = WatermarkMs(c - 1);
    auto ambiguous = [&](int64_t key_s) {
      return key_s * 1000 > low_ms && key_s * 1000 <= high_ms;
    };
    frontier_ += std::uniform_int_distribution<int64_t>(0, 8)(rng_);
    std::vector<Row> rows;
    int n = std::uniform_int_distribution<int>(1, 12)(rng_);
    while (static_cast<int>(rows.size()) < n) {
      Row r;
      int kind = std::uniform_int_distribution<int>(0, 9)(rng_);
      if (kind == 0 && !all_.empty()) {
        r = all_[std::uniform_int_distribution<size_t>(0, all_.size() - 1)(rng_)];  // duplicate
      } else if (kind == 1) {
        r = {
            std::uniform_int_distribution<int64_t>(0, 3)(rng_),
            std::max<int64_t>(0, frontier_ - std::uniform_int_distribution<int64_t>(15, 60)(rng_))};
      } else {
        r = {std::uniform_int_distribution<int64_t>(0, 3)(rng_),
             std::max<int64_t>(0, frontier_ + std::uniform_int_distribution<int64_t>(-6, 4)(rng_))};
      }
      const int64_t window_end = (r.t / kWindowS) * kWindowS + kWindowS;
      if (ambiguous(window_end) || ambiguous(r.t)) continue;
      rows.push_back(r);
    }
    int64_t max_t = 0;
    for (const Row& r : rows) max_t = std::max(max_t, r.t);
    watermark_ms_.push_back(std::max(WatermarkMs(c - 1), max_t * 1000 - kDelayS * 1000));
    for (const Row& r : rows) {
      const int64_t window_end = (r.t / kWindowS) * kWindowS + kWindowS;
      // On time for the count when the window's end is above the threshold; for the dedup when
      // the event time is. The threshold is at most W(c-1) (see the file comment).
      if (window_end * 1000 > high_ms) {
        on_time_windows_.push_back(r);
      } else {
        ++late_rows_;
      }
      if (r.t * 1000 > high_ms) on_time_dedup_.push_back(r);
      all_.push_back(r);
    }
    return rows;
  }

  void Run() {
    Reopen();
    Exec("SET sluice.shufflePartitions = 2");
    Exec("CREATE TABLE events (k BIGINT, t BIGINT, c BIGINT)");
    // The late-events threshold of each chunk's rows (ms), for the batch query.
    Exec("CREATE TABLE thresholds (c BIGINT, wm BIGINT)");
    Exec(
        "CREATE STREAMING TABLE counts OUTPUT MODE APPEND AS "
        "SELECT k, epoch(window.start)::BIGINT AS ws, count(*) AS n "
        "FROM STREAM events WITH (maxFilesPerTrigger = 1) "
        "WATERMARK timestamp_seconds(t) AS ts DELAY OF INTERVAL 5 SECONDS AS e "
        "GROUP BY window(ts, '10 seconds'), k");
    Exec(
        "CREATE STREAMING TABLE uniq AS "
        "SELECT DISTINCT ON (k, t, ts) k, t, ts FROM STREAM events WITH (maxFilesPerTrigger = 1) "
        "WATERMARK timestamp_seconds(t) AS ts DELAY OF INTERVAL 5 SECONDS AS e");
    const int64_t chunks = std::uniform_int_distribution<int64_t>(8, 16)(rng_);
    for (int64_t c = 0; c < chunks; ++c) {
      std::vector<Row> rows = Chunk(c);
      std::string values;
      for (const Row& r : rows) {
        values += (values.empty() ? "" : ", ") + std::string("(") + std::to_string(r.k) + ", " +
                  std::to_string(r.t) + ", " + std::to_string(c) + ")";
      }
      Exec("INSERT INTO events VALUES " + values);
      Exec("INSERT INTO thresholds VALUES (" + std::to_string(c) + ", " +
           std::to_string(WatermarkMs(c - 1)) + ")");
      // REFRESH after a random number of chunks (each chunk is one batch).
      if (std::uniform_int_distribution<int>(0, 2)(rng_) == 0) {
        Refresh("counts");
        Refresh("uniq");
      }
    }
    // A last row far ahead moves the watermark past every window, so all of them are emitted.
    const int64_t flush_t = frontier_ + 1000;
    Exec("INSERT INTO events VALUES (99, " + std::to_string(flush_t) + ", " +
         std::to_string(chunks) + ")");
    Exec("INSERT INTO thresholds VALUES (" + std::to_string(chunks) + ", " +
         std::to_string(WatermarkMs(chunks - 1)) + ")");
    on_time_dedup_.push_back({99, flush_t});
    Refresh("counts");
    Refresh("uniq");
    Refresh("counts");  // the no-data batch closing the windows, if the last REFRESH crashed
    Refresh("uniq");

    std::map<std::pair<int64_t, int64_t>, int64_t> counts;
    for (const Row& r : on_time_windows_) ++counts[{r.k, (r.t / kWindowS) * kWindowS}];
    std::vector<std::string> want_counts;
    for (const auto& [key, n] : counts) {
      want_counts.push_back(std::to_string(key.first) + "," + std::to_string(key.second) + "," +
                            std::to_string(n));
    }
    std::sort(want_counts.begin(), want_counts.end());
    std::set<std::pair<int64_t, int64_t>> distinct;
    for (const Row& r : on_time_dedup_) distinct.insert({r.k, r.t});
    std::vector<std::string> want_uniq;
    for (const auto& [k, t] : distinct)
      want_uniq.push_back(std::to_string(k) + "," + std::to_string(t));
    std::sort(want_uniq.begin(), want_uniq.end());

    const std::vector<std::string> got_counts =
        Rows("SELECT k || ',' || ws || ',' || n FROM counts");
    EXPECT_EQ(got_counts, want_counts);
    EXPECT_EQ(Rows("SELECT k || ',' || t FROM uniq"), want_uniq);
    // The batch query over the same events restricted to on-time rows (the flush row's window
    // never closes), and the batch DISTINCT.
    EXPECT_EQ(got_counts,
              Rows("SELECT k || ',' || ws || ',' || count(*) FROM (SELECT k, t // 10 * 10 AS ws, "
                   "c FROM events WHERE k <> 99) JOIN thresholds USING (c) "
                   "WHERE (ws + 10) * 1000 > wm GROUP BY k, ws"));
    EXPECT_EQ(Rows("SELECT k || ',' || t FROM uniq"),
              Rows("SELECT DISTINCT k || ',' || t FROM events JOIN thresholds USING (c) "
                   "WHERE t * 1000 > wm"));
  }

  int crashes() const { return crashes_; }
  int64_t late_rows() const { return late_rows_; }

 private:
  std::mt19937_64 rng_;
  std::string warehouse_;
  std::unique_ptr<Session> session_;
  int64_t frontier_ = 100;
  std::vector<int64_t> watermark_ms_;
  std::vector<Row> all_, on_time_windows_, on_time_dedup_;
  int crashes_ = 0;
  int64_t late_rows_ = 0;
};

TEST(StatefulPropertyTest, WindowedCountsAndDedupEqualTheBatchResultOverOnTimeRows) {
  int seeds = 3;
  if (const char* env = std::getenv("SLUICE_PROPERTY_SEEDS")) seeds = std::max(1, std::atoi(env));
  int crashes = 0;
  int64_t late = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    fs::ScopedTempDir dir("sluice-property");
    PropertyRun run(static_cast<uint64_t>(seed) * 7919, dir.Join("wh"));
    run.Run();
    crashes += run.crashes();
    late += run.late_rows();
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(crashes, 0) << "no crash was injected: the test did not exercise recovery";
  EXPECT_GT(late, 0) << "no late row was generated: the test did not exercise dropping";
}

}  // namespace
}  // namespace sluice::sql
