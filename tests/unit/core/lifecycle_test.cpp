// The actor lifecycle on a manual clock: idle sleep after the timeout, what keeps an actor awake,
// wake with state intact, schedules that wake a sleeping actor and retry when they fail, the run
// handler's cancellation, and the grace period. Real SQLite store in a temporary directory; time
// moves only when the test advances it, so 30-second timeouts and hour-long schedules take
// milliseconds.

#include "runtime_harness.hpp"
#include <rivetkit/rivetkit.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct State {
  std::int64_t count = 0;
  std::int64_t wakes = 0;
  std::int64_t sleeps = 0;
  std::int64_t failures = 0;
  std::int64_t run_aborts = 0;
};
RIVETKIT_FIELDS(State, count, wakes, sleeps, failures, run_aborts)

std::atomic<int> g_run_started{0};

ActorDefinition definition() {
  ActorOptions options;  // RivetKit defaults: sleep after 30 s idle, 15 s grace
  options.schedule_retry_delay = seconds(1);
  options.schedule_max_attempts = 3;
  return actor<State>("counter")
      .options(options)
      .on_wake([](auto& c) { c.state().wakes += 1; })
      .on_sleep([](auto& c) { c.state().sleeps += 1; })
      .action("increment",
              [](auto& c, std::int64_t n) {
                c.state().count += n;
                return c.state().count;
              })
      .action("get", [](auto& c) { return c.state(); })
      .action("slow",
              [](auto& c, std::int64_t ms) -> Task<std::int64_t> {
                co_await c.wait(milliseconds(ms));
                c.state().count += 1;
                co_return c.state().count;
              })
      .action("scheduleIncrement",
              [](auto& c, std::int64_t ms, std::int64_t n) {
                return c.schedule().after(milliseconds(ms), "increment", n);
              })
      .action("failing",
              [](auto& c) -> std::int64_t {
                c.state().failures += 1;
                throw UserError("nope", "nope");
              })
      .action("scheduleFailing", [](auto& c, std::int64_t ms) {
        return c.schedule().after(milliseconds(ms), "failing");
      });
}

class LifecycleTest : public testing::RuntimeHarness {
 protected:
  ActorDefinition def() const override { return definition(); }
};

TEST_F(LifecycleTest, SleepsAfterThirtySecondsIdleAndWakesWithItsState) {
  ASSERT_EQ(call("increment", {Value{5}})->as_int(), 5);
  advance(seconds(29));
  EXPECT_FALSE(asleep()) << "still within the idle timeout";
  advance(seconds(2));
  EXPECT_TRUE(asleep()) << "the instance should have stopped and released its slot";
  EXPECT_EQ(driver_.sleeps.size(), 1u);
  // Any request wakes it: same state, on_wake ran again, on_sleep ran once.
  EXPECT_EQ(field("count"), 5);
  EXPECT_EQ(field("wakes"), 2);
  EXPECT_EQ(field("sleeps"), 1);
}

TEST_F(LifecycleTest, ActivityRestartsTheIdleTimer) {
  ASSERT_TRUE(call("increment", {Value{1}}));
  advance(seconds(20));
  ASSERT_TRUE(call("increment", {Value{1}}));
  advance(seconds(20));
  EXPECT_FALSE(asleep()) << "20 s since the last action";
  advance(seconds(11));
  EXPECT_TRUE(asleep());
}

TEST_F(LifecycleTest, AnInFlightActionKeepsTheActorAwake) {
  auto inst = run(acquire());
  ASSERT_TRUE(inst);
  auto done = std::make_shared<std::atomic<bool>>(false);
  // 50 s: longer than the idle timeout, shorter than the 60 s action timeout.
  asio::co_spawn((*inst)->strand(), (*inst)->run_action(nullptr, "slow", Array{Value{50'000}}),
                 [done](std::exception_ptr, Result<Value>) { done->store(true); });
  settle();
  advance(seconds(40));
  EXPECT_FALSE(asleep()) << "a running action blocks idle sleep";
  EXPECT_FALSE(done->load());
  advance(seconds(11));  // the action finishes; the idle period starts now
  EXPECT_TRUE(done->load());
  EXPECT_FALSE(asleep());
  advance(seconds(31));
  EXPECT_TRUE(asleep());
}

TEST_F(LifecycleTest, ScheduleSetsAnAlarmAndFiresAfterWake) {
  auto start = clock_->now_ms();
  ASSERT_TRUE(call("scheduleIncrement", {Value{3'600'000}, Value{7}}));
  advance(seconds(31));
  ASSERT_TRUE(asleep());
  {
    std::lock_guard lock(driver_.mutex);
    ASSERT_TRUE(driver_.alarms["actor-1"].has_value()) << "the driver must know when to wake it";
    EXPECT_EQ(*driver_.alarms["actor-1"], start + 3'600'000);
  }
  advance(hours(1));
  // What local mode's alarm does: wake the actor; the due schedule runs right after start.
  auto woke = run(acquire());
  ASSERT_TRUE(woke);
  settle();
  EXPECT_EQ(field("count"), 7);
  std::lock_guard lock(driver_.mutex);
  EXPECT_FALSE(driver_.alarms["actor-1"].has_value()) << "no schedule left";
}

TEST_F(LifecycleTest, FailingScheduleIsRetriedWithBackoffThenDropped) {
  ASSERT_TRUE(call("scheduleFailing", {Value{1000}}));
  advance(seconds(1));  // attempt 1
  EXPECT_EQ(field("failures"), 1);
  advance(seconds(1));  // retry after 1 s: attempt 2
  EXPECT_EQ(field("failures"), 2);
  advance(seconds(1));  // next retry waits 2 s
  EXPECT_EQ(field("failures"), 2);
  advance(seconds(1));  // attempt 3 = max: dropped
  EXPECT_EQ(field("failures"), 3);
  advance(seconds(60));
  EXPECT_EQ(field("failures"), 3);
}

TEST_F(LifecycleTest, ScheduleSurvivesRestartOfTheRuntime) {
  ASSERT_TRUE(call("scheduleIncrement", {Value{10'000}, Value{2}}));
  // Stop everything (what a graceful shutdown does), then a new runtime on the same data.
  run(runtime_->shutdown());
  RuntimeConfig config;
  config.clock = clock_;
  runtime_ = std::make_unique<Runtime>(io_, config, std::vector<ActorDefinition>{definition()});
  driver_.runtime = runtime_.get();
  advance(seconds(20));  // due while "down"
  auto pending = run(store_->pending_alarms());
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1u) << "start-up reads the alarms to wake actors";
  EXPECT_EQ(field("count"), 2) << "an overdue schedule fires at start";
}

}  // namespace
}  // namespace rivetkit::core
