#include "local/alarm_scheduler.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>

#include "util/log.hpp"
#include "util/spawn.hpp"

namespace rivetkit::local {

namespace asio = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;

AlarmScheduler::AlarmScheduler(asio::any_io_executor strand, std::shared_ptr<util::Clock> clock,
                               Wake wake)
    : strand_(std::move(strand)), clock_(std::move(clock)), wake_(std::move(wake)), changed_(strand_) {}

void AlarmScheduler::set(std::string actor_id, std::optional<std::int64_t> at_ms) {
  asio::post(strand_, [self = shared_from_this(), id = std::move(actor_id), at_ms] {
    self->apply(id, at_ms);
  });
}

void AlarmScheduler::apply(const std::string& actor_id, std::optional<std::int64_t> at_ms) {
  if (auto it = by_actor_.find(actor_id); it != by_actor_.end()) {
    auto range = by_time_.equal_range(it->second);
    for (auto t = range.first; t != range.second; ++t) {
      if (t->second == actor_id) {
        by_time_.erase(t);
        break;
      }
    }
    by_actor_.erase(it);
  }
  if (at_ms) {
    by_actor_[actor_id] = *at_ms;
    by_time_.emplace(*at_ms, actor_id);
  }
  changed_.notify_all();
}

void AlarmScheduler::start() { util::spawn(strand_, loop(), "local alarm scheduler"); }

void AlarmScheduler::stop() {
  asio::post(strand_, [self = shared_from_this()] {
    self->stopped_ = true;
    self->changed_.notify_all();
  });
}

Task<void> AlarmScheduler::loop() {
  auto self = shared_from_this();
  while (!stopped_) {
    if (by_time_.empty()) {
      co_await changed_.wait();
      continue;
    }
    auto [at, actor_id] = *by_time_.begin();
    std::int64_t now = clock_->now_ms();
    if (at <= now) {
      // The actor reports its next alarm once it has run what is due.
      by_time_.erase(by_time_.begin());
      by_actor_.erase(actor_id);
      wake_(actor_id);
      continue;
    }
    auto timer = clock_->wait_for(std::chrono::milliseconds(at - now));
    auto changed = changed_.wait();
    co_await (std::move(timer) || std::move(changed));
  }
}

}  // namespace rivetkit::local
