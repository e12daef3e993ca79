#include "connect/python_worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

extern char** environ;

namespace sluice::connect {

namespace {

// PySpark's SpecialLengths.PYTHON_EXCEPTION_THROWN.
constexpr int32_t kPythonExceptionThrown = -2;

std::string Errno(const char* what) { return std::string(what) + ": " + strerror(errno); }

std::string JoinArgs(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

bool IsWorkerFactoryVariable(const char* entry) {
  static const char* kNames[] = {"PYTHON_WORKER_FACTORY_SECRET=", "PYTHON_WORKER_FACTORY_PORT=",
                                 "PYTHON_WORKER_FACTORY_SOCK_PATH="};
  for (const char* n : kNames) {
    if (strncmp(entry, n, strlen(n)) == 0) return true;
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<PythonWorker>> PythonWorker::Start(const PythonWorkerOptions& options) {
  if (options.argv.empty()) return Status::InvalidArgument("Python worker: an empty command");
  std::unique_ptr<PythonWorker> w(new PythonWorker());
  w->command_ = JoinArgs(options.argv);
  std::string tmpl = (std::filesystem::temp_directory_path() / "sluice-pyworker-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) return Status::IOError(Errno("Python worker: mkdtemp"));
  w->dir_ = tmpl;
  const std::string sock_path = w->dir_ + "/worker.sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (sock_path.size() >= sizeof(addr.sun_path)) {
    return Status::IOError("Python worker: the socket path " + sock_path + " is too long");
  }
  memcpy(addr.sun_path, sock_path.c_str(), sock_path.size() + 1);
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return Status::IOError(Errno("Python worker: socket"));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } listener_closer{listener};
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener, 1) != 0) {
    return Status::IOError(Errno(("Python worker: listen on " + sock_path).c_str()));
  }

  // Everything the child needs is built before fork: only async-signal-safe calls after it.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (IsWorkerFactoryVariable(*e)) continue;
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    if (options.env.count(name)) continue;
    env_strings.push_back(std::move(entry));
  }
  for (const auto& [k, v] : options.env) env_strings.push_back(k + "=" + v);
  env_strings.push_back("PYTHON_WORKER_FACTORY_SOCK_PATH=" + sock_path);
  std::vector<char*> envp, argv;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = options.argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();

  int exec_pipe[2];  // the child writes errno here when exec fails; closed by a successful exec
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) return Status::IOError(Errno("Python worker: pipe"));
  pid_t pid = fork();
  if (pid < 0) {
    close(exec_pipe[0]);
    close(exec_pipe[1]);
    return Status::IOError(Errno("Python worker: fork"));
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the server died before prctl
    dup2(2, 1);                           // the worker's stdout: the server's log
    // The server's other descriptors (gRPC sockets, files) are not the worker's.
    for (int fd = 3; fd < 1024; ++fd) {
      if (fd != exec_pipe[1]) close(fd);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);  // the server blocks SIGINT/SIGTERM
    execvpe(argv[0], argv.data(), envp.data());
    int err = errno;
    ssize_t ignored = write(exec_pipe[1], &err, sizeof(err));
    (void)ignored;
    _exit(127);
  }
  w->pid_ = pid;
  close(exec_pipe[1]);
  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(exec_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (got < 0 && errno == EINTR);
  close(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof(exec_errno))) {
    w->Kill();
    return Status::InvalidArgument(
        "Python worker: cannot run '" + w->command_ + "': " + strerror(exec_errno) +
        " (give sluice connect --python, or set PYSPARK_PYTHON, to the Python that has pyspark)");
  }
  // Wait for the connection, checking that the worker is still alive.
  const auto deadline = std::chrono::steady_clock::now() + options.connect_timeout;
  while (true) {
    pollfd p{listener, POLLIN, 0};
    int r = poll(&p, 1, 100);
    if (r > 0) {
      w->fd_ = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (w->fd_ < 0) return Status::IOError(Errno("Python worker: accept"));
      break;
    }
    if (r < 0 && errno != EINTR) return Status::IOError(Errno("Python worker: poll"));
    if (w->ExitDescription() != "is running") {
      return Status::InvalidArgument("Python worker: '" + w->command_ + "' " +
                                     w->ExitDescription() +
                                     " before connecting back (its error is in the server's "
                                     "log; is pyspark installed for that Python? set "
                                     "PYSPARK_PYTHON)");
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::IOError("Python worker: '" + w->command_ + "' did not connect within " +
                             std::to_string(options.connect_timeout.count()) + " ms");
    }
  }
  SLUICE_ASSIGN_OR_RETURN(int32_t reported_pid, w->ReadInt());
  (void)reported_pid;  // the pid we forked; PySpark sends it for JVMs that cannot know it
  return w;
}

PythonWorker::~PythonWorker() {
  Kill();
  if (pid_ > 0 && !reaped_) {
    while (waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {
    }
  }
  if (fd_ >= 0) close(fd_);
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

void PythonWorker::Kill() {
  if (pid_ > 0 && !reaped_) kill(pid_, SIGKILL);
  if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);  // wakes a blocked read; the fd stays open
}

std::string PythonWorker::ExitDescription() {
  if (pid_ <= 0) return "was not started";
  if (!reaped_) {
    pid_t r = waitpid(pid_, &wait_status_, WNOHANG);
    if (r == pid_) reaped_ = true;
  }
  if (!reaped_) return "is running";
  if (WIFEXITED(wait_status_))
    return "exited with status " + std::to_string(WEXITSTATUS(wait_status_));
  if (WIFSIGNALED(wait_status_))
    return "was killed by signal " + std::to_string(WTERMSIG(wait_status_));
  return "ended";
}

Status PythonWorker::WriteAll(const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd_, data, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      return Status::IOError("Python worker '" + command_ + "': write failed (" + strerror(errno) +
                             "); the worker " + ExitDescription());
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return Status::OK();
}

Status PythonWorker::ReadAll(char* data, size_t n) {
  while (n > 0) {
    ssize_t r = recv(fd_, data, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      // The worker closed the socket: give it a moment to be reaped, for the message.
      for (int i = 0; i < 20 && ExitDescription() == "is running"; ++i) usleep(10000);
      return Status::IOError("Python worker '" + command_ + "': the connection ended (" +
                             (r < 0 ? std::string(strerror(errno)) : "end of stream") +
                             "); the worker " + ExitDescription());
    }
    data += r;
    n -= static_cast<size_t>(r);
  }
  return Status::OK();
}

Status PythonWorker::WriteInt(int32_t value) {
  uint32_t v = static_cast<uint32_t>(value);
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
  return WriteAll(b, 4);
}

Status PythonWorker::WriteLong(int64_t value) {
  uint64_t v = static_cast<uint64_t>(value);
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (56 - 8 * i));
  return WriteAll(b, 8);
}

Status PythonWorker::WriteString(const std::string& utf8) {
  if (utf8.size() > 0x7fffffff)
    return Status::InvalidArgument("Python worker: a string over 2 GiB");
  SLUICE_RETURN_NOT_OK(WriteInt(static_cast<int32_t>(utf8.size())));
  return WriteAll(utf8.data(), utf8.size());
}

Result<int32_t> PythonWorker::ReadInt() {
  unsigned char b[4];
  SLUICE_RETURN_NOT_OK(ReadAll(reinterpret_cast<char*>(b), 4));
  return static_cast<int32_t>(static_cast<uint32_t>(b[0]) << 24 |
                              static_cast<uint32_t>(b[1]) << 16 | static_cast<uint32_t>(b[2]) << 8 |
                              static_cast<uint32_t>(b[3]));
}

Status PythonWorker::ReadReply() {
  SLUICE_ASSIGN_OR_RETURN(int32_t code, ReadInt());
  if (code == 0) return Status::OK();
  if (code != kPythonExceptionThrown) {
    return Status::IOError("Python worker '" + command_ + "': unexpected reply " +
                           std::to_string(code));
  }
  SLUICE_ASSIGN_OR_RETURN(int32_t n, ReadInt());
  if (n < 0 || n > (64 << 20)) {
    return Status::IOError("Python worker '" + command_ + "': a traceback of " + std::to_string(n) +
                           " bytes");
  }
  std::string traceback(static_cast<size_t>(n), '\0');
  SLUICE_RETURN_NOT_OK(ReadAll(traceback.data(), traceback.size()));
  while (!traceback.empty() && traceback.back() == '\n') traceback.pop_back();
  return Status::Internal(traceback);
}

}  // namespace sluice::connect
