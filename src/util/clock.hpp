#pragma once
// Injectable time source. Production uses the system/steady clocks; tests substitute a manual
// clock so 30-second sleeps and hour-long schedules run in milliseconds (issue 3).

#include <chrono>
#include <cstdint>

namespace rivetkit::util {

class Clock {
 public:
  virtual ~Clock() = default;
  /// Wall-clock milliseconds since the Unix epoch (timestamps visible to users).
  virtual std::int64_t now_ms() const = 0;
};

class SystemClock final : public Clock {
 public:
  std::int64_t now_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace rivetkit::util
