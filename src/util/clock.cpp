#include "util/clock.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>

namespace rivetkit::util {

namespace asio = boost::asio;

std::int64_t SystemClock::now_ms() const {
  return std::chrono::duration_cast<Millis>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Task<void> SystemClock::wait_until(SteadyTime deadline) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer timer(ex, deadline);
  co_await timer.async_wait(asio::use_awaitable);
}

struct ManualClock::Waiter {
  explicit Waiter(asio::any_io_executor ex) : timer(std::move(ex)) {}
  asio::steady_timer timer;
  SteadyTime deadline{};
  std::atomic<bool> fired{false};
};

ManualClock::ManualClock(std::int64_t wall_start_ms)
    : wall_ms_(wall_start_ms), steady_(SteadyTime{} + std::chrono::hours(24)) {}

std::int64_t ManualClock::now_ms() const {
  std::lock_guard lock(mutex_);
  return wall_ms_;
}

SteadyTime ManualClock::steady_now() const {
  std::lock_guard lock(mutex_);
  return steady_;
}

Task<void> ManualClock::wait_until(SteadyTime deadline) {
  auto ex = co_await asio::this_coro::executor;
  auto waiter = std::make_shared<Waiter>(ex);
  waiter->deadline = deadline;
  // The timer never expires by itself: advance() cancels it, after marking it fired.
  waiter->timer.expires_at(asio::steady_timer::time_point::max());
  {
    std::lock_guard lock(mutex_);
    if (deadline <= steady_) {
      co_return;
    }
    waiters_.push_back(waiter);
  }
  auto op = waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));
  co_await std::move(op);
  if (!waiter->fired.load()) {
    std::lock_guard lock(mutex_);
    waiters_.erase(std::remove(waiters_.begin(), waiters_.end(), waiter), waiters_.end());
    throw boost::system::system_error(asio::error::operation_aborted);
  }
}

void ManualClock::advance(Millis duration) {
  std::vector<std::shared_ptr<Waiter>> due;
  {
    std::lock_guard lock(mutex_);
    steady_ += duration;
    wall_ms_ += duration.count();
    auto split = std::partition(waiters_.begin(), waiters_.end(),
                                [this](const auto& w) { return w->deadline > steady_; });
    due.assign(split, waiters_.end());
    waiters_.erase(split, waiters_.end());
  }
  std::sort(due.begin(), due.end(),
            [](const auto& a, const auto& b) { return a->deadline < b->deadline; });
  for (auto& w : due) {
    w->fired.store(true);
    asio::post(w->timer.get_executor(), [w] { w->timer.cancel(); });
  }
}

std::size_t ManualClock::pending_waits() const {
  std::lock_guard lock(mutex_);
  return waiters_.size();
}

}  // namespace rivetkit::util
