// ShellInterrupt: Ctrl-C in `sluice sql`'s interactive shell, as psql and duckdb users expect.
//
// While it lives, SIGINT no longer ends the process. Each Ctrl-C is counted; when a statement is
// running (between BeginStatement and EndStatement) it is also handed to the `interrupt`
// callback (sql::Session::Interrupt, which cancels the statement), from a watcher thread — the
// signal handler itself only writes one byte to a pipe, the one thing it may safely do.
// At the prompt, the shell asks TakeSeen() after readline returns to tell a Ctrl-C (drop the line
// being typed, keep the shell) from a Ctrl-D (leave).
//
// One instance per process at a time (the signal handler is process-wide). The destructor
// restores the previous SIGINT disposition and joins the watcher.
// Thread safety: BeginStatement/EndStatement/TakeSeen from the shell's thread; the callback runs
// on the watcher thread and must be thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "common/result.h"

namespace sluice::cli {

class ShellInterrupt {
 public:
  // Installs the SIGINT handler and starts the watcher. IOError when the pipe or the handler
  // cannot be set up, or another instance is alive.
  static Result<std::unique_ptr<ShellInterrupt>> Install(std::function<void()> interrupt);
  ~ShellInterrupt();
  ShellInterrupt(const ShellInterrupt&) = delete;
  ShellInterrupt& operator=(const ShellInterrupt&) = delete;

  // Around a statement: Ctrl-Cs in between go to the callback and are not seen by TakeSeen.
  void BeginStatement();
  void EndStatement();
  // Whether a Ctrl-C came since the last call or statement (and clears it).
  bool TakeSeen();
  // Whether a Ctrl-C came since then, without clearing it (the prompt's key reader polls it).
  bool Pending() const;

 private:
  ShellInterrupt(std::function<void()> interrupt, int read_fd, int write_fd);
  void Watch();

  std::function<void()> interrupt_;
  int read_fd_;
  int write_fd_;
  std::atomic<bool> running_{false};
  std::thread watcher_;
};

}  // namespace sluice::cli
