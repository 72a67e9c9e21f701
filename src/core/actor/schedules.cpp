#include "core/actor/schedules.hpp"

#include "core/actor/stored_value.hpp"
#include "core/errors.hpp"
#include "core/ids.hpp"
#include "util/log.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <algorithm>

namespace rivetkit::core {

using namespace boost::asio::experimental::awaitable_operators;

Schedules::Schedules(boost::asio::any_io_executor strand,
                     std::string actor_id,
                     util::Clock& clock,
                     const ActorOptions& options,
                     Host& host)
    : actor_id_(std::move(actor_id)),
      clock_(clock),
      options_(options),
      host_(host),
      wake_(std::move(strand)) {}

void Schedules::load(const std::vector<storage::PersistedSchedule>& stored) {
  for (const auto& s : stored) {
    schedules_.emplace(s.event_id, s);
  }
}

std::string Schedules::at(std::int64_t at_ms, std::string action, Array args) {
  // A later time (e.g. a client-given delay added to now) would overflow the timers.
  if (at_ms > kMaxTimeMs || at_ms < -kMaxTimeMs) {
    throw ActorError(Error{"schedule", "invalid_time",
                           "Schedule time out of range: " + std::to_string(at_ms)
                               + " ms since the epoch (at most 8.64e15)",
                           std::nullopt, true});
  }
  if (schedules_.size() - schedules_.count(kWakeId) >= options_.max_schedules) {
    throw ActorError(
        Error{"schedule", "max_schedules_exceeded",
              "Too many pending schedules (at most " + std::to_string(options_.max_schedules) + ")",
              std::nullopt, true});
  }
  storage::PersistedSchedule event;
  event.event_id = new_uuid_v4();
  event.trigger_at = at_ms;
  event.action = std::move(action);
  if (!args.empty()) {
    event.args = encode_stored(Value{std::move(args)});
  }
  event.created_at = clock_.now_ms();
  schedules_[event.event_id] = event;
  changed(event);
  return event.event_id;
}

bool Schedules::cancel(const std::string& id) {
  if (id == kWakeId || schedules_.erase(id) == 0) {
    return false;
  }
  removed(id);
  return true;
}

std::vector<ScheduledEvent> Schedules::list() const {
  std::vector<ScheduledEvent> out;
  out.reserve(schedules_.size());
  for (const auto& [id, s] : schedules_) {
    if (id == kWakeId) {
      continue;
    }
    ScheduledEvent e;
    e.id = s.event_id;
    e.at_ms = s.trigger_at;
    e.action = s.action;
    e.attempts = s.attempts;
    if (s.args) {
      if (auto v = decode_stored(*s.args); v && v->is_array()) {
        e.args = v->as_array();
      }
    }
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const ScheduledEvent& a, const ScheduledEvent& b) {
    return a.at_ms != b.at_ms ? a.at_ms < b.at_ms : a.id < b.id;
  });
  return out;
}

void Schedules::set_wake(std::optional<std::int64_t> at_ms) {
  auto it = schedules_.find(kWakeId);
  if (!at_ms) {
    if (it != schedules_.end()) {
      schedules_.erase(it);
      removed(kWakeId);
    }
    return;
  }
  if (it != schedules_.end() && it->second.trigger_at == *at_ms) {
    return;
  }
  storage::PersistedSchedule event;
  event.event_id = kWakeId;
  event.trigger_at = *at_ms;
  event.created_at = clock_.now_ms();
  schedules_[kWakeId] = event;
  changed(event);
}

void Schedules::changed(const storage::PersistedSchedule& event) {
  unsaved_[event.event_id] = event;
  host_.schedules_changed();
  wake_.notify_all();
}

void Schedules::removed(const std::string& id) {
  unsaved_[id] = std::nullopt;
  host_.schedules_changed();
  wake_.notify_all();
}

void Schedules::take_changes(storage::ActorWrite& write) {
  for (auto& [id, change] : unsaved_) {
    if (change) {
      write.schedule_upserts.push_back(std::move(*change));
    } else {
      write.schedule_deletes.push_back(id);
    }
  }
  unsaved_.clear();
}

void Schedules::sync_alarm() {
  std::optional<std::int64_t> earliest;
  for (const auto& [id, s] : schedules_) {
    if (!earliest || s.trigger_at < *earliest) {
      earliest = s.trigger_at;
    }
  }
  if (earliest != last_alarm_) {
    last_alarm_ = earliest;
    host_.alarm_changed(earliest);
  }
}

void Schedules::stop() {
  stopped_ = true;
  wake_.notify_all();
}

Task<void> Schedules::run() {
  while (!stopped_) {
    const storage::PersistedSchedule* next = nullptr;
    for (const auto& [id, s] : schedules_) {
      if (running_.count(id) != 0) {
        continue;
      }
      if (next == nullptr || s.trigger_at < next->trigger_at
          || (s.trigger_at == next->trigger_at && s.event_id < next->event_id)) {
        next = &s;
      }
    }
    if (next == nullptr) {
      co_await wake_.wait();
      continue;
    }
    const std::int64_t now = clock_.now_ms();
    if (next->trigger_at <= now) {
      running_.insert(next->event_id);
      host_.spawn_task(fire(*next), "scheduled action");
      continue;
    }
    auto timer = clock_.wait_for(std::chrono::milliseconds(next->trigger_at - now));
    auto woken = wake_.wait();
    co_await (std::move(timer) || std::move(woken));
  }
}

Task<void> Schedules::fire(storage::PersistedSchedule event) {
  if (event.event_id == kWakeId) {
    // It woke the actor (or found it awake); the run handler sets it again if it still waits.
    running_.erase(event.event_id);
    if (auto it = schedules_.find(kWakeId);
        it != schedules_.end() && it->second.trigger_at <= event.trigger_at) {
      schedules_.erase(it);
      removed(kWakeId);
    }
    co_return;
  }
  Array args;
  if (event.args) {
    if (auto v = decode_stored(*event.args); v && v->is_array()) {
      args = v->as_array();
    }
  }
  auto result = co_await host_.run_scheduled_action(event.action, std::move(args));
  running_.erase(event.event_id);
  if (schedules_.count(event.event_id) == 0) {
    co_return;  // cancelled meanwhile
  }
  if (!result && result.error().qualified_code() == "actor.aborted" && stopped_) {
    co_return;  // cut short by a stop: it runs again on the next start
  }
  if (result || result.error().code == "action_not_found"
      || event.attempts + 1 >= options_.schedule_max_attempts) {
    if (!result) {
      log::error(
          "scheduled action dropped actor_id={} event_id={} action={} attempts={} error={}.{} "
          "message={}",
          actor_id_, event.event_id, event.action, event.attempts + 1, result.error().group,
          result.error().code, result.error().message);
    }
    schedules_.erase(event.event_id);
    removed(event.event_id);
    co_return;
  }
  auto& stored = schedules_[event.event_id];
  stored.attempts = event.attempts + 1;
  const auto delay = options_.schedule_retry_delay.count()
                     << std::min<std::uint32_t>(event.attempts, 20);
  stored.trigger_at = clock_.now_ms() + delay;
  log::warn(
      "scheduled action failed, retrying in {} ms actor_id={} event_id={} action={} attempt={} "
      "error={}.{} message={}",
      delay, actor_id_, event.event_id, event.action, stored.attempts, result.error().group,
      result.error().code, result.error().message);
  changed(stored);
}

}  // namespace rivetkit::core
