// Integer fields of the snapshot's JSON documents (MANIFEST.json, the
// meta/unseen_model value). nlohmann's get<int>() on a JSON float such as
// 1e300 is a float-to-int conversion out of range — undefined behaviour
// (found by fuzz/manifest_fuzzer.cc) — and get<uint64_t>() of -1 wraps
// silently, so integer fields are read through IntegerField instead.
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_JSON_FIELD_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_JSON_FIELD_H_

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "nlohmann/json.hpp"

namespace graphsieve {
namespace snapshot {

// parent[key] as T when it is a JSON integer within T's range. Throws
// nlohmann::json::exception otherwise (missing key: out_of_range; not an
// integer or out of range: type_error 302 naming the key), like get<T>().
template <typename T>
T IntegerField(const nlohmann::json& parent, const char* key) {
  static_assert(std::is_integral_v<T>);
  const nlohmann::json& v = parent.at(key);
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u <= static_cast<uint64_t>(std::numeric_limits<T>::max())) return static_cast<T>(u);
  } else if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if (i >= 0 ? static_cast<uint64_t>(i) <= static_cast<uint64_t>(std::numeric_limits<T>::max())
               : std::is_signed_v<T> && i >= static_cast<int64_t>(std::numeric_limits<T>::min())) {
      return static_cast<T>(i);
    }
  }
  throw nlohmann::json::type_error::create(
      302, std::string("'") + key + "' must be an integer in range, not " + v.dump(), &v);
}

}  // namespace snapshot
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_JSON_FIELD_H_
