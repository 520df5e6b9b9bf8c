"""The README's Python example, extracted from README.md and run as written
against a real graphsieve-server, so the README cannot drift from the code.

The example is the shell block that follows the marker line
`<!-- readme_snippet_test -->` in README.md:

    /usr/bin/python3 -m venv --system-site-packages .venv
    .venv/bin/pip install ./client/python
    .venv/bin/python - <<'EOF'
    <python program>
    EOF

The test runs the commands unchanged in a fresh temporary directory that
links `client` to this checkout's (so `.venv` is made there, not in the
checkout), with no PYTHONPATH and no package index (PIP_NO_INDEX: anything
pip would download fails the test), then the program with that venv's python.
The one change a test cannot avoid: the server address the README names (the
demo's 127.0.0.1:50151) becomes this test's server on a free loopback port.
What the program prints is compared with what the same calls answer here.
"""
import ast
import os
import re
import subprocess
import tempfile
import unittest

import pandas as pd

from graphsieve_client import IngestionFilter, SamplingRateClient
from live_server import LiveServer

SOURCE_DIR = os.environ.get("GRAPHSIEVE_SOURCE_DIR", "")
MARKER = "<!-- readme_snippet_test -->"
README_TARGET = "127.0.0.1:50151"
BLOCK = re.compile(r"```sh\n(.*?)^(\S+) - <<'EOF'\n(.*?)\nEOF\n```", re.S | re.M)
SETUP = ["/usr/bin/python3 -m venv --system-site-packages .venv",
         ".venv/bin/pip install ./client/python"]


def readme_example():
    """(setup command lines, interpreter, program) of the marked README block."""
    with open(os.path.join(SOURCE_DIR, "README.md")) as f:
        text = f.read()
    if text.count(MARKER) != 1:
        raise AssertionError(f"README.md has {text.count(MARKER)} '{MARKER}' lines, expected 1")
    match = BLOCK.match(text, text.index(MARKER) + len(MARKER) + 1)
    if match is None:
        raise AssertionError(f"README.md: the block after '{MARKER}' is not "
                             "```sh <commands> <python> - <<'EOF' ... EOF```")
    return match.group(1).splitlines(), match.group(2), match.group(3) + "\n"


def offline_env():
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    return env


def printed_lists(line):
    """The Python lists print() wrote on one line, e.g. "[1, 2] ['a']"."""
    return [ast.literal_eval(x) for x in re.findall(r"\[[^\]]*\]", line)]


def literal_call_args(program, name):
    """(args, kwargs) of the first call of .name(...) in program, as literals."""
    call = next(n for n in ast.walk(ast.parse(program)) if isinstance(n, ast.Call)
                and getattr(n.func, "attr", "") == name)
    return ([ast.literal_eval(a) for a in call.args],
            {k.arg: ast.literal_eval(k.value) for k in call.keywords})


class ReadmeSnippetTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        if not os.path.isfile(os.path.join(SOURCE_DIR, "README.md")):
            raise RuntimeError(f"GRAPHSIEVE_SOURCE_DIR={SOURCE_DIR!r} has no README.md")
        cls.tmp = tempfile.TemporaryDirectory(prefix="graphsieve-readme-")
        os.symlink(os.path.join(SOURCE_DIR, "client"), os.path.join(cls.tmp.name, "client"))
        cls.server = LiveServer().start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.tmp.cleanup()

    def test_the_setup_is_debians_python_a_venv_and_pip(self):
        setup, interpreter, _ = readme_example()
        # /usr/bin/python3: Debian's, whose site-packages hold python3-grpcio; a
        # `python3` first on PATH may be another interpreter (pyenv) without them.
        self.assertEqual(setup, SETUP)
        self.assertEqual(interpreter, ".venv/bin/python")

    def test_the_demo_installs_the_package_the_same_way(self):
        with open(os.path.join(SOURCE_DIR, "scripts", "demo.sh")) as f:
            demo = f.read()
        self.assertRegex(demo, r'(?m)^VENV=\$\{VENV:-\.venv\}$')
        for line in SETUP:
            self.assertIn(line.replace(".venv", '"$VENV"'), demo)
        self.assertIn('"$VENV"/bin/python -', demo)

    def test_the_example_runs_as_written_and_prints_the_servers_answers(self):
        setup, interpreter, program = readme_example()
        for line in setup:
            r = subprocess.run(["bash", "-c", line], capture_output=True, text=True,
                               cwd=self.tmp.name, env=offline_env(), timeout=300)
            self.assertEqual(r.returncode, 0, f"{line}:\n{r.stdout}{r.stderr}")
        self.assertEqual(program.count(README_TARGET), 1, "the README names the demo's server once")
        program = program.replace(README_TARGET, self.server.target)
        r = subprocess.run([os.path.join(self.tmp.name, interpreter), "-"], input=program,
                           capture_output=True, text=True, cwd=self.tmp.name, env=offline_env(),
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        rates, sources, versions = printed_lists(lines[0])
        keep, offsets = printed_lists(lines[1])
        # What it printed is what the server answers for the README's own calls,
        # made here through the same package.
        frame_args, _ = literal_call_args(program, "DataFrame")
        with SamplingRateClient(self.server.target) as client:
            batch = client.get_rates(*literal_call_args(program, "get_rates")[0])
            args, kwargs = literal_call_args(program, "decide")
            d = IngestionFilter(client).decide(*args, **kwargs)
            rows = IngestionFilter(client).decide_frame(pd.DataFrame(*frame_args))
            version = client.status().active.version
        self.assertEqual(rates, batch.rates)
        self.assertEqual(sources, batch.sources)
        self.assertEqual(versions, [version])
        self.assertEqual(keep, d.keep)
        self.assertEqual(offsets, d.log_odds_offsets)
        self.assertIn("DEFAULT", sources)  # the README's unknown user
        self.assertTrue(keep[0])           # a positive is always kept
        # Then the kept rows of the DataFrame, with their offsets (the columns
        # the README selects).
        shown = re.search(r"^print\(train\[(\[.*?\])\]\)$", program, re.M)
        self.assertIsNotNone(shown, "the README prints train[[columns]]")
        columns = ast.literal_eval(shown.group(1))
        self.assertIn("log_odds_offset", columns)
        self.assertEqual(lines[2:], str(rows[rows.keep][columns]).splitlines())


if __name__ == "__main__":
    unittest.main()
