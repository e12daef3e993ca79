// Recovery from the checkpoint: new machines, crashes, re-runs, damaged files, I/O errors, purge.
#include <gtest/gtest.h>

#include "fs/fault_injection_file_system.h"
#include "state/state_paths.h"
#include "state/state_store.h"
#include "state/test_util.h"

namespace sluice::state {
namespace {

using testing::Dump;
using testing::Model;
using testing::StateDirs;

class RecoveryTest : public ::testing::TestWithParam<StateStoreProviderKind> {
 protected:
  void SetUp() override {
    faulty_ = std::make_shared<fs::FaultInjectingFileSystem>(fs::LocalFileSystem());
  }
  StateStoreOptions Options(int64_t snapshot_interval = 5) {
    StateStoreOptions o;
    o.kind = GetParam();
    o.fs = faulty_;
    o.local_dir = dirs_.NewLocalDir();
    o.sync = false;
    o.snapshot_interval = snapshot_interval;
    return o;
  }
  // A new process on a new machine: a fresh provider with an empty working directory.
  std::unique_ptr<StateStoreProvider> NewProvider(int64_t snapshot_interval = 5) {
    return NewProvider(Options(snapshot_interval));
  }
  std::unique_ptr<StateStoreProvider> NewProvider(StateStoreOptions o) {
    auto p = StateStoreProvider::Open({dirs_.checkpoint(), 1, 3, "default"}, std::move(o));
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? p.MoveValueUnsafe() : nullptr;
  }
  std::string FilePath(StateFileKind kind, int64_t v) const {
    return dirs_.checkpoint() + "/state/1/3/" + StateFileNameFor(kind, v);
  }
  // Batch `version`: key "k<i>" = "<tag><version>" for i in [0, 10), and removes "k<version % 10>".
  static Model Apply(Model m, int64_t version, const std::string& tag) {
    for (int i = 0; i < 10; ++i)
      m["k" + std::to_string(i + version)] = tag + std::to_string(version);
    m.erase("k" + std::to_string(version / 2));
    return m;
  }
  static Status Run(StateStore& store, const std::string& tag) {
    const int64_t version = store.version();
    for (int i = 0; i < 10; ++i) {
      SLUICE_RETURN_NOT_OK(
          store.Put("k" + std::to_string(i + version), tag + std::to_string(version)));
    }
    return store.Remove("k" + std::to_string(version / 2));
  }
  // Runs batches from..to-1 on `p`, returning the models of versions 0..to.
  std::vector<Model> RunBatches(StateStoreProvider& p, int64_t to) {
    std::vector<Model> models(1);
    for (int64_t v = 0; v < to; ++v) {
      auto store = p.GetStore(v);
      EXPECT_TRUE(store.ok()) << store.status().ToString();
      if (!store.ok()) return models;
      EXPECT_TRUE(Run(**store, "a").ok());
      auto c = (*store)->Commit();
      EXPECT_TRUE(c.ok()) << c.status().ToString();
      models.push_back(Apply(models.back(), v, "a"));
    }
    return models;
  }
  Result<Model> Load(StateStoreProvider& p, int64_t v) {
    SLUICE_ASSIGN_OR_RETURN(auto store, p.GetStore(v));
    return Dump(*store);
  }

  StateDirs dirs_;
  std::shared_ptr<fs::FaultInjectingFileSystem> faulty_;
};

TEST_P(RecoveryTest, NewMachineRebuildsFromSnapshotPlusChangelogs) {
  auto first = NewProvider();
  std::vector<Model> models = RunBatches(*first, 13);
  first.reset();
  auto second = NewProvider();
  ASSERT_OK_AND_ASSIGN(auto store, second->GetStore(13));
  ASSERT_OK_AND_ASSIGN(Model got, Dump(*store));
  EXPECT_EQ(got, models[13]);
  StateStoreMetrics m = store->Metrics();
  EXPECT_EQ(m.custom.at("loadedFromSnapshot"), 10);
  EXPECT_EQ(m.custom.at("changelogsReplayed"), 3);
  EXPECT_EQ(m.num_keys, static_cast<int64_t>(models[13].size()));
  // Continue on the new machine.
  ASSERT_OK(Run(*store, "a"));
  ASSERT_OK_AND_ASSIGN(int64_t v, store->Commit());
  EXPECT_EQ(v, 14);
  auto third = NewProvider();
  ASSERT_OK_AND_ASSIGN(Model again, Load(*third, 14));
  EXPECT_EQ(again, Apply(models[13], 13, "a"));
}

TEST_P(RecoveryTest, CorruptSnapshotFallsBackToAnOlderOne) {
  auto first = NewProvider();
  std::vector<Model> models = RunBatches(*first, 12);
  auto base = fs::LocalFileSystem();
  ASSERT_OK_AND_ASSIGN(std::string snap, base->ReadFile(FilePath(StateFileKind::kSnapshot, 10)));
  snap[snap.size() / 2] ^= 0x40;
  ASSERT_OK(base->AtomicReplace(FilePath(StateFileKind::kSnapshot, 10), snap));
  auto second = NewProvider();
  ASSERT_OK_AND_ASSIGN(auto store, second->GetStore(12));
  ASSERT_OK_AND_ASSIGN(Model got, Dump(*store));
  EXPECT_EQ(got, models[12]);
  EXPECT_EQ(store->Metrics().custom.at("loadedFromSnapshot"), 5);
}

TEST_P(RecoveryTest, TornChangelogIsCorruptionNamingTheFile) {
  auto first = NewProvider();
  RunBatches(*first, 8);
  auto base = fs::LocalFileSystem();
  const std::string path = FilePath(StateFileKind::kChangelog, 7);
  ASSERT_OK_AND_ASSIGN(std::string bytes, base->ReadFile(path));
  ASSERT_OK(base->AtomicReplace(path, bytes.substr(0, bytes.size() - 5)));
  auto second = NewProvider();
  auto loaded = second->GetStore(8);
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(loaded.status().IsCorruption()) << loaded.status().ToString();
  EXPECT_NE(loaded.status().message().find(path), std::string::npos);
  EXPECT_NE(loaded.status().message().find("torn tail"), std::string::npos);
  // Versions before the damage still load.
  ASSERT_OK(Load(*second, 6).status());
  // A flipped byte in the middle is a checksum mismatch.
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x01;
  ASSERT_OK(base->AtomicReplace(path, flipped));
  auto third = NewProvider();
  auto bad = third->GetStore(7);
  EXPECT_TRUE(bad.status().IsCorruption()) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find(path), std::string::npos);
}

TEST_P(RecoveryTest, MissingChangelogIsNotFoundNamingTheFile) {
  auto first = NewProvider();
  RunBatches(*first, 8);
  ASSERT_OK(fs::LocalFileSystem()->DeleteFile(FilePath(StateFileKind::kChangelog, 7)));
  auto second = NewProvider();
  auto loaded = second->GetStore(8);
  EXPECT_TRUE(loaded.status().IsNotFound()) << loaded.status().ToString();
  EXPECT_NE(loaded.status().message().find("7.changelog"), std::string::npos);
}

// Spark's rule: a crash after the state commit of batch N but before commits/N re-runs batch N,
// which loads version N and writes version N+1 again. The new files replace the old ones.
TEST_P(RecoveryTest, RerunAfterCrashReplacesTheUncommittedVersion) {
  // The crashed run snapshots every version, so 4.snapshot exists too.
  auto crashed = NewProvider(/*snapshot_interval=*/1);
  RunBatches(*crashed, 4);
  crashed.reset();
  ASSERT_OK_AND_ASSIGN(bool snap_before,
                       fs::LocalFileSystem()->Exists(FilePath(StateFileKind::kSnapshot, 4)));
  ASSERT_TRUE(snap_before);
  // The restarted query re-runs batch 3 (commits/3 was never written), differently this time
  // (e.g. a non-deterministic source), with a snapshot schedule that does not snapshot 4.
  auto restarted = NewProvider(/*snapshot_interval=*/100);
  ASSERT_OK_AND_ASSIGN(auto store, restarted->GetStore(3));
  ASSERT_OK_AND_ASSIGN(Model at3, Dump(*store));
  ASSERT_OK(Run(*store, "b"));
  ASSERT_OK_AND_ASSIGN(int64_t v, store->Commit());
  EXPECT_EQ(v, 4);
  const Model expected = Apply(at3, 3, "b");
  // The stale snapshot of the crashed run is gone: it must never pair with the new changelog.
  ASSERT_OK_AND_ASSIGN(bool snap_after,
                       fs::LocalFileSystem()->Exists(FilePath(StateFileKind::kSnapshot, 4)));
  EXPECT_FALSE(snap_after);
  auto later = NewProvider();
  ASSERT_OK_AND_ASSIGN(Model got, Load(*later, 4));
  EXPECT_EQ(got, expected);
  EXPECT_EQ(faulty_->OpCount(fs::FileOp::kAtomicReplace), 1);
}

TEST_P(RecoveryTest, RerunOfTheFirstBatchReplacesVersionOne) {
  auto crashed = NewProvider();
  RunBatches(*crashed, 1);
  crashed.reset();
  // Version 0 is the empty state: the new provider serves it without reading any file, and its
  // commit must still notice the existing 1.changelog and replace it.
  auto restarted = NewProvider();
  ASSERT_OK_AND_ASSIGN(auto store, restarted->GetStore(0));
  ASSERT_OK(store->Put("only", "b"));
  ASSERT_OK_AND_ASSIGN(int64_t v, store->Commit());
  EXPECT_EQ(v, 1);
  ASSERT_OK_AND_ASSIGN(Model got, Load(*NewProvider(), 1));
  EXPECT_EQ(got, (Model{{"only", "b"}}));
}

TEST_P(RecoveryTest, RerunInTheSameProcessRebuildsTheOlderVersion) {
  auto p = NewProvider();
  std::vector<Model> models = RunBatches(*p, 6);
  // The sink failed after the state commit of batch 5: the engine runs batch 5 again.
  ASSERT_OK_AND_ASSIGN(auto store, p->GetStore(5));
  ASSERT_OK_AND_ASSIGN(Model at5, Dump(*store));
  EXPECT_EQ(at5, models[5]);
  ASSERT_OK(Run(*store, "c"));
  ASSERT_OK(store->Commit());
  store.reset();
  ASSERT_OK_AND_ASSIGN(Model got, Load(*NewProvider(), 6));
  EXPECT_EQ(got, Apply(models[5], 5, "c"));
}

TEST_P(RecoveryTest, WriteErrorFailsCommitAndDiscardsTheBatch) {
  auto p = NewProvider();
  std::vector<Model> models = RunBatches(*p, 2);
  faulty_->FailNthWrite(1, ENOSPC, "3.changelog");
  ASSERT_OK_AND_ASSIGN(auto store, p->GetStore(2));
  ASSERT_OK(Run(*store, "a"));
  auto failed = store->Commit();
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(failed.status().IsIOError()) << failed.status().ToString();
  EXPECT_NE(failed.status().message().find("3.changelog"), std::string::npos);
  EXPECT_NE(failed.status().message().find("No space left"), std::string::npos);
  EXPECT_FALSE(store->committed());
  store.reset();
  // The working state was rolled back: version 2 loads as committed; the retry succeeds.
  ASSERT_OK_AND_ASSIGN(auto retry, p->GetStore(2));
  ASSERT_OK_AND_ASSIGN(Model at2, Dump(*retry));
  EXPECT_EQ(at2, models[2]);
  ASSERT_OK(Run(*retry, "a"));
  ASSERT_OK_AND_ASSIGN(int64_t v, retry->Commit());
  EXPECT_EQ(v, 3);
  ASSERT_OK_AND_ASSIGN(Model got, Load(*NewProvider(), 3));
  EXPECT_EQ(got, Apply(models[2], 2, "a"));
}

TEST_P(RecoveryTest, CrashMidWriteLeavesThePreviousVersion) {
  auto p = NewProvider();
  std::vector<Model> models = RunBatches(*p, 3);
  faulty_->TearNthWrite(1, "4.changelog");  // the process dies while writing it
  ASSERT_OK_AND_ASSIGN(auto store, p->GetStore(3));
  ASSERT_OK(Run(*store, "a"));
  EXPECT_TRUE(store->Commit().status().IsCancelled());
  store.reset();
  p.reset();
  faulty_->Restart();
  auto q = NewProvider();
  ASSERT_OK_AND_ASSIGN(int64_t latest, q->LatestVersion());
  EXPECT_EQ(latest, 3);  // the temporary file is not a version
  ASSERT_OK_AND_ASSIGN(Model at3, Load(*q, 3));
  EXPECT_EQ(at3, models[3]);
}

TEST_P(RecoveryTest, TornPublishedChangelogIsRewrittenByTheRerun) {
  auto p = NewProvider();
  std::vector<Model> models = RunBatches(*p, 3);
  faulty_->TearNthWrite(1, "4.changelog", /*publish=*/true);  // a store without atomic writes
  ASSERT_OK_AND_ASSIGN(auto store, p->GetStore(3));
  ASSERT_OK(Run(*store, "a"));
  EXPECT_FALSE(store->Commit().ok());
  store.reset();
  p.reset();
  faulty_->Restart();
  auto q = NewProvider();
  EXPECT_TRUE(q->GetStore(4).status().IsCorruption());
  ASSERT_OK_AND_ASSIGN(auto rerun, q->GetStore(3));
  ASSERT_OK(Run(*rerun, "a"));
  ASSERT_OK(rerun->Commit());
  rerun.reset();
  ASSERT_OK_AND_ASSIGN(Model got, Load(*NewProvider(), 4));
  EXPECT_EQ(got, Apply(models[3], 3, "a"));
}

TEST_P(RecoveryTest, SnapshotFailureDoesNotFailTheCommit) {
  auto p = NewProvider();
  std::vector<Model> models = RunBatches(*p, 4);
  faulty_->FailNthWrite(1, EIO, "5.snapshot");
  ASSERT_OK_AND_ASSIGN(auto store, p->GetStore(4));
  ASSERT_OK(Run(*store, "a"));
  ASSERT_OK_AND_ASSIGN(int64_t v, store->Commit());
  EXPECT_EQ(v, 5);
  EXPECT_EQ(store->Metrics().custom.at("snapshotFailures"), 1);
  EXPECT_EQ(store->Metrics().custom.at("snapshotLagVersions"), 5);
  store.reset();
  ASSERT_OK_AND_ASSIGN(Model got, Load(*NewProvider(), 5));
  EXPECT_EQ(got, Apply(models[4], 4, "a"));
}

TEST_P(RecoveryTest, MaintenanceKeepsWhatTheRetainedVersionsNeed) {
  StateStoreOptions o = Options(/*snapshot_interval=*/10);
  o.min_versions_to_retain = 20;
  auto p = NewProvider(o);
  std::vector<Model> models = RunBatches(*p, 47);
  ASSERT_OK(p->Maintenance());
  // Oldest retained version: 47 - 20 + 1 = 28, which starts from 20.snapshot.
  auto base = fs::LocalFileSystem();
  ASSERT_OK_AND_ASSIGN(auto files, base->List(dirs_.checkpoint() + "/state/1/3"));
  int64_t min_changelog = 1000;
  int64_t min_snapshot = 1000;
  for (const auto& f : files) {
    auto n = ParseStateFileName(fs::BaseName(f.path));
    if (!n) continue;
    int64_t& m = n->kind == StateFileKind::kChangelog ? min_changelog : min_snapshot;
    m = std::min(m, n->version);
  }
  EXPECT_EQ(min_snapshot, 20);
  EXPECT_EQ(min_changelog, 21);
  for (int64_t v = 28; v <= 47; ++v) {
    ASSERT_OK_AND_ASSIGN(Model got, Load(*NewProvider(), v));
    EXPECT_EQ(got, models[static_cast<size_t>(v)]) << v;
  }
  auto purged = p->GetStore(15);
  EXPECT_TRUE(purged.status().IsNotFound()) << purged.status().ToString();
  // Idempotent.
  ASSERT_OK(p->Maintenance());
  ASSERT_OK_AND_ASSIGN(Model latest, Load(*p, 47));
  EXPECT_EQ(latest, models[47]);
}

// A crash at each point of Commit, then a restart that re-runs the batch (as the query does when
// commits/N is missing): the re-run's version is the one that stays.
TEST_P(RecoveryTest, CrashAtEveryCommitPointThenRerun) {
  for (const char* point : {"state.before_changelog_write", "state.after_changelog_write",
                            "state.after_snapshot_write"}) {
    SCOPED_TRACE(point);
    const std::string root = dirs_.tmp().Join(std::string("cp-") + point);
    auto open = [&](int64_t interval) {
      StateStoreOptions o = Options(interval);
      return StateStoreProvider::Open({root, 0, 0, "default"}, o);
    };
    ASSERT_OK_AND_ASSIGN(auto p, open(/*interval=*/5));
    Model model;
    for (int64_t v = 0; v < 4; ++v) {
      ASSERT_OK_AND_ASSIGN(auto store, p->GetStore(v));
      ASSERT_OK(Run(*store, "a"));
      ASSERT_OK(store->Commit());
      model = Apply(model, v, "a");
    }
    faulty_->SetCrashPoint(point);
    {
      ASSERT_OK_AND_ASSIGN(auto store, p->GetStore(4));  // commits 5, a snapshot version
      ASSERT_OK(Run(*store, "a"));
      auto crashed = store->Commit();
      EXPECT_TRUE(crashed.status().IsCancelled()) << crashed.status().ToString();
      EXPECT_FALSE(store->committed());
    }
    p.reset();
    faulty_->Restart();
    faulty_->ClearCrashPoints();
    ASSERT_OK_AND_ASSIGN(auto q, open(/*interval=*/100));
    ASSERT_OK_AND_ASSIGN(int64_t latest, q->LatestVersion());
    EXPECT_EQ(latest, std::string(point) == "state.before_changelog_write" ? 4 : 5);
    ASSERT_OK_AND_ASSIGN(Model at4, Load(*q, 4));
    EXPECT_EQ(at4, model);
    ASSERT_OK_AND_ASSIGN(auto rerun, q->GetStore(4));
    ASSERT_OK(Run(*rerun, "b"));
    ASSERT_OK(rerun->Commit());
    rerun.reset();
    ASSERT_OK_AND_ASSIGN(auto fresh, open(/*interval=*/5));
    ASSERT_OK_AND_ASSIGN(Model got, Load(*fresh, 5));
    EXPECT_EQ(got, Apply(model, 4, "b"));
  }
}

TEST_P(RecoveryTest, MaintenanceDeletesOldTemporaryFiles) {
  auto p = NewProvider();
  RunBatches(*p, 2);
  auto base = fs::LocalFileSystem();
  const std::string dir = dirs_.checkpoint() + "/state/1/3/";
  ASSERT_OK(base->CreateIfAbsent(dir + ".3.changelog.old.tmp", "torn"));
  ASSERT_OK(base->SetModificationTime(dir + ".3.changelog.old.tmp", 1'000'000'000'000));
  ASSERT_OK(base->CreateIfAbsent(dir + ".3.changelog.new.tmp", "in flight?"));
  ASSERT_OK(p->Maintenance());
  ASSERT_OK_AND_ASSIGN(bool old_exists, base->Exists(dir + ".3.changelog.old.tmp"));
  ASSERT_OK_AND_ASSIGN(bool new_exists, base->Exists(dir + ".3.changelog.new.tmp"));
  EXPECT_FALSE(old_exists);
  EXPECT_TRUE(new_exists);  // younger than an hour: left alone
  ASSERT_OK_AND_ASSIGN(int64_t latest, p->LatestVersion());
  EXPECT_EQ(latest, 2);
}

TEST_P(RecoveryTest, ReadErrorIsReportedWithThePath) {
  auto p = NewProvider();
  RunBatches(*p, 3);
  fs::Fault fault;
  fault.ops = fs::OpBit(fs::FileOp::kReadFile);
  fault.path_substring = "2.changelog";
  fault.error = EIO;
  ASSERT_OK(faulty_->InjectFault(fault));
  auto fresh = NewProvider();
  auto loaded = fresh->GetStore(3);
  EXPECT_TRUE(loaded.status().IsIOError()) << loaded.status().ToString();
  EXPECT_NE(loaded.status().message().find("2.changelog"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Providers, RecoveryTest,
                         ::testing::Values(StateStoreProviderKind::kRocksDb,
                                           StateStoreProviderKind::kInMemory),
                         [](const auto& info) { return testing::KindName(info.param); });

}  // namespace
}  // namespace sluice::state
