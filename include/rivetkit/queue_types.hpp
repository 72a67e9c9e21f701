#pragma once
/// What a receive from the actor's queue asks for (queue.hpp).

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit {

struct QueueReceive {
  /// The queue names to take from; empty: every name.
  std::vector<std::string> names;
  /// The most messages `next_batch` / `try_next_batch` return (at least 1).
  std::size_t count = 1;
  /// How long `next` / `next_batch` wait for a first message; none: until one comes or the actor
  /// stops. Ignored by the try_ forms.
  std::optional<std::chrono::milliseconds> timeout;
  /// Leave the messages queued until complete() (queue.hpp).
  bool completable = false;
};

}  // namespace rivetkit
