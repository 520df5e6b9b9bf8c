"""SamplingRateClient: batched GetSamplingRate / GetStatus / PinVersion with retries.

Thread-safety: one client (one gRPC channel per partition) may be shared by threads.
"""
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import (TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple,
                    TypeVar, Union)

import grpc

from graphsieve.v1 import sampling_pb2, sampling_pb2_grpc
from graphsieve_client.errors import ServerError, VersionMismatchError
from graphsieve_client.ids import Id, Label, parse_id, parse_label
from graphsieve_client.partition import partition_of_user

if TYPE_CHECKING:
    import numpy
    import pandas

_Response = TypeVar("_Response")

SOURCE_NAMES: Dict[int, str] = {
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

    def __init__(self) -> None:
        self.rates: List[float] = []
        self.sources: List[str] = []
        self.keep: List[bool] = []
        self.log_odds_offsets: List[float] = []
        # From get_decisions (keep / log_odds_offsets answered, even if empty).
        self.decided = False
        self.snapshot_versions: List[str] = []
        self.retries = 0
        self.version_retries = 0
        self.version_reasks = 0

    def __len__(self) -> int:
        return len(self.rates)

    @property
    def snapshot_version(self) -> str:
        """The versions that answered, joined by "+" (one version, normally)."""
        return "+".join(self.snapshot_versions)

    def to_numpy(self) -> Dict[str, "numpy.ndarray"]:
        """Columns as numpy arrays: "rate" (float32), "source" (str), and after
        get_decisions also "keep" (bool) and "log_odds_offset" (float32).
        Needs numpy (Debian: python3-numpy)."""
        import numpy as np
        out = {"rate": np.asarray(self.rates, dtype=np.float32),
               "source": np.asarray(self.sources, dtype=str)}
        if self.decided:
            out["keep"] = np.asarray(self.keep, dtype=bool)
            out["log_odds_offset"] = np.asarray(self.log_odds_offsets, dtype=np.float32)
        return out


def _chunks(n: int, max_chunk: int) -> List[Tuple[int, int]]:
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
    then VersionMismatchError naming the versions (the C++ client's rule,
    docs/CLIENTS.md "Partitioned deployments").
    Channels use gRPC's round_robin load balancing (every address a target
    resolves to, e.g. the replicas behind a headless Service).
    timeout_seconds: deadline of each RPC attempt.
    max_batch_pairs: larger batches are split into chunks and reassembled in
    order. max_attempts: attempts per chunk; only UNAVAILABLE is retried, after
    initial_backoff_seconds * 2^retry (capped at max_backoff_seconds) scaled by
    a uniform factor in [0.8, 1.2]. root_certificates: PEM bytes of the CA
    for TLS (None = plaintext); private_key / certificate_chain: PEM bytes of
    this client's key and certificate for mutual TLS. id_mode: how str ids
    are read ("auto", "int", "string"; ids.parse_id).

    Errors: ValueError naming a bad argument; ServerError (a grpc.RpcError
    with the status code and the server's message) when a call fails;
    VersionMismatchError (partitioned targets, see above).
    """

    def __init__(self, target: str, timeout_seconds: float = 10.0,
                 max_batch_pairs: int = 50000, max_attempts: int = 5,
                 initial_backoff_seconds: float = 0.1, max_backoff_seconds: float = 2.0,
                 root_certificates: Optional[bytes] = None, id_mode: str = "auto",
                 max_version_attempts: int = 10, version_retry_backoff_seconds: float = 0.05,
                 private_key: Optional[bytes] = None,
                 certificate_chain: Optional[bytes] = None) -> None:
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
        if (private_key is None) != (certificate_chain is None):
            raise ValueError("private_key and certificate_chain (mutual TLS) go together")
        if private_key is not None and root_certificates is None:
            raise ValueError("private_key / certificate_chain need root_certificates (TLS)")
        self._channels: List[grpc.Channel] = []
        for t in self.targets:
            if root_certificates is None:
                self._channels.append(grpc.insecure_channel(t, options=options))
            else:
                credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates,
                                                           private_key=private_key,
                                                           certificate_chain=certificate_chain)
                self._channels.append(grpc.secure_channel(t, credentials, options=options))
        self._stubs = [sampling_pb2_grpc.SamplingRateServiceStub(c) for c in self._channels]
        self._channel = self._channels[0]
        self._pool: Optional[ThreadPoolExecutor] = \
            ThreadPoolExecutor(max_workers=len(self._stubs)) if len(self._stubs) > 1 else None

    @property
    def partitions(self) -> int:
        """Targets, one per partition (1 when unpartitioned)."""
        return len(self._stubs)

    def close(self) -> None:
        """Closes the channels; the client is unusable afterwards."""
        for channel in self._channels:
            channel.close()
        if self._pool is not None:
            self._pool.shutdown()

    def __enter__(self) -> "SamplingRateClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _call(self, part: int, method_name: str, request: Any,
              max_attempts: Optional[int] = None) -> Tuple[Any, int]:
        """One RPC to partition `part` with retries on UNAVAILABLE; returns
        (response, retries). A failure raises ServerError."""
        try:
            return self._call_raw(getattr(self._stubs[part], method_name), request, max_attempts)
        except grpc.RpcError as error:
            raise ServerError.from_rpc_error(error, method_name, self.targets[part]) from None

    def _call_raw(self, method: Callable[..., _Response], request: Any,
                  max_attempts: Optional[int]) -> Tuple[_Response, int]:
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

    def get_rates(self, user_ids: Sequence[Id], item_ids: Sequence[Id]) -> RateBatch:
        """Rates and sources for pairs (user_ids[i], item_ids[i]), in order.

        Ids are ints in [0, 2^64) (numpy integers too) or text (ids.parse_id).
        Any number of pairs: they go in chunks of max_batch_pairs."""
        return self._rates(user_ids, item_ids, None, None)

    def get_decisions(self, user_ids: Sequence[Id], item_ids: Sequence[Id],
                      labels: Sequence[Label], instance_keys: Sequence[Id]) -> RateBatch:
        """As get_rates, plus the server's keep decisions and log-odds offsets.

        labels: True/False, 1/0 or "1"/"0" (1 = positive); instance_keys: ints
        or text (hashed like ids). IngestionFilter wraps this call."""
        if not len(labels) == len(instance_keys) == len(user_ids):
            raise ValueError(f"labels ({len(labels)}) and instance_keys ({len(instance_keys)}) "
                             f"must have as many entries as user_ids ({len(user_ids)})")
        flags = [parse_label(x, i) for i, x in enumerate(labels)]
        keys = [parse_id(k) for k in instance_keys]
        return self._rates(user_ids, item_ids, flags, keys)

    def rates_frame(self, frame: "pandas.DataFrame", user_column: str = "user_id",
                    item_column: str = "item_id") -> "pandas.DataFrame":
        """A copy of `frame` with the columns "rate" (float32) and "source"
        added, for the pairs of its user_column and item_column; one call
        (chunked by max_batch_pairs). frame.attrs["snapshot_versions"] lists
        the versions that answered. Needs pandas (Debian: python3-pandas)."""
        from graphsieve_client.frames import column_values, with_columns
        batch = self.get_rates(column_values(frame, user_column),
                               column_values(frame, item_column))
        return with_columns(frame, batch.to_numpy(), batch.snapshot_versions)

    def _rates(self, user_ids: Sequence[Id], item_ids: Sequence[Id],
               labels: Optional[List[bool]], keys: Optional[List[int]]) -> RateBatch:
        if len(user_ids) != len(item_ids):
            raise ValueError(f"{len(user_ids)} user_ids but {len(item_ids)} item_ids")
        users = [parse_id(u, self.id_mode) for u in user_ids]
        items = [parse_id(i, self.id_mode) for i in item_ids]
        if len(self._stubs) == 1:
            return self._part_rates(0, users, items, labels, keys)
        return self._routed_rates(users, items, labels, keys)

    def _routed_rates(self, users: List[int], items: List[int], labels: Optional[List[bool]],
                      keys: Optional[List[int]]) -> RateBatch:
        """Split by partition, parts in parallel, merged; one version per batch."""
        n_parts = len(self._stubs)
        positions: List[List[int]] = [[] for _ in range(n_parts)]
        for i, user in enumerate(users):
            positions[partition_of_user(user, n_parts)].append(i)

        def part_call(p: int, pin: Optional[str] = None) -> RateBatch:
            pos = positions[p]
            return self._part_rates(
                p, [users[i] for i in pos], [items[i] for i in pos],
                None if labels is None else [labels[i] for i in pos],
                None if keys is None else [keys[i] for i in pos], pin)

        used = [p for p in range(n_parts) if positions[p]]
        assert self._pool is not None
        version_retries, version_reasks, seen, why = 0, 0, [], ""
        for attempt in range(self.max_version_attempts):
            if attempt > 0:
                time.sleep(self.version_retry_backoff_seconds)
                version_retries += 1
            answers = dict(zip(used, self._pool.map(part_call, used)))
            versions: List[str] = []
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
        raise VersionMismatchError(f"partitioned targets {self.target}: the parts answered from different "
                           f"snapshot versions ({', '.join(seen)}) in each of "
                           f"{self.max_version_attempts} attempts and no part still held a "
                           f"version every other part served ({why}); a swap is in progress for "
                           f"longer than the servers' --previous-version-hold-seconds, or the "
                           f"parts follow different roots")

    def _agree(self, candidates: List[str], used: List[int], positions: List[List[int]],
               part_call: Callable[[int, Optional[str]], RateBatch],
               answers: Dict[int, RateBatch], why: str) -> Tuple[Optional[str], int, str]:
        """Asks the parts that answered otherwise for each candidate version in
        turn; returns (version, re-asks, why) with answers updated, or (None,
        re-asks, why) when no candidate was held by every part. Errors other
        than NOT_FOUND propagate."""
        assert self._pool is not None
        reasks = 0
        for version in candidates:
            ask = [p for p in used if answers[p].snapshot_versions != [version]]
            reasks += len(ask)
            again: Dict[int, RateBatch] = {}
            ok = True
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
    def _try(part_call: Callable[[int, Optional[str]], RateBatch], p: int,
             version: str) -> Union[RateBatch, grpc.RpcError]:
        try:
            return part_call(p, version)
        except grpc.RpcError as error:
            return error

    @staticmethod
    def _merge(users: List[int], labels: Optional[List[bool]], used: List[int],
               positions: List[List[int]], answers: Dict[int, RateBatch]) -> RateBatch:
        out = RateBatch()
        out.decided = labels is not None
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

    def _part_rates(self, part: int, users: List[int], items: List[int],
                    labels: Optional[List[bool]], keys: Optional[List[int]],
                    pin: Optional[str] = None) -> RateBatch:
        """One target's chunked, retried calls; pin: ask for that snapshot version."""
        target = self.targets[part]
        out = RateBatch()
        out.decided = labels is not None
        for begin, end in _chunks(len(users), self.max_batch_pairs):
            request = sampling_pb2.GetSamplingRateRequest(user_ids=users[begin:end],
                                                          item_ids=items[begin:end])
            if labels is not None and keys is not None:
                request.labels.extend(labels[begin:end])
                request.instance_keys.extend(keys[begin:end])
            if pin:
                request.snapshot_version = pin
            response, retries = self._call(part, "GetSamplingRate", request)
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

    def pin_version(self, version: str,
                    reject_active: bool = False) -> sampling_pb2.PinVersionResponse:
        """Operator action (PinVersionRequest; the C++ client's PinVersion): serve
        `version` and stop following CURRENT, or with version "" unpin and follow
        CURRENT again; reject_active marks the version active before the call
        as rolled back. The target must be the servers' operator listener
        (graphsieve-server --operator-address; by default
        "unix:/tmp/graphsieve-operator-<port>.sock"): the data port refuses it
        with PERMISSION_DENIED. Partitioned targets: every part in order,
        stopping at the first error (ServerError; NOT_FOUND / DATA_LOSS: the
        version did not load and the old one keeps serving). UNAVAILABLE is
        retried only without reject_active (a repeated rollback could reject
        more). Returns the last part's PinVersionResponse (active_version,
        pinned_version)."""
        request = sampling_pb2.PinVersionRequest(version=version, reject_active=reject_active)
        response: sampling_pb2.PinVersionResponse
        for part in range(len(self._stubs)):
            response, _ = self._call(part, "PinVersion", request,
                                     max_attempts=1 if reject_active else None)
        return response

    def status(self, part: int = 0) -> sampling_pb2.GetStatusResponse:
        """GetStatusResponse (active snapshot, manifest summary, history) of partition part's
        server (0: the only one when unpartitioned)."""
        if not 0 <= part < len(self._stubs):
            raise ValueError(f"part {part} is not one of the {len(self._stubs)} partitions")
        response: sampling_pb2.GetStatusResponse
        response, _ = self._call(part, "GetStatus", sampling_pb2.GetStatusRequest())
        return response
