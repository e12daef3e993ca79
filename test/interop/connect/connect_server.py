"""Starts and stops `sluice connect` for the Spark Connect interop tests and the Connect bench.

start(warehouse) runs `sluice connect --port PORT --warehouse W` (PORT 0: a free one) with the
worker's Python this interpreter (PYSPARK_PYTHON), waits (bounded) for its "listening on" line
and returns a Server: .proc, .port, .url ("sc://127.0.0.1:PORT") and .stderr (the path of the
file its standard error goes to: the foreachBatch workers' output lands there too). A server
that does not start fails with its standard error.
"""

import os
import select
import signal
import subprocess
import sys
import tempfile

import peers


class Server:
    def __init__(self, proc, port, stderr):
        self.proc, self.port, self.stderr = proc, port, stderr
        self.url = f"sc://127.0.0.1:{port}"

    def stderr_text(self):
        with open(self.stderr, errors="replace") as f:
            return f.read()

    def kill(self):
        """SIGKILL, and wait for it."""
        self.proc.kill()
        self.proc.wait(timeout=30)

    def stop(self, timeout=30):
        """SIGTERM; the server must exit 0 within `timeout` seconds (else it is killed and this
        raises)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"sluice connect did not stop within {timeout} s of SIGTERM")
        if code != 0:
            raise AssertionError(f"sluice connect exited {code}: {self.stderr_text()[-4000:]}")


def start(warehouse, port=0, env=None, startup_timeout=60):
    fd, stderr_path = tempfile.mkstemp(prefix="sluice-connect-", suffix=".stderr")
    full_env = dict(os.environ, PYSPARK_PYTHON=sys.executable, **(env or {}))
    with os.fdopen(fd, "w") as err:
        proc = subprocess.Popen([peers.sluice_bin(), "connect", "--port", str(port),
                                 "--warehouse", warehouse], stdout=subprocess.PIPE, stderr=err,
                                text=True, env=full_env)
    ready, _, _ = select.select([proc.stdout], [], [], startup_timeout)
    line = proc.stdout.readline().strip() if ready else ""
    if "listening on" not in line:
        proc.kill()
        proc.wait(timeout=30)
        with open(stderr_path, errors="replace") as f:
            raise AssertionError(f"sluice connect did not start within {startup_timeout} s: "
                                 f"{line!r} {f.read()[-4000:]}")
    return Server(proc, int(line.rsplit(":", 1)[1]), stderr_path)
