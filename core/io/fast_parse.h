// Allocation-free number parsing for the log reader's hot path (internal to
// graphsieve_io). Each function accepts only the plain forms it can parse
// exactly and returns false otherwise, so the caller falls back to the
// general (and slower) parser for everything else.
//
// Thread-safe: pure functions.
#ifndef GRAPHSIEVE_CORE_IO_FAST_PARSE_H_
#define GRAPHSIEVE_CORE_IO_FAST_PARSE_H_

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace graphsieve::io_internal {

// Digits-only text of at most 19 characters always fits in uint64.
inline bool FastParseUint(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    const unsigned d = static_cast<unsigned char>(c) - '0';
    if (d > 9) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

// The exact fast path for plain decimals ("0.25", "-3", "12.5000"): at most
// 19 digits whose integer value is <= 2^53 and at most 22 after the point, so
// mantissa / 10^k is one correctly rounded division of two exact doubles
// (Clinger). Anything else (exponents, long mantissas) returns false.
inline bool FastParseDouble(std::string_view s, double* out) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char* p = s.data();
  const char* const end = p + s.size();
  bool negative = false;
  if (p < end && (*p == '-' || *p == '+')) negative = *p++ == '-';
  uint64_t mantissa = 0;
  int digits = 0, fraction_digits = 0;
  bool seen_point = false;
  for (; p < end; ++p) {
    const unsigned d = static_cast<unsigned char>(*p) - '0';
    if (d <= 9) {
      if (++digits > 19) return false;
      mantissa = mantissa * 10 + d;
      fraction_digits += seen_point;
    } else if (*p == '.' && !seen_point) {
      seen_point = true;
    } else {
      return false;
    }
  }
  if (digits == 0 || mantissa > (uint64_t{1} << 53) || fraction_digits > 22) return false;
  const double v = static_cast<double>(mantissa) / kPow10[fraction_digits];
  *out = negative ? -v : v;
  return true;
}

inline bool AllDigits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace graphsieve::io_internal

#endif  // GRAPHSIEVE_CORE_IO_FAST_PARSE_H_
