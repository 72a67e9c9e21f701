// sleep-db.ts: actors that use their database in every part of going to sleep (onSleep,
// onDisconnect, raw WebSocket close and message handlers, waitUntil/keepAwake work, schedules
// set in onSleep) and read the log back after waking, so every write made while stopping must be
// durable. Each keeps `sleep_log(id, event, created_at)`.
//
// Where the TS fixture leaves an async WebSocket listener running while the socket takes more
// messages, the port starts that work with keep_awake: raw WebSocket handlers run one at a time
// here (include/rivetkit/websocket.hpp), and keep_awake work runs beside them, keeps the actor
// awake, and is waited for within the grace period when it stops, as RivetKit tracks listeners.

#include "actors/request_view.hpp"
#include "fixture.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fixture {
namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kSleepDbTimeout{1000};
constexpr std::chrono::milliseconds kScheduleAfterOnSleepDelay{3000};
constexpr std::chrono::milliseconds kKeepAwakeGracePeriod{2000};
constexpr std::chrono::milliseconds kKeepAwakeSingleWork{300};
constexpr std::chrono::milliseconds kKeepAwakeNestedFirst{100};
constexpr std::chrono::milliseconds kKeepAwakeNestedSecond{350};
constexpr std::chrono::milliseconds kRawWsHandlerSleepTimeout{100};
constexpr std::chrono::milliseconds kRawWsHandlerDelay{250};
constexpr std::chrono::milliseconds kExceedsGraceHandlerDelay{2000};
constexpr std::chrono::milliseconds kExceedsGracePeriod{200};
constexpr std::chrono::milliseconds kExceedsGraceSleepTimeout{100};
constexpr int kActiveDbWriteCount = 500;
constexpr std::chrono::milliseconds kActiveDbGracePeriod{50};
constexpr std::chrono::milliseconds kActiveDbSleepTimeout{500};

const std::vector<rivetkit::Migration> kSleepLog = {
    {1,
     "CREATE TABLE IF NOT EXISTS sleep_log (id INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT "
     "NULL, created_at INTEGER NOT NULL)"}};

rivetkit::ActorOptions options_of(std::chrono::milliseconds sleep_timeout,
                                  std::optional<std::chrono::milliseconds> grace = std::nullopt) {
  rivetkit::ActorOptions options;
  options.sleep_timeout = sleep_timeout;
  if (grace) {
    options.sleep_grace_period = *grace;
  }
  return options;
}

/// INSERT INTO sleep_log (event, created_at) VALUES (event, now).
template <class Ctx>
rivetkit::Task<void> log_event(Ctx c, std::string event) {
  auto op = c.db().execute("INSERT INTO sleep_log (event, created_at) VALUES (?, ?)",
                           std::move(event), now_ms());
  co_await std::move(op);
}

/// SELECT * FROM sleep_log ORDER BY id, as row objects.
template <class Ctx>
rivetkit::Task<rivetkit::Value> log_entries(Ctx c) {
  auto op = c.db().execute("SELECT * FROM sleep_log ORDER BY id");
  auto r = co_await std::move(op);
  co_return rivetkit::Value(r.objects());
}

/// What the actor's error says (TS `error.message`).
std::string message_of(const std::exception& e) {
  if (const auto* actor_error = dynamic_cast<const rivetkit::ActorError*>(&e)) {
    return actor_error->error().message;
  }
  return e.what();
}

/// The TS fixture's c.log.warn (the public API has no logger: the fixture's stderr).
void warn(const std::string& text) {
  std::fprintf(stderr, "warn: %s\n", text.c_str());
}

struct Counts {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
};
RIVETKIT_FIELDS(Counts, startCount, sleepCount)

/// The actions every sleep-db actor has: triggerSleep and getLogEntries.
template <class Builder>
Builder& with_log(Builder& b) {
  b.database(kSleepLog)
      .action("triggerSleep", [](auto& c) { c.sleep(); })
      .action("getLogEntries", [](auto& c) { return log_entries(c); });
  return b;
}

/// onWake: startCount + 1 and a 'wake' row.
template <class Builder>
Builder& with_wake_log(Builder& b) {
  b.on_wake([](auto& c) -> rivetkit::Task<void> {
    c.state().startCount += 1;
    co_await log_event(c, "wake");
  });
  return b;
}

/// onSleep: sleepCount + 1 and a 'sleep' row.
template <class Builder>
Builder& with_sleep_log(Builder& b) {
  b.on_sleep([](auto& c) -> rivetkit::Task<void> {
    c.state().sleepCount += 1;
    co_await log_event(c, "sleep");
  });
  return b;
}

/// The greeting every raw WebSocket of these actors starts with.
void send_connected(const rivetkit::WebSocket& ws) {
  ws.send(json(rivetkit::Value::object({{"type", "connected"}})));
}

// ---- sleepWithDb ----------------------------------------------------------------------------

struct SleepWithDbState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  bool onSleepDbWriteSuccess = false;
  std::optional<std::string> onSleepDbWriteError;
};
RIVETKIT_FIELDS(
    SleepWithDbState, startCount, sleepCount, onSleepDbWriteSuccess, onSleepDbWriteError)

template <class Ctx>
rivetkit::Task<void> sleep_with_db_on_sleep(Ctx c) {
  c.state().sleepCount += 1;
  try {
    co_await log_event(c, "sleep");
    c.state().onSleepDbWriteSuccess = true;
  } catch (const std::exception& e) {
    c.state().onSleepDbWriteError = message_of(e);
  }
}

rivetkit::ActorDefinition sleep_with_db() {
  auto b = rivetkit::actor<SleepWithDbState>("sleepWithDb");
  with_log(b).options(options_of(kSleepDbTimeout));
  with_wake_log(b)
      .on_sleep([](auto& c) { return sleep_with_db_on_sleep(c); })
      .action("triggerSleepTwice",
              [](auto& c) {
                c.sleep();
                c.sleep();
              })
      .action("getCounts", [](auto& c) { return std::as_const(c).state(); })
      .action("insertLogEntry", [](auto& c, std::string event) { return log_event(c, event); })
      .action("setAlarm",
              [](auto& c, std::int64_t delay_ms) {
                c.schedule().after(std::chrono::milliseconds(delay_ms), "onAlarm");
              })
      .action("onAlarm", [](auto& c) { return log_event(c, "alarm"); });
  return b;
}

// ---- sleepEnqueue ---------------------------------------------------------------------------

struct SleepEnqueueState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  bool enqueueSuccess = false;
  std::optional<std::string> enqueueError;
};
RIVETKIT_FIELDS(SleepEnqueueState, startCount, sleepCount, enqueueSuccess, enqueueError)

// onSleep sends to the actor's own queue (it must succeed), then logs 'sleep'.
template <class Ctx>
rivetkit::Task<void> sleep_enqueue_on_sleep(Ctx c) {
  c.state().sleepCount += 1;
  try {
    auto op = c.queue().send("work", std::string("enqueued-during-sleep"));
    co_await std::move(op);
    c.state().enqueueSuccess = true;
  } catch (const std::exception& e) {
    c.state().enqueueError = message_of(e);
  }
  co_await log_event(c, "sleep");
}

rivetkit::ActorDefinition sleep_enqueue() {
  auto b = rivetkit::actor<SleepEnqueueState>("sleepEnqueue");
  with_log(b).queue("work").options(options_of(kSleepDbTimeout));
  with_wake_log(b)
      .on_sleep([](auto& c) { return sleep_enqueue_on_sleep(c); })
      .action("getCounts", [](auto& c) { return std::as_const(c).state(); });
  return b;
}

// ---- sleepWithSlowScheduledDb ---------------------------------------------------------------

template <class Ctx>
rivetkit::Task<void> slow_alarm(Ctx c, std::int64_t work_ms) {
  co_await log_event(c, "slow-alarm-start");
  co_await c.wait(std::chrono::milliseconds(work_ms));
  co_await log_event(c, "slow-alarm-finish");
}

rivetkit::ActorDefinition sleep_with_slow_scheduled_db() {
  auto b = rivetkit::actor<Counts>("sleepWithSlowScheduledDb");
  with_log(b).options(options_of(kSleepDbTimeout));
  with_wake_log(b);
  with_sleep_log(b)
      .action("scheduleSlowAlarm",
              [](auto& c, std::int64_t delay_ms, std::int64_t work_ms) {
                c.schedule().after(std::chrono::milliseconds(delay_ms), "onSlowAlarm", work_ms);
              })
      .action("getCounts", [](auto& c) { return std::as_const(c).state(); })
      .action("onSlowAlarm", [](auto& c, std::int64_t work_ms) { return slow_alarm(c, work_ms); });
  return b;
}

// ---- sleepKeepAwakeUntilIdle ----------------------------------------------------------------

struct KeepAwakeState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t singleFinished = 0;
  std::int64_t nestedFirstFinished = 0;
  std::int64_t nestedSecondFinished = 0;
};
RIVETKIT_FIELDS(KeepAwakeState,
                startCount,
                sleepCount,
                singleFinished,
                nestedFirstFinished,
                nestedSecondFinished)

template <class Ctx>
rivetkit::Task<void> single_keep_awake(Ctx c) {
  co_await log_event(c, "single-start");
  co_await c.wait(kKeepAwakeSingleWork);
  co_await log_event(c, "single-finish");
  c.state().singleFinished += 1;
}

template <class Ctx>
rivetkit::Task<void> nested_second(Ctx c) {
  co_await log_event(c, "nested-second-start");
  co_await c.wait(kKeepAwakeNestedSecond);
  co_await log_event(c, "nested-second-finish");
  c.state().nestedSecondFinished += 1;
}

template <class Ctx>
rivetkit::Task<void> nested_first(Ctx c) {
  co_await log_event(c, "nested-first-start");
  co_await c.wait(kKeepAwakeNestedFirst);
  c.keep_awake(nested_second(c));
  co_await log_event(c, "nested-first-finish");
  c.state().nestedFirstFinished += 1;
}

rivetkit::ActorDefinition sleep_keep_awake_until_idle() {
  auto b = rivetkit::actor<KeepAwakeState>("sleepKeepAwakeUntilIdle");
  with_log(b).options(options_of(kSleepDbTimeout, kKeepAwakeGracePeriod));
  b.on_wake([](auto& c) -> rivetkit::Task<void> {
     c.state().startCount += 1;
     co_await log_event(c, "wake-" + std::to_string(c.state().startCount));
   })
      .on_sleep([](auto& c) -> rivetkit::Task<void> {
        c.state().sleepCount += 1;
        co_await log_event(c, "sleep-" + std::to_string(c.state().sleepCount));
      })
      .action("startSingleKeepAwake", [](auto& c) { c.keep_awake(single_keep_awake(c)); })
      .action("startNestedKeepAwake", [](auto& c) { c.keep_awake(nested_first(c)); })
      .action("getStatus", [](auto& c) { return std::as_const(c).state(); });
  return b;
}

// ---- sleepWithDbConn, sleepWithDbAction -----------------------------------------------------

template <class Ctx>
rivetkit::Task<void> log_or_warn(Ctx c, std::string event, std::string what) {
  try {
    co_await log_event(c, std::move(event));
  } catch (const std::exception& e) {
    warn(what + " db write failed: " + message_of(e));
  }
}

rivetkit::ActorDefinition sleep_with_db_conn() {
  auto b = rivetkit::actor<Counts>("sleepWithDbConn");
  with_log(b).options(options_of(kSleepDbTimeout));
  with_wake_log(b)
      .on_disconnect([](auto& c, auto&) { return log_or_warn(c, "disconnect", "onDisconnect"); })
      .on_sleep([](auto& c) {
        c.state().sleepCount += 1;
        return log_or_warn(c, "sleep", "onSleep");
      })
      .action("triggerSleepTwice",
              [](auto& c) {
                c.sleep();
                c.sleep();
              })
      .action("getCounts", [](auto& c) { return std::as_const(c).state(); })
      .action("insertLogEntry", [](auto& c, std::string event) { return log_event(c, event); });
  return b;
}

template <class Ctx>
rivetkit::Task<void> sleep_with_broadcast(Ctx c) {
  c.state().sleepCount += 1;
  try {
    co_await log_event(c, "sleep-start");
    c.broadcast("sleeping");
    co_await c.wait(500ms);
    co_await log_event(c, "sleep-end");
  } catch (const std::exception& e) {
    warn("onSleep error: " + message_of(e));
  }
}

rivetkit::ActorDefinition sleep_with_db_action() {
  auto b = rivetkit::actor<Counts>("sleepWithDbAction");
  with_log(b).options(options_of(kSleepDbTimeout));
  with_wake_log(b)
      .on_sleep([](auto& c) { return sleep_with_broadcast(c); })
      .action("triggerSleepTwice",
              [](auto& c) {
                c.sleep();
                c.sleep();
              })
      .action("getCounts", [](auto& c) { return std::as_const(c).state(); })
      .action("insertLogEntry", [](auto& c, std::string event) { return log_event(c, event); });
  return b;
}

// ---- waitUntil in onSleep: sleepWaitUntil, sleepNestedWaitUntil, sleepWaitUntilRejects,
// sleepWaitUntilState -------------------------------------------------------------------------

template <class Ctx>
rivetkit::Task<void> outer_wait_until(Ctx c) {
  co_await log_event(c, "outer-waituntil");
  c.wait_until(log_event(c, "nested-waituntil"));
}

rivetkit::Task<void> rejecting() {
  throw std::runtime_error("waitUntil intentional rejection");
  co_return;
}

struct WaitUntilState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  bool waitUntilRan = false;
};
RIVETKIT_FIELDS(WaitUntilState, startCount, sleepCount, waitUntilRan)

template <class Ctx>
rivetkit::Task<void> wait_until_state(Ctx c) {
  c.state().waitUntilRan = true;
  co_await log_event(c, "waituntil-state");
}

enum class WaitUntilKind { kPlain, kNested, kRejects, kState };

template <class Ctx>
rivetkit::Task<void> wait_until_on_sleep(Ctx c, WaitUntilKind kind) {
  c.state().sleepCount += 1;
  switch (kind) {
    case WaitUntilKind::kPlain:
      co_await log_event(c, "sleep-start");
      c.wait_until(log_event(c, "waituntil-write"));
      break;
    case WaitUntilKind::kNested:
      co_await log_event(c, "sleep-start");
      c.wait_until(outer_wait_until(c));
      break;
    case WaitUntilKind::kRejects:
      co_await log_event(c, "sleep");
      c.wait_until(rejecting());
      c.wait_until(log_event(c, "waituntil-after-reject"));
      break;
    case WaitUntilKind::kState:
      c.wait_until(wait_until_state(c));
      break;
  }
}

rivetkit::ActorDefinition wait_until_actor(std::string name, WaitUntilKind kind) {
  auto b = rivetkit::actor<WaitUntilState>(std::move(name));
  with_log(b).options(options_of(kSleepDbTimeout));
  with_wake_log(b)
      .on_sleep([kind](auto& c) { return wait_until_on_sleep(c, kind); })
      .action("getCounts", [kind](auto& c) {
        const auto& s = std::as_const(c).state();
        auto counts =
            rivetkit::Value::object({{"startCount", s.startCount}, {"sleepCount", s.sleepCount}});
        if (kind == WaitUntilKind::kState) {
          counts.set("waitUntilRan", s.waitUntilRan);
        }
        return counts;
      });
  return b;
}

// ---- sleepScheduleAfter ---------------------------------------------------------------------

struct ScheduleAfterState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t scheduledActionCount = 0;
  bool holdAfterWake = false;
};
RIVETKIT_FIELDS(ScheduleAfterState, startCount, sleepCount, scheduledActionCount, holdAfterWake)

struct HoldVars {
  // Keeps the woken actor awake until getCounts has seen the scheduled action (cancelled then).
  std::shared_ptr<boost::asio::steady_timer> hold;
};

using ScheduleAfterTypes = rivetkit::ActorTypes<ScheduleAfterState, rivetkit::Value, HoldVars>;

rivetkit::Task<void> held(std::shared_ptr<boost::asio::steady_timer> timer) {
  co_await timer->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
}

rivetkit::ActorDefinition sleep_schedule_after() {
  auto b = rivetkit::actor<ScheduleAfterTypes>("sleepScheduleAfter");
  with_log(b).options(options_of(kSleepDbTimeout));
  b.create_vars([](auto&) { return HoldVars{}; })
      .on_wake([](auto& c) -> rivetkit::Task<void> {
        c.state().startCount += 1;
        if (c.state().holdAfterWake) {
          // Keeps the alarm's wake observable before idle sleep can come again.
          c.vars().hold = std::make_shared<boost::asio::steady_timer>(
              c.executor(), boost::asio::steady_timer::time_point::max());
          c.keep_awake(held(c.vars().hold));
        }
        co_await log_event(c, "wake");
      })
      .on_sleep([](auto& c) -> rivetkit::Task<void> {
        c.state().sleepCount += 1;
        c.state().holdAfterWake = true;
        c.schedule().after(kScheduleAfterOnSleepDelay, "onScheduledAction");
        co_await log_event(c, "sleep");
      })
      .action("getCounts",
              [](auto& c) {
                auto counts = rivetkit::Value::object(
                    {{"startCount", c.state().startCount},
                     {"sleepCount", c.state().sleepCount},
                     {"scheduledActionCount", c.state().scheduledActionCount}});
                if (c.state().scheduledActionCount > 0) {
                  c.state().holdAfterWake = false;
                  if (c.vars().hold) {
                    c.vars().hold->cancel();
                    c.vars().hold.reset();
                  }
                }
                return counts;
              })
      .action("onScheduledAction", [](auto& c) {
        c.state().scheduledActionCount += 1;
        return log_event(c, "scheduled-action");
      });
  return b;
}

// ---- sleepOnSleepThrows ---------------------------------------------------------------------

rivetkit::ActorDefinition sleep_on_sleep_throws() {
  auto b = rivetkit::actor<Counts>("sleepOnSleepThrows");
  with_log(b).options(options_of(kSleepDbTimeout));
  with_wake_log(b)
      .on_sleep([](auto& c) -> rivetkit::Task<void> {
        c.state().sleepCount += 1;
        co_await log_event(c, "sleep-before-throw");
        throw std::runtime_error("onSleep intentional error");
      })
      .action("getCounts", [](auto& c) { return std::as_const(c).state(); });
  return b;
}

// ---- raw WebSockets: sleepWithRawWs, sleepWithRawWsCloseDb(Listener) -------------------------

rivetkit::ActorDefinition sleep_with_raw_ws() {
  auto b = rivetkit::actor<Counts>("sleepWithRawWs");
  with_log(b).options(options_of(kSleepDbTimeout));
  with_wake_log(b)
      .on_sleep([](auto& c) -> rivetkit::Task<void> {
        c.state().sleepCount += 1;
        co_await log_event(c, "sleep");
        co_await c.wait(500ms);  // a window to open a raw WebSocket while stopping
      })
      .on_websocket([](auto&, rivetkit::WebSocket ws) { send_connected(ws); })
      .action("getCounts", [](auto& c) { return std::as_const(c).state(); });
  return b;
}

struct CloseDbState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t closeStarted = 0;
  std::int64_t closeFinished = 0;
};
RIVETKIT_FIELDS(CloseDbState, startCount, sleepCount, closeStarted, closeFinished)

template <class Ctx>
rivetkit::Task<void> close_with_db(Ctx c) {
  c.state().closeStarted += 1;
  co_await log_event(c, "close-start");
  co_await c.wait(kRawWsHandlerDelay);
  co_await log_event(c, "close-finish");
  c.state().closeFinished += 1;
}

/// The TS fixture sets the close handler as a property or with addEventListener: one
/// registration here, two actors.
rivetkit::ActorDefinition sleep_with_raw_ws_close_db(std::string name) {
  auto b = rivetkit::actor<CloseDbState>(std::move(name));
  with_log(b).options(options_of(kRawWsHandlerSleepTimeout));
  with_wake_log(b);
  with_sleep_log(b)
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        ws.on_close([c](std::uint16_t, std::string) mutable { return close_with_db(c); });
        send_connected(ws);
      })
      .action("getStatus", [](auto& c) { return std::as_const(c).state(); });
  return b;
}

// ---- handlers outliving the grace period: sleepWsMessageExceedsGrace,
// sleepWsConcurrentDbExceedsGrace, sleepWsActiveDbExceedsGrace ---------------------------------

struct MessageExceedsState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t messageStarted = 0;
  std::int64_t messageFinished = 0;
};
RIVETKIT_FIELDS(MessageExceedsState, startCount, sleepCount, messageStarted, messageFinished)

template <class Ctx>
rivetkit::Task<void> slow_db_work(Ctx c, rivetkit::WebSocket ws) {
  c.state().messageStarted += 1;
  co_await log_event(c, "msg-start");
  ws.send(json(rivetkit::Value::object({{"type", "started"}})));
  // Longer than the grace period: the actor stops under it, and this must not write after.
  co_await c.wait(kExceedsGraceHandlerDelay);
  co_await log_event(c, "msg-finish");
  c.state().messageFinished += 1;
}

rivetkit::ActorDefinition sleep_ws_message_exceeds_grace() {
  auto b = rivetkit::actor<MessageExceedsState>("sleepWsMessageExceedsGrace");
  with_log(b).options(options_of(kExceedsGraceSleepTimeout, kExceedsGracePeriod));
  with_wake_log(b);
  with_sleep_log(b)
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        ws.on_message([c, ws](rivetkit::WebSocketMessage msg) mutable -> rivetkit::Task<void> {
          if (msg.binary || msg.data != "slow-db-work") {
            return []() -> rivetkit::Task<void> {
              co_return;
            }();
          }
          return slow_db_work(c, ws);
        });
        send_connected(ws);
      })
      .action("getStatus", [](auto& c) { return std::as_const(c).state(); });
  return b;
}

struct ConcurrentExceedsState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t handlerStarted = 0;
  std::int64_t handlerFinished = 0;
  std::vector<std::string> handlerErrors;
};
RIVETKIT_FIELDS(
    ConcurrentExceedsState, startCount, sleepCount, handlerStarted, handlerFinished, handlerErrors)

template <class Ctx>
rivetkit::Task<void> concurrent_db_work(Ctx c, rivetkit::WebSocket ws, std::int64_t index) {
  const std::string prefix = "handler-" + std::to_string(index);
  co_await log_event(c, prefix + "-start");
  ws.send(json(rivetkit::Value::object({{"type", "started"}, {"index", index}})));
  co_await c.wait(kExceedsGraceHandlerDelay + std::chrono::milliseconds(index * 50));
  co_await log_event(c, prefix + "-finish");
  c.state().handlerFinished += 1;
}

rivetkit::ActorDefinition sleep_ws_concurrent_db_exceeds_grace() {
  auto b = rivetkit::actor<ConcurrentExceedsState>("sleepWsConcurrentDbExceedsGrace");
  with_log(b).options(options_of(kExceedsGraceSleepTimeout, kExceedsGracePeriod));
  with_wake_log(b)
      .on_sleep([](auto& c) {
        c.state().sleepCount += 1;
        return log_or_warn(c, "sleep", "onSleep");
      })
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        ws.on_message([c, ws](rivetkit::WebSocketMessage msg) mutable {
          auto data = parse(msg.data);
          if (!data || type_of(*data) != "slow-db-work") {
            return;
          }
          std::int64_t index = 0;
          if (const auto* i = data->find("index"); i != nullptr && i->is_number()) {
            index = i->as_int();
          }
          c.state().handlerStarted += 1;
          // Concurrent handlers, as RivetKit's async listeners.
          c.keep_awake(concurrent_db_work(c, ws, index));
        });
        send_connected(ws);
      })
      .action("getStatus", [](auto& c) { return std::as_const(c).state(); });
  return b;
}

struct ActiveDbState {
  std::int64_t startCount = 0;
  std::int64_t sleepCount = 0;
  std::int64_t writesCompleted = 0;
  std::optional<std::string> writeError;
};
RIVETKIT_FIELDS(ActiveDbState, startCount, sleepCount, writesCompleted, writeError)

/// Write permits the test hands out one `continue-write` message at a time.
struct Permits {
  explicit Permits(const boost::asio::any_io_executor& ex)
      : timer(ex, boost::asio::steady_timer::time_point::max()) {}
  int queued = 0;
  bool waiting = false;
  boost::asio::steady_timer timer;

  void release() {
    if (waiting) {
      waiting = false;
      timer.cancel();
    } else {
      ++queued;
    }
  }
};

rivetkit::Task<void> next_permit(std::shared_ptr<Permits> permits) {
  if (permits->queued > 0) {
    --permits->queued;
    co_return;
  }
  permits->waiting = true;
  permits->timer.expires_at(boost::asio::steady_timer::time_point::max());
  co_await permits->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
}

template <class Ctx>
rivetkit::Task<void> active_writes(Ctx c,
                                   rivetkit::WebSocket ws,
                                   std::shared_ptr<Permits> permits) {
  for (int i = 0; i < kActiveDbWriteCount; ++i) {
    co_await next_permit(permits);
    try {
      co_await log_event(c, "write-" + std::to_string(i));
    } catch (const std::exception& e) {
      c.state().writeError = message_of(e);
      ws.send(json(rivetkit::Value::object(
          {{"type", "error"}, {"index", i}, {"error", *c.state().writeError}})));
      co_return;
    }
    c.state().writesCompleted = i + 1;
    ws.send(json(rivetkit::Value::object(
        {{"type", "write"}, {"index", i}, {"writesCompleted", c.state().writesCompleted}})));
  }
  ws.send(json(rivetkit::Value::object({{"type", "finished"}})));
}

rivetkit::ActorDefinition sleep_ws_active_db_exceeds_grace() {
  auto b = rivetkit::actor<ActiveDbState>("sleepWsActiveDbExceedsGrace");
  with_log(b).options(options_of(kActiveDbSleepTimeout, kActiveDbGracePeriod));
  b.on_wake([](auto& c) { c.state().startCount += 1; })
      .on_sleep([](auto& c) { c.state().sleepCount += 1; })
      .on_websocket([](auto& c, rivetkit::WebSocket ws) {
        auto permits = std::make_shared<Permits>(c.executor());
        ws.on_message([c, ws, permits](rivetkit::WebSocketMessage msg) mutable {
          auto data = parse(msg.data);
          const std::string type = data ? type_of(*data) : std::string();
          if (type == "continue-write") {
            permits->release();
          } else if (type == "start-writes") {
            ws.send(json(rivetkit::Value::object({{"type", "started"}})));
            // Beside the handler, so the next messages (the permits) reach it.
            c.keep_awake(active_writes(c, ws, permits));
          }
        });
        send_connected(ws);
      })
      .action("getStatus", [](auto& c) { return std::as_const(c).state(); });
  return b;
}

}  // namespace

void add_sleep_db_actors(rivetkit::Registry& registry) {
  registry.add(sleep_with_db());
  registry.add(sleep_enqueue());
  registry.add(sleep_with_slow_scheduled_db());
  registry.add(sleep_keep_awake_until_idle());
  registry.add(sleep_with_db_conn());
  registry.add(sleep_with_db_action());
  registry.add(wait_until_actor("sleepWaitUntil", WaitUntilKind::kPlain));
  registry.add(wait_until_actor("sleepNestedWaitUntil", WaitUntilKind::kNested));
  registry.add(wait_until_actor("sleepWaitUntilRejects", WaitUntilKind::kRejects));
  registry.add(wait_until_actor("sleepWaitUntilState", WaitUntilKind::kState));
  registry.add(sleep_schedule_after());
  registry.add(sleep_on_sleep_throws());
  registry.add(sleep_with_raw_ws());
  registry.add(sleep_with_raw_ws_close_db("sleepWithRawWsCloseDb"));
  registry.add(sleep_with_raw_ws_close_db("sleepWithRawWsCloseDbListener"));
  registry.add(sleep_ws_message_exceeds_grace());
  registry.add(sleep_ws_concurrent_db_exceeds_grace());
  registry.add(sleep_ws_active_db_exceeds_grace());
}

}  // namespace fixture
