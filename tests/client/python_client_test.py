"""The Python client against a live graphsieve-server (real gen, build, server).

Run by CTest with PYTHONPATH set to client/python (the package's source), and
GRAPHSIEVE_{GEN,BUILD,SERVER,CLI} naming the binaries (live_server.py). Every
wait is bounded.
"""
import csv
import io
import json
import unittest

import grpc

import graphsieve_client
from graphsieve.v1 import sampling_pb2, sampling_pb2_grpc
from graphsieve_client import SamplingRateClient, hash_string_id, keep_negative, parse_id
from live_server import CLI, LiveServer, run


class PythonClientTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.server = LiveServer().start()
        cls.target = cls.server.target
        with open(cls.server.log) as f:
            cls.rows = list(csv.DictReader(f))

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def cli_rates(self, pairs):
        text = "user_id,item_id\n" + "".join(f"{u},{i}\n" for u, i in pairs)
        r = run([CLI, "rates", "--server", self.target], input=text)
        self.assertEqual(r.returncode, 0, r.stderr)
        return list(csv.DictReader(io.StringIO(r.stdout)))

    def test_rates_equal_the_cpp_cli_including_string_ids(self):
        pairs = [(row["user_id"], row["item_id"]) for row in self.rows[:200:7]]
        pairs += [("alice", self.rows[0]["item_id"]), (self.rows[1]["user_id"], "bob")]
        cpp = self.cli_rates(pairs)
        with SamplingRateClient(self.target, max_batch_pairs=9) as client:  # forces splitting
            batch = client.get_rates([u for u, _ in pairs], [i for _, i in pairs])
        self.assertEqual(len(batch), len(pairs))
        self.assertEqual(len(batch.snapshot_versions), 1)
        for k, row in enumerate(cpp):
            # The CLI prints the shortest text of the float; read back it is the same float.
            self.assertAlmostEqual(batch.rates[k], float(row["rate"]), places=6)
            self.assertEqual(batch.sources[k], row["source"])
        self.assertTrue(all(0.0 < r <= 1.0 for r in batch.rates))
        self.assertIn("EXACT", batch.sources)
        self.assertEqual(batch.sources[-2], "DEFAULT")  # "alice" is no user of the log
        # Text ids go through XXH3-64 like the C++ side: hashing first changes nothing.
        with SamplingRateClient(self.target) as client:
            hashed = client.get_rates([hash_string_id("alice")], [parse_id(pairs[-2][1])])
        self.assertEqual(hashed.rates[0], batch.rates[-2])

    def test_decisions_follow_keep_negative_with_the_snapshot_seed(self):
        rows = self.rows[:2000]
        users = [r["user_id"] for r in rows]
        items = [r["item_id"] for r in rows]
        labels = [r["label"] == "1" for r in rows]
        keys = [hash_string_id(f"py-{k}") for k in range(len(rows))]
        with SamplingRateClient(self.target) as client:
            seed = client.status().active.seed
            batch = client.get_decisions(users, items, labels, keys)
        kept_negatives = 0
        for k in range(len(rows)):
            expected = labels[k] or keep_negative(keys[k], seed, batch.rates[k])
            self.assertEqual(batch.keep[k], expected, k)
            if not labels[k]:
                kept_negatives += expected
        self.assertGreater(kept_negatives, 0)
        self.assertLess(kept_negatives, labels.count(False))

    def test_status_matches_the_cli_json(self):
        with SamplingRateClient(self.target) as client:
            status = client.status()
        self.assertTrue(status.serving)
        self.assertAlmostEqual(status.active.alpha, 0.25)
        r = run([CLI, "status", "--server", self.target, "--json"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["active"]["version"], status.active.version)

    def test_errors_are_clear(self):
        with self.assertRaisesRegex(ValueError, "2 user_ids but 1 item_ids"):
            SamplingRateClient(self.target).get_rates([1, 2], [3])
        with self.assertRaisesRegex(ValueError, "does not fit in uint64"):
            parse_id("18446744073709551616")
        with self.assertRaisesRegex(ValueError, "not a decimal integer"):
            parse_id("abc", "int")
        client = SamplingRateClient("127.0.0.1:1", max_attempts=2, initial_backoff_seconds=0.01,
                                    timeout_seconds=2)
        with self.assertRaises(graphsieve_client.ServerError) as caught:
            client.get_rates([1], [2])
        self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(caught.exception.status_code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(caught.exception.target, "127.0.0.1:1")
        self.assertIn("GetSamplingRate on 127.0.0.1:1: UNAVAILABLE", str(caught.exception))
        with self.assertRaisesRegex(ValueError, "id 1.5 is a float"):
            parse_id(1.5)

    def test_a_refused_call_carries_the_servers_code_and_message(self):
        # The data port refuses the operator action; the error is what the server
        # answers to the same request made with the raw gRPC stub.
        with SamplingRateClient(self.target) as client:
            with self.assertRaises(graphsieve_client.ServerError) as caught:
                client.pin_version("20990101T000000Z-00000000")
            stub = sampling_pb2_grpc.SamplingRateServiceStub(client._channel)
            with self.assertRaises(grpc.RpcError) as raw:
                stub.PinVersion(sampling_pb2.PinVersionRequest(version="20990101T000000Z-00000000"),
                                timeout=10)
        error = caught.exception
        self.assertIsInstance(error, grpc.RpcError)  # callers catching grpc's errors still do
        self.assertEqual(error.status_code, raw.exception.code())
        self.assertEqual(error.status_code, grpc.StatusCode.PERMISSION_DENIED)
        self.assertEqual(error.message, raw.exception.details())
        self.assertTrue(error.message)
        self.assertEqual((error.code(), error.details()), (error.status_code, error.message))
        self.assertEqual(error.method, "PinVersion")
        self.assertEqual(str(error), f"PinVersion on {self.target}: PERMISSION_DENIED: "
                         f"{raw.exception.details()}")

    def test_package_exports(self):
        self.assertIn("SamplingRateClient", graphsieve_client.__all__)
        self.assertEqual(parse_id("42"), 42)
        self.assertEqual(parse_id("42", "string"), hash_string_id("42"))


if __name__ == "__main__":
    unittest.main()
