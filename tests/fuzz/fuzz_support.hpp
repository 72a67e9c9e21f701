#pragma once
// Shared helpers for the libFuzzer targets: a check that aborts (libFuzzer records the input as a
// crash), the input as a string_view, and a Value comparison that treats NaN as equal to itself
// (Value::operator== follows IEEE, so a decoded NaN would never compare equal to its round trip).

#include <rivetkit/value.hpp>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (false)

namespace rivetkit::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Structural equality with NaN == NaN (any payload); everything else as Value::operator==.
inline bool same_value(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) {
    return false;
  }
  switch (a.kind()) {
    case Value::Kind::kDouble:
      if (std::isnan(a.as_double()) && std::isnan(b.as_double())) {
        return true;
      }
      return std::bit_cast<std::uint64_t>(a.as_double())
                 == std::bit_cast<std::uint64_t>(b.as_double())
             || a.as_double() == b.as_double();
    case Value::Kind::kArray: {
      const auto& x = a.as_array();
      const auto& y = b.as_array();
      if (x.size() != y.size()) {
        return false;
      }
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!same_value(x[i], y[i])) {
          return false;
        }
      }
      return true;
    }
    case Value::Kind::kObject: {
      const auto& x = a.as_object();
      const auto& y = b.as_object();
      if (x.size() != y.size()) {
        return false;
      }
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (x[i].key != y[i].key || !same_value(x[i].value, y[i].value)) {
          return false;
        }
      }
      return true;
    }
    default:
      return a == b;
  }
}

}  // namespace rivetkit::fuzz
