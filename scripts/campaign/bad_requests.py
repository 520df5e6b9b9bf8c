#!/usr/bin/env python3
"""A stream of malformed and oversize requests (scripts/fault-campaign.sh,
section "bad-requests") against a running graphsieve-server, from 4 threads:

  oversize     max_batch_pairs + 1 pairs            -> INVALID_ARGUMENT
  huge         a 6 MiB message (over the receive limit) -> RESOURCE_EXHAUSTED
  mismatch     user_ids and item_ids of different lengths -> INVALID_ARGUMENT
  labels_only  labels without instance_keys          -> INVALID_ARGUMENT
  labels_len   labels of the wrong length            -> INVALID_ARGUMENT
  empty        no pairs                              -> INVALID_ARGUMENT
  garbage      random bytes that are not a protobuf  -> an error status (UNIMPLEMENTED
               from gRPC 1.51, which cannot deserialize it)
  extreme_ids  ids 0 and 2^64-1 (a valid request)    -> OK, DEFAULT rates

Samples the server's VmRSS (/proc/<pid>/status) as it goes. Passes when the
server is alive at the end, answered every request with the expected kind of
status, and its RSS at the end is within 25% + 32 MiB of the RSS after the
first 10% of the stream (no growth with the number of bad requests).
"""
import argparse
import os
import random
import sys
import threading
import time

import grpc

from graphsieve.v1 import sampling_pb2, sampling_pb2_grpc

METHOD = "/graphsieve.v1.SamplingRateService/GetSamplingRate"


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def make(kind, max_pairs, rng):
    R = sampling_pb2.GetSamplingRateRequest
    if kind == "oversize":
        n = max_pairs + 1
        return R(user_ids=[1] * n, item_ids=[2] * n).SerializeToString(), {grpc.StatusCode.INVALID_ARGUMENT}
    if kind == "huge":
        return os.urandom(16) + b"\x0a" + b"\x80" * 3 + bytes(6 << 20), {grpc.StatusCode.RESOURCE_EXHAUSTED}
    if kind == "mismatch":
        return R(user_ids=[1, 2, 3], item_ids=[4]).SerializeToString(), {grpc.StatusCode.INVALID_ARGUMENT}
    if kind == "labels_only":
        return R(user_ids=[1], item_ids=[2], labels=[True]).SerializeToString(), {grpc.StatusCode.INVALID_ARGUMENT}
    if kind == "labels_len":
        return R(user_ids=[1, 2], item_ids=[3, 4], labels=[True],
                 instance_keys=[9]).SerializeToString(), {grpc.StatusCode.INVALID_ARGUMENT}
    if kind == "empty":
        return b"", {grpc.StatusCode.INVALID_ARGUMENT}
    if kind == "garbage":
        # Bytes that cannot parse as the request (a field with wire type 7).
        # gRPC C++ 1.51's callback server answers UNIMPLEMENTED when the
        # request does not deserialize (our handler never sees it).
        return b"\x0f" + rng.randbytes(rng.randrange(1, 4096)), {
            grpc.StatusCode.INTERNAL, grpc.StatusCode.INVALID_ARGUMENT,
            grpc.StatusCode.UNIMPLEMENTED}
    if kind == "extreme_ids":
        return R(user_ids=[0, 2**64 - 1], item_ids=[2**64 - 1, 0]).SerializeToString(), {grpc.StatusCode.OK}
    raise ValueError(kind)


KINDS = ["oversize", "huge", "mismatch", "labels_only", "labels_len", "empty", "garbage", "extreme_ids"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--max-batch-pairs", type=int, default=100000)
    a = ap.parse_args()
    counts = {k: 0 for k in KINDS}
    unexpected = []
    lock = threading.Lock()
    done = [0]
    samples = []
    start_rss = rss_kib(a.pid)

    def worker(seed, n):
        rng = random.Random(seed)
        channel = grpc.insecure_channel(f"127.0.0.1:{a.port}", options=[
            ("grpc.max_send_message_length", 64 << 20)])
        call = channel.unary_unary(METHOD, request_serializer=None, response_deserializer=None)
        for _ in range(n):
            # Oversize and huge messages are heavy: one in 20.
            kind = rng.choice(KINDS[2:]) if rng.random() < 0.9 else rng.choice(KINDS[:2])
            payload, want = make(kind, a.max_batch_pairs, rng)
            try:
                call(payload, timeout=30)
                code, msg = grpc.StatusCode.OK, ""
            except grpc.RpcError as e:
                code, msg = e.code(), e.details()
            with lock:
                counts[kind] += 1
                if code not in want:
                    unexpected.append(f"{kind}: {code} {msg}")
                done[0] += 1
                if done[0] % max(1, a.requests // 50) == 0:
                    samples.append((done[0], rss_kib(a.pid)))
        channel.close()

    t0 = time.time()
    threads = [threading.Thread(target=worker, args=(s, a.requests // 4)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.time() - t0
    alive = os.path.exists(f"/proc/{a.pid}") and open(f"/proc/{a.pid}/stat").read().split()[2] != "Z"
    end_rss = rss_kib(a.pid) if alive else 0
    warm = samples[len(samples) // 10][1] if samples else start_rss
    peak = max([s[1] for s in samples] + [start_rss])
    bounded = end_rss <= warm * 1.25 + 32 * 1024
    print(f"RESULT bad-requests: {done[0]} requests in {seconds:.0f} s "
          f"({', '.join(f'{k} {v}' for k, v in counts.items())}); unexpected statuses: {len(unexpected)}; "
          f"server alive: {alive}")
    print(f"RESULT bad-requests: server RSS {start_rss / 1024:.1f} MiB at start, "
          f"{warm / 1024:.1f} MiB after 10% of the stream, peak {peak / 1024:.1f} MiB, "
          f"{end_rss / 1024:.1f} MiB at the end (bounded: {bounded})")
    marks = [samples[min(len(samples) - 1, len(samples) * q // 4)] for q in range(1, 5)] if samples else []
    print("RESULT bad-requests: RSS by requests done: " +
          ", ".join(f"{n}: {kib / 1024:.1f} MiB" for n, kib in marks))
    for u in unexpected[:10]:
        print(f"FAILED bad-requests: {u}")
    return 0 if alive and bounded and not unexpected else 1


if __name__ == "__main__":
    sys.exit(main())
