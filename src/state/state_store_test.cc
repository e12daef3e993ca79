// Contract tests of StateStore/StateStoreProvider, run against both providers.
#include "state/state_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>

#include "state/test_util.h"

namespace sluice::state {
namespace {

using testing::Dump;
using testing::Model;
using testing::StateDirs;

class StateStoreTest : public ::testing::TestWithParam<StateStoreProviderKind> {
 protected:
  StateStoreOptions Options() {
    StateStoreOptions o;
    o.kind = GetParam();
    o.local_dir = dirs_.NewLocalDir();
    o.sync = false;
    o.snapshot_interval = 10;
    return o;
  }
  std::unique_ptr<StateStoreProvider> OpenProvider(StateStoreOptions o, int32_t partition = 0) {
    auto p = StateStoreProvider::Open({dirs_.checkpoint(), 0, partition, "default"}, std::move(o));
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? p.MoveValueUnsafe() : nullptr;
  }
  std::unique_ptr<StateStoreProvider> OpenProvider() { return OpenProvider(Options()); }

  StateDirs dirs_;
};

TEST_P(StateStoreTest, PutGetRemove) {
  auto provider = OpenProvider();
  ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(0));
  EXPECT_EQ(store->version(), 0);
  ASSERT_OK_AND_ASSIGN(auto missing, store->Get("k"));
  EXPECT_FALSE(missing.has_value());
  ASSERT_OK(store->Put("k", "v1"));
  ASSERT_OK(store->Put("k", "v2"));
  ASSERT_OK(store->Put(std::string("z\0z", 3), std::string("\0\1", 2)));
  ASSERT_OK_AND_ASSIGN(auto got, store->Get("k"));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, "v2");
  ASSERT_OK(store->Remove("k"));
  ASSERT_OK(store->Remove("never-there"));
  ASSERT_OK_AND_ASSIGN(auto gone, store->Get("k"));
  EXPECT_FALSE(gone.has_value());
  ASSERT_OK_AND_ASSIGN(auto binary, store->Get(std::string("z\0z", 3)));
  ASSERT_TRUE(binary.has_value());
  EXPECT_EQ(*binary, std::string("\0\1", 2));
  ASSERT_OK_AND_ASSIGN(int64_t v, store->Commit());
  EXPECT_EQ(v, 1);
  EXPECT_TRUE(store->committed());
  EXPECT_EQ(store->version(), 1);
  // Closed stores refuse further use.
  EXPECT_TRUE(store->Put("a", "b").IsInvalidArgument());
  EXPECT_TRUE(store->Commit().status().IsInvalidArgument());
}

TEST_P(StateStoreTest, ScansAreOrderedBytewise) {
  auto provider = OpenProvider();
  ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(0));
  const std::vector<std::string> keys = {"a",    "ab",   "abc",      "abd",    "b",          "\x7f",
                                         "\x80", "\xff", "\xff\xff", "ab\xff", "ab\xff\xff", "ac"};
  for (const auto& k : keys) ASSERT_OK(store->Put(k, "v" + k));
  ASSERT_OK_AND_ASSIGN(Model all, Dump(*store));
  EXPECT_EQ(all.size(), keys.size());
  {
    ASSERT_OK_AND_ASSIGN(auto it, store->Iterate());
    std::vector<std::string> order;
    for (; it->Valid(); it->Next()) order.emplace_back(it->key());
    ASSERT_OK(it->status());
    std::vector<std::string> expected(keys);
    std::sort(expected.begin(), expected.end());  // std::string orders bytes unsigned
    EXPECT_EQ(order, expected);
    EXPECT_EQ(order.back(), "\xff\xff");
    EXPECT_EQ(order[order.size() - 4], "\x7f");
  }
  auto collect = [](std::unique_ptr<StateIterator> it) {
    std::vector<std::string> out;
    for (; it->Valid(); it->Next()) out.emplace_back(it->key());
    EXPECT_TRUE(it->status().ok());
    return out;
  };
  ASSERT_OK_AND_ASSIGN(auto p1, store->PrefixScan("ab"));
  EXPECT_EQ(collect(std::move(p1)),
            (std::vector<std::string>{"ab", "abc", "abd", "ab\xff", "ab\xff\xff"}));
  ASSERT_OK_AND_ASSIGN(auto p2, store->PrefixScan("\xff"));
  EXPECT_EQ(collect(std::move(p2)), (std::vector<std::string>{"\xff", "\xff\xff"}));
  ASSERT_OK_AND_ASSIGN(auto p3, store->PrefixScan("ab\xff"));
  EXPECT_EQ(collect(std::move(p3)), (std::vector<std::string>{"ab\xff", "ab\xff\xff"}));
  ASSERT_OK_AND_ASSIGN(auto p4, store->PrefixScan("q"));
  EXPECT_TRUE(collect(std::move(p4)).empty());
  ASSERT_OK_AND_ASSIGN(auto r1, store->RangeScan("abc", "b"));
  EXPECT_EQ(collect(std::move(r1)),
            (std::vector<std::string>{"abc", "abd", "ab\xff", "ab\xff\xff", "ac"}));
  ASSERT_OK_AND_ASSIGN(auto r2, store->RangeScan("\x80", ""));
  EXPECT_EQ(collect(std::move(r2)), (std::vector<std::string>{"\x80", "\xff", "\xff\xff"}));
  // Values come along.
  ASSERT_OK_AND_ASSIGN(auto r3, store->RangeScan("abd", "abe"));
  ASSERT_TRUE(r3->Valid());
  EXPECT_EQ(r3->value(), "vabd");
}

TEST_P(StateStoreTest, SeekRepositionsWithinTheScan) {
  auto provider = OpenProvider();
  ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(0));
  for (const char* k : {"a1", "b1", "b2", "b3", "c1", "c2", "d1"}) ASSERT_OK(store->Put(k, k));
  ASSERT_OK_AND_ASSIGN(auto it, store->RangeScan("b", "d"));
  it->Seek("c");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "c1");
  EXPECT_EQ(it->value(), "c1");
  it->Seek("b2");  // backward
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "b2");
  it->Seek("a");  // below the range's begin: clamped to it
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "b1");
  it->Seek("c3");  // past the last key below the end
  EXPECT_FALSE(it->Valid());
  it->Seek("c2");  // valid again after running off the end
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "c2");
  it->Next();
  EXPECT_FALSE(it->Valid());  // "d1" is outside [b, d)
  ASSERT_OK(it->status());
}

TEST_P(StateStoreTest, MultiGetSeesTheBatchsWritesAndCountsKeys) {
  auto provider = OpenProvider();
  {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(0));
    for (int i = 0; i < 10; ++i) ASSERT_OK(store->Put("k" + std::to_string(i), "old"));
    ASSERT_OK(store->Commit());
  }
  ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(1));
  ASSERT_OK(store->Put("k3", "new"));
  ASSERT_OK(store->Remove("k4"));
  ASSERT_OK(store->Put("n1", "fresh"));
  const std::vector<std::string> keys = {"k3", "k4", "k5", "n1", "n2", "k3"};
  std::vector<std::string_view> views(keys.begin(), keys.end());
  ASSERT_OK_AND_ASSIGN(auto got, store->MultiGet(views));
  ASSERT_EQ(got.size(), keys.size());
  EXPECT_EQ(got[0], std::optional<std::string>("new"));
  EXPECT_FALSE(got[1].has_value());
  EXPECT_EQ(got[2], std::optional<std::string>("old"));
  EXPECT_EQ(got[3], std::optional<std::string>("fresh"));
  EXPECT_FALSE(got[4].has_value());
  EXPECT_EQ(got[5], std::optional<std::string>("new"));
  ASSERT_OK_AND_ASSIGN(auto none, store->MultiGet({}));
  EXPECT_TRUE(none.empty());
  // Keys the MultiGet saw are counted right when written next.
  ASSERT_OK(store->Put("n2", "x"));
  ASSERT_OK(store->Put("k5", "y"));
  ASSERT_OK(store->Remove("k4"));  // already gone: not counted, not logged
  ASSERT_OK(store->Remove("k5"));
  EXPECT_EQ(store->Metrics().num_keys, 10 - 1 + 1 + 1 - 1);
  EXPECT_EQ(store->Metrics().num_removed, 2);
  ASSERT_OK_AND_ASSIGN(Model all, Dump(*store));
  EXPECT_EQ(all.size(), 10u);
  EXPECT_EQ(all["k3"], "new");
  ASSERT_OK(store->Commit());
  // A rebuild from the files (a new working copy) has the same state.
  auto again = OpenProvider(Options());
  ASSERT_OK_AND_ASSIGN(auto reloaded, again->GetStore(2));
  ASSERT_OK_AND_ASSIGN(Model reloaded_all, Dump(*reloaded));
  EXPECT_EQ(reloaded_all, all);
  EXPECT_EQ(reloaded->Metrics().num_keys, 10);
}

TEST_P(StateStoreTest, ManyBufferedWritesAreReadBackBeforeAndAfterCommit) {
  // More than the RocksDB backend's write buffer (a few MiB), interleaved with reads and scans.
  auto provider = OpenProvider();
  Model model;
  ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(0));
  const std::string value(200, 'v');
  for (int i = 0; i < 40000; ++i) {
    const std::string k = "k" + std::to_string(i % 30000);
    if (i % 7 == 3) {
      ASSERT_OK(store->Remove(k));
      model.erase(k);
    } else {
      ASSERT_OK(store->Put(k, value + std::to_string(i)));
      model[k] = value + std::to_string(i);
    }
    if (i % 997 == 0) {
      ASSERT_OK_AND_ASSIGN(auto got, store->Get(k));
      EXPECT_EQ(got.has_value(), model.count(k) > 0) << k;
    }
    if (i % 9973 == 0) {
      ASSERT_OK_AND_ASSIGN(Model now, Dump(*store));
      EXPECT_EQ(now, model);
    }
  }
  EXPECT_EQ(store->Metrics().num_keys, static_cast<int64_t>(model.size()));
  ASSERT_OK(store->Commit());
  ASSERT_OK_AND_ASSIGN(auto next, provider->GetStore(1));
  ASSERT_OK_AND_ASSIGN(Model after, Dump(*next));
  EXPECT_EQ(after, model);
}

TEST_P(StateStoreTest, RemoveWhileScanningVisitsEachKeyOnce) {
  auto provider = OpenProvider();
  ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(0));
  for (int i = 0; i < 100; ++i) ASSERT_OK(store->Put("k" + std::to_string(1000 + i), "v"));
  int seen = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto it, store->PrefixScan("k1"));
    std::string prev;
    for (; it->Valid(); it->Next()) {
      std::string k(it->key());
      EXPECT_LT(prev, k);
      prev = k;
      ++seen;
      if (seen % 2 == 0) ASSERT_OK(store->Remove(k));  // evict as we go
    }
    ASSERT_OK(it->status());
  }
  EXPECT_EQ(seen, 100);
  ASSERT_OK_AND_ASSIGN(Model left, Dump(*store));
  EXPECT_EQ(left.size(), 50u);
}

TEST_P(StateStoreTest, ManyVersionsEachLoadsExactly) {
  StateStoreOptions o = Options();
  o.snapshot_interval = 4;
  auto provider = OpenProvider(o);
  std::mt19937 rng(42);
  std::vector<Model> models(1);  // models[v] = contents of version v
  for (int64_t v = 0; v < 23; ++v) {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(v));
    Model m = models.back();
    for (int i = 0; i < 50; ++i) {
      std::string k = "key" + std::to_string(rng() % 80);
      if (rng() % 4 == 0) {
        ASSERT_OK(store->Remove(k));
        m.erase(k);
      } else {
        std::string val = "v" + std::to_string(v) + "_" + std::to_string(i);
        ASSERT_OK(store->Put(k, val));
        m[k] = val;
      }
    }
    ASSERT_OK_AND_ASSIGN(int64_t committed, store->Commit());
    ASSERT_EQ(committed, v + 1);
    models.push_back(std::move(m));
  }
  ASSERT_OK_AND_ASSIGN(int64_t latest, provider->LatestVersion());
  EXPECT_EQ(latest, 23);
  // Versions in a scrambled order, on the same provider (rebuilds) and on fresh ones.
  std::vector<int64_t> order;
  for (int64_t v = 0; v <= 23; ++v) order.push_back(v);
  std::shuffle(order.begin(), order.end(), rng);
  for (int64_t v : order) {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(v));
    ASSERT_OK_AND_ASSIGN(Model got, Dump(*store));
    EXPECT_EQ(got, models[static_cast<size_t>(v)]) << "version " << v;
    EXPECT_EQ(store->Metrics().num_keys,
              static_cast<int64_t>(models[static_cast<size_t>(v)].size()));
    store->Abort();
  }
  for (int64_t v : {1, 4, 5, 22, 23}) {
    auto fresh = OpenProvider();
    ASSERT_OK_AND_ASSIGN(auto store, fresh->GetStore(v));
    ASSERT_OK_AND_ASSIGN(Model got, Dump(*store));
    EXPECT_EQ(got, models[static_cast<size_t>(v)]) << "fresh, version " << v;
  }
  auto beyond = provider->GetStore(24);
  EXPECT_TRUE(beyond.status().IsNotFound()) << beyond.status().ToString();
  EXPECT_TRUE(provider->GetStore(-1).status().IsInvalidArgument());
}

TEST_P(StateStoreTest, AbortDiscardsChanges) {
  auto provider = OpenProvider();
  {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(0));
    ASSERT_OK(store->Put("keep", "1"));
    ASSERT_OK(store->Commit());
  }
  {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(1));
    ASSERT_OK(store->Put("drop", "x"));
    ASSERT_OK(store->Remove("keep"));
    store->Abort();
    store->Abort();  // idempotent
    EXPECT_FALSE(store->committed());
    EXPECT_TRUE(store->Get("keep").status().IsInvalidArgument());
  }
  {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(1));
    ASSERT_OK_AND_ASSIGN(Model m, Dump(*store));
    EXPECT_EQ(m, (Model{{"keep", "1"}}));
    ASSERT_OK(store->Put("drop2", "y"));
    // Destroyed without Commit: aborted.
  }
  ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(1));
  ASSERT_OK_AND_ASSIGN(Model m, Dump(*store));
  EXPECT_EQ(m, (Model{{"keep", "1"}}));
  ASSERT_OK_AND_ASSIGN(int64_t latest, provider->LatestVersion());
  EXPECT_EQ(latest, 1);  // aborts write nothing
}

TEST_P(StateStoreTest, OneOpenStoreAndNoOpenIteratorsAtCommit) {
  auto provider = OpenProvider();
  ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(0));
  auto second = provider->GetStore(0);
  EXPECT_TRUE(second.status().IsInvalidArgument()) << second.status().ToString();
  EXPECT_TRUE(provider->Maintenance().IsInvalidArgument());
  ASSERT_OK(store->Put("a", "1"));
  ASSERT_OK_AND_ASSIGN(auto it, store->Iterate());
  auto refused = store->Commit();
  EXPECT_TRUE(refused.status().IsInvalidArgument());
  EXPECT_NE(refused.status().message().find("iterator"), std::string::npos);
  it.reset();
  ASSERT_OK_AND_ASSIGN(int64_t v, store->Commit());
  EXPECT_EQ(v, 1);
}

TEST_P(StateStoreTest, FilesInTheCheckpoint) {
  StateStoreOptions o = Options();
  o.snapshot_interval = 3;
  auto provider = OpenProvider(o);
  for (int64_t v = 0; v < 7; ++v) {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(v));
    ASSERT_OK(store->Put("k" + std::to_string(v), "v"));
    ASSERT_OK(store->Commit());
  }
  auto fs = fs::LocalFileSystem();
  const std::string dir = dirs_.checkpoint() + "/state/0/0";
  ASSERT_OK_AND_ASSIGN(auto files, fs->List(dir));
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(fs::BaseName(f.path));
  EXPECT_EQ(names, (std::vector<std::string>{"1.changelog", "2.changelog", "3.changelog",
                                             "3.snapshot", "4.changelog", "5.changelog",
                                             "6.changelog", "6.snapshot", "7.changelog"}));
}

TEST_P(StateStoreTest, Metrics) {
  StateStoreOptions o = Options();
  o.snapshot_interval = 2;
  auto provider = OpenProvider(o);
  {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(0));
    for (int i = 0; i < 10; ++i) ASSERT_OK(store->Put("k" + std::to_string(i), "value"));
    ASSERT_OK(store->Remove("k0"));
    ASSERT_OK(store->Remove("absent"));
    StateStoreMetrics m = store->Metrics();
    EXPECT_EQ(m.num_keys, 9);
    EXPECT_EQ(m.num_updated, 10);
    EXPECT_EQ(m.num_removed, 1);
    EXPECT_GT(m.memory_used_bytes, 0);
    ASSERT_OK(store->Commit());
    m = store->Metrics();
    EXPECT_EQ(m.num_keys, 9);
    EXPECT_GT(m.custom.at("changelogBytes"), 10 * 5);
    EXPECT_EQ(m.custom.at("snapshotBytes"), 0);
    EXPECT_EQ(m.custom.at("snapshotLagVersions"), 1);
    EXPECT_EQ(m.custom.at("loadTimeMs"), 0);
    if (GetParam() == StateStoreProviderKind::kRocksDb) {
      EXPECT_TRUE(m.custom.count("rocksdbBlockCacheUsageBytes"));
    }
    EXPECT_EQ(provider->LastMetrics().num_keys, 9);
  }
  {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(1));
    ASSERT_OK(store->Put("k1", "new"));  // an update, not a new key
    ASSERT_OK(store->Commit());
    StateStoreMetrics m = store->Metrics();
    EXPECT_EQ(m.num_keys, 9);
    EXPECT_EQ(m.num_updated, 1);
    EXPECT_EQ(m.num_removed, 0);
    EXPECT_GT(m.custom.at("snapshotBytes"), 9 * 5);  // version 2 is a snapshot version
    EXPECT_EQ(m.custom.at("snapshotLagVersions"), 0);
  }
  // A fresh provider recovers the key count from the files.
  auto fresh = OpenProvider();
  ASSERT_OK_AND_ASSIGN(auto store, fresh->GetStore(2));
  EXPECT_EQ(store->Metrics().num_keys, 9);
  EXPECT_EQ(store->Metrics().custom.at("loadedFromSnapshot"), 2);
}

TEST_P(StateStoreTest, KeyCountStaysExactUnderReadModifyWrite) {
  auto provider = OpenProvider();
  std::mt19937 rng(7);
  Model model;
  int64_t version = 0;
  for (int batch = 0; batch < 3; ++batch) {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(version));
    for (int i = 0; i < 2000; ++i) {
      const std::string k = "k" + std::to_string(rng() % 300);
      const std::string other = "k" + std::to_string(rng() % 300);
      switch (rng() % 6) {
        case 0:  // Get then Put of the same key
          ASSERT_OK(store->Get(k).status());
          ASSERT_OK(store->Put(k, "v"));
          model[k] = "v";
          break;
        case 1:  // Get then Remove of the same key
          ASSERT_OK(store->Get(k).status());
          ASSERT_OK(store->Remove(k));
          model.erase(k);
          break;
        case 2:  // Get of one key, Put of another
          ASSERT_OK(store->Get(other).status());
          ASSERT_OK(store->Put(k, "w"));
          model[k] = "w";
          break;
        case 3:  // Get, Put, Put again
          ASSERT_OK(store->Get(k).status());
          ASSERT_OK(store->Put(k, "x"));
          ASSERT_OK(store->Put(k, "y"));
          model[k] = "y";
          break;
        case 4:  // Get, Remove, Put
          ASSERT_OK(store->Get(k).status());
          ASSERT_OK(store->Remove(k));
          ASSERT_OK(store->Put(k, "z"));
          model[k] = "z";
          break;
        default:
          ASSERT_OK(store->Remove(k));
          model.erase(k);
      }
      ASSERT_EQ(store->Metrics().num_keys, static_cast<int64_t>(model.size())) << i;
    }
    ASSERT_OK_AND_ASSIGN(version, store->Commit());
  }
  auto fresh = OpenProvider();  // must outlive its store
  ASSERT_OK_AND_ASSIGN(auto store, fresh->GetStore(version));
  EXPECT_EQ(store->Metrics().num_keys, static_cast<int64_t>(model.size()));
  ASSERT_OK_AND_ASSIGN(Model got, Dump(*store));
  EXPECT_EQ(got, model);
}

// Evictions scan, then remove what they saw (the store then knows the keys exist without
// reading them again). The count must stay exact also when a key the scan returns was removed or
// re-put by the batch after the iterator was created, and when a scan sees more keys than the
// store remembers.
TEST_P(StateStoreTest, KeyCountStaysExactWhenRemovingScannedKeys) {
  auto provider = OpenProvider();
  Model model;
  int64_t version = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(version));
    for (int i = 0; i < 200000; ++i) {
      char k[16];
      std::snprintf(k, sizeof k, "k%07d", i);
      ASSERT_OK(store->Put(k, "v"));
      model[k] = "v";
    }
    ASSERT_OK_AND_ASSIGN(version, store->Commit());
  }
  ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(version));
  {
    ASSERT_OK_AND_ASSIGN(auto it, store->Iterate());
    // Changed while the scan is open: k0000001 removed, k0000002 removed and put back.
    ASSERT_OK(store->Remove("k0000001"));
    model.erase("k0000001");
    ASSERT_OK(store->Remove("k0000002"));
    ASSERT_OK(store->Put("k0000002", "again"));
    model["k0000002"] = "again";
    std::vector<std::string> doomed;
    for (; it->Valid(); it->Next()) {
      std::string k(it->key());
      if (k.back() != '9') doomed.push_back(std::move(k));  // 180K of 200K keys
    }
    ASSERT_OK(it->status());
    it.reset();
    for (const std::string& k : doomed) {
      ASSERT_OK(store->Remove(k));
      model.erase(k);
    }
  }
  EXPECT_EQ(store->Metrics().num_keys, static_cast<int64_t>(model.size()));
  EXPECT_EQ(store->Metrics().num_removed, 180001);  // the two above, then 179,999 scanned
  ASSERT_OK_AND_ASSIGN(version, store->Commit());
  auto fresh = OpenProvider();
  ASSERT_OK_AND_ASSIGN(auto reloaded, fresh->GetStore(version));
  EXPECT_EQ(reloaded->Metrics().num_keys, static_cast<int64_t>(model.size()));
  ASSERT_OK_AND_ASSIGN(Model got, Dump(*reloaded));
  EXPECT_EQ(got, model);
}

TEST_P(StateStoreTest, BadOptions) {
  StateStoreOptions o = Options();
  o.snapshot_interval = 0;
  EXPECT_TRUE(StateStoreProvider::Open({dirs_.checkpoint(), 0, 0, "default"}, o)
                  .status()
                  .IsInvalidArgument());
  o = Options();
  EXPECT_TRUE(StateStoreProvider::Open({"", 0, 0, "default"}, o).status().IsInvalidArgument());
  EXPECT_TRUE(StateStoreProvider::Open({dirs_.checkpoint(), 0, -1, "default"}, o)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(
      StateStoreProvider::Open({dirs_.checkpoint(), 0, 0, "a/b"}, o).status().IsInvalidArgument());
  if (GetParam() == StateStoreProviderKind::kRocksDb) {
    o.local_dir.clear();
    EXPECT_TRUE(StateStoreProvider::Open({dirs_.checkpoint(), 0, 0, "default"}, o)
                    .status()
                    .IsInvalidArgument());
  }
}

TEST_P(StateStoreTest, NamedStoreLivesInItsOwnDirectory) {
  StateStoreOptions o = Options();
  auto p = StateStoreProvider::Open({dirs_.checkpoint(), 2, 1, "left-keyToNumValues"}, o);
  ASSERT_OK(p.status());
  ASSERT_OK_AND_ASSIGN(auto store, (*p)->GetStore(0));
  ASSERT_OK(store->Put("a", "b"));
  ASSERT_OK(store->Commit());
  ASSERT_OK_AND_ASSIGN(bool exists,
                       fs::LocalFileSystem()->Exists(dirs_.checkpoint() +
                                                     "/state/2/1/left-keyToNumValues/1.changelog"));
  EXPECT_TRUE(exists);
}

// A caller that holds the state (DetachWorkingCopy) writes changelogs only; snapshots come from
// its copy; a later store of the same provider loads the working copy from the checkpoint only
// when read; a new machine rebuilds exactly the caller's state.
TEST_P(StateStoreTest, DetachedStoresWriteChangelogsAndSnapshotsFromTheCaller) {
  StateStoreOptions o = Options();
  o.snapshot_interval = 3;
  o.track_num_keys = false;
  auto provider = OpenProvider(o);
  Model model;  // the caller's copy
  auto source = [&model](const std::function<void(std::string_view, std::string_view)>& emit) {
    for (const auto& [k, v] : model) emit(k, v);
    return Status::OK();
  };
  {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(0));
    ASSERT_OK(store->Put("a", "1"));
    ASSERT_OK(store->Put("b", "2"));
    model = {{"a", "1"}, {"b", "2"}};
    ASSERT_OK(store->Commit());  // version 1, working copy written
  }
  for (int64_t v = 1; v <= 4; ++v) {  // versions 2..5, all detached; 3 is a snapshot version
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(v));
    ASSERT_OK(store->DetachWorkingCopy(source));
    EXPECT_TRUE(store->Get("a").status().IsInvalidArgument());
    EXPECT_TRUE(store->Iterate().status().IsInvalidArgument());
    const std::string k = "k" + std::to_string(v);
    ASSERT_OK(store->Put(k, "x"));
    model[k] = "x";
    if (v == 2) {
      ASSERT_OK(store->Remove("a"));
      model.erase("a");
    }
    ASSERT_OK_AND_ASSIGN(int64_t committed, store->Commit());
    EXPECT_EQ(committed, v + 1);
    EXPECT_EQ(store->Metrics().num_keys, -1);
    EXPECT_EQ(store->Metrics().num_updated, 1);
    EXPECT_EQ(store->Metrics().custom.at("snapshotBytes") > 0, v + 1 == 3);
  }
  ASSERT_OK_AND_ASSIGN(bool snapshot3,
                       fs::LocalFileSystem()->Exists(dirs_.checkpoint() + "/state/0/0/3.snapshot"));
  EXPECT_TRUE(snapshot3);
  {
    // Version 5 from the same provider: its working copy is loaded when first read.
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(5));
    ASSERT_OK_AND_ASSIGN(auto b, store->Get("b"));
    EXPECT_EQ(b, std::optional<std::string>("2"));
    EXPECT_EQ(store->Metrics().custom.at("loadedFromSnapshot"), 3);
    ASSERT_OK_AND_ASSIGN(Model dumped, Dump(*store));
    EXPECT_EQ(dumped, model);
    ASSERT_OK(store->Put("z", "9"));
    model["z"] = "9";
    ASSERT_OK(store->Commit());  // version 6: a snapshot from the working copy
  }
  // A new machine with only the checkpoint.
  o.local_dir = dirs_.NewLocalDir();
  auto fresh = OpenProvider(o);
  ASSERT_OK_AND_ASSIGN(auto store, fresh->GetStore(6));
  ASSERT_OK_AND_ASSIGN(Model dumped, Dump(*store));
  EXPECT_EQ(dumped, model);
  EXPECT_EQ(store->Metrics().custom.at("loadedFromSnapshot"), 6);
  store->Abort();
  ASSERT_OK_AND_ASSIGN(auto at5, fresh->GetStore(5));
  ASSERT_OK_AND_ASSIGN(Model dumped5, Dump(*at5));
  model.erase("z");
  EXPECT_EQ(dumped5, model);
}

TEST_P(StateStoreTest, DetachedStoreFailuresAndMisuse) {
  StateStoreOptions o = Options();
  o.snapshot_interval = 2;
  o.track_num_keys = false;
  auto provider = OpenProvider(o);
  auto unordered = [](const std::function<void(std::string_view, std::string_view)>& emit) {
    emit("b", "1");
    emit("a", "1");
    return Status::OK();
  };
  {
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(0));
    EXPECT_TRUE(store->DetachWorkingCopy(nullptr).IsInvalidArgument());
    ASSERT_OK(store->Put("a", "1"));
    ASSERT_OK_AND_ASSIGN(auto it, store->Iterate());
    EXPECT_TRUE(store->DetachWorkingCopy(unordered).IsInvalidArgument());  // an open iterator
    it.reset();
    ASSERT_OK(store->DetachWorkingCopy(unordered));
    ASSERT_OK(store->Put("b", "1"));
    ASSERT_OK(store->Commit());  // version 1: no snapshot due
  }
  {
    // Version 2 is due for a snapshot; the source breaks the key order: the snapshot fails, the
    // commit does not.
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(1));
    ASSERT_OK(store->DetachWorkingCopy(unordered));
    ASSERT_OK(store->Put("c", "1"));
    ASSERT_OK_AND_ASSIGN(int64_t v, store->Commit());
    EXPECT_EQ(v, 2);
    EXPECT_EQ(store->Metrics().custom.at("snapshotFailures"), 1);
    EXPECT_EQ(store->Metrics().custom.at("snapshotBytes"), 0);
  }
  {
    // An aborted detached batch: the next store rebuilds version 2 from the changelogs.
    ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(2));
    ASSERT_OK(store->DetachWorkingCopy(unordered));
    ASSERT_OK(store->Put("d", "1"));
    store->Abort();
  }
  ASSERT_OK_AND_ASSIGN(auto store, provider->GetStore(2));
  ASSERT_OK_AND_ASSIGN(Model dumped, Dump(*store));
  EXPECT_EQ(dumped, (Model{{"a", "1"}, {"b", "1"}, {"c", "1"}}));
  store->Abort();
  // Key counting needs reads: no detaching then.
  StateStoreOptions counting = Options();
  auto counted = OpenProvider(counting, 1);
  ASSERT_OK_AND_ASSIGN(auto c, counted->GetStore(0));
  EXPECT_TRUE(c->DetachWorkingCopy(unordered).IsInvalidArgument());
}

INSTANTIATE_TEST_SUITE_P(Providers, StateStoreTest,
                         ::testing::Values(StateStoreProviderKind::kRocksDb,
                                           StateStoreProviderKind::kInMemory),
                         [](const auto& info) { return testing::KindName(info.param); });

}  // namespace
}  // namespace sluice::state
