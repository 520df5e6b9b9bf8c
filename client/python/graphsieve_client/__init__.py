"""Python client of graphsieve-server (graphsieve.v1.SamplingRateService).

    from graphsieve_client import IngestionFilter, SamplingRateClient
    with SamplingRateClient("localhost:50051") as client:
        batch = client.get_rates([1, 2], [10, 20])
        batch.rates, batch.sources, batch.snapshot_versions
        d = IngestionFilter(client).decide([1, 2], [10, 20], labels=[1, 0],
                                           instance_keys=[1001, 1002])
        d.keep, d.log_odds_offsets
        rows = IngestionFilter(client).decide_frame(impressions)  # a pandas DataFrame
        train = rows[rows.keep]  # with rate, source, keep, log_odds_offset columns

Partitioned deployments: SamplingRateClient("host:port,host:port") routes by
partition_of_user (core/io/partition.h). A failed call raises ServerError,
a grpc.RpcError carrying the status code and the server's message.

Install: `pip install ./client/python` (into a venv made with
`/usr/bin/python3 -m venv --system-site-packages`, which sees Debian's
python3-grpcio, python3-protobuf and python3-xxhash; pandas and numpy,
python3-pandas, only for the DataFrame and array paths).
"""
from graphsieve_client.client import RateBatch, SamplingRateClient, SOURCE_NAMES
from graphsieve_client.errors import ServerError, SnapshotChangedError, VersionMismatchError
from graphsieve_client.ids import (Id, Label, decide_locally, hash_string_id, keep_negative,
                                   log_odds_offset, parse_id, parse_label,
                                   unit_interval_from_key)
from graphsieve_client.ingestion_filter import FilterDecisions, IngestionFilter, KeptImpression
from graphsieve_client.partition import partition_of_user
from graphsieve_client.version import __version__

__all__ = [
    "FilterDecisions", "Id", "IngestionFilter", "KeptImpression", "Label", "RateBatch",
    "SamplingRateClient", "ServerError", "SnapshotChangedError", "SOURCE_NAMES",
    "VersionMismatchError", "__version__", "decide_locally", "hash_string_id", "keep_negative",
    "log_odds_offset", "parse_id", "parse_label", "partition_of_user", "unit_interval_from_key"
]
