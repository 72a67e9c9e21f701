#pragma once
// Bounds every decoder honours, so hostile input cannot exhaust the stack or memory.

#include <cstddef>

namespace rivetkit::protocol {

struct DecodeLimits {
  /// Maximum nesting of arrays/objects/tags.
  std::size_t max_depth = 128;
  /// Maximum number of elements a single array/map header may announce before we believe it
  /// (checked against the bytes actually remaining as well).
  std::size_t max_items = 1u << 20;
};

}  // namespace rivetkit::protocol
