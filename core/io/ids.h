// Ids and the two stable hashes every part of graphsieve shares.
//
// Integer ids are used as they are. String ids map to uint64 through XXH3-64
// (xxHash 0.8, libxxhash from Debian) of their UTF-8 bytes with seed 0. The
// builder, the server and every client use these functions and nothing else,
// so an id hashed anywhere means the same node everywhere.
//
// Thread-safe: all functions are pure.
#ifndef GRAPHSIEVE_CORE_IO_IDS_H_
#define GRAPHSIEVE_CORE_IO_IDS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace graphsieve {

// How the text of an id column becomes a uint64.
enum class IdMode {
  kAuto,     // a decimal integer that fits in uint64 is used as is; any other text is hashed
  kInteger,  // must be a decimal integer in [0, 2^64); anything else is an error
  kString,   // always hashed, even "123"
};

// XXH3-64 of the bytes, seed 0. Stable across platforms and releases.
uint64_t HashStringId(std::string_view text);

// Parses one id. Errors (INVALID_ARGUMENT) name the problem: empty id,
// integer overflow ("18446744073709551616 does not fit in uint64"), or
// non-integer text in kInteger mode. In kAuto mode, all-digit text that
// overflows uint64 is an error too, not silently hashed.
absl::StatusOr<uint64_t> ParseId(std::string_view text, IdMode mode);

// Parses "auto" | "int" | "string" ("integer" and "str" are accepted too).
absl::StatusOr<IdMode> ParseIdMode(std::string_view name);

// "auto", "int" or "string".
const char* IdModeName(IdMode mode);

// The uniform number behind KeepNegative: the top 53 bits of
// XXH3_64bits_withSeed(instance_key as 8 little-endian bytes, seed), scaled to
// [0, 1). Exposed so clients can log it and tests can check its distribution.
double UnitIntervalFromKey(uint64_t instance_key, uint64_t seed);

// The deterministic keep decision for one negative impression: true when a
// uniform number derived from XXH3-64(instance_key as 8 little-endian bytes,
// seed) falls below `rate` (UnitIntervalFromKey(instance_key, seed) < rate;
// rate <= 0 never keeps, rate >= 1 always keeps). Same inputs, same answer, on every machine.
// Positives are always kept by the callers, not here.
bool KeepNegative(uint64_t instance_key, uint64_t seed, double rate);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_IO_IDS_H_
