// scheduled.ts: c.schedule.at / c.schedule.after, ordering, events from scheduled actions.
// (schedule-sleep.ts only holds the helper that calls c.sleep(); the actors call it directly.)

#include "fixture.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace fixture {
namespace {

struct ScheduledState {
  std::int64_t lastRun = 0;
  std::int64_t scheduledCount = 0;
  std::vector<std::string> taskHistory;
};
RIVETKIT_FIELDS(ScheduledState, lastRun, scheduledCount, taskHistory)

rivetkit::ActorDefinition scheduled() {
  return rivetkit::actor<ScheduledState>("scheduled")
      .action("scheduleTaskAt",
              [](auto& c, std::int64_t timestamp) {
                c.schedule().at(timestamp, "onScheduledTask");
                return timestamp;
              })
      .action("scheduleTaskAfter",
              [](auto& c, std::int64_t delay_ms) {
                c.schedule().after(std::chrono::milliseconds(delay_ms), "onScheduledTask");
                return now_ms() + delay_ms;
              })
      .action("scheduleTaskAfterWithId",
              [](auto& c, std::string task_id, std::int64_t delay_ms) {
                c.schedule().after(std::chrono::milliseconds(delay_ms), "onScheduledTaskWithId",
                                   task_id);
                return rivetkit::Value::object(
                    {{"taskId", task_id}, {"scheduledFor", now_ms() + delay_ms}});
              })
      .action("scheduleTask",
              [](auto& c, std::int64_t delay_ms) {
                const std::int64_t timestamp = now_ms() + delay_ms;
                c.schedule().at(timestamp, "onScheduledTask");
                return timestamp;
              })
      .action("getLastRun", [](auto& c) { return std::as_const(c).state().lastRun; })
      .action("getScheduledCount", [](auto& c) { return std::as_const(c).state().scheduledCount; })
      .action("getTaskHistory", [](auto& c) { return std::as_const(c).state().taskHistory; })
      .action("clearHistory",
              [](auto& c) {
                c.state().taskHistory.clear();
                c.state().scheduledCount = 0;
                c.state().lastRun = 0;
                return true;
              })
      .action("onScheduledTask",
              [](auto& c) {
                auto& s = c.state();
                s.lastRun = now_ms();
                s.scheduledCount += 1;
                c.broadcast("scheduled", rivetkit::Value::object(
                                             {{"time", s.lastRun}, {"count", s.scheduledCount}}));
              })
      .action("onScheduledTaskWithId", [](auto& c, std::string task_id) {
        auto& s = c.state();
        s.lastRun = now_ms();
        s.scheduledCount += 1;
        s.taskHistory.push_back(task_id);
        c.broadcast("scheduledWithId",
                    rivetkit::Value::object(
                        {{"taskId", task_id}, {"time", s.lastRun}, {"count", s.scheduledCount}}));
      });
}

}  // namespace

void add_scheduled_actors(rivetkit::Registry& registry) {
  registry.add(scheduled());
}

}  // namespace fixture
