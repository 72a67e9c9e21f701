#include "core/notifier.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace rivetkit::core {

Task<void> Notifier::wait() {
  auto timer = std::make_shared<boost::asio::steady_timer>(strand_);
  timer->expires_at(boost::asio::steady_timer::time_point::max());
  waiters_.push_back(timer);
  auto op = timer->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  co_await std::move(op);
}

void Notifier::notify_all() {
  auto waiters = std::move(waiters_);
  waiters_.clear();
  for (auto& t : waiters) {
    t->cancel();
  }
}

}  // namespace rivetkit::core
