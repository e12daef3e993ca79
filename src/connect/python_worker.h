// PythonWorker: a Python process the Spark Connect server runs for the client's Python code
// (foreachBatch functions, streaming listeners), speaking PySpark's worker framing over a Unix
// socket, as Spark's driver runs `pyspark.sql.connect.streaming.worker.*` (docs/pyspark.md,
// "foreachBatch").
//
// Start() makes a private directory (mode 0700) with a listening Unix socket, runs `argv` with
// the server's environment plus `env` and PYTHON_WORKER_FACTORY_SOCK_PATH (PySpark's worker
// connects to that path, without a secret: only this user can open the directory), waits for the
// connection and reads the worker's pid (a 4-byte int), as PySpark's get_sock_file_to_executor
// sends it. The child's stdout goes to the server's stderr (the user's print() calls land in the
// server's log, as in Spark's driver log); it is killed if the server dies (PR_SET_PDEATHSIG).
//
// Framing (PySpark's serializers): ints are 4 bytes and longs 8, big-endian; a string is its
// UTF-8 length as an int, then the bytes. A reply is an int: 0 for success, or -2
// (SpecialLengths.PYTHON_EXCEPTION_THROWN) followed by the Python traceback as a string;
// ReadReply returns that traceback as an error (the worker exits after sending it).
//
// Errors: a program that cannot be run, or that exits or does not connect within the timeout,
// is an error naming the command line; a worker that dies mid-call is an IOError naming its exit
// status.
//
// Thread safety: one thread does the calls (Write*/Read*); Kill() may be called from any other
// thread at any time, and makes a blocked read return an error. The destructor kills the process
// and reaps it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::connect {

struct PythonWorkerOptions {
  std::vector<std::string> argv;           // argv[0] is looked up in PATH
  std::map<std::string, std::string> env;  // set in the child, over the server's environment
  std::chrono::milliseconds connect_timeout{60000};
};

class PythonWorker {
 public:
  static Result<std::unique_ptr<PythonWorker>> Start(const PythonWorkerOptions& options);
  ~PythonWorker();
  PythonWorker(const PythonWorker&) = delete;
  PythonWorker& operator=(const PythonWorker&) = delete;

  Status WriteInt(int32_t value);
  Status WriteLong(int64_t value);
  Status WriteString(const std::string& utf8);
  // The int length, then the bytes (PySpark's write_with_length).
  Status WriteBytes(const std::string& bytes) { return WriteString(bytes); }
  Result<int32_t> ReadInt();
  // 0: OK. -2: the traceback that follows, as an Internal error whose message is the traceback
  // (its last line is the exception: "ValueError: ..."). Anything else: an IOError.
  Status ReadReply();

  // SIGKILL; a blocked read returns an error. Idempotent.
  void Kill();
  pid_t pid() const { return pid_; }
  // The command line, for messages.
  const std::string& command() const { return command_; }

 private:
  PythonWorker() = default;
  Status WriteAll(const char* data, size_t n);
  Status ReadAll(char* data, size_t n);
  // "exited with status N" / "was killed by signal N" once it ended, else "is running".
  std::string ExitDescription();

  pid_t pid_ = -1;
  int fd_ = -1;
  std::string dir_;
  std::string command_;
  bool reaped_ = false;
  int wait_status_ = 0;
};

}  // namespace sluice::connect
