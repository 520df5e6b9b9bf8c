"""Python client of graphsieve-server (graphsieve.v1.SamplingRateService).

    from graphsieve_client import IngestionFilter, SamplingRateClient
    with SamplingRateClient("localhost:50051") as client:
        batch = client.get_rates([1, 2], [10, 20])
        batch.rates, batch.sources, batch.snapshot_versions
        d = IngestionFilter(client).decide([1, 2], [10, 20], labels=[1, 0],
                                           instance_keys=[1001, 1002])
        d.keep, d.log_odds_offsets

Partitioned deployments: SamplingRateClient("host:port,host:port") routes by
partition_of_user (core/io/partition.h; Debian's python3-xxhash).

Needs Debian's python3-grpcio and python3-protobuf and the stubs that the
CMake build generates from proto/graphsieve/v1/sampling.proto into
<build>/client/python (put that directory on PYTHONPATH; docs/CLIENTS.md).
"""
from graphsieve_client.client import (RateBatch, SamplingRateClient, SOURCE_NAMES)
from graphsieve_client.ids import (decide_locally, hash_string_id, keep_negative,
                                   log_odds_offset, parse_id, parse_label,
                                   unit_interval_from_key)
from graphsieve_client.partition import partition_of_user
from graphsieve_client.ingestion_filter import (FilterDecisions, IngestionFilter, KeptImpression,
                                                SnapshotChangedError)

__all__ = [
    "FilterDecisions", "IngestionFilter", "KeptImpression", "RateBatch", "SamplingRateClient",
    "SnapshotChangedError", "SOURCE_NAMES", "decide_locally", "hash_string_id", "keep_negative",
    "log_odds_offset", "parse_id", "parse_label", "partition_of_user", "unit_interval_from_key"
]
