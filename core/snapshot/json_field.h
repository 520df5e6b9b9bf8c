// Typed fields of the snapshot's JSON documents (MANIFEST.json, the
// meta/unseen_model value), whose errors name the field. nlohmann's
// get<int>() on a JSON float such as 1e300 is a float-to-int conversion out
// of range — undefined behaviour (found by fuzz/manifest_fuzzer.cc) — and
// get<uint64_t>() of -1 wraps silently, so integer fields are read through
// IntegerField instead; get<double>() of a string says "type must be number,
// but is string" without the field, so the other types go through
// NumberField, StringField, BoolField and ObjectField.
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

// parent[key] as an object, number, string or boolean. Throws
// nlohmann::json::exception naming the key: out_of_range when it is missing,
// type_error 302 "'key' must be a number, not \"0.2\"" when it has another
// type (nlohmann's own get<T>() names neither).
inline const nlohmann::json& ObjectField(const nlohmann::json& parent, const char* key) {
  const nlohmann::json& v = parent.at(key);
  if (!v.is_object()) {
    throw nlohmann::json::type_error::create(
        302, std::string("'") + key + "' must be an object, not " + v.dump(), &v);
  }
  return v;
}
inline double NumberField(const nlohmann::json& parent, const char* key) {
  const nlohmann::json& v = parent.at(key);
  if (!v.is_number()) {
    throw nlohmann::json::type_error::create(
        302, std::string("'") + key + "' must be a number, not " + v.dump(), &v);
  }
  return v.get<double>();
}
inline std::string StringField(const nlohmann::json& parent, const char* key) {
  const nlohmann::json& v = parent.at(key);
  if (!v.is_string()) {
    throw nlohmann::json::type_error::create(
        302, std::string("'") + key + "' must be a string, not " + v.dump(), &v);
  }
  return v.get<std::string>();
}
inline bool BoolField(const nlohmann::json& parent, const char* key) {
  const nlohmann::json& v = parent.at(key);
  if (!v.is_boolean()) {
    throw nlohmann::json::type_error::create(
        302, std::string("'") + key + "' must be true or false, not " + v.dump(), &v);
  }
  return v.get<bool>();
}
// An optional number: `absent` when the key is missing (a field added later).
inline double NumberFieldOr(const nlohmann::json& parent, const char* key, double absent) {
  return parent.contains(key) ? NumberField(parent, key) : absent;
}

// The text of a JSON exception without nlohmann's "[json.exception.type_error.302] ".
inline std::string JsonErrorText(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const size_t end = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? what.substr(end + 2)
                                                                            : what;
}

}  // namespace snapshot
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_JSON_FIELD_H_
