#pragma once
// Notifier: lets coroutines on one strand wait until something changes. Waiters re-check their
// condition after every wake-up (notify_all wakes everyone; spurious wake-ups are allowed).
// Must only be used from its strand (no locking).

#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <vector>

namespace rivetkit::core {

class Notifier {
 public:
  explicit Notifier(boost::asio::any_io_executor strand) : strand_(std::move(strand)) {}
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  /// Suspends until the next notify_all().
  Task<void> wait();
  void notify_all();

 private:
  boost::asio::any_io_executor strand_;
  std::vector<std::shared_ptr<boost::asio::steady_timer>> waiters_;
};

}  // namespace rivetkit::core
