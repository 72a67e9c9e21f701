#pragma once
/// Scheduled actions (RivetKit's `c.schedule`). A schedule calls an action of the same actor at
/// a time, durably: it survives sleep and restarts, wakes a sleeping actor when due, and runs at
/// start-up if it fell due while the process was down.
///
/// Beyond RivetKit (which drops a failed run): a scheduled run that fails is retried with
/// exponential backoff (ActorOptions::schedule_retry_delay, doubling) up to
/// ActorOptions::schedule_max_attempts attempts, then dropped with an error in the log. A run
/// interrupted by a crash runs again at the next start (at-least-once).

#include <rivetkit/value.hpp>

#include <cstdint>
#include <string>

namespace rivetkit {

struct ScheduledEvent {
  std::string id;          // UUID v4
  std::int64_t at_ms = 0;  // when it is due, ms since the Unix epoch
  std::string action;
  Array args;
  std::uint32_t attempts = 0;  // failed runs so far
};

}  // namespace rivetkit
