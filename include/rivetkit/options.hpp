#pragma once
/// Per-actor options, with RivetKit 2.3.19's defaults (each member below).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace rivetkit {

struct Request;

struct ActorOptions {
  using ms = std::chrono::milliseconds;
  /// Idle time before the actor sleeps.
  ms sleep_timeout{30'000};
  /// Never sleep for idleness (explicit c.sleep() still works).
  bool no_sleep = false;
  /// Budget for onSleep/onDestroy, draining in-flight work and the final save.
  ms sleep_grace_period{15'000};
  /// Limit for one action (HTTP, connection or scheduled): `actor.action_timed_out` after it.
  ms action_timeout{60'000};
  ms create_vars_timeout{5'000};
  ms create_conn_state_timeout{5'000};
  ms on_before_connect_timeout{5'000};
  ms on_connect_timeout{5'000};
  /// Timeout of createState/onCreate (TS adapter: 5 s each) and onWake (30 s).
  ms create_state_timeout{5'000};
  ms on_wake_timeout{30'000};
  /// Whether raw `/websocket/...` sockets survive the actor's sleep (connect sockets always do).
  std::function<bool(const Request&)> can_hibernate_websocket;
  /// Hold every reply and event until the state changes it follows are durable (the default;
  /// RivetKit itself saves on a 1 s throttle and may lose acknowledged writes on a crash).
  bool durable_replies = true;
  /// Most pending schedules per actor (`schedule.max_schedules_exceeded` beyond).
  std::size_t max_schedules = 1000;
  /// Runs of a failing scheduled action before it is dropped (1: never retried).
  std::uint32_t schedule_max_attempts = 5;
  /// Delay before the first retry of a failed scheduled action; doubles with each attempt.
  ms schedule_retry_delay{1'000};
  /// Most messages queued per actor (`queue.full` beyond; RivetKit's maxQueueSize).
  std::size_t max_queue_size = 1000;
  /// Largest queue message, measured as RivetKit does (its name and CBOR body with a few bytes of
  /// framing): `queue.message_too_large` beyond (maxQueueMessageSize). At most 120 KiB here, the
  /// store's value limit with room for the record.
  std::size_t max_queue_message_size = 64 * 1024;
};

}  // namespace rivetkit
