// The user -> partition rule shared by the MPI builder (docs/DESIGN.md §5),
// partitioned snapshot versions and the routing clients. Stable across
// releases: changing it re-partitions every snapshot.
#ifndef GRAPHSIEVE_CORE_IO_PARTITION_H_
#define GRAPHSIEVE_CORE_IO_PARTITION_H_

#include <cstdint>

#include "xxhash.h"

namespace graphsieve {

// XXH3-64 of the user id's 8 little-endian bytes with this seed, modulo n.
inline constexpr uint64_t kPartitionSeed = 0x9e3779b97f4a7c15ULL;

// REQUIRES: num_partitions >= 1.
inline uint32_t PartitionOfUser(uint64_t user_id, uint32_t num_partitions) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(user_id >> (8 * i));
  return static_cast<uint32_t>(XXH3_64bits_withSeed(bytes, sizeof bytes, kPartitionSeed) %
                               num_partitions);
}

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_IO_PARTITION_H_
