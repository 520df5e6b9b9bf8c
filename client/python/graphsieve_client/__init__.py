"""Python client of graphsieve-server (graphsieve.v1.SamplingRateService).

    from graphsieve_client import SamplingRateClient
    with SamplingRateClient("localhost:50051") as client:
        batch = client.get_rates([1, 2], [10, 20])
        batch.rates, batch.sources, batch.snapshot_versions

Needs Debian's python3-grpcio and python3-protobuf and the stubs that the
CMake build generates from proto/graphsieve/v1/sampling.proto into
<build>/client/python (put that directory on PYTHONPATH).
"""
from graphsieve_client.client import (RateBatch, SamplingRateClient, SOURCE_NAMES)
from graphsieve_client.ids import hash_string_id, keep_negative, parse_id, unit_interval_from_key

__all__ = [
    "RateBatch", "SamplingRateClient", "SOURCE_NAMES", "hash_string_id", "keep_negative",
    "parse_id", "unit_interval_from_key"
]
