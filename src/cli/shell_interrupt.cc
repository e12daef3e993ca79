#include "cli/shell_interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

namespace sluice::cli {
namespace {

// The handler's view of the live instance: the pipe's write end (-1: none) and the count of
// Ctrl-Cs not yet taken. Plain atomics, so the handler is async-signal-safe.
std::atomic<int> g_write_fd{-1};
std::atomic<int> g_seen{0};
struct sigaction g_previous;

void OnSigint(int) {
  const int saved = errno;
  g_seen.fetch_add(1);
  const int fd = g_write_fd.load();
  if (fd >= 0) {
    const char byte = 'i';
    (void)!write(fd, &byte, 1);  // a full pipe already holds a wake-up: nothing is lost
  }
  errno = saved;
}

constexpr char kStopByte = 's';  // written by the destructor: the watcher ends

}  // namespace

Result<std::unique_ptr<ShellInterrupt>> ShellInterrupt::Install(std::function<void()> interrupt) {
  if (g_write_fd.load() >= 0) {
    return Status::IOError("sluice sql: a Ctrl-C handler is already installed in this process");
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return Status::IOError(std::string("sluice sql: cannot create the Ctrl-C pipe: ") +
                           std::strerror(errno));
  }
  fcntl(fds[1], F_SETFL, O_NONBLOCK);
  std::unique_ptr<ShellInterrupt> self(new ShellInterrupt(std::move(interrupt), fds[0], fds[1]));
  g_seen.store(0);
  g_write_fd.store(fds[1]);
  struct sigaction action {};
  action.sa_handler = OnSigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: readline's read returns, so the prompt sees the Ctrl-C
  if (sigaction(SIGINT, &action, &g_previous) != 0) {
    g_write_fd.store(-1);
    return Status::IOError(std::string("sluice sql: cannot handle Ctrl-C: ") +
                           std::strerror(errno));
  }
  return self;
}

ShellInterrupt::ShellInterrupt(std::function<void()> interrupt, int read_fd, int write_fd)
    : interrupt_(std::move(interrupt)), read_fd_(read_fd), write_fd_(write_fd) {
  watcher_ = std::thread([this] { Watch(); });
}

ShellInterrupt::~ShellInterrupt() {
  if (g_write_fd.load() == write_fd_) {
    sigaction(SIGINT, &g_previous, nullptr);
    g_write_fd.store(-1);
  }
  const char byte = kStopByte;
  while (write(write_fd_, &byte, 1) < 0 && errno == EAGAIN) {
    // The pipe is full of Ctrl-C wake-ups the watcher is draining: try again.
    usleep(1000);
  }
  if (watcher_.joinable()) watcher_.join();
  close(read_fd_);
  close(write_fd_);
}

void ShellInterrupt::BeginStatement() {
  g_seen.store(0);
  running_.store(true);
}

void ShellInterrupt::EndStatement() {
  running_.store(false);
  g_seen.store(0);
}

bool ShellInterrupt::TakeSeen() { return g_seen.exchange(0) > 0; }

bool ShellInterrupt::Pending() const { return g_seen.load() > 0; }

void ShellInterrupt::Watch() {
  for (;;) {
    char byte = 0;
    const ssize_t n = read(read_fd_, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == kStopByte) return;
    if (running_.load()) interrupt_();
  }
}

}  // namespace sluice::cli
