#pragma once
// The typed result of a call that answers a Value (actions through c.client(), over a handle or
// a connection).

#include <rivetkit/convert.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <type_traits>
#include <utility>

namespace rivetkit::detail {

/// Awaits `call` and converts its result to R (void: dropped; Value: as returned).
template <class R>
Task<R> converted(Task<Value> call) {
  Value result = co_await std::move(call);
  if constexpr (std::is_same_v<R, void>) {
    co_return;
  } else if constexpr (std::is_same_v<R, Value>) {
    co_return result;
  } else {
    co_return from_value<R>(result);
  }
}

}  // namespace rivetkit::detail
