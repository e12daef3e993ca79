#include "cli/status_line.h"

#include <gtest/gtest.h>

namespace sluice::cli {
namespace {

stream::StreamingQueryProgress Progress() {
  stream::StreamingQueryProgress p;
  p.batch_id = 12;
  stream::SourceProgress s;
  s.num_input_rows = 1200;
  s.input_rows_per_second = 1234.4;
  s.processed_rows_per_second = 3456.6;
  p.sources.push_back(s);
  return p;
}

TEST(StatusLineTest, LiveOnlyOnATerminalThatIsNotDumb) {
  EXPECT_TRUE(UseLiveStatus(true, "xterm-256color"));
  EXPECT_TRUE(UseLiveStatus(true, nullptr));
  EXPECT_FALSE(UseLiveStatus(true, "dumb"));
  EXPECT_FALSE(UseLiveStatus(false, "xterm"));
}

TEST(StatusLineTest, Rates) {
  EXPECT_EQ(FormatRate(12.34), "12.3");
  EXPECT_EQ(FormatRate(1234567.8), "1,234,568");
  EXPECT_EQ(FormatRate(100), "100");
}

TEST(StatusLineTest, BatchAndRates) {
  QueryStatusView v;
  v.name = "counts";
  v.progress = Progress();
  EXPECT_EQ(FormatStatusLine(v), "counts  batch 12 | in 1,234 rows/s | processed 3,457 rows/s");
}

TEST(StatusLineTest, LagStateAndBacklog) {
  QueryStatusView v;
  v.name = "w";
  v.progress = Progress();
  v.progress.event_time = {{"max", "2024-01-01T00:00:15.000Z"},
                           {"watermark", "2024-01-01T00:00:10.000Z"}};
  stream::StateOperatorProgress a, b;
  a.num_rows_total = 40;
  b.num_rows_total = 2;
  v.progress.state_operators = {a, b};
  v.progress.sources[0].metrics = {{"numFilesOutstanding", "3"}, {"numBytesOutstanding", "900"}};
  EXPECT_EQ(FormatStatusLine(v),
            "w  batch 12 | in 1,234 rows/s | processed 3,457 rows/s | lag 5.0 s | state 42 rows"
            " | backlog 3 files");
  ASSERT_TRUE(EventTimeLagMs(v.progress).has_value());
  EXPECT_EQ(*EventTimeLagMs(v.progress), 5000);
}

TEST(StatusLineTest, KafkaBacklogIsOffsets) {
  stream::StreamingQueryProgress p = Progress();
  p.sources[0].metrics = {{"maxOffsetsBehindLatest", "17"}, {"avgOffsetsBehindLatest", "8.5"}};
  auto b = BacklogOf(p);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->amount, 17);
  EXPECT_EQ(b->unit, "offsets");
  EXPECT_FALSE(BacklogOf(Progress()).has_value());
}

TEST(StatusLineTest, AvailableNowBar) {
  QueryStatusView v;
  v.name = "copy";
  v.available_now = true;
  v.progress = Progress();
  v.progress.sources[0].metrics = {{"numFilesOutstanding", "2"}};
  v.initial_backlog = Backlog{8, "files"};
  EXPECT_EQ(FormatStatusLine(v),
            "copy  batch 12 | in 1,234 rows/s | processed 3,457 rows/s | backlog 2 files | "
            "[###############.....]  75% of 8 files");
  // Without a backlog figure: batches done.
  v.progress.sources[0].metrics.clear();
  v.initial_backlog.reset();
  v.batches = 3;
  EXPECT_EQ(FormatStatusLine(v),
            "copy  batch 12 | in 1,234 rows/s | processed 3,457 rows/s | 3 batches done");
  // A backlog of 0 so far is no figure either.
  v.progress.sources[0].metrics = {{"numFilesOutstanding", "0"}};
  v.initial_backlog = Backlog{0, "files"};
  v.batches = 1;
  EXPECT_EQ(FormatStatusLine(v),
            "copy  batch 12 | in 1,234 rows/s | processed 3,457 rows/s | backlog 0 files | "
            "1 batch done");
}

TEST(StatusLineTest, PeakBacklog) {
  std::optional<Backlog> peak;
  peak = PeakBacklog(peak, Backlog{0, "files"});
  peak = PeakBacklog(peak, Backlog{5, "files"});
  peak = PeakBacklog(peak, Backlog{2, "files"});
  peak = PeakBacklog(peak, std::nullopt);
  ASSERT_TRUE(peak.has_value());
  EXPECT_EQ(peak->amount, 5);
}

TEST(StatusLineTest, ProgressBar) {
  EXPECT_EQ(ProgressBar(0, 4), "[....]   0%");
  EXPECT_EQ(ProgressBar(0.5, 4), "[##..]  50%");
  EXPECT_EQ(ProgressBar(1.7, 4), "[####] 100%");
}

TEST(StatusLineTest, BoardRedrawsInPlace) {
  StatusBoard board;
  EXPECT_EQ(board.Erase(), "");
  board.Set("a", "a  batch 0");
  EXPECT_EQ(board.Render(), "a  batch 0\n");
  board.Set("b", "b  batch 0");
  board.Set("a", "a  batch 1");
  // Back up over the one drawn line, clear, draw both.
  EXPECT_EQ(board.Render(), "\x1b[1F\x1b[Ja  batch 1\nb  batch 0\n");
  EXPECT_EQ(board.Erase(), "\x1b[2F\x1b[J");
  EXPECT_EQ(board.Erase(), "");
  board.set_width(6);
  EXPECT_EQ(board.Render(), "a  ba\nb  ba\n");
}

}  // namespace
}  // namespace sluice::cli
