"""A real graphsieve-server on a loopback port over a real snapshot, for the
Python tests (python_client_test, python_filter_test, readme_snippet_test).

The binaries come from GRAPHSIEVE_{GEN,BUILD,SERVER,CLI} (set by CTest, see
tests/client/CMakeLists.txt). LiveServer runs graphsieve-gen and
graphsieve-build into a temporary directory, starts graphsieve-server with
--port=0 and returns once the server has printed its port (stdout) and its
first 'serving version' line (stderr). Both pipes are read by threads that
signal those lines; every wait is bounded.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading

GEN = os.environ.get("GRAPHSIEVE_GEN", "")
BUILD = os.environ.get("GRAPHSIEVE_BUILD", "")
SERVER = os.environ.get("GRAPHSIEVE_SERVER", "")
CLI = os.environ.get("GRAPHSIEVE_CLI", "")

# The generated log every Python test uses unless it asks otherwise.
DEFAULT_GEN_FLAGS = ["--preset=tiny", "--users=120", "--items=200", "--instances=6000",
                     "--seed=3", "--positive_rate=0.1"]


def run(args, **kwargs):
    """A binary run to completion (bounded), output captured as text."""
    return subprocess.run(args, capture_output=True, text=True, timeout=120, **kwargs)


def check_binaries():
    for name, path in [("GRAPHSIEVE_GEN", GEN), ("GRAPHSIEVE_BUILD", BUILD),
                       ("GRAPHSIEVE_SERVER", SERVER), ("GRAPHSIEVE_CLI", CLI)]:
        if not os.access(path, os.X_OK):
            raise RuntimeError(f"{name}={path!r} is not an executable")


class _LineWatcher(threading.Thread):
    """Reads one pipe to its end, keeps the text, and sets `found` once a line
    matches `pattern` (match kept in `match`)."""

    def __init__(self, pipe, pattern):
        super().__init__(daemon=True)
        self.pipe, self.pattern = pipe, re.compile(pattern)
        self.lines, self.match = [], None
        self.found = threading.Event()

    def run(self):
        for line in self.pipe:
            self.lines.append(line)
            if self.match is None:
                self.match = self.pattern.search(line)
                if self.match:
                    self.found.set()
        self.found.set()  # end of stream: waiters wake up and see match is None

    def text(self):
        return "".join(self.lines)


class LiveServer:
    """gen -> build -> serve. Use as a context manager or call start()/stop().

    Attributes after start(): dir (temporary), log (the generated CSV), root
    (the snapshot root), port, target ("127.0.0.1:PORT").
    """

    def __init__(self, gen_flags=None, build_flags=("--alpha=0.25",), server_flags=(),
                 serve_root_of=None, input_log=None):
        """server_flags: appended to graphsieve-server's; serve_root_of: another
        started LiveServer whose log and root this one serves (no gen/build);
        input_log: a log to build from instead of a generated one (no gen)."""
        self.gen_flags = list(gen_flags or DEFAULT_GEN_FLAGS)
        self.input_log = input_log
        self.build_flags = list(build_flags)
        self.server_flags = list(server_flags)
        self.serve_root_of = serve_root_of
        self.process = None
        self.dir = None

    def start(self):
        check_binaries()
        if self.serve_root_of is not None:
            self.log, self.root = self.serve_root_of.log, self.serve_root_of.root
        else:
            self.dir = tempfile.mkdtemp(prefix="graphsieve-py-")
            self.log = os.path.join(self.dir, "log.csv")
            self.root = os.path.join(self.dir, "root")
            if self.input_log is not None:
                self.log = self.input_log
            else:
                r = run([GEN, *self.gen_flags, "--output=" + self.log, "--quiet"])
                if r.returncode != 0:
                    raise RuntimeError("graphsieve-gen failed: " + r.stderr)
            r = run([BUILD, "--input=" + self.log, "--snapshot_root=" + self.root,
                     *self.build_flags, "--quiet"])
            if r.returncode != 0:
                raise RuntimeError("graphsieve-build failed: " + r.stderr)
        self.process = subprocess.Popen(
            [SERVER, "--snapshot_root=" + self.root, "--host=127.0.0.1", "--port=0",
             "--admin_port=-1", "--poll_interval_seconds=0", "--drain_grace_seconds=1",
             *self.server_flags],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._out = _LineWatcher(self.process.stdout, r"listening port=(\d+)")
        self._err = _LineWatcher(self.process.stderr, r"serving version ")
        self._out.start()
        self._err.start()
        # The port is printed before the first version has loaded: wait for both.
        for watcher, what in [(self._out, "its port"), (self._err, "'serving version'")]:
            if not watcher.found.wait(timeout=30) or watcher.match is None:
                self.stop()
                raise RuntimeError(f"graphsieve-server did not print {what} within 30 s:\n"
                                   f"{self._out.text()}{self._err.text()}")
        self.port = int(self._out.match.group(1))
        self.target = f"127.0.0.1:{self.port}"
        return self

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
