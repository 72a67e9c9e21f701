#pragma once
// Local mode's alarms: for every actor with pending schedules, the time of its earliest one. When
// that time comes the actor is woken (if it sleeps; a running instance fires its own schedules),
// and it then runs everything that is due. Loaded from storage at start-up, so schedules that
// fell due while the process was down run right away. One coroutine on one strand serves all
// actors: a sleeping actor costs an entry here and its rows on disk, nothing more.

#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/notifier.hpp"
#include "util/clock.hpp"

namespace rivetkit::local {

class AlarmScheduler : public std::enable_shared_from_this<AlarmScheduler> {
 public:
  using Wake = std::function<void(const std::string& actor_id)>;

  AlarmScheduler(boost::asio::any_io_executor strand, std::shared_ptr<util::Clock> clock, Wake wake);

  /// Sets (or clears, with nullopt) the alarm of one actor. Thread-safe.
  void set(std::string actor_id, std::optional<std::int64_t> at_ms);
  void start();
  void stop();

 private:
  Task<void> loop();
  void apply(const std::string& actor_id, std::optional<std::int64_t> at_ms);

  boost::asio::any_io_executor strand_;
  std::shared_ptr<util::Clock> clock_;
  Wake wake_;
  std::map<std::string, std::int64_t> by_actor_;
  std::multimap<std::int64_t, std::string> by_time_;
  core::Notifier changed_;
  bool stopped_ = false;
};

}  // namespace rivetkit::local
