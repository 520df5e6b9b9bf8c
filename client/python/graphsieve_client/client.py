"""SamplingRateClient: batched GetSamplingRate / GetStatus with retries.

Thread-safety: one client (one gRPC channel) may be shared by threads.
"""
import random
import time
from concurrent.futures import ThreadPoolExecutor

import grpc

from graphsieve.v1 import sampling_pb2, sampling_pb2_grpc
from graphsieve_client.ids import parse_id, parse_label
from graphsieve_client.partition import partition_of_user

SOURCE_NAMES = {
    sampling_pb2.RATE_SOURCE_UNSPECIFIED: "UNSPECIFIED",
    sampling_pb2.RATE_SOURCE_EXACT: "EXACT",
    sampling_pb2.RATE_SOURCE_INFERRED: "INFERRED",
    sampling_pb2.RATE_SOURCE_DEFAULT: "DEFAULT",
}


class RateBatch:
    """Answers in request order.

    rates: keep probability of each pair's negatives; sources: "EXACT",
    "INFERRED" or "DEFAULT"; snapshot_versions: distinct versions that
    answered (one unless the server swapped snapshots between chunks);
    keep / log_odds_offsets: only from get_decisions; retries: UNAVAILABLE
    retries this call needed. Partitioned targets: version_reasks = part
    calls asked again for one named version after the parts disagreed (a
    swap in progress); version_retries = whole-batch re-asks after no version
    was held by every part.
    """

    def __init__(self):
        self.rates = []
        self.sources = []
        self.keep = []
        self.log_odds_offsets = []
        self.snapshot_versions = []
        self.retries = 0
        self.version_retries = 0
        self.version_reasks = 0

    def __len__(self):
        return len(self.rates)

    @property
    def snapshot_version(self):
        return "+".join(self.snapshot_versions)


def _chunks(n, max_chunk):
    """[begin, end) ranges of near-equal size, each at most max_chunk."""
    if n == 0:
        return []
    count = (n + max_chunk - 1) // max_chunk
    base, extra = divmod(n, count)
    out, begin = [], 0
    for i in range(count):
        size = base + (1 if i < extra else 0)
        out.append((begin, begin + size))
        begin += size
    return out


class SamplingRateClient:
    """Client of one graphsieve-server, or of a partitioned deployment.

    target: "host:port", or the targets of partitions 0..N-1 comma-separated
    ("host:port,host:port"): each batch is then split by the user's partition
    (graphsieve_client.partition, core/io/partition.h), the parts are called
    in parallel and the answers merged in request order. One batch's answers
    come from one snapshot version: when the parts answer from different
    versions (a swap in progress), the parts that answered otherwise are asked
    again for the oldest of them, which a server keeps open for a while after
    its swap (GetSamplingRateRequest.snapshot_version, graphsieve-server
    --previous-version-hold-seconds); only when no version is held by every
    part is the batch asked afresh, at most max_version_attempts times in all,
    then RuntimeError naming the versions (the C++ client's rule,
    docs/CLIENTS.md "Partitioned deployments").
    Channels use gRPC's round_robin load balancing (every address a target
    resolves to, e.g. the replicas behind a headless Service).
    timeout_seconds: deadline of each RPC attempt.
    max_batch_pairs: larger batches are split into chunks and reassembled in
    order. max_attempts: attempts per chunk; only UNAVAILABLE is retried, after
    initial_backoff_seconds * 2^retry (capped at max_backoff_seconds) scaled by
    a uniform factor in [0.8, 1.2]. root_certificates: PEM bytes for TLS;
    None = plaintext. id_mode: how str ids are read ("auto", "int", "string").
    """

    def __init__(self, target, timeout_seconds=10.0, max_batch_pairs=50000, max_attempts=5,
                 initial_backoff_seconds=0.1, max_backoff_seconds=2.0,
                 root_certificates=None, id_mode="auto", max_version_attempts=10,
                 version_retry_backoff_seconds=0.05):
        if not target:
            raise ValueError("target (host:port) is empty")
        if timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be > 0, got {timeout_seconds}")
        if max_batch_pairs < 1:
            raise ValueError(f"max_batch_pairs must be >= 1, got {max_batch_pairs}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.target = target
        self.timeout_seconds = timeout_seconds
        self.max_batch_pairs = max_batch_pairs
        self.max_attempts = max_attempts
        self.initial_backoff_seconds = initial_backoff_seconds
        self.max_backoff_seconds = max_backoff_seconds
        self.id_mode = id_mode
        if max_version_attempts < 1:
            raise ValueError(f"max_version_attempts must be >= 1, got {max_version_attempts}")
        self.max_version_attempts = max_version_attempts
        self.version_retry_backoff_seconds = version_retry_backoff_seconds
        self.targets = target.split(",")
        if any(not t for t in self.targets):
            raise ValueError(f"target '{target}': an empty entry in the partition list")
        # Not grpc.min_reconnect_backoff_ms: in gRPC it is also the minimum
        # connect timeout of each attempt, and 100 ms cut off handshakes with a
        # busy server (UNAVAILABLE "tcp handshaker shutdown"); the default
        # (20 s) is kept, as in the C++ client (docs/RELIABILITY.md).
        options = [("grpc.lb_policy_name", "round_robin"),
                   ("grpc.initial_reconnect_backoff_ms", 100),
                   ("grpc.max_reconnect_backoff_ms", 1000),
                   ("grpc.max_receive_message_length", -1),
                   ("grpc.max_send_message_length", -1)]
        self._channels = []
        for t in self.targets:
            if root_certificates is None:
                self._channels.append(grpc.insecure_channel(t, options=options))
            else:
                credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates)
                self._channels.append(grpc.secure_channel(t, credentials, options=options))
        self._stubs = [sampling_pb2_grpc.SamplingRateServiceStub(c) for c in self._channels]
        self._channel, self._stub = self._channels[0], self._stubs[0]
        self._pool = ThreadPoolExecutor(max_workers=len(self._stubs)) if len(self._stubs) > 1 \
            else None

    @property
    def partitions(self):
        """Targets, one per partition (1 when unpartitioned)."""
        return len(self._stubs)

    def close(self):
        for channel in self._channels:
            channel.close()
        if self._pool is not None:
            self._pool.shutdown()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _call(self, method, request, max_attempts=None):
        """One RPC with retries on UNAVAILABLE; returns (response, retries)."""
        retries = 0
        max_attempts = max_attempts or self.max_attempts
        for attempt in range(max_attempts):
            if attempt > 0:
                delay = min(self.initial_backoff_seconds * (2.0 ** (attempt - 1)),
                            self.max_backoff_seconds)
                time.sleep(delay * random.uniform(0.8, 1.2))
                retries += 1
            try:
                return method(request, timeout=self.timeout_seconds), retries
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE or attempt + 1 == max_attempts:
                    raise
        raise AssertionError("unreachable")

    def get_rates(self, user_ids, item_ids):
        """Rates and sources for pairs (user_ids[i], item_ids[i]); ids are ints or text."""
        return self._rates(user_ids, item_ids, None, None)

    def get_decisions(self, user_ids, item_ids, labels, instance_keys):
        """As get_rates, plus the server's keep decisions and log-odds offsets.

        labels: True/False, 1/0 or "1"/"0" (1 = positive); instance_keys: ints
        or text (hashed like ids). IngestionFilter wraps this call."""
        if not len(labels) == len(instance_keys) == len(user_ids):
            raise ValueError(f"labels ({len(labels)}) and instance_keys ({len(instance_keys)}) "
                             f"must have as many entries as user_ids ({len(user_ids)})")
        flags = [parse_label(x, i) for i, x in enumerate(labels)]
        keys = [parse_id(k) for k in instance_keys]
        return self._rates(user_ids, item_ids, flags, keys)

    def _rates(self, user_ids, item_ids, labels, keys):
        if len(user_ids) != len(item_ids):
            raise ValueError(f"{len(user_ids)} user_ids but {len(item_ids)} item_ids")
        users = [parse_id(u, self.id_mode) for u in user_ids]
        items = [parse_id(i, self.id_mode) for i in item_ids]
        if len(self._stubs) == 1:
            return self._part_rates(0, users, items, labels, keys)
        return self._routed_rates(users, items, labels, keys)

    def _routed_rates(self, users, items, labels, keys):
        """Split by partition, parts in parallel, merged; one version per batch."""
        n_parts = len(self._stubs)
        positions = [[] for _ in range(n_parts)]
        for i, user in enumerate(users):
            positions[partition_of_user(user, n_parts)].append(i)

        def part_call(p, pin=None):
            pos = positions[p]
            return self._part_rates(
                p, [users[i] for i in pos], [items[i] for i in pos],
                None if labels is None else [labels[i] for i in pos],
                None if keys is None else [keys[i] for i in pos], pin)

        used = [p for p in range(n_parts) if positions[p]]
        version_retries, version_reasks, seen, why = 0, 0, [], ""
        for attempt in range(self.max_version_attempts):
            if attempt > 0:
                time.sleep(self.version_retry_backoff_seconds)
                version_retries += 1
            answers = dict(zip(used, self._pool.map(part_call, used)))
            versions = []
            for p in used:
                for v in answers[p].snapshot_versions:
                    if v not in versions:
                        versions.append(v)
            if len(versions) > 1:
                seen = versions
                # Version ids start with their UTC creation time: oldest first.
                agreed, reasks, why = self._agree(sorted(versions), used, positions, part_call,
                                                  answers, why)
                version_reasks += reasks
                if agreed is None:
                    continue
                versions = [agreed]
            out = self._merge(users, labels, used, positions, answers)
            out.snapshot_versions = versions
            out.version_retries = version_retries
            out.version_reasks = version_reasks
            return out
        raise RuntimeError(f"partitioned targets {self.target}: the parts answered from different "
                           f"snapshot versions ({', '.join(seen)}) in each of "
                           f"{self.max_version_attempts} attempts and no part still held a "
                           f"version every other part served ({why}); a swap is in progress for "
                           f"longer than the servers' --previous-version-hold-seconds, or the "
                           f"parts follow different roots")

    def _agree(self, candidates, used, positions, part_call, answers, why):
        """Asks the parts that answered otherwise for each candidate version in
        turn; returns (version, re-asks, why) with answers updated, or (None,
        re-asks, why) when no candidate was held by every part. Errors other
        than NOT_FOUND propagate."""
        reasks = 0
        for version in candidates:
            ask = [p for p in used if answers[p].snapshot_versions != [version]]
            reasks += len(ask)
            again, ok = {}, True
            for p, result in zip(ask, self._pool.map(
                    lambda p, v=version: self._try(part_call, p, v), ask)):
                if isinstance(result, grpc.RpcError):
                    if result.code() != grpc.StatusCode.NOT_FOUND:
                        raise result
                    ok, why = False, f"partition {p}: {result.details()}"
                elif result.snapshot_versions != [version]:  # a server that ignores the field
                    ok, why = False, f"partition {p} ignored snapshot_version"
                else:
                    again[p] = result
            if ok:
                answers.update(again)
                return version, reasks, why
        return None, reasks, why

    @staticmethod
    def _try(part_call, p, version):
        try:
            return part_call(p, version)
        except grpc.RpcError as error:
            return error

    @staticmethod
    def _merge(users, labels, used, positions, answers):
        out = RateBatch()
        n = len(users)
        out.rates, out.sources = [0.0] * n, [""] * n
        if labels is not None:
            out.keep, out.log_odds_offsets = [False] * n, [0.0] * n
        for p in used:
            a = answers[p]
            out.retries += a.retries
            for k, i in enumerate(positions[p]):
                out.rates[i] = a.rates[k]
                out.sources[i] = a.sources[k]
                if labels is not None:
                    out.keep[i] = a.keep[k]
                    out.log_odds_offsets[i] = a.log_odds_offsets[k]
        return out

    def _part_rates(self, part, users, items, labels, keys, pin=None):
        """One target's chunked, retried calls; pin: ask for that snapshot version."""
        target, stub = self.targets[part], self._stubs[part]
        out = RateBatch()
        for begin, end in _chunks(len(users), self.max_batch_pairs):
            request = sampling_pb2.GetSamplingRateRequest(user_ids=users[begin:end],
                                                          item_ids=items[begin:end])
            if labels is not None:
                request.labels.extend(labels[begin:end])
                request.instance_keys.extend(keys[begin:end])
            if pin:
                request.snapshot_version = pin
            response, retries = self._call(stub.GetSamplingRate, request)
            out.retries += retries
            if len(response.rates) != end - begin or len(response.sources) != end - begin:
                raise RuntimeError(f"server {target} answered {len(response.rates)} rates "
                                   f"for {end - begin} pairs")
            if labels is not None and not (len(response.keep) == len(response.log_odds_offsets)
                                           == end - begin):
                raise RuntimeError(f"server {target} answered {len(response.keep)} keep "
                                   f"decisions for {end - begin} labelled pairs")
            out.rates.extend(response.rates)
            out.sources.extend(SOURCE_NAMES.get(s, "UNSPECIFIED") for s in response.sources)
            out.keep.extend(response.keep)
            out.log_odds_offsets.extend(response.log_odds_offsets)
            if response.snapshot_version not in out.snapshot_versions:
                out.snapshot_versions.append(response.snapshot_version)
        return out

    def pin_version(self, version, reject_active=False):
        """Operator action (PinVersionRequest; the C++ client's PinVersion): serve
        `version` and stop following CURRENT, or with version "" unpin and follow
        CURRENT again; reject_active marks the version active before the call
        as rolled back. The target must be the servers' operator listener
        (graphsieve-server --operator-address; by default
        "unix:/tmp/graphsieve-operator-<port>.sock"): the data port refuses it
        with PERMISSION_DENIED. Partitioned targets: every part in order,
        stopping at the first error (grpc.RpcError; NOT_FOUND / DATA_LOSS: the
        version did not load and the old one keeps serving). UNAVAILABLE is
        retried only without reject_active (a repeated rollback could reject
        more). Returns the last part's PinVersionResponse (active_version,
        pinned_version)."""
        request = sampling_pb2.PinVersionRequest(version=version, reject_active=reject_active)
        response = None
        for stub in self._stubs:
            response, _ = self._call(stub.PinVersion, request,
                                     max_attempts=1 if reject_active else None)
        return response

    def status(self, part=0):
        """GetStatusResponse (active snapshot, manifest summary, history) of partition part's
        server (0: the only one when unpartitioned)."""
        response, _ = self._call(self._stubs[part].GetStatus, sampling_pb2.GetStatusRequest())
        return response
