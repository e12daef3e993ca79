// Parsed stats kept with a snapshot's file entries (stats_parsed.h, file_list.h) and the data
// skipping that reads them (data_skipping.h, scan.h PlanScanFiles):
// - ParsedFileStats reads the JSON the way data skipping always did (exact key first, then any
//   case; last duplicate wins; non-scalars, non-integers and unparsable stats are absent);
// - PlanScanFiles over a snapshot (parsed stats cached, reused by every later statement) keeps
//   exactly the files FileMayMatch keeps when it parses each file's stats itself, for random
//   files, stats variants and predicates of every kind, and never skips a file that holds a
//   matching row (checked against the rows themselves);
// - the cache follows versions: an incremental snapshot shares the parsed stats of the entries
//   it shares, and a file added again with other stats is judged by its new stats.
#include "delta/stats_parsed.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "delta/data_skipping.h"
#include "delta/scan.h"
#include "delta/schema.h"
#include "delta/snapshot.h"
#include "delta/values.h"

namespace sluice::delta {
namespace {

TEST(ParsedFileStatsTest, ReadsFieldsLikeTheJson) {
  ParsedFileStats s = ParsedFileStats::Parse(
      R"({"numRecords":4,"tightBounds":false,"minValues":{"id":1,"ID":7,"Name":"a","o":{"x":1},)"
      R"("n":null,"b":true,"f":1.5},"maxValues":{"id":9,"id":10},"nullCount":{"id":0,"s":"2"}})");
  ASSERT_TRUE(s.usable());
  EXPECT_EQ(s.num_records(), 4);
  EXPECT_FALSE(s.tight_bounds());
  ASSERT_NE(s.Min("id"), nullptr);
  EXPECT_EQ(*s.Min("id"), "1");  // the exact key before the one that differs in case
  ASSERT_NE(s.Min("Id"), nullptr);
  EXPECT_EQ(*s.Min("Id"), "7");  // no exact key: the first in key order ("ID" < "id")
  ASSERT_NE(s.Min("name"), nullptr);
  EXPECT_EQ(*s.Min("name"), "a");
  EXPECT_EQ(s.Min("o"), nullptr);  // an object is not a bound
  EXPECT_EQ(s.Min("n"), nullptr);  // nor is null
  ASSERT_NE(s.Min("b"), nullptr);
  EXPECT_EQ(*s.Min("b"), "true");
  ASSERT_NE(s.Min("f"), nullptr);
  EXPECT_EQ(*s.Min("f"), "1.5");
  ASSERT_NE(s.Max("id"), nullptr);
  EXPECT_EQ(*s.Max("id"), "10");  // a duplicate key keeps its last value
  EXPECT_EQ(s.Max("missing"), nullptr);
  EXPECT_EQ(s.NullCount("id"), 0);
  EXPECT_EQ(s.NullCount("s"), std::nullopt);  // a string is not a count
  EXPECT_EQ(s.NullCount("missing"), std::nullopt);

  ParsedFileStats other = ParsedFileStats::Parse(R"({"NUMRECORDS":2.5,"tightBounds":"no"})");
  ASSERT_TRUE(other.usable());
  EXPECT_EQ(other.num_records(), std::nullopt);  // not an integer
  EXPECT_TRUE(other.tight_bounds());             // not a boolean: tight, as absent
  EXPECT_EQ(ParsedFileStats::Parse(R"({"numrecords":3})").num_records(), 3);
}

TEST(ParsedFileStatsTest, UnusableStats) {
  EXPECT_FALSE(ParsedFileStats::Parse(std::nullopt).usable());
  EXPECT_FALSE(ParsedFileStats::Parse(std::string("not json")).usable());
  EXPECT_FALSE(ParsedFileStats::Parse(std::string("[1,2]")).usable());
  EXPECT_FALSE(ParsedFileStats::Parse(std::string(R"({"numRecords":)")).usable());
  EXPECT_FALSE(ParsedFileStats::Parse(std::string("")).usable());
}

// --- Random files, their rows and stats, and predicates over them -----------------------------

const char* kSchema = R"({"type":"struct","fields":[)"
                      R"({"name":"id","type":"long","nullable":true,"metadata":{}},)"
                      R"({"name":"d","type":"double","nullable":true,"metadata":{}},)"
                      R"({"name":"s","type":"string","nullable":true,"metadata":{}},)"
                      R"({"name":"day","type":"date","nullable":true,"metadata":{}},)"
                      R"({"name":"ts","type":"timestamp","nullable":true,"metadata":{}},)"
                      R"({"name":"flag","type":"boolean","nullable":true,"metadata":{}},)"
                      R"({"name":"p","type":"long","nullable":true,"metadata":{}}]})";
constexpr int kColumns = 6;  // data columns; p is the partition column
const char* kNames[kColumns] = {"id", "d", "s", "day", "ts", "flag"};

// One value of a column: int64 (id, day in days, ts in micros), double, string or bool.
using Value = std::variant<int64_t, double, std::string, bool>;
using Row = std::vector<std::optional<Value>>;  // kColumns values

struct TestFile {
  AddFile add;
  std::vector<Row> rows;
  std::optional<int64_t> partition;  // p, NULL when nullopt
};

int Pick(std::mt19937* rng, int n) { return static_cast<int>((*rng)() % static_cast<unsigned>(n)); }

const std::vector<std::string>& Strings() {
  static const std::vector<std::string> v = {"", "a", "ab", "abc", "b", "ba", "c", "zz"};
  return v;
}

// Days since the epoch of 2024-01-01 plus `day`.
constexpr int64_t kDay0 = 19723;
// Micros of 2024-01-01T00:00:00Z.
constexpr int64_t kTs0 = kDay0 * 86400LL * 1000000LL;

Value RandomValue(std::mt19937* rng, int column) {
  switch (column) {
    case 0:
      return static_cast<int64_t>(Pick(rng, 11) - 5);
    case 1:
      return static_cast<double>(Pick(rng, 17) - 8) / 4.0;  // exact in binary and in text
    case 2:
      return Strings()[Pick(rng, static_cast<int>(Strings().size()))];
    case 3:
      return kDay0 + Pick(rng, 6);
    case 4:  // whole ms, or ms plus a few micros (stats are truncated to ms)
      return kTs0 + Pick(rng, 5) * 1000 + (Pick(rng, 2) ? Pick(rng, 1000) : 0);
    default:
      return Pick(rng, 2) == 1;
  }
}

// YYYY-MM-DD of a day of January 2024 (the only dates the test makes).
std::string DateText(int64_t days) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "2024-01-%02d", static_cast<int>(days - kDay0 + 1));
  return buf;
}

// The value as a filter literal (and as stats text for strings, dates and timestamps).
std::string LiteralText(const Value& v, int column) {
  switch (column) {
    case 0:
      return std::to_string(std::get<int64_t>(v));
    case 1: {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.17g", std::get<double>(v));
      return buf;
    }
    case 2:
      return std::get<std::string>(v);
    case 3:
      return DateText(std::get<int64_t>(v));
    case 4:  // the literal keeps its micros; stats get FormatMillisIso of the truncated ms
      return FormatTimestampMicros(std::get<int64_t>(v));
    default:
      return std::get<bool>(v) ? "true" : "false";
  }
}

// Stats JSON of a min or max value.
std::string StatJson(const Value& v, int column) {
  switch (column) {
    case 0:
    case 1:
      return LiteralText(v, column);
    case 4:
      return "\"" + FormatMillisIso(std::get<int64_t>(v) / 1000) + "\"";
    default:
      return "\"" + LiteralText(v, column) + "\"";
  }
}

bool Less(const Value& a, const Value& b) { return a < b; }  // same alternative: its own order

// Stats of `rows` (min/max of non-null values, null counts), written Spark's way with some
// variations that every reader must take: upper-case keys, a column left out, a bound that is
// an object, tightBounds false over more rows than the file keeps.
std::string StatsFor(const std::vector<Row>& rows, std::mt19937* rng, bool tight) {
  std::string mins, maxs, nulls;
  for (int c = 0; c < kColumns; ++c) {
    std::optional<Value> lo, hi;
    int64_t n = 0;
    for (const Row& r : rows) {
      if (!r[c]) {
        ++n;
        continue;
      }
      if (!lo || Less(*r[c], *lo)) lo = r[c];
      if (!hi || Less(*hi, *r[c])) hi = r[c];
    }
    std::string key = kNames[c];
    if (Pick(rng, 6) == 0) {
      for (char& ch : key) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    const std::string k = "\"" + key + "\":";
    auto add = [](std::string* to, const std::string& item) {
      if (!to->empty()) *to += ",";
      *to += item;
    };
    add(&nulls, k + std::to_string(n));
    if (c == 5 || !lo || Pick(rng, 10) == 0) continue;  // booleans: no bounds (as Spark)
    if (Pick(rng, 15) == 0) {
      add(&mins, k + "{\"x\":1}");
      continue;
    }
    add(&mins, k + StatJson(*lo, c));
    add(&maxs, k + StatJson(*hi, c));
  }
  return "{\"numRecords\":" + std::to_string(rows.size()) + ",\"minValues\":{" + mins +
         "},\"maxValues\":{" + maxs + "},\"nullCount\":{" + nulls + "}" +
         (tight ? "" : ",\"tightBounds\":false") + "}";
}

std::vector<TestFile> RandomFiles(std::mt19937* rng, int count) {
  std::vector<TestFile> files;
  for (int i = 0; i < count; ++i) {
    TestFile f;
    char path[32];
    std::snprintf(path, sizeof(path), "part-%05d.parquet", i);
    f.add.path = path;
    if (Pick(rng, 5) != 0) f.partition = Pick(rng, 3);
    f.add.partition_values["p"] =
        f.partition ? std::optional<std::string>(std::to_string(*f.partition)) : std::nullopt;
    int n = 1 + Pick(rng, 4);
    auto row = [&] {
      Row r(kColumns);
      for (int c = 0; c < kColumns; ++c) {
        if (Pick(rng, 4) != 0) r[c] = RandomValue(rng, c);
      }
      return r;
    };
    for (int j = 0; j < n; ++j) f.rows.push_back(row());
    switch (Pick(rng, 10)) {
      case 0:
        break;  // no stats
      case 1:
        f.add.stats = Pick(rng, 2) ? "not json" : R"({"numRecords":)";
        break;
      case 2: {  // bounds over rows the file no longer returns (deletion vectors)
        std::vector<Row> more = f.rows;
        more.push_back(row());
        more.push_back(row());
        f.add.stats = StatsFor(more, rng, false);
        break;
      }
      default:
        f.add.stats = StatsFor(f.rows, rng, true);
    }
    files.push_back(std::move(f));
  }
  return files;
}

// A conjunct and the same thing as a test of one row.
struct Pred {
  ColumnPredicate pred;
  int column = 0;  // kColumns = the partition column p
  std::optional<Value> literal;
};

Pred RandomPred(std::mt19937* rng) {
  Pred p;
  p.column = Pick(rng, kColumns + 1);
  p.pred.column = p.column == kColumns ? "p" : kNames[p.column];
  if (Pick(rng, 5) == 0) p.pred.column[0] = static_cast<char>(std::toupper(p.pred.column[0]));
  p.pred.op = static_cast<CompareOp>(Pick(rng, 8));
  if (p.pred.op == CompareOp::kIsNull || p.pred.op == CompareOp::kIsNotNull) return p;
  if (p.column == kColumns) {
    p.literal = static_cast<int64_t>(Pick(rng, 5) - 1);
    p.pred.literal = std::to_string(std::get<int64_t>(*p.literal));
  } else {
    p.literal = RandomValue(rng, p.column);
    p.pred.literal = LiteralText(*p.literal, p.column);
  }
  return p;
}

// SQL's answer for one row: NULL compares as never true.
bool RowMatches(const TestFile& f, const Row& r, const Pred& p) {
  std::optional<Value> v;
  if (p.column == kColumns) {
    if (f.partition) v = Value(*f.partition);
  } else {
    v = r[p.column];
  }
  if (p.pred.op == CompareOp::kIsNull) return !v;
  if (p.pred.op == CompareOp::kIsNotNull) return v.has_value();
  if (!v) return false;
  const Value& a = *v;
  const Value& b = *p.literal;
  switch (p.pred.op) {
    case CompareOp::kEq:
      return a == b;
    case CompareOp::kNe:
      return a != b;
    case CompareOp::kLt:
      return a < b;
    case CompareOp::kLe:
      return a <= b;
    case CompareOp::kGt:
      return a > b;
    default:
      return a >= b;
  }
}

bool FileHasMatch(const TestFile& f, const std::vector<Pred>& preds) {
  for (const Row& r : f.rows) {
    bool all = true;
    for (const Pred& p : preds) all = all && RowMatches(f, r, p);
    if (all) return true;
  }
  return false;
}

LogSegment Seg(int64_t v) {
  LogSegment s;
  s.version = Version(v);
  return s;
}

std::vector<Action> TableHeader() {
  Protocol protocol;
  Metadata m;
  m.id = "t";
  m.schema_string = kSchema;
  m.partition_columns = {"p"};
  return {protocol, m};
}

Snapshot SnapshotOf(const std::vector<TestFile>& files) {
  LogReplay r;
  std::vector<Action> actions = TableHeader();
  for (const TestFile& f : files) actions.push_back(f.add);
  r.Apply(std::move(actions), Version(0));
  auto snap = r.Finish("/t", Seg(0), 0);
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  return std::move(snap).ValueOrDie();
}

std::set<std::string> Paths(const std::vector<AddFile>& files) {
  std::set<std::string> out;
  for (const AddFile& f : files) out.insert(f.path);
  return out;
}

TEST(ParsedStatsCacheTest, SameAnswerAsUncachedAndNeverAWrongSkip) {
  std::mt19937 rng(16);
  const std::vector<TestFile> files = RandomFiles(&rng, 300);
  const Snapshot snap = SnapshotOf(files);
  ASSERT_EQ(snap.files.size(), files.size());
  const engine::Schema schema = snap.schema.fields;
  int skipped = 0, kept = 0, filters = 0;
  std::set<int> ops_seen;
  for (int round = 0; round < 400; ++round) {
    std::vector<Pred> preds;
    for (int n = 1 + Pick(&rng, 2); n > 0; --n) preds.push_back(RandomPred(&rng));
    ScanFilter filter;
    for (const Pred& p : preds) {
      filter.conjuncts.push_back(p.pred);
      ops_seen.insert(static_cast<int>(p.pred.op));
    }
    auto cached = PlanScanFiles(snap, filter);
    ASSERT_TRUE(cached.ok()) << cached.status().ToString();
    std::set<std::string> cached_paths = Paths(*cached);
    ++filters;
    for (const TestFile& f : files) {
      auto uncached = FileMayMatch(f.add, filter, schema, {"p"});
      ASSERT_TRUE(uncached.ok()) << uncached.status().ToString();
      const bool in_cached = cached_paths.count(f.add.path) > 0;
      ASSERT_EQ(in_cached, *uncached)
          << f.add.path << " stats " << f.add.stats.value_or("(none)") << " filter round " << round;
      if (FileHasMatch(f, preds)) {
        ASSERT_TRUE(in_cached) << "wrong skip of " << f.add.path << " stats "
                               << f.add.stats.value_or("(none)") << " filter round " << round;
      }
      (in_cached ? kept : skipped)++;
    }
  }
  EXPECT_EQ(ops_seen.size(), 8u);  // every predicate kind was tried
  // Not vacuous: both answers occur often.
  EXPECT_GT(skipped, filters * 30);
  EXPECT_GT(kept, filters * 30);
}

TEST(ParsedStatsCacheTest, FilesWithoutUsableStatsAreNotSkippedOnStats) {
  std::vector<TestFile> files(4);
  files[0].add.path = "none";
  files[1].add.path = "bad";
  files[1].add.stats = "{\"numRecords\":1,\"minValues\":{\"id\":";
  files[2].add.path = "array";
  files[2].add.stats = "[]";
  files[3].add.path = "good";
  files[3].add.stats = R"({"numRecords":1,"minValues":{"id":1},"maxValues":{"id":1},)"
                       R"("nullCount":{"id":0}})";
  for (TestFile& f : files) f.add.partition_values["p"] = "1";
  const Snapshot snap = SnapshotOf(files);
  for (int repeat = 0; repeat < 2; ++repeat) {  // the second time from the cache
    auto eq = PlanScanFiles(snap, ScanFilter{{{"id", CompareOp::kEq, "5"}}});
    ASSERT_TRUE(eq.ok()) << eq.status().ToString();
    EXPECT_EQ(Paths(*eq), (std::set<std::string>{"none", "bad", "array"}));
    auto is_null = PlanScanFiles(snap, ScanFilter{{{"id", CompareOp::kIsNull, std::nullopt}}});
    ASSERT_TRUE(is_null.ok());
    EXPECT_EQ(Paths(*is_null), (std::set<std::string>{"none", "bad", "array"}));
    // Partition values still prune a file without stats.
    auto part = PlanScanFiles(snap, ScanFilter{{{"p", CompareOp::kEq, "2"}}});
    ASSERT_TRUE(part.ok());
    EXPECT_TRUE(part->empty());
  }
  EXPECT_EQ(snap.NumRecordsFromStats(), std::nullopt);  // some file has no numRecords
}

TEST(ParsedStatsCacheTest, FilterErrorsAreTheUncachedOnes) {
  std::vector<TestFile> files(1);
  files[0].add.path = "f";
  files[0].add.partition_values["p"] = "1";
  files[0].add.stats = R"({"numRecords":1,"minValues":{"id":1},"maxValues":{"id":1}})";
  const Snapshot snap = SnapshotOf(files);
  auto unknown = PlanScanFiles(snap, ScanFilter{{{"nope", CompareOp::kEq, "1"}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().ToString().find("filter column 'nope'"), std::string::npos);
  auto bad = PlanScanFiles(snap, ScanFilter{{{"id", CompareOp::kEq, "x1"}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("filter on 'id'"), std::string::npos);
  auto missing = PlanScanFiles(snap, ScanFilter{{{"id", CompareOp::kLt, std::nullopt}}});
  ASSERT_FALSE(missing.ok());
  // A false partition conjunct before a bad one decides first, as FileMayMatch does.
  ScanFilter first_false{{{"p", CompareOp::kEq, "2"}, {"nope", CompareOp::kEq, "1"}}};
  auto pruned = PlanScanFiles(snap, first_false);
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_TRUE(pruned->empty());
  auto direct = FileMayMatch(files[0].add, first_false, snap.schema.fields, {"p"});
  ASSERT_TRUE(direct.ok());
  EXPECT_FALSE(*direct);
}

AddFile FileWithId(const std::string& path, int64_t id) {
  AddFile a;
  a.path = path;
  a.partition_values["p"] = "0";
  a.stats = "{\"numRecords\":1,\"minValues\":{\"id\":" + std::to_string(id) +
            "},\"maxValues\":{\"id\":" + std::to_string(id) + "},\"nullCount\":{\"id\":0}}";
  return a;
}

TEST(ParsedStatsCacheTest, FollowsVersions) {
  LogReplay r;
  std::vector<Action> first = TableHeader();
  for (int i = 0; i < 10; ++i) first.push_back(FileWithId("f" + std::to_string(i), i));
  r.Apply(std::move(first), Version(0));
  auto base = r.Finish("/t", Seg(0), 0);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  auto at = [](const Snapshot& s, int64_t id) {
    auto files = PlanScanFiles(s, ScanFilter{{{"id", CompareOp::kEq, std::to_string(id)}}});
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    return files.ok() ? Paths(*files) : std::set<std::string>{};
  };
  EXPECT_EQ(at(*base, 3), (std::set<std::string>{"f3"}));  // parses (and keeps) every file's
  EXPECT_EQ(at(*base, 42), (std::set<std::string>{}));

  // Version 1: f3 is added again with other stats (an UPDATE rewriting it under the same name),
  // f5 is removed, g is new.
  LogReplay next = LogReplay::FromSnapshot(*base);
  RemoveFile removed;
  removed.path = "f5";
  next.Apply({FileWithId("f3", 42), removed, FileWithId("g", 3)}, Version(1));
  auto v1 = next.Finish("/t", Seg(1), 0);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(at(*v1, 3), (std::set<std::string>{"g"}));
  EXPECT_EQ(at(*v1, 42), (std::set<std::string>{"f3"}));
  EXPECT_EQ(at(*v1, 5), (std::set<std::string>{}));
  // The older snapshot still answers from its own entries.
  EXPECT_EQ(at(*base, 3), (std::set<std::string>{"f3"}));
  EXPECT_EQ(at(*base, 5), (std::set<std::string>{"f5"}));

  // Untouched entries share their parsed stats with the base; the re-added f3 has its own.
  int shared = 0, own = 0;
  for (size_t i = 0; i < v1->files.size(); ++i) {
    const ParsedFileStats* mine = &v1->files.memo(i).Get(v1->files[i]);
    bool found = false;
    for (size_t j = 0; j < base->files.size(); ++j) {
      if (&base->files.memo(j).Get(base->files[j]) == mine) found = true;
    }
    (found ? shared : own)++;
    if (v1->files[i].path == "f3") {
      EXPECT_FALSE(found);
    }
  }
  EXPECT_EQ(shared, 8);  // f0..f9 without f3 and f5
  EXPECT_EQ(own, 2);     // f3 again, and g
  EXPECT_EQ(v1->NumRecordsFromStats(), 10);
}

TEST(ParsedStatsCacheTest, ConcurrentFirstUse) {
  std::mt19937 rng(7);
  const std::vector<TestFile> files = RandomFiles(&rng, 200);
  const Snapshot snap = SnapshotOf(files);
  const ScanFilter filter{{{"id", CompareOp::kGe, "3"}}};
  std::set<std::string> expected;
  for (const TestFile& f : files) {
    auto keep = FileMayMatch(f.add, filter, snap.schema.fields, {"p"});
    ASSERT_TRUE(keep.ok());
    if (*keep) expected.insert(f.add.path);
  }
  constexpr int kThreads = 4;
  std::vector<std::set<std::string>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto r = PlanScanFiles(snap, filter);
      if (r.ok()) got[t] = Paths(*r);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(got[t], expected) << "thread " << t;
}

}  // namespace
}  // namespace sluice::delta
