"""The user -> partition rule of core/io/partition.h, in Python.

XXH3-64 (seed 0x9e3779b97f4a7c15) of the user id's 8 little-endian bytes,
modulo the number of partitions. Stable across releases: graphsieve-build
--partitions N splits versions by it, graphsieve-server --partition I refuses
users it does not own, and the routing clients send each pair to its part.
"""
PARTITION_SEED = 0x9e3779b97f4a7c15


def partition_of_user(user_id: int, num_partitions: int) -> int:
    """The partition (0-based) of a uint64 user id among num_partitions >= 1."""
    if num_partitions < 1:
        raise ValueError(f"num_partitions must be >= 1, got {num_partitions}")
    try:
        import xxhash  # Debian: python3-xxhash (scripts/install-deps.sh)
    except ImportError as error:
        raise ImportError("partitioned targets need the xxhash module (Debian: python3-xxhash)") \
            from error
    digest = xxhash.xxh3_64_intdigest(int(user_id).to_bytes(8, "little"), seed=PARTITION_SEED)
    return int(digest % num_partitions)
