"""`sluice sql`'s interactive shell on a real terminal (a pty): Ctrl-C drops the line being
typed and keeps the shell; Ctrl-C during a long query cancels it and the shell goes on; the
history is kept across sessions in $SLUICE_HISTORY; .tables, .schema and .views; Tab completes a table.

    python3 check_sql_shell.py <sluice binary>

Every wait is bounded (TIMEOUT_S); a missing answer fails with what the terminal showed."""

import os
import pty
import select
import sys
import tempfile
import time

TIMEOUT_S = 60
# libedit may set the terminal up after it printed the first prompt (and flush what was typed
# before); a person does not type within milliseconds of the prompt, the test waits as long.
SETTLE_S = 0.5
FILES = 150  # one batch each: a REFRESH of several seconds, long enough to interrupt


def wait_for(path, what):
    deadline = time.monotonic() + TIMEOUT_S
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: {path} did not appear within {TIMEOUT_S} s")
        time.sleep(0.02)


class Shell:
    def __init__(self, binary, warehouse, history):
        env = dict(os.environ, SLUICE_HISTORY=history, TERM="dumb")
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(binary, [binary, "sql", "--warehouse", warehouse], env)
        self.seen = b""

    def send(self, text):
        os.write(self.fd, text.encode() if isinstance(text, str) else text)

    def expect(self, needle, what):
        """Waits until `needle` appears after what earlier expects consumed."""
        deadline = time.monotonic() + TIMEOUT_S
        while needle.encode() not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{what}: no {needle!r} within {TIMEOUT_S} s; the terminal "
                                     f"showed:\n{self.seen.decode(errors='replace')}")
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"{what}: the shell ended before {needle!r}; it showed:"
                                         f"\n{self.seen.decode(errors='replace')}")
                self.seen += chunk
        self.seen = self.seen[self.seen.index(needle.encode()) + len(needle):]

    def finish(self):
        self.send(".quit\r")
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            try:
                os.read(self.fd, 65536)
            except OSError:
                pass
            time.sleep(0.05)
        os.kill(self.pid, 9)
        raise AssertionError("the shell did not exit after .quit")


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="sluice-shell-") as tmp:
        warehouse, history = os.path.join(tmp, "wh"), os.path.join(tmp, "history")
        sh = Shell(binary, warehouse, history)
        sh.expect("sluice> ", "the first prompt")
        time.sleep(SETTLE_S)
        # Ctrl-C while typing: the line is dropped, the shell stays.
        sh.send("SELECT 'never run'")
        sh.expect("SELECT 'never run'", "the echo of the line being typed")  # read by the shell
        sh.send(b"\x03")
        sh.expect("^C", "Ctrl-C at the prompt")
        sh.expect("sluice> ", "the prompt after Ctrl-C")
        sh.send("SELECT 40 + 2 AS answer;\r")
        sh.expect("42", "a query after Ctrl-C at the prompt")
        assert b"never run" not in sh.seen, "the dropped line ran"
        # Ctrl-C during a long query: cancelled, the shell stays and runs the next statement.
        sh.send("SELECT count(*) FROM range(100000000000) a;\r")
        # The echo of the line's end: the shell has read it (a Ctrl-C before that would drop the
        # line at the prompt, on a loaded machine), then a second for the query to start.
        sh.expect("range(100000000000) a;\r\n", "the echo of the long query")
        time.sleep(1.0)
        sh.send(b"\x03")
        sh.expect("Error: interrupted: the statement was cancelled", "Ctrl-C during a query")
        sh.expect("sluice> ", "the prompt after a cancelled query")
        sh.send("CREATE TABLE shipments (id BIGINT, amount DOUBLE);\r")
        sh.expect("sluice> ", "CREATE TABLE")
        sh.send(".tables\r")
        sh.expect("shipments", ".tables")
        sh.send(".schema shipments\r")
        sh.expect("amount", ".schema shipments")
        # .views: the session's temporary views, not the view a statement made for a table.
        sh.send("CREATE TEMP VIEW big_shipments AS SELECT * FROM shipments WHERE amount > 10;\r")
        sh.expect("sluice> ", "CREATE TEMP VIEW")
        sh.send(".views\r")
        sh.expect("big_shipments", ".views")
        sh.expect("(1 row)", ".views lists one view")
        # Tab completes the table's name from its first letters.
        sh.send("SELECT id FROM shi\t")
        sh.expect("shipments", "Tab completion of a table")
        sh.send(";\r")
        sh.expect("sluice> ", "the completed query")
        # Ctrl-C during a REFRESH: it stops at a batch boundary; the next REFRESH goes on from
        # there and every row is in the table once.
        files = os.path.join(tmp, "in")
        os.mkdir(files)
        for i in range(FILES):
            with open(os.path.join(files, f"f{i:04d}.json"), "w", encoding="utf-8") as f:
                f.write(f'{{"v": {i}}}\n')
        sh.send(f"CREATE STREAMING TABLE slow AS SELECT v FROM STREAM read_files('{files}', "
                "format => 'json', schema => 'v INT', maxFilesPerTrigger => 1);\r")
        sh.expect("sluice> ", "CREATE STREAMING TABLE")
        sh.send("REFRESH STREAMING TABLE slow;\r")
        wait_for(os.path.join(warehouse, "slow", "_delta_log", f"{1:020d}.json"),
                 "the REFRESH's second commit")
        sh.send(b"\x03")
        sh.expect("interrupted: stopped at a batch boundary before batch ", "Ctrl-C in a REFRESH")
        sh.expect("sluice> ", "the prompt after an interrupted REFRESH")
        sh.send("REFRESH STREAMING TABLE slow;\r")
        sh.expect("sluice> ", "the second REFRESH")
        sh.send("SELECT count(*) || ' rows, ' || count(DISTINCT v) || ' distinct' AS n FROM slow;\r")
        sh.expect(f"{FILES} rows, {FILES} distinct", "every row once after the interrupted REFRESH")
        code = sh.finish()
        assert code == 0, f"the shell exited with {code}"
        # The history survives the session.
        with open(history, encoding="utf-8", errors="replace") as f:
            text = f.read().replace("\\040", " ")  # libedit's file encodes blanks as \040
        assert "40 + 2" in text, f"the history lacks the query: {text!r}"
        sh = Shell(binary, warehouse, history)
        sh.expect("sluice> ", "the prompt of a second session")
        time.sleep(SETTLE_S)
        sh.send(b"\x1b[A\x1b[A")  # Up twice: before .quit, the last query of the earlier session
        sh.expect("distinct' AS n FROM slow", "history across sessions")
        sh.send(b"\x03")
        sh.expect("sluice> ", "the prompt of the second session after Ctrl-C")
        code = sh.finish()
        assert code == 0, f"the second shell exited with {code}"
    print("sql shell: Ctrl-C, cancel, history, .tables, .schema, .views, Tab: ok")


if __name__ == "__main__":
    main()
