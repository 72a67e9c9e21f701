// Sleep and stop on a running instance, on a manual clock: the reason the idle rule names for
// each kind of work that keeps an actor awake, and the states an instance passes through on the
// grace and drain paths of sleep and destroy (in-flight work finishes within the grace, what
// outlives it is cancelled, destroy does not wait for `run`, the final save is durable).

#include "runtime_harness.hpp"

#include <atomic>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct State {
  std::int64_t count = 0;
  std::int64_t sleeps = 0;
  std::int64_t destroys = 0;
  std::int64_t background_done = 0;
  std::int64_t count_at_sleep = -1;
};
RIVETKIT_FIELDS(State, count, sleeps, destroys, background_done, count_at_sleep)

std::atomic<bool> g_run_forever{false};  // the run handler ignores the abort

using Types = ActorTypes<State>;

Task<void> background(Context<Types> c, milliseconds ms) {
  co_await c.wait(ms);
  c.state().background_done += 1;
}

ActorDefinition sleeper(bool no_sleep) {
  ActorOptions options;  // RivetKit defaults: 30 s idle, 15 s grace, 60 s action timeout
  options.no_sleep = no_sleep;
  return actor<Types>("counter")
      .options(options)
      .on_sleep([](auto& c) {
        c.state().sleeps += 1;
        c.state().count_at_sleep = c.state().count;
      })
      .on_destroy([](auto& c) { c.state().destroys += 1; })
      .run([](auto& c) -> Task<void> {
        if (g_run_forever.load()) {
          co_await c.wait(hours(1));
        }
      })
      .action("get", [](auto& c) { return c.state(); })
      .action("slow",
              [](auto& c, std::int64_t ms) -> Task<std::int64_t> {
                co_await c.wait(milliseconds(ms));
                c.state().count += 1;
                co_return c.state().count;
              })
      .action("keepAwake",
              [](auto& c, std::int64_t ms) {
                c.keep_awake(background(c, milliseconds(ms)));
                return true;
              })
      .action("waitUntil",
              [](auto& c, std::int64_t ms) {
                c.wait_until(background(c, milliseconds(ms)));
                return true;
              })
      .action("sleep", [](auto& c) { c.sleep(); })
      .action("destroy", [](auto& c) { c.destroy(); });
}

class SleepTest : public testing::RuntimeHarness {
 protected:
  ActorDefinition def() const override { return sleeper(false); }
  void SetUp() override {
    g_run_forever = false;
    RuntimeHarness::SetUp();
  }
  void TearDown() override {
    // Every instance stops before the runtime goes (a run handler that ignores the abort is
    // cancelled at the end of the grace period), so no coroutine outlives what it uses.
    util::spawn(io_.get_executor(), runtime_->stop("actor-1", StopReason::kSleep), "test stop");
    for (int i = 0; i < 20; ++i) {
      advance(std::chrono::seconds(1));
    }
    g_run_forever = false;
    RuntimeHarness::TearDown();
  }

  std::shared_ptr<ActorInstance> instance() {
    auto inst = run(acquire());
    EXPECT_TRUE(inst);
    if (!inst) {
      return nullptr;
    }
    // The start spawns the run handler; one that returns at once may not have run yet.
    for (int i = 0;
         i < 500 && !g_run_forever && (*inst)->awake_reason() == AwakeReason::kRunHandler; ++i) {
      settle();
    }
    return *inst;
  }
  // Starts an action on the instance without waiting for it; its result lands in the returned
  // slot.
  std::shared_ptr<std::optional<Result<Value>>> start_action(std::shared_ptr<ActorInstance> inst,
                                                             std::string name,
                                                             Array args = {}) {
    auto done = std::make_shared<std::optional<Result<Value>>>();
    asio::co_spawn(inst->strand(), inst->run_action(nullptr, std::move(name), std::move(args)),
                   [done](std::exception_ptr, Result<Value> r) { *done = std::move(r); });
    settle();
    return done;
  }
  std::optional<AwakeReason> reason(const std::shared_ptr<ActorInstance>& inst) {
    return inst->awake_reason();
  }
};

TEST_F(SleepTest, AnIdleActorMaySleepAndAnInFlightActionKeepsItAwake) {
  auto inst = instance();
  ASSERT_TRUE(inst);
  EXPECT_EQ(reason(inst), std::nullopt);
  auto done = start_action(inst, "slow", {Value{1000}});
  EXPECT_EQ(reason(inst), AwakeReason::kAction);
  advance(seconds(1));
  ASSERT_TRUE(*done && **done);
  EXPECT_EQ(reason(inst), std::nullopt);
}

TEST_F(SleepTest, KeepAwakeKeepsItAwakeAndWaitUntilDoesNot) {
  auto inst = instance();
  ASSERT_TRUE(inst);
  ASSERT_TRUE(call("keepAwake", {Value{5000}}));
  EXPECT_EQ(reason(inst), AwakeReason::kKeepAwake);
  advance(seconds(5));
  EXPECT_EQ(reason(inst), std::nullopt);
  ASSERT_TRUE(call("waitUntil", {Value{5000}}));
  EXPECT_EQ(reason(inst), std::nullopt);
}

TEST_F(SleepTest, ARunHandlerThatIsStillRunningKeepsItAwake) {
  g_run_forever = true;
  auto inst = instance();
  ASSERT_TRUE(inst);
  EXPECT_EQ(reason(inst), AwakeReason::kRunHandler);
  advance(seconds(31));
  EXPECT_FALSE(asleep());
}

TEST_F(SleepTest, AConnectionThatCannotHibernateKeepsItAwake) {
  auto inst = instance();
  ASSERT_TRUE(inst);
  // (Each operation is made before it is awaited: GCC 12 mishandles temporaries inside a
  // co_await expression, cpp-guide.md.)
  auto open = inst->connection_lifecycle().open(ConnKind::kHttp, Value{}, Request{},
                                                protocol::client::Encoding::kJson, nullptr);
  auto opened = asio::co_spawn(inst->strand(), std::move(open), asio::use_awaitable);
  auto conn = run(std::move(opened));
  ASSERT_TRUE(conn) << conn.error().message;
  EXPECT_EQ(reason(inst), AwakeReason::kConnection);
  advance(seconds(31));
  EXPECT_FALSE(asleep());
  auto close = inst->connection_lifecycle().close(*conn);
  run(asio::co_spawn(inst->strand(), std::move(close), asio::use_awaitable));
  EXPECT_EQ(reason(inst), std::nullopt);
  advance(seconds(31));
  EXPECT_TRUE(asleep());
}

TEST_F(SleepTest, AStopAskedForIsTheReasonUntilTheDriverRunsIt) {
  auto inst = instance();
  ASSERT_TRUE(inst);
  EXPECT_EQ(reason(inst), std::nullopt);
  driver_.run_sleeps = false;  // the driver takes its time
  ASSERT_TRUE(call("sleep"));
  EXPECT_EQ(reason(inst), AwakeReason::kStopRequested);
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kStarted) << "the driver runs the stop";
  EXPECT_EQ(driver_.sleeps.size(), 1u);
  ASSERT_TRUE(call("sleep"));
  EXPECT_EQ(driver_.sleeps.size(), 1u) << "a repeated sleep() asks once";
  run(runtime_->stop("actor-1", StopReason::kSleep));
  EXPECT_TRUE(asleep());
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kTerminated);
  EXPECT_EQ(reason(inst), AwakeReason::kNotStarted);
}

TEST_F(SleepTest, SleepGraceLetsAnInFlightActionFinishAndSavesItsWrite) {
  auto inst = instance();
  ASSERT_TRUE(inst);
  auto done = start_action(inst, "slow", {Value{5000}});
  ASSERT_TRUE(call("sleep"));
  settle();
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kSleepGrace);
  EXPECT_TRUE(inst->aborted()) << "the abort signal fired with the grace";
  EXPECT_FALSE(asleep());
  advance(seconds(5));
  ASSERT_TRUE(*done && **done) << "the action finished within the grace";
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kTerminated);
  EXPECT_TRUE(asleep());
  EXPECT_EQ(field("count"), 1) << "its write was saved by the final save";
  EXPECT_EQ(field("count_at_sleep"), 1) << "on_sleep ran after the in-flight action";
}

TEST_F(SleepTest, WorkThatOutlivesTheGraceIsCancelled) {
  auto inst = instance();
  ASSERT_TRUE(inst);
  auto done = start_action(inst, "slow", {Value{40'000}});
  ASSERT_TRUE(call("sleep"));
  settle();
  advance(seconds(14));
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kSleepGrace);
  advance(seconds(2));
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kTerminated);
  ASSERT_TRUE(*done);
  ASSERT_FALSE(**done);
  EXPECT_EQ((**done).error().code, "aborted");
  EXPECT_EQ(field("count"), 0);
  EXPECT_EQ(field("sleeps"), 1);
}

TEST_F(SleepTest, SleepWaitsForWaitUntilWorkWithinTheGrace) {
  auto inst = instance();
  ASSERT_TRUE(call("waitUntil", {Value{3000}}));
  ASSERT_TRUE(call("sleep"));
  settle();
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kSleepGrace);
  advance(seconds(3));
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kTerminated);
  EXPECT_EQ(field("background_done"), 1);
}

TEST_F(SleepTest, DestroyDoesNotWaitForTheRunHandler) {
  g_run_forever = true;
  auto inst = instance();
  ASSERT_TRUE(inst);
  ASSERT_TRUE(call("destroy"));
  settle();
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kTerminated)
      << "no clock advance needed: the run handler is cancelled at once";
}

TEST_F(SleepTest, DestroyGraceLetsAnInFlightActionFinish) {
  auto inst = instance();
  ASSERT_TRUE(inst);
  auto done = start_action(inst, "slow", {Value{2000}});
  ASSERT_TRUE(call("destroy"));
  settle();
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kDestroyGrace);
  advance(seconds(2));
  ASSERT_TRUE(*done && **done);
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kTerminated);
}

class NoSleepTest : public SleepTest {
 protected:
  ActorDefinition def() const override { return sleeper(true); }
};

TEST_F(NoSleepTest, NoSleepIsTheReason) {
  auto inst = instance();
  ASSERT_TRUE(inst);
  EXPECT_EQ(reason(inst), AwakeReason::kNoSleep);
  advance(seconds(31));
  EXPECT_FALSE(asleep());
}

}  // namespace
}  // namespace rivetkit::core
