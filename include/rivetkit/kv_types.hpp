#pragma once
/// Plain types of the actor KV API (kv.hpp), shared with the runtime boundary
/// (detail/runtime_api.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rivetkit {

/// One key and its value. Keys and values are byte strings (text is stored as its UTF-8 bytes).
using KvPair = std::pair<std::string, std::string>;

/// Options of Kv::list and Kv::list_range.
struct KvListOptions {
  /// Keys in descending order.
  bool reverse = false;
  /// At most this many entries (0 to 4,294,967,295); none: every match. A negative or larger
  /// limit is refused with `kv.invalid_limit`.
  std::optional<std::int64_t> limit;
};

namespace detail {

/// One write of a Kv call, as the runtime receives it.
struct KvWrite {
  enum class Kind { kPut, kDelete, kDeleteRange };
  Kind kind = Kind::kPut;
  std::string key;    // the key; the start of a range
  std::string value;  // the value of a put; the (exclusive) end of a range
};

/// One list call: keys starting with `start` (prefix), or in [start, end).
struct KvList {
  bool prefix = true;
  std::string start;
  std::string end;
  KvListOptions options;
};

}  // namespace detail
}  // namespace rivetkit
