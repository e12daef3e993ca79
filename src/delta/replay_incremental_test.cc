// Incremental replay (LogReplay::FromSnapshot + Apply + Finish) gives exactly the snapshot of a
// full replay of the same commits: random commit sequences with adds, removes, re-adds of
// removed paths, deletion-vector keys, txn, domainMetadata, metaData and protocol changes,
// continued from every version and one commit at a time (as the writer does after each commit).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "delta/snapshot.h"

namespace sluice::delta {
namespace {

const char* kSchemaA =
    R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]})";
const char* kSchemaB =
    R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},)"
    R"({"name":"s","type":"string","nullable":true,"metadata":{}}]})";

LogSegment Seg(int64_t v) {
  LogSegment s;
  s.version = Version(v);
  return s;
}

DeletionVector Dv(int n) {
  DeletionVector dv;
  dv.storage_type = "u";
  dv.path_or_inline_dv = "dv" + std::to_string(n);
  dv.size_in_bytes = 10;
  dv.cardinality = n;
  return dv;
}

// One random commit of `version`.
std::vector<Action> RandomCommit(std::mt19937* rng, int64_t version) {
  auto pick = [&](int n) { return static_cast<int>((*rng)() % static_cast<unsigned>(n)); };
  std::vector<Action> commit;
  CommitInfo ci;
  ci.raw_json = "{\"operation\":\"WRITE\",\"v\":" + std::to_string(version) + "}";
  ci.timestamp = version;
  ci.operation = "WRITE";
  commit.push_back(ci);
  if (version == 0 || pick(8) == 0) {
    Protocol p;
    p.min_writer_version = 2 + pick(3);
    commit.push_back(p);
  }
  if (version == 0 || pick(6) == 0) {
    Metadata m;
    m.id = "table";
    m.schema_string = pick(2) ? kSchemaA : kSchemaB;
    m.configuration["k"] = std::to_string(pick(3));
    commit.push_back(m);
  }
  if (pick(4) == 0) commit.push_back(SetTransaction{"app" + std::to_string(pick(3)), version, 7});
  if (pick(5) == 0) {
    commit.push_back(
        DomainMetadata{"d" + std::to_string(pick(3)), std::to_string(version), pick(3) == 0});
  }
  // Paths from a small pool (so that removes and re-adds hit earlier keys), in random order.
  const int n = pick(6);
  for (int i = 0; i < n; ++i) {
    const std::string path = "part-" + std::to_string(pick(24)) + ".parquet";
    const int kind = pick(10);
    if (kind < 5) {
      AddFile a;
      a.path = path;
      a.size = version * 100 + i;
      a.modification_time = version;
      a.stats = "{\"numRecords\":" + std::to_string(i) + "}";
      if (pick(3) == 0) a.partition_values["p"] = std::to_string(pick(2));
      // Rarely a deletion vector (the reader refuses live ones today; both replays must agree).
      if (pick(40) == 0) a.deletion_vector = Dv(pick(2));
      commit.push_back(a);
    } else {
      RemoveFile r;
      r.path = path;
      r.deletion_timestamp = version;
      r.size = i;
      if (pick(5) == 0) r.deletion_vector = Dv(pick(2));
      commit.push_back(r);
    }
  }
  if (pick(10) == 0) {
    AddCdcFile c;
    c.path = "_change_data/c" + std::to_string(version) + ".parquet";
    commit.push_back(c);
  }
  return commit;
}

Result<Snapshot> FullReplay(const std::vector<std::vector<Action>>& commits, size_t upto) {
  LogReplay r;
  for (size_t v = 0; v <= upto; ++v) r.Apply(commits[v], Version(static_cast<int64_t>(v)));
  return r.Finish("/t", Seg(static_cast<int64_t>(upto)), 0);
}

Result<Snapshot> Continue(const Snapshot& base, const std::vector<std::vector<Action>>& commits,
                          size_t from, size_t upto) {
  LogReplay r = LogReplay::FromSnapshot(base);
  for (size_t v = from; v <= upto; ++v) r.Apply(commits[v], Version(static_cast<int64_t>(v)));
  return r.Finish("/t", Seg(static_cast<int64_t>(upto)), 0);
}

void ExpectSame(const Result<Snapshot>& full, const Result<Snapshot>& inc, const std::string& at) {
  ASSERT_EQ(full.ok(), inc.ok()) << at << ": full " << full.status().ToString() << " vs "
                                 << inc.status().ToString();
  if (!full.ok()) {
    EXPECT_EQ(full.status().ToString(), inc.status().ToString()) << at;
    return;
  }
  EXPECT_EQ(full->version, inc->version) << at;
  EXPECT_EQ(full->protocol, inc->protocol) << at;
  EXPECT_EQ(full->metadata, inc->metadata) << at;
  EXPECT_EQ(full->schema.fields, inc->schema.fields) << at;
  EXPECT_EQ(full->files.ToVector(), inc->files.ToVector()) << at;
  EXPECT_EQ(full->tombstones.ToVector(), inc->tombstones.ToVector()) << at;
  EXPECT_EQ(full->transactions, inc->transactions) << at;
  EXPECT_EQ(full->domain_metadata, inc->domain_metadata) << at;
  EXPECT_EQ(full->commit_info, inc->commit_info) << at;
}

TEST(IncrementalReplayTest, EqualsFullReplayOnRandomCommitSequences) {
  constexpr int kSequences = 60;
  constexpr int kCommits = 30;
  int compared = 0, with_files = 0, refused = 0;
  for (int seed = 1; seed <= kSequences; ++seed) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    std::vector<std::vector<Action>> commits;
    for (int v = 0; v < kCommits; ++v) commits.push_back(RandomCommit(&rng, v));
    // The writer's way: each snapshot continues from the previous one, one commit at a time.
    std::optional<Snapshot> chained;
    for (size_t v = 0; v < commits.size(); ++v) {
      Result<Snapshot> full = FullReplay(commits, v);
      const std::string at = "seed " + std::to_string(seed) + " version " + std::to_string(v);
      if (chained) {
        Result<Snapshot> inc = Continue(*chained, commits, v, v);
        ExpectSame(full, inc, at + " (one commit on the previous snapshot)");
        ++compared;
        // Several commits at once, from a snapshot a few versions back.
        if (v >= 3) {
          Result<Snapshot> base = FullReplay(commits, v - 3);
          if (base.ok()) {
            ExpectSame(full, Continue(*base, commits, v - 2, v), at + " (three commits)");
            ++compared;
          }
        }
      }
      if (full.ok()) {
        with_files += full->files.empty() ? 0 : 1;
        chained = std::move(*full);
      } else {
        ++refused;
        chained.reset();  // a refused snapshot is no base; start again from the next full one
      }
    }
  }
  // The sequences exercise what they claim: many comparisons, most with live files.
  EXPECT_GT(compared, kSequences * kCommits / 2);
  EXPECT_GT(with_files, kSequences * kCommits / 2);
  RecordProperty("refused", refused);
}

TEST(IncrementalReplayTest, UntouchedFilesAreSharedWithTheBase) {
  LogReplay r;
  std::vector<Action> first{Protocol{}, Metadata{}};
  std::get<Metadata>(first[1]).schema_string = kSchemaA;
  for (int i = 0; i < 100; ++i) {
    AddFile a;
    a.path = "f" + std::to_string(1000 + i);
    first.push_back(a);
  }
  r.Apply(first, Version(0));
  auto base = r.Finish("/t", Seg(0), 0);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  LogReplay next = LogReplay::FromSnapshot(*base);
  AddFile added;
  added.path = "f1050a";
  RemoveFile removed;
  removed.path = "f1010";
  next.Apply({added, removed}, Version(1));
  auto snap = next.Finish("/t", Seg(1), 0);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_EQ(snap->files.size(), 100u);
  EXPECT_EQ(snap->files[9].path, "f1009");
  EXPECT_EQ(snap->files[10].path, "f1011");
  EXPECT_EQ(snap->files[49].path, "f1050");
  EXPECT_EQ(snap->files[50].path, "f1050a");
  EXPECT_EQ(snap->files[51].path, "f1051");
  int shared = 0;
  for (const auto& e : snap->files.entries()) {
    for (const auto& b : base->files.entries()) shared += e == b ? 1 : 0;
  }
  EXPECT_EQ(shared, 99);  // every file but the new one is the base's own entry
  ASSERT_EQ(snap->tombstones.size(), 1u);
  EXPECT_EQ(snap->tombstones[0].path, "f1010");
}

}  // namespace
}  // namespace sluice::delta
