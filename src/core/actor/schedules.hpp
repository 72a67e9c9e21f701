#pragma once
// Schedules: an actor's durable delayed calls of its own actions (`c.schedule()`,
// core-semantics.md §5).
//
// The schedules live in memory and are mirrored to storage through the output gate: every
// change is kept as unsaved until the next write takes it (take_changes), so a schedule is
// durable before any reply or event that follows it, and the driver's alarm is moved only once
// the write that made it is durable (sync_alarm, called by the owner then).
//
// The timer loop (run) fires each due schedule once at a time per id, soonest first (ties by id).
// A scheduled action that fails is retried with exponential backoff (schedule_retry_delay,
// doubled per attempt) up to schedule_max_attempts, then dropped with an error log; an unknown
// action is dropped at once; one cut short by a stop (actor.aborted) stays and runs on the next
// start. stop() ends the loop (the abort signal); schedules still pending stay for the next
// start, which the driver's alarm brings about.
//
// Single strand. The Host is the instance: it runs the action, requests the write and spawns.

#include "core/notifier.hpp"
#include "storage/actor_store.hpp"
#include "util/clock.hpp"
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/options.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/schedule.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rivetkit::core {

class Schedules final : public detail::ScheduleApi {
 public:
  class Host {
   public:
    virtual ~Host() = default;
    /// Runs a due schedule's action (counted as work, with the action timeout).
    virtual Task<Result<Value>> run_scheduled_action(std::string action, Array args) = 0;
    /// Something changed that the next write must take (take_changes).
    virtual void schedules_changed() = 0;
    /// The earliest pending time changed: the driver's alarm (nullopt: none pending).
    virtual void alarm_changed(std::optional<std::int64_t> at_ms) = 0;
    /// Runs `task` on the strand, keeping the owner alive until it ends.
    virtual void spawn_task(Task<void> task, const char* what) = 0;
  };

  /// The latest time a JavaScript Date can hold (what RivetKit's clients and schedules use).
  static constexpr std::int64_t kMaxTimeMs = 8'640'000'000'000'000;

  Schedules(boost::asio::any_io_executor strand,
            std::string actor_id,
            util::Clock& clock,
            const ActorOptions& options,
            Host& host);
  Schedules(const Schedules&) = delete;
  Schedules& operator=(const Schedules&) = delete;

  /// The schedules loaded with the actor (nothing to write for them).
  void load(const std::vector<storage::PersistedSchedule>& stored);

  /// Schedules `action(args)` at `at_ms`; returns its id. Throws ActorError
  /// schedule.invalid_time (outside the Date range) or schedule.max_schedules_exceeded.
  std::string at(std::int64_t at_ms, std::string action, Array args) override;
  /// Cancels a pending schedule; false when there is none with this id.
  bool cancel(const std::string& id) override;
  /// The pending schedules, soonest first (ties by id).
  std::vector<ScheduledEvent> list() const override;
  std::int64_t now_ms() const override { return clock_.now_ms(); }
  std::size_t size() const { return schedules_.size() - schedules_.count(kWakeId); }

  /// The run handler's wake-up (a workflow's sleep): the actor is woken at `at_ms` even if it
  /// sleeps meanwhile (nullopt: no longer). Kept as one internal schedule (kWakeId) that runs
  /// nothing: c.schedule() and the inspector do not show it and it does not count towards
  /// max_schedules; the driver's alarm covers it like any other schedule.
  void set_wake(std::optional<std::int64_t> at_ms);
  /// The id of the internal wake-up schedule (not a UUID, so no user schedule has it).
  static constexpr const char* kWakeId = "rivet.run-wake";

  /// Moves the changes not yet written into `write` (upserts and deletes).
  void take_changes(storage::ActorWrite& write);
  /// Tells the host the earliest pending time if it changed since it last did.
  void sync_alarm();

  /// The timer loop; returns once stop() was called.
  Task<void> run();
  /// Ends the loop; due schedules no longer fire.
  void stop();

 private:
  Task<void> fire(storage::PersistedSchedule event);
  void changed(const storage::PersistedSchedule& event);
  void removed(const std::string& id);

  std::string actor_id_;  // for logs
  util::Clock& clock_;
  const ActorOptions& options_;
  Host& host_;
  std::map<std::string, storage::PersistedSchedule> schedules_;
  std::set<std::string> running_;
  /// Changes not yet taken by a write: the new record, or nullopt for a delete.
  std::map<std::string, std::optional<storage::PersistedSchedule>> unsaved_;
  std::optional<std::int64_t> last_alarm_;  // what the host was last told (at first: none)
  bool stopped_ = false;
  Notifier wake_;
};

}  // namespace rivetkit::core
