"""Shipped programs carry no test hook: no flag named testing_* in --help /
--helpfull, and no test-only environment variable or metadata key in the
binary (the hooks live in the test-only builds graphsieve-build-testing and
graphsieve-server-testing, docs/DESIGN.md §1.1).

Usage: python3 shipped_binaries_test.py NAME=PATH [NAME=PATH ...]
(tests/layout/CMakeLists.txt passes every shipped program that is built).
"""
import re
import subprocess
import sys
import unittest

PROGRAMS = {}
TEST_FLAG = re.compile(r"--testing[_-]\w*")
# Strings only a test hook would need in a shipped binary.
HOOK_STRINGS = (b"GRAPHSIEVE_TEST_", b"testing_hold", b"graphsieve-testing-hold")


class ShippedBinariesTest(unittest.TestCase):
    def test_programs_were_given(self):
        self.assertTrue(PROGRAMS, "no NAME=PATH arguments")

    def help_texts(self, name, path):
        """(what was run, its output) for every help page of the program: --help
        and --helpfull, or for a program of subcommands each command's --help."""
        top = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(top.returncode, 0, top.stderr)
        text = top.stdout + top.stderr
        yield name + " --help", text
        commands = re.findall(r"^  ([a-z]+) ", text.split("Commands:", 1)[1], re.M) \
            if "Commands:" in text else []
        pages = [[c, "--help"] for c in commands if c not in ("help", "version")]
        for args in pages or [["--helpfull"]]:
            r = subprocess.run([path] + args, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            yield " ".join([name] + args), r.stdout + r.stderr

    def test_help_lists_flags_and_no_testing_flag(self):
        for name, path in sorted(PROGRAMS.items()):
            pages = 0
            for what, text in self.help_texts(name, path):
                # A page with flags lists some: the check reads a real flag list.
                pages += len(re.findall(r"^\s+--\w+", text, re.M)) > 2
                with self.subTest(page=what):
                    self.assertEqual(TEST_FLAG.findall(text), [], what)
            self.assertGreater(pages, 0, name + ": no help page lists flags")

    def test_binary_holds_no_test_hook(self):
        for name, path in sorted(PROGRAMS.items()):
            with self.subTest(program=name):
                with open(path, "rb") as f:
                    data = f.read()
                for s in HOOK_STRINGS:
                    self.assertFalse(s in data, "%s holds %r" % (name, s))


if __name__ == "__main__":
    rest = [sys.argv[0]]
    for arg in sys.argv[1:]:
        if "=" in arg and not arg.startswith("-"):
            name, path = arg.split("=", 1)
            PROGRAMS[name] = path
        else:
            rest.append(arg)
    sys.argv = rest
    unittest.main(verbosity=2)
