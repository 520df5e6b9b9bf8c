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

Thread-safety: one filter may be shared by threads (the seed cache is locked).
The client is not owned; close it after the filter's last use.
"""
import collections
import threading

from graphsieve_client.ids import decide_locally, parse_id, parse_label

KeptImpression = collections.namedtuple("KeptImpression",
                                        ["impression", "rate", "log_odds_offset"])


class SnapshotChangedError(RuntimeError):
    """mode="local" only: the server swapped snapshots under a batch. Retry it."""


class FilterDecisions:
    """Per impression, in request order: keep (bool), rates, log_odds_offsets
    (float32 values of log(rate)), sources ("EXACT", "INFERRED", "DEFAULT"),
    and snapshot_versions, the distinct versions that answered."""

    def __init__(self, keep, rates, log_odds_offsets, sources, snapshot_versions):
        self.keep = keep
        self.rates = rates
        self.log_odds_offsets = log_odds_offsets
        self.sources = sources
        self.snapshot_versions = snapshot_versions

    def __len__(self):
        return len(self.keep)


def _default_fields(impression):
    user, item, label, key = impression[:4]
    return user, item, label, key


class IngestionFilter:
    """Decides which impressions to keep, through one SamplingRateClient.

    Large inputs: decide() hands any number of impressions to the client,
    which sends them in chunks of at most client.max_batch_pairs; filter()
    streams an iterable in batches of batch_rows, so memory stays bounded.
    """

    def __init__(self, client, mode="server"):
        if mode not in ("server", "local"):
            raise ValueError(f"mode must be 'server' or 'local', got {mode!r}")
        self.client = client
        self.mode = mode
        self._lock = threading.Lock()
        self._seeds = {}  # snapshot version -> keep seed

    def decide(self, user_ids, item_ids, labels, instance_keys):
        """FilterDecisions for impressions i = (user_ids[i], item_ids[i], labels[i],
        instance_keys[i]). labels: True/False, 1/0 or "1"/"0" (1 = positive).
        Raises ValueError naming a bad argument, grpc.RpcError from the server,
        SnapshotChangedError (mode="local", retry the batch)."""
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

    def filter(self, impressions, batch_rows=10000, fields=_default_fields):
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

    def _kept(self, impressions, fields):
        columns = list(zip(*(fields(x) for x in impressions)))
        decisions = self.decide(*columns)
        for i, impression in enumerate(impressions):
            if decisions.keep[i]:
                yield KeptImpression(impression, decisions.rates[i],
                                     decisions.log_odds_offsets[i])

    def _seed_of(self, version):
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
        return active.seed
