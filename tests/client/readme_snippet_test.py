"""The README's Python example, extracted from README.md and run as written
against a real graphsieve-server, so the README cannot drift from the code.

The example is the shell block that follows the marker line
`<!-- readme_snippet_test -->` in README.md:

    PYTHONPATH=<dirs> /usr/bin/python3 - <<'EOF'
    <python program>
    EOF

The program runs unchanged in a fresh /usr/bin/python3 from the repository
root, with the README's PYTHONPATH entries, except for two things a test
cannot avoid: the server address the README names (the demo's
127.0.0.1:50151) becomes this test's server on a free loopback port, and this
build's stub directory (GRAPHSIEVE_PYTHON_STUBS, which need not be build/ or
build-ci/) is put in front of the README's entries. That the README's entries
name where scripts/demo.sh and scripts/test.sh build is checked separately.
"""
import ast
import os
import re
import subprocess
import unittest

from graphsieve_client import IngestionFilter, SamplingRateClient
from live_server import LiveServer

SOURCE_DIR = os.environ.get("GRAPHSIEVE_SOURCE_DIR", "")
STUBS = os.environ.get("GRAPHSIEVE_PYTHON_STUBS", "")
MARKER = "<!-- readme_snippet_test -->"
README_TARGET = "127.0.0.1:50151"
BLOCK = re.compile(r"```sh\n(PYTHONPATH=(\S+) (\S+) - <<'EOF'\n(.*?)\nEOF\n)```", re.S)


def readme_example():
    """(pythonpath entries, interpreter, program) of the marked README block."""
    with open(os.path.join(SOURCE_DIR, "README.md")) as f:
        text = f.read()
    if text.count(MARKER) != 1:
        raise AssertionError(f"README.md has {text.count(MARKER)} '{MARKER}' lines, expected 1")
    match = BLOCK.match(text, text.index(MARKER) + len(MARKER) + 1)
    if match is None:
        raise AssertionError(f"README.md: the block after '{MARKER}' is not "
                             "```sh PYTHONPATH=... /usr/bin/python3 - <<'EOF' ... EOF```")
    return match.group(2).split(":"), match.group(3), match.group(4) + "\n"


def script_build_dir(script):
    """The default BUILD_DIR of scripts/<script>."""
    with open(os.path.join(SOURCE_DIR, "scripts", script)) as f:
        match = re.search(r"^BUILD_DIR=\$\{BUILD_DIR:-([^}]+)\}", f.read(), re.M)
    if match is None:
        raise AssertionError(f"scripts/{script}: no BUILD_DIR=${{BUILD_DIR:-...}} line")
    return match.group(1)


def printed_lists(line):
    """The Python lists print() wrote on one line, e.g. "[1, 2] ['a']"."""
    return [ast.literal_eval(x) for x in re.findall(r"\[[^\]]*\]", line)]


class ReadmeSnippetTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        if not os.path.isfile(os.path.join(SOURCE_DIR, "README.md")):
            raise RuntimeError(f"GRAPHSIEVE_SOURCE_DIR={SOURCE_DIR!r} has no README.md")
        if not os.path.isfile(os.path.join(STUBS, "graphsieve", "v1", "sampling_pb2.py")):
            raise RuntimeError(f"GRAPHSIEVE_PYTHON_STUBS={STUBS!r} holds no generated stubs")
        cls.server = LiveServer().start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_pythonpath_names_where_the_two_commands_build(self):
        entries, interpreter, _ = readme_example()
        self.assertEqual(interpreter, "/usr/bin/python3")  # Debian's, with python3-grpcio
        for script in ("demo.sh", "test.sh"):
            self.assertIn(script_build_dir(script) + "/client/python", entries, script)
        self.assertIn("client/python", entries)
        self.assertTrue(os.path.isdir(os.path.join(SOURCE_DIR, "client/python/graphsieve_client")))

    def test_the_example_runs_as_written_and_prints_the_servers_answers(self):
        entries, interpreter, program = readme_example()
        self.assertEqual(program.count(README_TARGET), 1, "the README names the demo's server once")
        program = program.replace(README_TARGET, self.server.target)
        env = dict(os.environ, PYTHONPATH=":".join([STUBS] + entries))
        r = subprocess.run([interpreter, "-"], input=program, capture_output=True, text=True,
                           cwd=SOURCE_DIR, env=env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 2, r.stdout)
        rates, sources, versions = printed_lists(lines[0])
        keep, offsets = printed_lists(lines[1])
        # What it printed is what the server answers for the README's own calls,
        # made here through the same package.
        calls = ast.parse(program)
        get_rates = next(n for n in ast.walk(calls) if isinstance(n, ast.Call)
                         and getattr(n.func, "attr", "") == "get_rates")
        decide = next(n for n in ast.walk(calls) if isinstance(n, ast.Call)
                      and getattr(n.func, "attr", "") == "decide")
        with SamplingRateClient(self.server.target) as client:
            batch = client.get_rates(*[ast.literal_eval(a) for a in get_rates.args])
            d = IngestionFilter(client).decide(
                *[ast.literal_eval(a) for a in decide.args],
                **{k.arg: ast.literal_eval(k.value) for k in decide.keywords})
            version = client.status().active.version
        self.assertEqual(rates, batch.rates)
        self.assertEqual(sources, batch.sources)
        self.assertEqual(versions, [version])
        self.assertEqual(keep, d.keep)
        self.assertEqual(offsets, d.log_odds_offsets)
        self.assertIn("DEFAULT", sources)  # the README's unknown user
        self.assertTrue(keep[0])           # a positive is always kept


if __name__ == "__main__":
    unittest.main()
