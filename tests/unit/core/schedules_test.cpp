// The schedules part alone, on a manual clock, with a host that records what it is asked to do:
// due schedules fire soonest first, failures are retried with backoff then dropped, an unknown
// action is dropped at once, a stop-cut run stays, changes reach the write once, the alarm
// follows the earliest schedule, and bad times or too many schedules are refused.

#include "core/actor/schedules.hpp"

#include "core/actor/stored_value.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using std::chrono::seconds;

void rethrow(std::exception_ptr e) {
  if (e) {
    std::rethrow_exception(e);
  }
}

class FakeHost final : public Schedules::Host {
 public:
  explicit FakeHost(asio::io_context& io) : io_(io) {}

  struct Run {
    std::string action;
    Array args;
    std::int64_t at_ms;
  };
  std::vector<Run> runs;
  std::function<Result<Value>(const std::string&)> outcome = [](const std::string&) {
    return Result<Value>{Value{true}};
  };
  util::ManualClock* clock = nullptr;
  int changes = 0;
  std::vector<std::optional<std::int64_t>> alarms;

  Task<Result<Value>> run_scheduled_action(std::string action, Array args) override {
    runs.push_back({action, args, clock->now_ms()});
    co_return outcome(action);
  }
  void schedules_changed() override { ++changes; }
  void alarm_changed(std::optional<std::int64_t> at_ms) override { alarms.push_back(at_ms); }
  void spawn_task(Task<void> task, const char*) override {
    asio::co_spawn(io_, std::move(task), rethrow);
  }

 private:
  asio::io_context& io_;
};

class SchedulesTest : public ::testing::Test {
 protected:
  SchedulesTest() {
    options.schedule_retry_delay = seconds(1);
    options.schedule_max_attempts = 3;
    options.max_schedules = 4;
    host.clock = &clock;
  }
  void start() {
    asio::co_spawn(io, schedules.run(), rethrow);
    settle();
  }
  void settle() {
    for (int i = 0; i < 5; ++i) {
      io.restart();
      io.poll();
    }
  }
  void advance(milliseconds d) {
    clock.advance(d);
    settle();
  }
  storage::ActorWrite take() {
    storage::ActorWrite w;
    schedules.take_changes(w);
    return w;
  }

  asio::io_context io;
  util::ManualClock clock;
  ActorOptions options;
  FakeHost host{io};
  Schedules schedules{io.get_executor(), "actor-1", clock, options, host};
};

TEST_F(SchedulesTest, DueSchedulesFireSoonestFirstWithTheirArguments) {
  start();
  const auto now = clock.now_ms();
  schedules.at(now + 2000, "second", Array{Value{2}});
  schedules.at(now + 1000, "first", Array{Value{"a"}, Value{1}});
  advance(milliseconds(999));
  EXPECT_TRUE(host.runs.empty());
  advance(milliseconds(1));
  ASSERT_EQ(host.runs.size(), 1u);
  EXPECT_EQ(host.runs[0].action, "first");
  ASSERT_EQ(host.runs[0].args.size(), 2u);
  EXPECT_EQ(host.runs[0].args[0].as_string(), "a");
  advance(seconds(1));
  ASSERT_EQ(host.runs.size(), 2u);
  EXPECT_EQ(host.runs[1].action, "second");
  EXPECT_EQ(schedules.size(), 0u) << "a schedule that ran is gone";
}

TEST_F(SchedulesTest, APastTimeRunsAtOnce) {
  start();
  schedules.at(clock.now_ms() - 5000, "late", {});
  settle();
  ASSERT_EQ(host.runs.size(), 1u);
}

TEST_F(SchedulesTest, AFailingActionIsRetriedWithBackoffThenDropped) {
  host.outcome = [](const std::string&) {
    return Result<Value>{fail(Error{"user", "nope", "nope", std::nullopt, true})};
  };
  start();
  const auto first = clock.now_ms() + 100;
  schedules.at(first, "failing", {});
  advance(milliseconds(100));
  ASSERT_EQ(host.runs.size(), 1u);
  ASSERT_EQ(schedules.list().size(), 1u);
  EXPECT_EQ(schedules.list()[0].attempts, 1u);
  advance(seconds(1));  // retry 1 after 1 s
  ASSERT_EQ(host.runs.size(), 2u);
  advance(seconds(1));  // retry 2 after 2 s: not yet
  EXPECT_EQ(host.runs.size(), 2u);
  advance(seconds(1));
  ASSERT_EQ(host.runs.size(), 3u);
  EXPECT_EQ(schedules.size(), 0u) << "dropped after schedule_max_attempts";
  advance(seconds(60));
  EXPECT_EQ(host.runs.size(), 3u);
}

TEST_F(SchedulesTest, AnUnknownActionIsDroppedAtOnce) {
  host.outcome = [](const std::string&) {
    return Result<Value>{fail(Error{"actor", "action_not_found", "no", std::nullopt, true})};
  };
  start();
  schedules.at(clock.now_ms(), "missing", {});
  settle();
  EXPECT_EQ(host.runs.size(), 1u);
  EXPECT_EQ(schedules.size(), 0u);
}

TEST_F(SchedulesTest, ARunCutShortByAStopStaysForTheNextStart) {
  host.outcome = [this](const std::string&) {
    schedules.stop();  // what cuts an action short: the instance stops
    return Result<Value>{fail(Error{"actor", "aborted", "stopped", std::nullopt, true})};
  };
  start();
  schedules.at(clock.now_ms(), "cut", {});
  settle();
  take();
  EXPECT_EQ(host.runs.size(), 1u);
  EXPECT_EQ(schedules.size(), 1u);
  EXPECT_TRUE(take().schedule_deletes.empty()) << "nothing to write: it stays as it was";
}

TEST_F(SchedulesTest, AnAbortedErrorWhileRunningIsAnOrdinaryFailure) {
  // A user action may throw actor.aborted itself: without a stop it is retried, not re-fired
  // at once for ever.
  host.outcome = [](const std::string&) {
    return Result<Value>{fail(Error{"actor", "aborted", "user said so", std::nullopt, true})};
  };
  start();
  schedules.at(clock.now_ms(), "x", {});
  settle();
  EXPECT_EQ(host.runs.size(), 1u);
  ASSERT_EQ(schedules.list().size(), 1u);
  EXPECT_EQ(schedules.list()[0].attempts, 1u);
}

TEST_F(SchedulesTest, CancelRemovesAPendingSchedule) {
  start();
  auto id = schedules.at(clock.now_ms() + 1000, "x", {});
  EXPECT_TRUE(schedules.cancel(id));
  EXPECT_FALSE(schedules.cancel(id));
  EXPECT_FALSE(schedules.cancel("unknown"));
  advance(seconds(2));
  EXPECT_TRUE(host.runs.empty());
}

TEST_F(SchedulesTest, ChangesReachTheWriteOnceAndTheLastChangeOfAnIdWins) {
  auto kept = schedules.at(clock.now_ms() + 1000, "kept", {});
  auto gone = schedules.at(clock.now_ms() + 2000, "gone", {});
  EXPECT_EQ(host.changes, 2);
  schedules.cancel(gone);
  auto w = take();
  ASSERT_EQ(w.schedule_upserts.size(), 1u);
  EXPECT_EQ(w.schedule_upserts[0].event_id, kept);
  ASSERT_EQ(w.schedule_deletes.size(), 1u);
  EXPECT_EQ(w.schedule_deletes[0], gone);
  EXPECT_TRUE(take().schedule_upserts.empty()) << "taken once";
}

TEST_F(SchedulesTest, LoadedSchedulesNeedNoWriteAndFire) {
  storage::PersistedSchedule s;
  s.event_id = "e1";
  s.trigger_at = clock.now_ms() + 500;
  s.action = "loaded";
  s.args = encode_stored(Value{Array{Value{7}}});
  schedules.load({s});
  auto w = take();
  EXPECT_TRUE(w.schedule_upserts.empty());
  start();
  advance(milliseconds(500));
  ASSERT_EQ(host.runs.size(), 1u);
  EXPECT_EQ(host.runs[0].args[0].as_int(), 7);
  EXPECT_EQ(take().schedule_deletes, std::vector<std::string>{"e1"});
}

TEST_F(SchedulesTest, TheAlarmFollowsTheEarliestScheduleAndIsToldOnlyOfChanges) {
  schedules.sync_alarm();
  EXPECT_TRUE(host.alarms.empty()) << "nothing pending and nothing told before: no call";
  const auto now = clock.now_ms();
  schedules.at(now + 5000, "later", {});
  schedules.sync_alarm();
  auto soon = schedules.at(now + 1000, "sooner", {});
  schedules.sync_alarm();
  schedules.sync_alarm();
  ASSERT_EQ(host.alarms.size(), 2u);
  EXPECT_EQ(host.alarms[0], now + 5000);
  EXPECT_EQ(host.alarms[1], now + 1000);
  schedules.cancel(soon);
  schedules.sync_alarm();
  ASSERT_EQ(host.alarms.size(), 3u);
  EXPECT_EQ(host.alarms[2], now + 5000);
}

TEST_F(SchedulesTest, StopEndsTheLoopAndDueSchedulesNoLongerFire) {
  bool ended = false;
  asio::co_spawn(
      io,
      [&]() -> Task<void> {
        co_await schedules.run();
        ended = true;
      },
      rethrow);
  settle();
  schedules.at(clock.now_ms() + 1000, "x", {});
  schedules.stop();
  settle();
  EXPECT_TRUE(ended);
  advance(seconds(2));
  EXPECT_TRUE(host.runs.empty());
  EXPECT_EQ(schedules.size(), 1u) << "kept for the next start";
}

TEST_F(SchedulesTest, BadTimesAndTooManySchedulesAreRefused) {
  try {
    schedules.at(Schedules::kMaxTimeMs + 1, "x", {});
    FAIL() << "accepted a time past the Date range";
  } catch (const ActorError& e) {
    EXPECT_EQ(e.error().group, "schedule");
    EXPECT_EQ(e.error().code, "invalid_time");
  }
  for (int i = 0; i < 4; ++i) {
    schedules.at(clock.now_ms() + 1000, "x", {});
  }
  try {
    schedules.at(clock.now_ms() + 1000, "x", {});
    FAIL() << "accepted more than max_schedules";
  } catch (const ActorError& e) {
    EXPECT_EQ(e.error().code, "max_schedules_exceeded");
  }
  EXPECT_EQ(schedules.size(), 4u);
}

}  // namespace
}  // namespace rivetkit::core
