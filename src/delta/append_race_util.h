// The multi-process append race shared by the fast and slow concurrency tests: N forked
// processes each append M one-row commits to one table through their own engine and writer.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "delta/table.h"
#include "delta/table_writer.h"
#include "delta/test_util.h"
#include "engine/engine.h"
#include "fs/file_system.h"

namespace sluice::delta::testing {

// Children append `per_process` one-row commits each; returns after all exited.
inline void RunAppendProcesses(const std::string& table, int processes, int per_process) {
  std::vector<pid_t> pids;
  for (int p = 0; p < processes; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      {
        auto engine = engine::Engine::Open();
        if (!engine.ok()) _exit(10);
        TableWriterOptions o;
        o.commit.sync = false;
        auto w = DeltaTableWriter::Open(fs::LocalFileSystem(), engine->get(), table, o);
        if (!w.ok()) _exit(11);
        auto conn = (*engine)->Connect();
        if (!conn.ok()) _exit(12);
        for (int i = 0; i < per_process && code == 0; ++i) {
          auto rows = (*conn)->Query("SELECT " + std::to_string(p * 100000 + i) +
                                     "::BIGINT AS id, " + std::to_string(p) + " AS proc");
          if (!rows.ok()) code = 13;
          if (code == 0) {
            auto r = (*w)->Write(*rows);
            if (!r.ok()) {
              fprintf(stderr, "child %d: %s\n", p, r.status().ToString().c_str());
              code = 14;
            }
          }
        }
      }
      _exit(code);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
}

inline void CheckConcurrentAppends(const std::string& table, int processes, int per_process,
                                   engine::Engine* engine) {
  const int total = processes * per_process;
  auto reader = DeltaTable::Open(fs::LocalFileSystem(), engine, table);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto snap = (*reader)->Latest();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ((*snap)->version, Version(total));  // version 0 = CREATE TABLE
  EXPECT_EQ((*snap)->files.size(), static_cast<size_t>(total));
  auto rows = (*reader)->Scan(**snap);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->num_rows(), total);
  std::set<std::string> distinct;
  for (const auto& r : Rows(*rows)) distinct.insert(r);
  EXPECT_EQ(distinct.size(), static_cast<size_t>(total));
  // Every commit after the first holds exactly one add.
  for (int v = 1; v <= total; v += std::max(1, total / 50)) {
    auto one = (*reader)->SnapshotAt(Version(v));
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    EXPECT_EQ((*one)->files.size(), static_cast<size_t>(v));
  }
}

}  // namespace sluice::delta::testing
