"""The one-way rule of docs/DESIGN.md §1.1, read from the #include lines.

Programs (builder, server, client, eval, gen) -> core/ -> Debian libraries:
  - core/ includes no program's header, and no gRPC or proto type;
  - a program includes no other program's header;
  - the proto room (the API contract) includes nothing of the code;
  - the arrows between rooms of core/ that FORBIDDEN lists never exist, among
    them: core/snapshot includes nothing of core/maec (the snapshot stores the
    records of core/records without knowing the method); core/serving
    includes nothing of core/maec (it scores through core/model); core/offline
    includes nothing of core/serving; core/model sits above core/maec and
    below core/snapshot, core/serving and core/offline;
  - core/records includes no other room of the code;
  - the rooms of core/ include each other without a circle.
Usage: python3 include_rules_test.py [SOURCE_DIR]  (default: the checkout
this file is in). Also run by CTest (tests/layout/CMakeLists.txt).
"""
import os
import re
import sys
import tempfile
import unittest

PROGRAMS = ("builder", "server", "client", "eval", "gen")
TOOLS = ("bench", "fuzz", "tests")  # may include anything; nothing includes them but tests
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = (".h", ".cc", ".proto")
# (from room, to room, why): arrows between core rooms that must not exist.
FORBIDDEN = (
    ("core/snapshot", "core/maec", "core/snapshot knows nothing of core/maec"),
    ("core/snapshot", "core/model", "core/snapshot stores records without the model"),
    ("core/serving", "core/maec", "core/serving scores through core/model, not core/maec"),
    ("core/offline", "core/serving", "core/offline builds without the request path"),
    ("core/maec", "core/model", "core/model sits above core/maec"),
    ("core/model", "core/serving", "core/model sits below core/serving"),
    ("core/model", "core/offline", "core/model sits below core/offline"),
    ("core/model", "core/snapshot", "core/model reads records, not snapshots"),
)


def source_files(root, top):
    """Yields paths (relative to root, '/'-separated) of the C++ files under root/top."""
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def includes(root, path):
    """(line number, included path) of every quoted #include of root/path."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1)


def room_of(path):
    """core/<room> for core files, else the top folder."""
    parts = path.split("/")
    if parts[0] == "core" and len(parts) > 2:
        return "core/" + parts[1]
    return parts[0]


def violations(root):
    """Every include that breaks a rule, as 'file:line: includes "x" (rule)'."""
    found = []

    def bad(path, number, target, rule):
        found.append('%s:%d: includes "%s" (%s)' % (path, number, target, rule))

    core_graph = {}
    for top in ("core",) + PROGRAMS + ("proto",):
        for path in source_files(root, top):
            room = room_of(path)
            for number, target in includes(root, path):
                head = target.split("/")[0]
                if top == "core":
                    if head in PROGRAMS + TOOLS:
                        bad(path, number, target, "core/ includes no program")
                    if head in ("proto", "grpcpp", "grpc") or target.startswith("graphsieve/v1/"):
                        bad(path, number, target, "core/ has no gRPC or proto types")
                    for source, forbidden, rule in FORBIDDEN:
                        if room == source and head == "core" and room_of(target) == forbidden:
                            bad(path, number, target, rule)
                    if room == "core/records" and head == "core" and room_of(target) != room:
                        bad(path, number, target, "core/records includes no other room")
                    if head == "core" and room_of(target) != room:
                        core_graph.setdefault(room, {}).setdefault(room_of(target), path)
                elif top == "proto":
                    if head in ("core",) + PROGRAMS + TOOLS:
                        bad(path, number, target, "the proto room includes nothing of the code")
                elif head in PROGRAMS + TOOLS and head != top:
                    bad(path, number, target, "a program includes only its own room and core/")
    for cycle in cycles(core_graph):
        found.append("core rooms include each other in a circle: " + " -> ".join(cycle))
    return found


def cycles(graph):
    """One circle per strongly connected part of `graph` (room -> {room: example file})."""
    state, stack, out = {}, [], []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == "open":
                out.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return out


def default_root():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


SOURCE_DIR = default_root()


class IncludeRulesTest(unittest.TestCase):
    def test_the_tree_keeps_the_one_way_rule(self):
        self.assertTrue(os.path.isdir(os.path.join(SOURCE_DIR, "core")), SOURCE_DIR)
        found = violations(SOURCE_DIR)
        self.assertEqual(found, [], "\n" + "\n".join(found))


class CheckerTest(unittest.TestCase):
    """The checker itself finds each kind of violation in a made-up tree."""

    def tree(self, files):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        for path, text in files.items():
            full = os.path.join(d.name, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        return d.name

    def test_a_clean_tree_passes(self):
        root = self.tree({
            "core/records/r.h": '#include <vector>\n',
            "core/maec/m.h": '#include "core/records/r.h"\n',
            "core/model/u.h": '#include "core/maec/m.h"\n#include "core/records/r.h"\n',
            "core/snapshot/s.h": '#include "core/records/r.h"\n',
            "core/serving/b.h": '#include "core/model/u.h"\n#include "core/snapshot/s.h"\n',
            "core/offline/j.h": '#include "core/model/u.h"\n#include "core/snapshot/s.h"\n',
            "server/a.cc": '#include "server/a.h"\n#include "core/snapshot/s.h"\n',
            "client/cli/c.cc": '#include "client/b.h"\n',
        })
        self.assertEqual(violations(root), [])

    def test_each_rule_is_checked(self):
        root = self.tree({
            "core/io/x.h": '#include "server/s.h"\n#include "graphsieve/v1/sampling.pb.h"\n',
            "core/io/y.h": '#include "core/records/r.h"\n',
            "core/snapshot/s.h": '#include "core/maec/rates.h"\n#include "core/model/unseen.h"\n',
            "core/maec/rates.h": '#include "core/model/unseen.h"\n',
            "core/model/unseen.h": ('#include "core/records/r.h"\n#include "core/serving/b.h"\n'
                                    '#include "core/offline/j.h"\n#include "core/snapshot/f.h"\n'),
            "core/serving/b.h": '#include "core/maec/rates.h"\n',
            "core/offline/j.h": '#include "core/serving/b.h"\n',
            "core/records/r.h": '#include "core/io/x.h"\n',
            "server/a.cc": '#include "client/canary_stats.h"\n',
            "eval/d.cc": '  #  include "builder/build_job.h"\n',
            "proto/graphsieve/v1/m.h": '#include "core/serving/rate_source.h"\n',
        })
        found = "\n".join(violations(root))
        for expected in ('core/io/x.h:1: includes "server/s.h"',
                         'core/io/x.h:2: includes "graphsieve/v1/sampling.pb.h"',
                         'core/snapshot/s.h:1: includes "core/maec/rates.h"',
                         'core/snapshot/s.h:2: includes "core/model/unseen.h"',
                         'core/maec/rates.h:1: includes "core/model/unseen.h" (core/model sits above',
                         'core/model/unseen.h:2: includes "core/serving/b.h"',
                         'core/model/unseen.h:3: includes "core/offline/j.h"',
                         'core/model/unseen.h:4: includes "core/snapshot/f.h"',
                         'core/serving/b.h:1: includes "core/maec/rates.h"',
                         'core/offline/j.h:1: includes "core/serving/b.h"',
                         'core/records/r.h:1: includes "core/io/x.h"',
                         'server/a.cc:1: includes "client/canary_stats.h"',
                         'eval/d.cc:1: includes "builder/build_job.h"',
                         'proto/graphsieve/v1/m.h:1: includes "core/serving/rate_source.h"',
                         "in a circle: core/io -> core/records -> core/io"):
            self.assertIn(expected, found)

if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        SOURCE_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
