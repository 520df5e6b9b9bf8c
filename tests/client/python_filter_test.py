"""IngestionFilter (Python) against a live graphsieve-server and the C++ CLI.

Checks that the Python filter keeps exactly the rows `graphsieve filter` keeps
for the same instance keys (integer and text keys, both modes, several batch
sizes), that its decisions and offsets equal the RPC's own keep and
log_odds_offsets fields bit for bit, and that bad input gets a clear error.
Run by CTest like python_client_test (live_server.py).
"""
import csv
import math
import os
import struct
import unittest

from graphsieve.v1 import sampling_pb2, sampling_pb2_grpc
from graphsieve_client import (IngestionFilter, SamplingRateClient, SnapshotChangedError,
                               hash_string_id, keep_negative, log_odds_offset, parse_id)
from live_server import CLI, LiveServer, run


def float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


class PythonFilterTest(unittest.TestCase):

    def assert_same(self, got, want, what):
        """got == want for long lists, failing with the first difference (unittest's
        own list diff takes minutes on thousands of near-equal floats)."""
        got, want = list(got), list(want)
        if got == want:
            return
        if len(got) != len(want):
            self.fail(f"{what}: {len(got)} entries, expected {len(want)}")
        bad = [i for i in range(len(got)) if got[i] != want[i]]
        i = bad[0]
        self.fail(f"{what}: {len(bad)} of {len(got)} differ; first at {i}: "
                  f"{got[i]!r} != {want[i]!r}")

    @classmethod
    def setUpClass(cls):
        cls.server = LiveServer().start()
        cls.target = cls.server.target
        with open(cls.server.log) as f:
            rows = list(csv.DictReader(f))
        # Impressions with an event column: integer keys on even rows, text keys
        # on odd rows (hashed by both sides), plus pairs the builder never saw.
        cls.impressions = []
        for n, r in enumerate(rows):
            event = str(n * 7919 + 11) if n % 2 == 0 else f"ev-{n}"
            cls.impressions.append((r["user_id"], r["item_id"], r["label"], event))
        cls.impressions += [("alice", rows[0]["item_id"], "0", "ev-alice"),
                            (rows[1]["user_id"], "bob", "1", "ev-bob"),
                            (rows[2]["user_id"], "999999", "0", "18446744073709551615")]
        cls.log = os.path.join(cls.server.dir, "events.csv")
        with open(cls.log, "w", newline="") as f:
            f.write("user_id,item_id,label,event\n")
            f.writelines(",".join(x) + "\n" for x in cls.impressions)
        cls.client = SamplingRateClient(cls.target)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()

    def cli_kept(self):
        """(row, rate) of every row `graphsieve filter` writes for cls.log."""
        kept = os.path.join(self.server.dir, "kept.csv")
        r = run([CLI, "filter", "--server", self.target, "--input", self.log, "--output", kept,
                 "--instance-key-column", "event", "--batch-rows", "500"])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(kept) as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows[0], ["user_id", "item_id", "label", "event", "rate"])
        return [(tuple(row[:4]), float32(float(row[4]))) for row in rows[1:]]

    def test_keeps_exactly_what_graphsieve_filter_keeps(self):
        expected = self.cli_kept()
        labels = [x[2] for x in self.impressions]
        kept_negatives = sum(1 for row, _ in expected if row[2] == "0")
        # Not a degenerate log: every positive kept, some negatives kept, most dropped.
        self.assertEqual(sum(1 for row, _ in expected if row[2] == "1"), labels.count("1"))
        self.assertGreater(kept_negatives, 0)
        self.assertLess(kept_negatives, labels.count("0") // 2)
        for mode in ("server", "local"):
            for batch_rows in (1000, 333):
                with self.subTest(mode=mode, batch_rows=batch_rows):
                    got = list(IngestionFilter(self.client, mode).filter(
                        self.impressions, batch_rows=batch_rows))
                    self.assert_same([(k.impression, k.rate) for k in got], expected,
                                     "kept (row, rate)")
                    for k in got:  # log(rate) in float32
                        self.assertEqual(k.log_odds_offset, log_odds_offset(k.rate))
                        self.assertLess(abs(k.log_odds_offset - math.log(k.rate)), 1e-6)

    def test_decisions_equal_the_rpc_fields_bit_for_bit(self):
        users = [parse_id(x[0]) for x in self.impressions]
        items = [parse_id(x[1]) for x in self.impressions]
        labels = [x[2] == "1" for x in self.impressions]
        keys = [parse_id(x[3]) for x in self.impressions]
        self.assertEqual(keys[1], hash_string_id("ev-1"))
        request = sampling_pb2.GetSamplingRateRequest(user_ids=users, item_ids=items,
                                                      labels=labels, instance_keys=keys)
        stub = sampling_pb2_grpc.SamplingRateServiceStub(self.client._channel)
        response = stub.GetSamplingRate(request, timeout=10)
        seed = self.client.status().active.seed
        self.assertIn(sampling_pb2.RATE_SOURCE_DEFAULT, response.sources)  # unknown nodes too
        for mode in ("server", "local"):
            with self.subTest(mode=mode):
                # Text keys and "1"/"0" labels, as a pipeline reads them from a file.
                d = IngestionFilter(self.client, mode).decide(
                    [x[0] for x in self.impressions], [x[1] for x in self.impressions],
                    [x[2] for x in self.impressions], [x[3] for x in self.impressions])
                self.assert_same(d.keep, response.keep, "keep")
                self.assert_same(d.log_odds_offsets, response.log_odds_offsets, "offsets")
                self.assert_same(d.rates, response.rates, "rates")
                self.assertEqual(d.snapshot_versions, [response.snapshot_version])
                for i in range(len(d)):
                    self.assertEqual(d.keep[i], labels[i] or keep_negative(keys[i], seed,
                                                                          d.rates[i]), i)
                    self.assertEqual(d.log_odds_offsets[i], log_odds_offset(d.rates[i]), i)

    def test_large_inputs_are_split_and_reassembled_in_order(self):
        columns = [list(c) for c in zip(*self.impressions)]
        whole = IngestionFilter(self.client, "server").decide(*columns)
        with SamplingRateClient(self.target, max_batch_pairs=97) as small:
            for mode in ("server", "local"):
                with self.subTest(mode=mode):
                    split = IngestionFilter(small, mode).decide(*columns)
                    self.assert_same(split.keep, whole.keep, "keep")
                    self.assert_same(split.log_odds_offsets, whole.log_odds_offsets, "offsets")
                    self.assert_same(split.sources, whole.sources, "sources")
        # filter() with fields= on dict rows, one row per batch: same kept rows.
        rows = [dict(zip(("u", "i", "y", "e"), x)) for x in self.impressions[:300]]
        got = list(IngestionFilter(self.client).filter(
            rows, batch_rows=1, fields=lambda r: (r["u"], r["i"], r["y"], r["e"])))
        kept = [rows[i] for i in range(300) if whole.keep[i]]
        self.assert_same([k.impression for k in got], kept, "kept rows")

    def test_errors_are_clear(self):
        f = IngestionFilter(self.client)
        with self.assertRaisesRegex(ValueError, r"label 'yes' at index 1 is not one of"):
            f.decide([1, 2], [3, 4], ["0", "yes"], [5, 6])
        with self.assertRaisesRegex(ValueError, "label 2 at index 0"):
            self.client.get_decisions([1], [3], [2], [5])
        with self.assertRaisesRegex(ValueError,
                                    "2 user_ids, 2 item_ids, 1 labels, 2 instance_keys"):
            f.decide([1, 2], [3, 4], [0], [5, 6])
        with self.assertRaisesRegex(ValueError, "does not fit in uint64"):
            f.decide([1], [3], [0], [2 ** 64])
        with self.assertRaisesRegex(ValueError, "mode must be 'server' or 'local'"):
            IngestionFilter(self.client, "remote")
        with self.assertRaisesRegex(ValueError, "batch_rows must be >= 1"):
            list(f.filter(self.impressions, batch_rows=0))
        # mode="local" refuses a seed for a version the server does not serve.
        with self.assertRaisesRegex(SnapshotChangedError, "now serves"):
            IngestionFilter(self.client, "local")._seed_of("20000101T000000Z-00000000")
        self.assertEqual(len(f.decide([], [], [], [])), 0)


if __name__ == "__main__":
    unittest.main()
