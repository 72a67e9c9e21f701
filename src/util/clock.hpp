#pragma once
// Injectable time source. Every timer in the runtime (sleep timeouts, grace periods, action
// timeouts, schedules, c.wait()) goes through a Clock, so tests swap in a ManualClock and run
// 30-second sleeps and hour-long schedules in milliseconds, deterministically.

#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace rivetkit::util {

using SteadyTime = std::chrono::steady_clock::time_point;
using Millis = std::chrono::milliseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  /// Wall-clock milliseconds since the Unix epoch (timestamps users see; schedules).
  virtual std::int64_t now_ms() const = 0;
  /// Monotonic time (deadlines).
  virtual SteadyTime steady_now() const = 0;
  /// Resumes at `deadline`, on the awaiting coroutine's executor. Cancellable through the
  /// coroutine's cancellation slot (e.g. as the losing side of `||`); a cancelled wait throws
  /// boost::system::system_error(operation_aborted).
  virtual Task<void> wait_until(SteadyTime deadline) = 0;

  Task<void> wait_for(Millis duration) { return wait_until(steady_now() + duration); }
};

class SystemClock final : public Clock {
 public:
  std::int64_t now_ms() const override;
  SteadyTime steady_now() const override { return std::chrono::steady_clock::now(); }
  Task<void> wait_until(SteadyTime deadline) override;
};

/// Time moves only when advance() is called (from any thread). Waits whose deadline is reached
/// resume on their own executors.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::int64_t wall_start_ms = 1'767'225'600'000);  // 2026-01-01T00:00Z

  std::int64_t now_ms() const override;
  SteadyTime steady_now() const override;
  Task<void> wait_until(SteadyTime deadline) override;

  void advance(Millis duration);
  /// Number of waits registered and not yet fired or cancelled.
  std::size_t pending_waits() const;

 private:
  struct Waiter;
  mutable std::mutex mutex_;
  std::int64_t wall_ms_;
  SteadyTime steady_;
  std::vector<std::shared_ptr<Waiter>> waiters_;
};

}  // namespace rivetkit::util
