"""The Python client over a partitioned deployment (docs/CLIENTS.md
"Partitioned deployments"): graphsieve-build --partitions 2, two real
graphsieve-server --partition I processes, SamplingRateClient("A,B") routes by
graphsieve_client.partition_of_user and answers every pair exactly as one
server over the same log built unpartitioned; the IngestionFilter's decisions
too. A wrong Python hash would send users to the wrong part, which the server
refuses (FAILED_PRECONDITION), so agreement also checks the hash against
core/io/partition.h. A swap of one part ahead of the other (pin_version on
part 0 only: the hook that holds the skew, no timers) is answered from the
older version without an error, as in tests/client/partitioned_test.cc.
"""
import csv
import os
import unittest

import grpc

from graphsieve_client import IngestionFilter, SamplingRateClient, partition_of_user
from live_server import BUILD, LiveServer, run


class PartitionedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.single = LiveServer(build_flags=("--alpha=0.25",)).start()
        cls.part0 = LiveServer(build_flags=("--alpha=0.25", "--partitions=2"),
                               server_flags=["--partition=0"]).start()
        cls.part1 = LiveServer(server_flags=["--partition=1"], serve_root_of=cls.part0).start()
        with open(cls.single.log, newline="") as f:
            rows = list(csv.DictReader(f))
        cls.users = [int(r["user_id"]) for r in rows] + [10**12 + k for k in range(50)]
        cls.items = [int(r["item_id"]) for r in rows] + [int(rows[k]["item_id"]) for k in range(50)]
        cls.labels = [int(r["label"]) for r in rows] + [0] * 50

    @classmethod
    def tearDownClass(cls):
        cls.part1.stop()
        cls.part0.stop()
        cls.single.stop()

    def test_hash_splits_users_over_both_parts(self):
        parts = [partition_of_user(u, 2) for u in set(self.users)]
        self.assertGreater(parts.count(0), len(parts) // 4)
        self.assertGreater(parts.count(1), len(parts) // 4)
        self.assertEqual(partition_of_user(12345, 1), 0)
        with self.assertRaises(ValueError):
            partition_of_user(1, 0)

    def test_routed_rates_equal_the_single_server(self):
        with SamplingRateClient(self.single.target, max_batch_pairs=700) as single, \
                SamplingRateClient(f"{self.part0.target},{self.part1.target}",
                                   max_batch_pairs=700) as routed:
            self.assertEqual(routed.partitions, 2)
            a = single.get_rates(self.users, self.items)
            b = routed.get_rates(self.users, self.items)
        self.assertEqual(len(b), len(self.users))
        self.assertEqual(a.rates, b.rates)
        self.assertEqual(a.sources, b.sources)
        self.assertEqual(len(b.snapshot_versions), 1)
        self.assertEqual(set(b.sources), {"EXACT", "DEFAULT"})

    def test_routed_filter_decisions_equal_the_single_server(self):
        keys = list(range(len(self.users)))
        with SamplingRateClient(self.single.target) as single, \
                SamplingRateClient(f"{self.part0.target},{self.part1.target}") as routed:
            a = IngestionFilter(single).decide(self.users, self.items, self.labels, keys)
            b = IngestionFilter(routed).decide(self.users, self.items, self.labels, keys)
        self.assertEqual(a.keep, b.keep)
        self.assertEqual(a.log_odds_offsets, b.log_odds_offsets)

    def test_a_part_that_swapped_first_is_asked_for_the_older_version(self):
        routed_target = f"{self.part0.target},{self.part1.target}"
        # PinVersion is accepted on each server's operator listener (unix socket).
        operators = ",".join(f"unix:/tmp/graphsieve-operator-{s.port}.sock"
                             for s in (self.part0, self.part1))
        with SamplingRateClient(routed_target) as routed, \
                SamplingRateClient(operators) as both, \
                SamplingRateClient(operators.split(",")[0]) as first:
            before = routed.get_rates(self.users, self.items)
            v1 = before.snapshot_versions[0]
            r = run([BUILD, "--input=" + self.part0.log, "--snapshot_root=" + self.part0.root,
                     "--alpha=0.35", "--partitions=2", "--quiet"])
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(self.part0.root, "CURRENT")) as f:
                v2 = f.read().strip()
            self.assertNotEqual(v1, v2)
            try:
                self.assertEqual(first.pin_version(v2).active_version, v2)
                self.assertEqual(routed.status(0).held_version, v1)
                held = routed.get_rates(self.users, self.items)
                self.assertEqual(held.snapshot_versions, [v1])
                self.assertEqual(held.version_reasks, 1)
                self.assertEqual(held.version_retries, 0)
                self.assertEqual(held.rates, before.rates)
                self.assertEqual(both.pin_version(v2).active_version, v2)
                after = routed.get_rates(self.users, self.items)
                self.assertEqual(after.snapshot_versions, [v2])
                self.assertEqual(after.version_reasks, 0)
                self.assertNotEqual(after.rates, before.rates)
            finally:
                both.pin_version(v1)
            # The data port refuses the operator action.
            with self.assertRaises(grpc.RpcError) as caught:
                routed.pin_version(v1)
            self.assertEqual(caught.exception.code(), grpc.StatusCode.PERMISSION_DENIED)

    def test_a_part_refuses_a_user_of_the_other_part(self):
        foreign = next(u for u in range(1, 1000) if partition_of_user(u, 2) == 1)
        with SamplingRateClient(self.part0.target) as direct:
            with self.assertRaises(grpc.RpcError) as caught:
                direct.get_rates([foreign], [1])
        self.assertEqual(caught.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("belongs to partition 1 of 2", caught.exception.details())


if __name__ == "__main__":
    unittest.main()
