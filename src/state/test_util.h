// Helpers for the state tests (tests only).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "fs/test_util.h"
#include "state/state_store.h"

namespace sluice::state::testing {

#define ASSERT_OK(expr)                                       \
  do {                                                        \
    ::sluice::Status _st = ::sluice::ToStatus(expr);          \
    ASSERT_TRUE(_st.ok()) << #expr << ": " << _st.ToString(); \
  } while (false)

#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                     \
  auto SLUICE_CONCAT(_r_, __LINE__) = (rexpr);                               \
  ASSERT_TRUE(SLUICE_CONCAT(_r_, __LINE__).ok())                             \
      << #rexpr << ": " << SLUICE_CONCAT(_r_, __LINE__).status().ToString(); \
  lhs = SLUICE_CONCAT(_r_, __LINE__).MoveValueUnsafe()

using Model = std::map<std::string, std::string>;

inline const char* KindName(StateStoreProviderKind k) {
  return k == StateStoreProviderKind::kRocksDb ? "RocksDb" : "InMemory";
}

// Everything in a store, by iteration.
inline Result<Model> Dump(StateStore& store) {
  Model m;
  SLUICE_ASSIGN_OR_RETURN(auto it, store.Iterate());
  for (; it->Valid(); it->Next()) m.emplace(std::string(it->key()), std::string(it->value()));
  SLUICE_RETURN_NOT_OK(it->status());
  return m;
}

// A checkpoint and local working directories in one temporary directory.
class StateDirs {
 public:
  std::string checkpoint() const { return tmp_.Join("checkpoint"); }
  // A fresh local working directory each call (a new machine).
  std::string NewLocalDir() { return tmp_.Join("local" + std::to_string(next_++)); }
  const fs::ScopedTempDir& tmp() const { return tmp_; }

 private:
  fs::ScopedTempDir tmp_{"sluice-state-test"};
  int next_ = 0;
};

}  // namespace sluice::state::testing
