// hibernation.ts and file-system-hibernation-cleanup.ts: action/event connections that survive
// the actor's sleep (same id and state, no second onConnect), and cleanup of connections closed
// while the actor slept.

#include "fixture.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace fixture {
namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kHibernationSleepTimeout{500};

struct SleepWakeCounts {
  std::int64_t sleepCount = 0;
  std::int64_t wakeCount = 0;
};
RIVETKIT_FIELDS(SleepWakeCounts, sleepCount, wakeCount)

struct HibernationConnState {
  std::int64_t count = 0;
  std::int64_t connectCount = 0;
  std::int64_t disconnectCount = 0;
};
RIVETKIT_FIELDS(HibernationConnState, count, connectCount, disconnectCount)

using HibernationTypes = rivetkit::ActorTypes<SleepWakeCounts, HibernationConnState>;

rivetkit::ActorOptions hibernation_options() {
  rivetkit::ActorOptions options;
  options.sleep_timeout = kHibernationSleepTimeout;
  return options;
}

rivetkit::Value actor_counts(const SleepWakeCounts& s) {
  return rivetkit::Value::object({{"sleepCount", s.sleepCount}, {"wakeCount", s.wakeCount}});
}

rivetkit::ActorDefinition hibernation_actor() {
  return rivetkit::actor<HibernationTypes>("hibernationActor")
      .options(hibernation_options())
      .create_conn_state([](auto&, const rivetkit::Value&) { return HibernationConnState{}; })
      .on_wake([](auto& c) { c.state().wakeCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .on_connect([](auto&, auto conn) { conn.state().connectCount += 1; })
      .on_disconnect([](auto&, auto conn) { conn.state().disconnectCount += 1; })
      .action("ping", [](auto&) { return std::string("pong"); })
      .action("connIncrement",
              [](auto& c) {
                auto conn = c.conn();
                conn.state().count += 1;
                return conn.state().count;
              })
      .action("getConnCount", [](auto& c) { return c.conn().state().count; })
      .action("getConnLifecycleCounts",
              [](auto& c) {
                const HibernationConnState& s = c.conn().state();
                return rivetkit::Value::object(
                    {{"connectCount", s.connectCount}, {"disconnectCount", s.disconnectCount}});
              })
      .action("getConnectionIds",
              [](auto& c) {
                std::vector<std::string> ids;
                for (const auto& conn : c.conns()) {
                  ids.push_back(conn.id());
                }
                return ids;
              })
      .action("getActorCounts", [](auto& c) { return actor_counts(std::as_const(c).state()); })
      .action("triggerSleep", [](auto& c) { c.sleep(); });
}

rivetkit::ActorDefinition hibernation_sleep_window_actor() {
  return rivetkit::actor<SleepWakeCounts>("hibernationSleepWindowActor")
      .options(hibernation_options())
      .on_wake([](auto& c) { c.state().wakeCount += 1; })
      .on_sleep([](auto& c) -> rivetkit::Task<void> {
        c.state().sleepCount += 1;
        c.broadcast("sleeping", rivetkit::Value{rivetkit::Undefined{}});
        co_await c.wait(500ms);
      })
      .action("getActorCounts", [](auto& c) { return actor_counts(std::as_const(c).state()); })
      .action("triggerSleep", [](auto& c) { c.sleep(); });
}

struct CleanupState {
  std::int64_t wakeCount = 0;
  std::int64_t sleepCount = 0;
  std::vector<std::int64_t> disconnectWakeCounts;
};
RIVETKIT_FIELDS(CleanupState, wakeCount, sleepCount, disconnectWakeCounts)

rivetkit::ActorDefinition file_system_hibernation_cleanup_actor() {
  return rivetkit::actor<CleanupState>("fileSystemHibernationCleanupActor")
      .options(hibernation_options())
      .create_conn_state(
          [](auto&, const rivetkit::Value&) { return rivetkit::Value{rivetkit::Object{}}; })
      .on_wake([](auto& c) { c.state().wakeCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .on_disconnect([](auto& c, auto conn) {
        // Only WebSocket connections are counted; HTTP actions are ephemeral.
        if (conn.is_hibernatable()) {
          c.state().disconnectWakeCounts.push_back(c.state().wakeCount);
        }
      })
      .action("ping", [](auto&) { return std::string("pong"); })
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("getCounts",
              [](auto& c) {
                const auto& s = std::as_const(c).state();
                return rivetkit::Value::object(
                    {{"wakeCount", s.wakeCount}, {"sleepCount", s.sleepCount}});
              })
      .action("getDisconnectWakeCounts",
              [](auto& c) { return std::as_const(c).state().disconnectWakeCounts; });
}

}  // namespace

void add_hibernation_actors(rivetkit::Registry& registry) {
  registry.add(hibernation_actor());
  registry.add(hibernation_sleep_window_actor());
  registry.add(file_system_hibernation_cleanup_actor());
}

}  // namespace fixture
