#include "stream/offset_seq_log.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "fs/fault_injection_file_system.h"
#include "fs/test_util.h"
#include "stream/checkpoint_lock.h"
#include "stream/commit_log.h"
#include "stream/json_util.h"
#include "stream/log_purge.h"
#include "stream/restart_plan.h"

namespace sluice::stream {
namespace {

using fs::LocalFileSystem;
using fs::ScopedTempDir;

OffsetSeq Example() {
  OffsetSeq seq;
  OffsetSeqMetadata md;
  md.batch_watermark_ms = 0;
  md.batch_timestamp_ms = 1700000000000;
  md.conf = {{"sluice.sql.shuffle.partitions", "200"},
             {"sluice.streaming.multipleWatermarkPolicy", "min"}};
  seq.metadata = md;
  seq.offsets = {"5", R"({"logOffset":5})", R"({"topic":{"0":23,"1":8}})", std::nullopt};
  return seq;
}

constexpr std::string_view kExampleBytes =
    "v1\n"
    R"({"batchWatermarkMs":0,"batchTimestampMs":1700000000000,"conf":{"sluice.sql.shuffle.partitions":"200","sluice.streaming.multipleWatermarkPolicy":"min"}})"
    "\n5\n"
    R"({"logOffset":5})"
    "\n"
    R"({"topic":{"0":23,"1":8}})"
    "\n-\n";

TEST(OffsetSeqTest, SerializeIsByteExact) {
  auto bytes = SerializeOffsetSeq(Example());
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, kExampleBytes);
  EXPECT_EQ(bytes->back(), '\n');  // every line ends with one, the last too
}

TEST(OffsetSeqTest, ParseRoundTrip) {
  auto seq = ParseOffsetSeq(kExampleBytes);
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_EQ(*seq, Example());
  EXPECT_EQ(*SerializeOffsetSeq(*seq), kExampleBytes);
}

TEST(OffsetSeqTest, EmptyMetadataLineMeansNoMetadata) {
  auto seq = ParseOffsetSeq("v1\n\n5\n-");
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_FALSE(seq->metadata.has_value());
  EXPECT_EQ(seq->offsets, (std::vector<std::optional<std::string>>{"5", std::nullopt}));
  EXPECT_EQ(*SerializeOffsetSeq(*seq), "v1\n\n5\n-\n");

  auto blank = ParseOffsetSeq("v1\n   \n7");  // whitespace only: trimmed as Spark does
  ASSERT_TRUE(blank.ok());
  EXPECT_FALSE(blank->metadata.has_value());
}

TEST(OffsetSeqTest, MetadataDefaultsAndLenientConf) {
  auto seq = ParseOffsetSeq("v1\n{\"conf\":{\"a\":5,\"b\":true}}\n1");
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  ASSERT_TRUE(seq->metadata.has_value());
  EXPECT_EQ(seq->metadata->batch_watermark_ms, 0);
  EXPECT_EQ(seq->metadata->batch_timestamp_ms, 0);
  EXPECT_EQ(seq->metadata->conf, (ConfMap{{"a", "5"}, {"b", "true"}}));
  auto none = ParseOffsetSeq("v1\n{}");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->offsets.empty());
  EXPECT_EQ(SerializeOffsetSeqMetadata(*none->metadata),
            R"({"batchWatermarkMs":0,"batchTimestampMs":0,"conf":{}})");
}

TEST(OffsetSeqTest, TrailingNewlineAndCrlfAddNoSource) {
  auto seq = ParseOffsetSeq("v1\r\n{}\r\n5\r\n");
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_EQ(seq->offsets, (std::vector<std::optional<std::string>>{"5"}));
}

TEST(OffsetSeqTest, VersionTwoReadAndWritten) {
  const std::string bytes =
      "v2\n"
      R"({"batchWatermarkMs":7,"batchTimestampMs":8,"conf":{},"sourceMetadataInfo":{"0":{"name":"a"}},"controlBatchInfo":{"x":1}})"
      "\n0:5\n2:{\"logOffset\":3}";
  auto seq = ParseOffsetSeq(bytes);
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_EQ(seq->version, 2);
  EXPECT_EQ(seq->metadata->batch_watermark_ms, 7);
  EXPECT_EQ(seq->metadata->extra.size(), 2u);
  EXPECT_EQ(seq->offsets,
            (std::vector<std::optional<std::string>>{"5", std::nullopt, R"({"logOffset":3})"}));
  // Extra fields kept verbatim, in order; source 1 gets its "1:-" line (Sluice writes every
  // source's line, as Spark 4.2 writes a source without an offset).
  std::string want = bytes + "\n";
  want.insert(want.find("2:{"), "1:-\n");
  EXPECT_EQ(*SerializeOffsetSeq(*seq), want);

  EXPECT_TRUE(ParseOffsetSeq("v2\n{}\n0:5\n0:6").status().IsCorruption());  // duplicate id
  EXPECT_TRUE(ParseOffsetSeq("v2\n{}\n5").status().IsCorruption());         // no id
  EXPECT_TRUE(ParseOffsetSeq("v2\n{}\nx:5").status().IsCorruption());
  EXPECT_TRUE(ParseOffsetSeq("v1\n{}\n0:5").status().IsCorruption());  // "0:5" is not JSON
}

TEST(OffsetSeqTest, RejectsNewerVersionClearly) {
  auto seq = ParseOffsetSeq("v3\n{}\n5");
  ASSERT_FALSE(seq.ok());
  EXPECT_TRUE(seq.status().IsNotSupported());
  EXPECT_NE(seq.status().message().find("maximum supported log version is v2, but encountered v3"),
            std::string::npos)
      << seq.status().ToString();
}

TEST(OffsetSeqTest, TornAndCorruptInputs) {
  const std::string full(kExampleBytes);
  struct Case {
    std::string bytes;
    std::string_view expect;
  };
  const std::vector<Case> cases = {
      {"", "empty"},
      {"v", "log version"},
      {"v1", "metadata line is missing"},
      {full.substr(0, 20), "not valid JSON"},                         // inside the metadata
      {full.substr(0, full.find("{\"logOffset\"") + 8), "source 1"},  // inside an offset
      {"v1\n{}\n5\n\n6", "source 1 is empty"},
      {"v1\n[1]\n5", "not a JSON object"},
      {"v1\n{\"batchWatermarkMs\":\"x\"}", "batchWatermarkMs"},
      {"v1\n{\"batchWatermarkMs\":1.5}", "batchWatermarkMs"},
      {"v1\n{\"conf\":[1]}", "conf"},
  };
  for (const Case& c : cases) {
    auto seq = ParseOffsetSeq(c.bytes);
    ASSERT_FALSE(seq.ok()) << c.bytes;
    EXPECT_TRUE(seq.status().IsCorruption()) << c.bytes << " -> " << seq.status().ToString();
    EXPECT_NE(seq.status().message().find(c.expect), std::string::npos)
        << c.bytes << " -> " << seq.status().ToString();
  }
}

// A cut inside the last line's number leaves a valid, smaller offset ("12" -> "1"): an entry
// Sluice wrote (sluice.* conf keys) ends with "\n", so without it the entry is refused as torn.
TEST(OffsetSeqTest, CutInsideTheLastNumberOfASluiceEntryIsTorn) {
  OffsetSeq seq = Example();
  seq.offsets = {R"({"logOffset":5})", "1234"};
  const std::string text = *SerializeOffsetSeq(seq);
  ASSERT_TRUE(text.ends_with("\n1234\n"));
  for (size_t cut = 0; cut < text.size(); ++cut) {
    auto got = ParseOffsetSeq(text.substr(0, cut));
    // Every proper prefix is refused, or names fewer sources (which a restart refuses).
    if (got.ok()) {
      EXPECT_LT(got->offsets.size(), seq.offsets.size()) << cut;
      continue;
    }
    EXPECT_TRUE(got.status().IsCorruption()) << cut << ": " << got.status().ToString();
  }
  auto torn = ParseOffsetSeq(text.substr(0, text.size() - 3));  // "...\n12"
  ASSERT_FALSE(torn.ok());
  EXPECT_NE(torn.status().message().find("torn entry: its last line (line 4, '12') ends without "
                                         "the line break Sluice writes"),
            std::string::npos)
      << torn.status().ToString();
  // "-" (no offset yet) may be a cut of "-5": the same rule.
  seq.offsets = {"7", std::nullopt};
  const std::string voided = *SerializeOffsetSeq(seq);
  EXPECT_TRUE(ParseOffsetSeq(voided).ok());
  EXPECT_TRUE(ParseOffsetSeq(voided.substr(0, voided.size() - 1)).status().IsCorruption());
  // v2: the offset after "<id>:".
  seq.version = 2;
  seq.offsets = {"7", "88"};
  const std::string v2 = *SerializeOffsetSeq(seq);
  ASSERT_TRUE(v2.ends_with("\n1:88\n"));
  EXPECT_TRUE(ParseOffsetSeq(v2).ok());
  auto v2_torn = ParseOffsetSeq(v2.substr(0, v2.size() - 2));
  ASSERT_FALSE(v2_torn.ok());
  EXPECT_NE(v2_torn.status().message().find("line 4, '8'"), std::string::npos)
      << v2_torn.status().ToString();
}

// What Spark writes (spark.* conf keys, no final line break) is read as before, also when its
// last line is a number; so are entries without metadata (before Spark 2.1) and entries whose
// last line a cut cannot leave valid (an object: a cut loses its closing brace).
TEST(OffsetSeqTest, EntriesWithoutTheFinalLineBreakThatACutCannotExplainAreRead) {
  const std::string spark =
      "v1\n"
      R"({"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{"spark.sql.shuffle.partitions":"200"}})"
      "\n{\"logOffset\":0}\n12";
  auto got = ParseOffsetSeq(spark);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->offsets.back(), "12");
  EXPECT_TRUE(ParseOffsetSeq("v1\n\n12").ok());
  const std::string object_last =
      "v1\n"
      R"({"conf":{"sluice.sql.shuffle.partitions":"200"}})"
      "\n5\n{\"logOffset\":3}";
  EXPECT_TRUE(ParseOffsetSeq(object_last).ok());
}

TEST(OffsetSeqTest, NoMetadataAndNoSourceRoundTrips) {
  // "v1\n\n" used to serialize to "v1\n", which does not parse (found by the fuzz target).
  auto seq = ParseOffsetSeq("v1\n\n");
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_FALSE(seq->metadata.has_value());
  EXPECT_TRUE(seq->offsets.empty());
  auto text = SerializeOffsetSeq(*seq);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "v1\n\n");
  auto again = ParseOffsetSeq(*text);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *seq);
}

TEST(OffsetSeqTest, NulByteIsCorruption) {
  // The JSON parser stops at a NUL byte: '{"logOffset":5}\0-' would read as '{"logOffset":5}'.
  const std::string bytes = std::string("v1\n{}\n{\"logOffset\":5}") + '\0' + "-\n";
  auto seq = ParseOffsetSeq(bytes);
  ASSERT_FALSE(seq.ok());
  EXPECT_TRUE(seq.status().IsCorruption());
  EXPECT_NE(seq.status().message().find("NUL byte at byte offset 21"), std::string::npos)
      << seq.status().ToString();
}

TEST(OffsetSeqTest, SerializeRejectsOffsetsThatBreakTheFormat) {
  for (std::string bad : {"", "-", "{\"a\":\n1}", "1\r"}) {
    OffsetSeq seq;
    seq.offsets = {"1", bad};
    auto bytes = SerializeOffsetSeq(seq);
    ASSERT_FALSE(bytes.ok()) << bad;
    EXPECT_TRUE(bytes.status().IsInvalidArgument());
    EXPECT_NE(bytes.status().message().find("source 1"), std::string::npos);
  }
  OffsetSeq v9;
  v9.version = 9;
  EXPECT_TRUE(SerializeOffsetSeq(v9).status().IsInvalidArgument());
}

TEST(OffsetSeqLogTest, AddGetLatestAndConflict) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  OffsetSeqLog log(LocalFileSystem(), root);
  auto none = log.Latest();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  OffsetSeq seq = Example();
  ASSERT_TRUE(log.Add(BatchId(0), seq).ok());
  seq.offsets[0] = "9";
  ASSERT_TRUE(log.Add(BatchId(1), seq).ok());
  EXPECT_EQ(*LocalFileSystem()->ReadFile(root + "/offsets/0"), kExampleBytes);

  auto latest = log.Latest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->first, BatchId(1));
  EXPECT_EQ((*latest)->second.offsets[0], "9");
  EXPECT_EQ(*log.Get(BatchId(0)), Example());
  EXPECT_TRUE(log.Get(BatchId(5)).status().IsNotFound());

  Status dup = log.Add(BatchId(1), Example());
  ASSERT_TRUE(dup.IsConflict()) << dup.ToString();
  EXPECT_NE(dup.message().find("another query is using the checkpoint " + root), std::string::npos)
      << dup.ToString();
  EXPECT_EQ(log.Get(BatchId(1))->offsets[0], "9");  // the first writer's entry stands
}

TEST(OffsetSeqLogTest, CorruptLatestEntryIsAnErrorNamingTheFile) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  OffsetSeqLog log(LocalFileSystem(), root);
  ASSERT_TRUE(log.Add(BatchId(0), Example()).ok());
  ASSERT_TRUE(LocalFileSystem()->CreateIfAbsent(root + "/offsets/1", "v1\n{\"batchWat").ok());
  auto latest = log.Latest();
  ASSERT_FALSE(latest.ok());
  EXPECT_TRUE(latest.status().IsCorruption());
  EXPECT_NE(latest.status().message().find(root + "/offsets/1"), std::string::npos)
      << latest.status().ToString();
}

TEST(OffsetSeqLogTest, TornLastNumberIsAnErrorNamingTheFileAndTheLine) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  OffsetSeqLog log(LocalFileSystem(), root);
  OffsetSeq seq = Example();
  seq.offsets = {"120"};
  ASSERT_TRUE(log.Add(BatchId(0), seq).ok());
  auto whole = LocalFileSystem()->ReadFile(root + "/offsets/0");
  ASSERT_TRUE(whole.ok());
  ASSERT_TRUE(LocalFileSystem()
                  ->CreateIfAbsent(root + "/offsets/1", whole->substr(0, whole->size() - 2))
                  .ok());
  auto latest = log.Latest();
  ASSERT_FALSE(latest.ok());
  EXPECT_TRUE(latest.status().IsCorruption());
  EXPECT_NE(latest.status().message().find("offset log file " + root + "/offsets/1: torn entry"),
            std::string::npos)
      << latest.status().ToString();
  EXPECT_NE(latest.status().message().find("(line 3, '12')"), std::string::npos)
      << latest.status().ToString();
}

// A v2 entry names its sources by id and may name fewer than the query has (Spark reads the
// others as without an offset), so a cut at a line's end used to leave a valid entry with a
// source lost: that source would start again from its beginning. Sluice now writes a line for
// every source ("<id>:-" without an offset, as Spark 4.2's serializer writes a None), so an entry
// it wrote that names fewer is refused by the restart, naming the file.
TEST(OffsetSeqTest, VersionTwoWritesALineForEverySource) {
  OffsetSeq seq = Example();
  seq.version = 2;
  seq.offsets = {"5", std::nullopt, R"({"logOffset":3})", std::nullopt};
  auto text = SerializeOffsetSeq(seq);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_TRUE(text->ends_with("\n0:5\n1:-\n2:{\"logOffset\":3}\n3:-\n")) << *text;
  auto again = ParseOffsetSeq(*text);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, seq);
}

TEST(OffsetSeqTest, VersionTwoEntryCutAtALineEndLosesNoSourceSilently) {
  OffsetSeq seq = Example();
  seq.version = 2;
  seq.offsets = {"5", R"({"logOffset":3})", std::nullopt};
  const std::string text = *SerializeOffsetSeq(seq);
  int cut_at_line_end = 0;
  for (size_t cut = 0; cut < text.size(); ++cut) {
    auto got = ParseOffsetSeq(text.substr(0, cut));
    if (!got.ok()) continue;
    // Whatever a cut leaves readable names fewer sources, and the restart refuses it.
    ASSERT_LT(got->offsets.size(), seq.offsets.size()) << cut;
    Status st = CheckNoSourceLineLost(*got, seq.offsets.size());
    ASSERT_TRUE(st.IsCorruption()) << cut << ": " << st.ToString();
    EXPECT_NE(st.message().find("lost source lines: the entry names " +
                                std::to_string(got->offsets.size()) + " of the query's 3 sources"),
              std::string::npos)
        << st.ToString();
    ++cut_at_line_end;
  }
  EXPECT_GE(cut_at_line_end, 3);  // before and after each line break past the metadata
  EXPECT_TRUE(CheckNoSourceLineLost(seq, 3).ok());
  // Spark's v2 entries (no sluice.* conf key) may name fewer sources: read as before.
  OffsetSeq spark = seq;
  spark.metadata->conf = {{"spark.sql.shuffle.partitions", "200"}};
  spark.offsets = {"5"};
  EXPECT_TRUE(CheckNoSourceLineLost(spark, 3).ok());
  // v1 entries naming fewer sources are refused by the restart's count check, not here.
  OffsetSeq v1 = seq;
  v1.version = 1;
  v1.offsets = {"5"};
  EXPECT_TRUE(CheckNoSourceLineLost(v1, 3).ok());
}

TEST(OffsetSeqLogTest, VersionTwoEntryWithALostSourceLineIsRefusedOnRestartNamingTheFile) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  OffsetSeqLog offsets(LocalFileSystem(), root);
  CommitLog commits(LocalFileSystem(), root);
  OffsetSeq seq = Example();
  seq.version = 2;
  seq.offsets = {"5", R"({"logOffset":3})"};
  ASSERT_TRUE(offsets.Add(BatchId(0), seq).ok());
  ASSERT_TRUE(commits.Add(BatchId(0), CommitMetadata{}).ok());
  const std::string whole = *SerializeOffsetSeq(seq);
  const std::string cut = whole.substr(0, whole.find("1:{"));  // ends with "0:5\n"
  ASSERT_TRUE(LocalFileSystem()->CreateIfAbsent(root + "/offsets/1", cut).ok());
  RestartOptions options;
  options.num_sources = 2;
  options.checkpoint_root = root;
  auto plan = PlanRestart(offsets, commits, options);
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(plan.status().IsCorruption()) << plan.status().ToString();
  EXPECT_NE(plan.status().message().find("offset log file " + root +
                                         "/offsets/1: lost source lines: the entry names 1 of "
                                         "the query's 2 sources"),
            std::string::npos)
      << plan.status().ToString();
  EXPECT_NE(plan.status().message().find("append the lines 1:-"), std::string::npos)
      << plan.status().ToString();
  // The whole entry restarts.
  ASSERT_TRUE(LocalFileSystem()->DeleteFile(root + "/offsets/1").ok());
  ASSERT_TRUE(LocalFileSystem()->CreateIfAbsent(root + "/offsets/1", whole).ok());
  auto ok = PlanRestart(offsets, commits, options);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
}

// ParseJsonNoThrow (json_util.h) refuses text holding a NUL byte: nlohmann's lexer took one for
// the end of its input, so '{..}\0<anything>' parsed as '{..}' in every stream format read
// through it (offsets and commits checked NUL themselves; progress files and lock holders did not).
TEST(JsonUtilTest, NulByteIsNeverTheEndOfTheInput) {
  const std::string nul("{\"a\":1}\0{\"b\":2}", 15);
  ASSERT_EQ(nul.size(), 15u);
  EXPECT_TRUE(ParseJsonNoThrow(nul).is_discarded());
  EXPECT_TRUE(ParseJsonNoThrow(std::string("5\0", 2)).is_discarded());
  EXPECT_FALSE(ParseJsonNoThrow("{\"a\":1}").is_discarded());
  EXPECT_FALSE(ParseJsonNoThrow("\"\\u0000\"").is_discarded());  // an escaped NUL is JSON
  LockHolder holder;
  holder.pid = 7;
  holder.host = "h";
  holder.query_id = "q";
  holder.run_id = "r";
  const std::string lock = SerializeLockHolder(holder);
  ASSERT_TRUE(ParseLockHolder(lock).ok());
  EXPECT_TRUE(ParseLockHolder(lock + std::string("\0junk", 5)).status().IsCorruption());
}

TEST(OffsetSeqLogTest, TornPublishedWriteIsDetectedOnRead) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  auto faulty = std::make_shared<fs::FaultInjectingFileSystem>(LocalFileSystem());
  OffsetSeqLog log(faulty, root);
  ASSERT_TRUE(log.Add(BatchId(0), Example()).ok());
  faulty->TearNthWrite(1, "offsets/1", /*publish=*/true, /*torn_bytes=*/40);
  EXPECT_TRUE(log.Add(BatchId(1), Example()).IsCancelled());  // the crash
  faulty->Restart();
  auto got = log.Get(BatchId(1));
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(got.status().IsCorruption()) << got.status().ToString();
  EXPECT_NE(got.status().message().find("offsets/1"), std::string::npos);
}

TEST(OffsetSeqLogTest, TornWriteLeavesOnlyAHiddenTempFile) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  auto faulty = std::make_shared<fs::FaultInjectingFileSystem>(LocalFileSystem());
  OffsetSeqLog log(faulty, root);
  ASSERT_TRUE(log.Add(BatchId(0), Example()).ok());
  faulty->TearNthWrite(1, "offsets/1");
  EXPECT_FALSE(log.Add(BatchId(1), Example()).ok());
  faulty->Restart();
  auto latest = log.Latest();  // the temp file is ignored: batch 0 is the latest
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ((*latest)->first, BatchId(0));
  EXPECT_TRUE(log.Add(BatchId(1), Example()).ok());  // the re-run can write it
}

TEST(OffsetSeqLogTest, ConcurrentThreadWritersExactlyOneWins) {
  ScopedTempDir dir;
  OffsetSeqLog log(LocalFileSystem(), dir.Join("ckpt"));
  constexpr int kWriters = 8;
  std::atomic<int> ready{0};
  std::vector<Status> results(kWriters);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      OffsetSeq seq;
      seq.offsets = {std::to_string(i)};
      ++ready;
      while (ready.load() < kWriters) std::this_thread::yield();
      results[static_cast<size_t>(i)] = log.Add(BatchId(3), seq);
    });
  }
  for (auto& t : threads) t.join();
  int winners = 0;
  std::string winner;
  for (int i = 0; i < kWriters; ++i) {
    const Status& st = results[static_cast<size_t>(i)];
    if (st.ok()) {
      ++winners;
      winner = std::to_string(i);
    } else {
      EXPECT_TRUE(st.IsConflict()) << st.ToString();
    }
  }
  ASSERT_EQ(winners, 1);
  EXPECT_EQ(log.Get(BatchId(3))->offsets[0], winner);
}

TEST(OffsetSeqLogTest, ConcurrentProcessWritersExactlyOneWins) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  constexpr int kWriters = 4;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < kWriters; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(go[1]);
      char c;
      (void)!::read(go[0], &c, 1);  // wait for the start signal (EOF)
      OffsetSeqLog log(LocalFileSystem(), root);
      OffsetSeq seq;
      seq.offsets = {std::to_string(100 + i)};
      Status st = log.Add(BatchId(0), seq);
      ::_exit(st.ok() ? 0 : st.IsConflict() ? 1 : 2);
    }
    children.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);  // all children start together
  int winners = 0, conflicts = 0;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 0) ++winners;
    if (WEXITSTATUS(status) == 1) ++conflicts;
  }
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(conflicts, kWriters - 1);
  auto got = OffsetSeqLog(LocalFileSystem(), root).Get(BatchId(0));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
}

TEST(OffsetSeqLogTest, IncrementalPurgeDeletesTheSameEntriesWithoutListing) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  auto faulty = std::make_shared<fs::FaultInjectingFileSystem>(LocalFileSystem());
  OffsetSeqLog offsets(faulty, root);
  CommitLog commits(faulty, root);
  fs::WriteOptions no_sync;
  no_sync.sync = false;
  std::optional<BatchId> purged_below;
  for (int64_t i = 0; i <= 8; ++i) {
    ASSERT_TRUE(offsets.Add(BatchId(i), OffsetSeq{}, no_sync).ok());
    auto purged = PurgeOldLogEntries(offsets, commits, BatchId(i), 3, &purged_below);
    ASSERT_TRUE(purged.ok()) << purged.status().ToString();
    ASSERT_TRUE(commits.Add(BatchId(i), CommitMetadata{}, no_sync).ok());
    if (i == 4) {
      // The first purge (threshold 1) listed; later ones must not list the directories.
      EXPECT_EQ(purged_below, BatchId(1));
      fs::Fault no_list;
      no_list.ops = fs::OpBit(fs::FileOp::kList);
      no_list.error = EACCES;
      no_list.sticky = true;
      ASSERT_TRUE(faulty->InjectFault(no_list).ok());
    }
    if (i == 5) {
      EXPECT_EQ(purged->offsets_deleted, 1);  // offsets/1
      EXPECT_EQ(purged->commits_deleted, 1);  // commits/1
    }
  }
  EXPECT_EQ(purged_below, BatchId(5));
  faulty->ClearFaults();
  EXPECT_EQ(*offsets.ListIds(),
            (std::vector<BatchId>{BatchId(5), BatchId(6), BatchId(7), BatchId(8)}));
  EXPECT_EQ(*commits.ListIds(),
            (std::vector<BatchId>{BatchId(5), BatchId(6), BatchId(7), BatchId(8)}));
}

TEST(OffsetSeqLogTest, PurgeKeepsTheLastMinBatchesToRetain) {
  ScopedTempDir dir;
  const std::string root = dir.Join("ckpt");
  OffsetSeqLog offsets(LocalFileSystem(), root);
  CommitLog commits(LocalFileSystem(), root);
  fs::WriteOptions no_sync;
  no_sync.sync = false;
  const int64_t n = 130;
  for (int64_t i = 0; i <= n; ++i) {
    OffsetSeq seq;
    seq.offsets = {std::to_string(i)};
    ASSERT_TRUE(offsets.Add(BatchId(i), seq, no_sync).ok());
    if (i < n) {
      ASSERT_TRUE(commits.Add(BatchId(i), CommitMetadata{}, no_sync).ok());
    }
  }
  // After writing offsets/130: purge k < 130 - 100 = 30 from both logs.
  ASSERT_EQ(PurgeThreshold(BatchId(n), kDefaultMinBatchesToRetain), BatchId(30));
  auto purged = PurgeOldLogEntries(offsets, commits, BatchId(n));
  ASSERT_TRUE(purged.ok()) << purged.status().ToString();
  EXPECT_EQ(purged->offsets_deleted, 30);
  EXPECT_EQ(purged->commits_deleted, 30);
  auto again = PurgeOldLogEntries(offsets, commits, BatchId(n));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->offsets_deleted, 0);
  EXPECT_TRUE(PurgeOldLogEntries(offsets, commits, BatchId(n), 0).status().IsInvalidArgument());
  auto ids = offsets.ListIds();
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(ids->size(), 101u);
  EXPECT_EQ(ids->front(), BatchId(30));
  EXPECT_EQ(ids->back(), BatchId(130));
  EXPECT_EQ(commits.ListIds()->front(), BatchId(30));
  EXPECT_EQ(commits.ListIds()->back(), BatchId(129));

  // Nothing is purged up to N == minBatchesToRetain.
  ScopedTempDir small;
  OffsetSeqLog few(LocalFileSystem(), small.path());
  CommitLog few_commits(LocalFileSystem(), small.path());
  for (int64_t i = 0; i <= 3; ++i) ASSERT_TRUE(few.Add(BatchId(i), OffsetSeq{}, no_sync).ok());
  EXPECT_EQ(PurgeOldLogEntries(few, few_commits, BatchId(3), 3)->offsets_deleted, 0);
  EXPECT_EQ(PurgeOldLogEntries(few, few_commits, BatchId(3), 2)->offsets_deleted, 1);
  EXPECT_EQ(*few.ListIds(), (std::vector<BatchId>{BatchId(1), BatchId(2), BatchId(3)}));
}

}  // namespace
}  // namespace sluice::stream

namespace sluice::stream {
namespace {

// Every parser of checkpoint bytes copes with any prefix (a torn tail) and with random damage:
// it returns a value or Corruption/NotSupported, and never crashes or throws.
TEST(CheckpointParsersTest, TornAndDamagedBytesNeverCrash) {
  auto acceptable = [](const Status& st) {
    return st.ok() || st.IsCorruption() || st.IsNotSupported();
  };
  const std::vector<std::string> samples = {
      std::string(kExampleBytes),
      "v2\n{\"batchWatermarkMs\":7,\"conf\":{},\"sourceMetadataInfo\":{}}\n0:5\n2:{\"a\":[1,2]}",
      "v1\n{\"nextBatchWatermarkMs\":1700000005000}",
      "v2\n{\"nextBatchWatermarkMs\":5,\"stateUniqueIds\":{\"0\":[[\"a1\",\"a2\"],[\"b1\"]]}}",
  };
  uint64_t rng = 0x9e3779b97f4a7c15ULL;
  auto next = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  int parsed_ok = 0;
  for (const std::string& sample : samples) {
    std::vector<std::string> inputs;
    for (size_t len = 0; len <= sample.size(); ++len) inputs.push_back(sample.substr(0, len));
    for (int i = 0; i < 300; ++i) {
      std::string damaged = sample;
      const int flips = 1 + static_cast<int>(next() % 3);
      for (int f = 0; f < flips; ++f) {
        damaged[next() % damaged.size()] = static_cast<char>(next() & 0xff);
      }
      inputs.push_back(std::move(damaged));
    }
    for (const std::string& in : inputs) {
      auto seq = ParseOffsetSeq(in);
      ASSERT_TRUE(acceptable(seq.status())) << seq.status().ToString();
      if (seq.ok()) {
        ++parsed_ok;
        // Whatever parses can be written again (or is refused cleanly).
        auto again = SerializeOffsetSeq(*seq);
        ASSERT_TRUE(again.ok() || again.status().IsInvalidArgument());
      }
      for (int version : {1, 2}) {
        auto commit = ParseCommit(in, version);
        ASSERT_TRUE(acceptable(commit.status())) << commit.status().ToString();
      }
      auto md = ParseOffsetSeqMetadata(in);
      ASSERT_TRUE(acceptable(md.status())) << md.status().ToString();
    }
  }
  EXPECT_GT(parsed_ok, 0);  // the undamaged samples at least
}

}  // namespace
}  // namespace sluice::stream
