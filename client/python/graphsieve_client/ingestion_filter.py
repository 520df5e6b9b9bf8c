"""IngestionFilter: keep decisions and log-odds offsets for impressions.

The Python side of client/ingestion_filter.h, with the same rule:

    positive, rate r  -> kept; offset log(r)
    negative, rate r  -> kept iff keep_negative(instance_key, snapshot seed, r);
                         offset log(r)

The offset is the pair's log-odds correction whatever the label (the server
sets it for dropped negatives too; only kept rows reach training, where the
model fits logit = g - offset: docs/METHOD.md, Errata item 3).

Two ways to the same answer (client_python_filter_test checks they agree bit
for bit, and agree with `graphsieve filter`):
    mode="server"  labels and instance keys are sent; the server decides.
    mode="local"   only the pairs are sent; the filter decides with the keep
                   seed of the snapshot version that answered (from status(),
                   cached per version).

The instance key must be stable per impression (a log offset, an event id):
the same impression then gets the same decision on every rerun. Keys are ints
in [0, 2^64) or text (hashed with XXH3-64 like ids, as `graphsieve filter
--instance-key-column` does).

DataFrames: decide_frame(frame) adds the columns rate, source, keep and
log_odds_offset to a copy of a pandas DataFrame, in batches of batch_rows.

Thread-safety: one filter may be shared by threads (the seed cache is locked).
The client is not owned; close it after the filter's last use.
"""
import threading
from typing import (TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, NamedTuple,
                    Sequence, Tuple)

from graphsieve_client.client import SamplingRateClient
from graphsieve_client.errors import SnapshotChangedError
from graphsieve_client.ids import Id, Label, decide_locally, parse_id, parse_label

if TYPE_CHECKING:
    import numpy
    import pandas


class KeptImpression(NamedTuple):
    """An impression filter() kept, with its pair's rate and log-odds offset log(rate)."""
    impression: Any
    rate: float
    log_odds_offset: float


class FilterDecisions:
    """Per impression, in request order: keep (bool), rates, log_odds_offsets
    (float32 values of log(rate)), sources ("EXACT", "INFERRED", "DEFAULT"),
    and snapshot_versions, the distinct versions that answered."""

    def __init__(self, keep: List[bool], rates: List[float], log_odds_offsets: List[float],
                 sources: List[str], snapshot_versions: List[str]) -> None:
        self.keep = keep
        self.rates = rates
        self.log_odds_offsets = log_odds_offsets
        self.sources = sources
        self.snapshot_versions = snapshot_versions

    def __len__(self) -> int:
        return len(self.keep)

    def to_numpy(self) -> Dict[str, "numpy.ndarray"]:
        """Columns as numpy arrays: "rate" (float32), "source" (str), "keep"
        (bool), "log_odds_offset" (float32). Needs numpy (python3-numpy)."""
        import numpy as np
        return {"rate": np.asarray(self.rates, dtype=np.float32),
                "source": np.asarray(self.sources, dtype=str),
                "keep": np.asarray(self.keep, dtype=bool),
                "log_odds_offset": np.asarray(self.log_odds_offsets, dtype=np.float32)}


Fields = Callable[[Any], Tuple[Id, Id, Label, Id]]


def _default_fields(impression: Any) -> Tuple[Id, Id, Label, Id]:
    user, item, label, key = impression[:4]
    return user, item, label, key


class IngestionFilter:
    """Decides which impressions to keep, through one SamplingRateClient.

    Large inputs: decide() hands any number of impressions to the client,
    which sends them in chunks of at most client.max_batch_pairs; filter()
    streams an iterable in batches of batch_rows, so memory stays bounded.
    """

    def __init__(self, client: SamplingRateClient, mode: str = "server") -> None:
        if mode not in ("server", "local"):
            raise ValueError(f"mode must be 'server' or 'local', got {mode!r}")
        self.client = client
        self.mode = mode
        self._lock = threading.Lock()
        self._seeds: Dict[str, int] = {}  # snapshot version -> keep seed

    def decide(self, user_ids: Sequence[Id], item_ids: Sequence[Id], labels: Sequence[Label],
               instance_keys: Sequence[Id]) -> FilterDecisions:
        """FilterDecisions for impressions i = (user_ids[i], item_ids[i], labels[i],
        instance_keys[i]); sequences or numpy arrays, any length (sent in chunks
        of client.max_batch_pairs). labels: True/False, 1/0 or "1"/"0" (1 =
        positive). Raises ValueError naming a bad argument, ServerError (the
        gRPC code and the server's message), SnapshotChangedError
        (mode="local", retry the batch)."""
        n = len(user_ids)
        if not len(item_ids) == len(labels) == len(instance_keys) == n:
            raise ValueError(f"IngestionFilter: {n} user_ids, {len(item_ids)} item_ids, "
                             f"{len(labels)} labels, {len(instance_keys)} instance_keys; "
                             "all must be equal")
        flags = [parse_label(x, i) for i, x in enumerate(labels)]
        keys = [parse_id(k) for k in instance_keys]
        if self.mode == "server":
            batch = self.client.get_decisions(user_ids, item_ids, flags, keys)
            return FilterDecisions(batch.keep, batch.rates, batch.log_odds_offsets,
                                   batch.sources, batch.snapshot_versions)
        batch = self.client.get_rates(user_ids, item_ids)
        if len(batch.snapshot_versions) > 1:
            raise SnapshotChangedError(
                f"IngestionFilter: server {self.client.target} swapped snapshots during the "
                f"batch ({', '.join(batch.snapshot_versions)}); retry it")
        seed = self._seed_of(batch.snapshot_versions[0]) if batch.snapshot_versions else 0
        keep, offsets = decide_locally(batch.rates, flags, keys, seed)
        return FilterDecisions(keep, batch.rates, offsets, batch.sources,
                               batch.snapshot_versions)

    def decide_frame(self, frame: "pandas.DataFrame", user_column: str = "user_id",
                     item_column: str = "item_id", label_column: str = "label",
                     instance_key_column: str = "instance_key",
                     batch_rows: int = 100000) -> "pandas.DataFrame":
        """A copy of `frame` (same index and columns) with four columns added:
        rate (float32), source ("EXACT", "INFERRED", "DEFAULT"), keep (bool)
        and log_odds_offset (float32 log(rate), the term a model trained on
        the kept rows subtracts from its logit: logit = g - log_odds_offset).
        Rows go to decide() batch_rows at a time. frame.attrs
        ["snapshot_versions"] lists the versions that answered. Raises
        ValueError naming a missing or float column. Needs pandas (Debian:
        python3-pandas)."""
        from graphsieve_client.frames import column_values, concat_columns, with_columns
        if batch_rows < 1:
            raise ValueError(f"batch_rows must be >= 1, got {batch_rows}")
        columns = [column_values(frame, user_column), column_values(frame, item_column),
                   column_values(frame, label_column, floats_ok=True),
                   column_values(frame, instance_key_column)]
        parts, versions = [], []
        for begin in range(0, len(frame), batch_rows):
            d = self.decide(*[c[begin:begin + batch_rows] for c in columns])
            parts.append(d.to_numpy())
            versions += [v for v in d.snapshot_versions if v not in versions]
        return with_columns(frame, concat_columns(parts, FilterDecisions([], [], [], [], [])
                                                  .to_numpy()), versions)

    def filter(self, impressions: Iterable[Any], batch_rows: int = 10000,
               fields: Fields = _default_fields) -> Iterator[KeptImpression]:
        """Yields a KeptImpression(impression, rate, log_odds_offset) for every
        kept impression of the iterable, in input order (what `graphsieve filter`
        writes). fields(impression) -> (user, item, label, instance_key); the
        default takes the first four items (tuples, csv.reader rows)."""
        if batch_rows < 1:
            raise ValueError(f"batch_rows must be >= 1, got {batch_rows}")
        pending = []
        for impression in impressions:
            pending.append(impression)
            if len(pending) == batch_rows:
                yield from self._kept(pending, fields)
                pending = []
        if pending:
            yield from self._kept(pending, fields)

    def _kept(self, impressions: List[Any], fields: Fields) -> Iterator[KeptImpression]:
        columns = list(zip(*(fields(x) for x in impressions)))
        decisions = self.decide(*columns)
        for i, impression in enumerate(impressions):
            if decisions.keep[i]:
                yield KeptImpression(impression, decisions.rates[i],
                                     decisions.log_odds_offsets[i])

    def _seed_of(self, version: str) -> int:
        with self._lock:
            if version in self._seeds:
                return self._seeds[version]
        active = self.client.status().active  # an RPC: not under the lock
        if active.version != version:
            raise SnapshotChangedError(
                f"IngestionFilter: rates came from snapshot '{version}' but server "
                f"{self.client.target} now serves '{active.version}'; its keep seed is "
                "unknown, retry the batch")
        with self._lock:
            self._seeds[version] = active.seed
        return int(active.seed)
