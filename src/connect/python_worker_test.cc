#include "connect/python_worker.h"

#include <stdlib.h>

#include <thread>

#include <gtest/gtest.h>

#include "connect/foreach_batch.h"
#include "sluice/dataframe.h"

namespace sluice::connect {
namespace {

// A worker in Python speaking PySpark's framing: it connects to the socket, sends its pid, then
// answers each request (a command string, then its arguments).
constexpr const char* kFakeWorker = R"PY(
import os, socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(os.environ["PYTHON_WORKER_FACTORY_SOCK_PATH"])
f = s.makefile("rwb")
def write_int(v): f.write(struct.pack("!i", v))
def read_int(): return struct.unpack("!i", f.read(4))[0]
def read_str(): return f.read(read_int()).decode("utf-8")
def fail(text):
    data = text.encode("utf-8")
    write_int(-2); write_int(len(data)); f.write(data); f.flush()
write_int(os.getpid()); f.flush()
while True:
    cmd = read_str()
    if cmd == "echo":
        text, n = read_str(), struct.unpack("!q", f.read(8))[0]
        if text == "h\u00e9llo" and n == -(2**40):
            write_int(0); f.flush()
        else:
            fail("Traceback (most recent call last):\nAssertionError: got %r %r" % (text, n))
    elif cmd == "env":
        ok = (os.environ.get("SLUICE_TEST_VAR") == "yes" and
              "PYTHON_WORKER_FACTORY_SECRET" not in os.environ)
        write_int(0) if ok else fail("AssertionError: environment"); f.flush()
    elif cmd == "raise":
        fail("Traceback (most recent call last):\n  File \"<stdin>\", line 1\nValueError: boom\n")
        sys.exit(0)
    elif cmd == "hang":
        time.sleep(3600)
)PY";

PythonWorkerOptions Fake() {
  PythonWorkerOptions o;
  o.argv = {"python3", "-c", kFakeWorker};
  return o;
}

TEST(PythonWorkerTest, FramesStringsLongsAndReplies) {
  auto w = PythonWorker::Start(Fake());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->WriteString("echo").ok());
  ASSERT_TRUE((*w)->WriteString("h\xc3\xa9llo").ok());
  ASSERT_TRUE((*w)->WriteLong(-(int64_t{1} << 40)).ok());
  Status st = (*w)->ReadReply();
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(PythonWorkerTest, GetsItsEnvironmentWithoutTheServersWorkerSecret) {
  setenv("PYTHON_WORKER_FACTORY_SECRET", "not-for-the-worker", 1);
  PythonWorkerOptions o = Fake();
  o.env["SLUICE_TEST_VAR"] = "yes";
  auto w = PythonWorker::Start(o);
  unsetenv("PYTHON_WORKER_FACTORY_SECRET");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->WriteString("env").ok());
  Status st = (*w)->ReadReply();
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST(PythonWorkerTest, APythonExceptionIsTheTraceback) {
  auto w = PythonWorker::Start(Fake());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->WriteString("raise").ok());
  Status st = (*w)->ReadReply();
  ASSERT_TRUE(st.IsInternal()) << st.ToString();
  EXPECT_EQ(st.message().substr(0, 9), "Traceback");
  EXPECT_EQ(st.message().substr(st.message().size() - 16), "ValueError: boom");
  // It exited after the traceback: the next read says how it ended.
  Result<int32_t> next = (*w)->ReadInt();
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.status().message().find("exited with status 0"), std::string::npos)
      << next.status().ToString();
}

TEST(PythonWorkerTest, KillEndsABlockedRead) {
  auto w = PythonWorker::Start(Fake());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->WriteString("hang").ok());
  PythonWorker* worker = w->get();
  std::thread killer([worker] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    worker->Kill();
  });
  Status st = (*w)->ReadReply();  // blocked until the kill
  killer.join();
  ASSERT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_NE(st.message().find("the connection ended"), std::string::npos) << st.ToString();
}

TEST(PythonWorkerTest, AProgramThatCannotRunOrExitsEarlyIsNamed) {
  PythonWorkerOptions missing;
  missing.argv = {"/nonexistent/python9", "-m", "x"};
  auto a = PythonWorker::Start(missing);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("cannot run '/nonexistent/python9 -m x'"), std::string::npos)
      << a.status().ToString();
  PythonWorkerOptions exits;
  exits.argv = {"python3", "-c", "import sys; sys.exit(3)"};
  auto b = PythonWorker::Start(exits);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("exited with status 3 before connecting back"),
            std::string::npos)
      << b.status().ToString();
}

TEST(ForeachBatchRunnerTest, AWorkerThatCannotStartFailsTheBatchNamingThePython) {
  ForeachBatchOptions o;
  o.config.connect_url = "sc://127.0.0.1:1/";
  o.config.python = "/nonexistent/python9";
  o.cache = std::make_shared<CachedRelations>();
  ForeachBatchRunner runner(o);
  Status st = runner.Run(sluice::DataFrame(), 0);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("PYSPARK_PYTHON"), std::string::npos) << st.ToString();
  runner.Close();
  EXPECT_TRUE(runner.Run(sluice::DataFrame(), 1).IsCancelled());
}

TEST(ForeachBatchRunnerTest, WithoutTheServersAddressForeachBatchIsRefused) {
  ForeachBatchOptions o;
  o.cache = std::make_shared<CachedRelations>();
  ForeachBatchRunner runner(o);
  EXPECT_TRUE(runner.Run(sluice::DataFrame(), 0).IsNotSupported());
}

TEST(CachedRelationsTest, PutGetRemove) {
  CachedRelations c;
  c.Put("a", "SELECT 1");
  EXPECT_EQ(c.Get("a").value_or(""), "SELECT 1");
  c.Remove("a");
  EXPECT_FALSE(c.Get("a").has_value());
}

}  // namespace
}  // namespace sluice::connect
