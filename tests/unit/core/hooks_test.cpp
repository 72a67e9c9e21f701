// The hook and background-work API on a manual clock: hook timeouts, the run handler (errors
// lead to sleep; it sees the abort signal and may finish its work; one that ignores it is
// cancelled at the end of the grace period), abort listeners, keep_awake / wait_until results,
// state writes refused inside on_state_change, and state on an actor that declares none.

#include "runtime_harness.hpp"

#include <atomic>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct State {
  std::int64_t runs = 0;
  std::int64_t exited = 0;
  std::int64_t wakes = 0;
  std::int64_t sleeps = 0;
  std::int64_t aborts_heard = 0;
  std::int64_t changes = 0;
  std::string reentrant_code;
};
RIVETKIT_FIELDS(State, runs, exited, wakes, sleeps, aborts_heard, changes, reentrant_code)

// The harness serves one type; each test picks its behaviour through these switches.
std::atomic<int> g_run_mode{0};  // 0: none, 1: throws, 2: honours the abort, 3: ignores it
std::atomic<bool> g_slow_vars{false};
std::atomic<int> g_slow_vars_started{0};  // the slow create_vars is waiting (its timer is armed)
std::string g_reentrant_code;             // what the refused write in on_state_change threw

struct Vars {
  std::int64_t state_changes = 0;
};

using Types = ActorTypes<State, Value, Vars>;

Task<void> fail_later(Context<Types> c) {
  co_await c.wait(milliseconds(200));
  throw std::runtime_error("run handler exploded");
}

Task<std::int64_t> answer_later(Context<Types> c) {
  co_await c.wait(milliseconds(100));
  co_return 42;
}

Task<void> reject_later(Context<Types> c) {
  co_await c.wait(milliseconds(10));
  throw std::runtime_error("background failure");
}

ActorDefinition hooks_definition() {
  return actor<Types>("hooks")
      .create_vars([](auto& c) -> Task<Vars> {
        if (g_slow_vars.load()) {
          g_slow_vars_started += 1;
          co_await c.wait(seconds(10));  // longer than create_vars_timeout (5 s)
        }
        co_return Vars{};
      })
      .on_wake([](auto& c) {
        c.state().wakes += 1;
        c.abort_signal().on_abort([c]() mutable { c.state().aborts_heard += 1; });
      })
      .on_sleep([](auto& c) { c.state().sleeps += 1; })
      .on_state_change([](auto& c, const State& state) {
        c.vars().state_changes += 1;
        EXPECT_EQ(state.changes, 0);
        try {
          c.state().changes += 1;  // refused: the hook may not write the state
        } catch (const ActorError& e) {
          g_reentrant_code = e.error().code;
        }
      })
      .run([](auto& c) -> Task<void> {
        c.state().runs += 1;
        switch (g_run_mode.load()) {
          case 1:
            co_await fail_later(c);
            break;
          case 2:
            while (!c.abort_signal().aborted()) {
              co_await c.abort_signal().wait_for(milliseconds(50));
            }
            c.state().exited += 1;  // after the abort: still saved
            break;
          case 3:
            co_await c.wait(std::chrono::hours(1));
            c.state().exited += 1;  // never reached: cancelled at the end of the grace period
            break;
          default:
            break;
        }
      })
      .action("get", [](auto& c) { return std::as_const(c).state(); })
      .action("sleep", [](auto& c) { c.sleep(); })
      .action("stateChanges", [](auto& c) { return c.vars().state_changes; })
      .action("keepAwakeValue",
              [](auto& c) -> Task<std::int64_t> {
                co_return co_await c.keep_awake(answer_later(c)).result();
              })
      .action("waitUntilRejects", [](auto& c) {
        c.wait_until(reject_later(c));  // fire and forget: must not fail this action
        return true;
      });
}

class HooksTest : public testing::RuntimeHarness {
 protected:
  ActorDefinition def() const override { return hooks_definition(); }
  void SetUp() override {
    g_run_mode = 0;
    g_slow_vars = false;
    g_reentrant_code.clear();
    RuntimeHarness::SetUp();
  }
  std::int64_t get(const char* name) { return field(name); }
  // Asks for sleep and lets the stop run its course (grace period included).
  void sleep_now() {
    ASSERT_TRUE(call("sleep"));
    for (int i = 0; i < 40 && !asleep(); ++i) {
      advance(seconds(1));
    }
    ASSERT_TRUE(asleep());
  }
};

TEST_F(HooksTest, CreateVarsOverItsTimeoutFailsTheStartWithCallbackTimedOut) {
  g_slow_vars = true;
  g_slow_vars_started = 0;
  auto fut = asio::co_spawn(io_, acquire(), asio::use_future);
  // The start loads from real storage threads first: only once the hook runs are both its
  // timeout and its own wait armed on the manual clock (under load that takes more than one
  // settle()).
  for (int i = 0; i < 2000 && g_slow_vars_started.load() == 0; ++i) {
    settle();
  }
  ASSERT_EQ(g_slow_vars_started.load(), 1);
  advance(seconds(6));
  for (int i = 0; i < 200 && fut.wait_for(seconds(0)) != std::future_status::ready; ++i) {
    settle();
  }
  ASSERT_EQ(fut.wait_for(seconds(0)), std::future_status::ready);
  auto r = fut.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().qualified_code(), "actor.callback_timed_out");
  EXPECT_NE(r.error().message.find("createVars"), std::string::npos) << r.error().message;
  g_slow_vars = false;
  EXPECT_EQ(get("wakes"), 1) << "a later start succeeds";
}

// Engine mode starts an actor for a request that arrives only after the start is reported: the
// idle rule must not put the actor to sleep before it (the gateway would wake it again, in a
// loop), but an actor that gets no request still sleeps once the grace is over.
TEST_F(HooksTest, AStartedActorWaitsForItsFirstRequestBeforeIdleSleep) {
  first_request_grace_ = seconds(60);  // longer than the 30 s sleep_timeout
  ASSERT_TRUE(run(acquire()));
  advance(seconds(31));
  EXPECT_FALSE(asleep()) << "no request yet: still within the first-request grace";
  EXPECT_EQ(get("wakes"), 1);  // the request: from now on the usual idle rule
  advance(seconds(31));
  EXPECT_TRUE(asleep()) << "idle sleep_timeout after the request";

  ASSERT_TRUE(run(acquire()));  // a start that never gets a request
  advance(seconds(31));
  EXPECT_FALSE(asleep());
  advance(seconds(30));
  EXPECT_TRUE(asleep()) << "the grace is bounded";
}

TEST_F(HooksTest, RunHandlerThatThrowsLetsTheActorSleep) {
  g_run_mode = 1;
  EXPECT_EQ(get("runs"), 1);
  advance(milliseconds(300));  // the handler throws
  advance(seconds(31));        // then the idle timeout
  EXPECT_TRUE(asleep()) << "a failed run handler must not keep the actor awake";
  g_run_mode = 0;
  EXPECT_EQ(get("sleeps"), 1);
  EXPECT_EQ(get("wakes"), 2);
}

TEST_F(HooksTest, RunHandlerSeesTheAbortAndFinishesItsWork) {
  g_run_mode = 2;
  EXPECT_EQ(get("runs"), 1);
  advance(seconds(31));
  EXPECT_FALSE(asleep()) << "an active run handler keeps the actor awake";
  sleep_now();
  g_run_mode = 0;
  EXPECT_EQ(get("exited"), 1) << "the code after the loop ran and its write was saved";
  EXPECT_EQ(get("aborts_heard"), 1) << "the abort listener ran once";
}

TEST_F(HooksTest, RunHandlerThatIgnoresTheAbortIsCancelledAtTheEndOfTheGracePeriod) {
  g_run_mode = 3;
  EXPECT_EQ(get("runs"), 1);
  ASSERT_TRUE(call("sleep"));
  advance(seconds(14));
  EXPECT_FALSE(asleep()) << "the stop waits for run within the 15 s grace period";
  advance(seconds(2));
  EXPECT_TRUE(asleep()) << "at the end of the grace period the handler is cancelled";
  g_run_mode = 0;
  EXPECT_EQ(get("exited"), 0);
  EXPECT_EQ(get("sleeps"), 1);
}

TEST_F(HooksTest, KeepAwakeYieldsItsValueAndWaitUntilErrorsDoNotFailTheCaller) {
  auto inst = run(acquire());
  ASSERT_TRUE(inst);
  auto done = std::make_shared<std::optional<Result<Value>>>();
  asio::co_spawn((*inst)->strand(), (*inst)->run_action(nullptr, "keepAwakeValue", {}),
                 [done](std::exception_ptr, Result<Value> r) { *done = std::move(r); });
  settle();
  EXPECT_FALSE(*done);
  advance(milliseconds(100));
  ASSERT_TRUE(*done && **done);
  EXPECT_EQ((**done)->as_int(), 42);
  auto r = call("waitUntilRejects");
  ASSERT_TRUE(r) << r.error().message;
  advance(milliseconds(20));
  EXPECT_TRUE(call("get")) << "the actor is unaffected by the failed task";
}

TEST_F(HooksTest, StateWritesInsideOnStateChangeAreRefused) {
  // on_wake changes the state (wakes), so on_state_change runs once the start saves it.
  EXPECT_EQ(get("wakes"), 1);
  EXPECT_EQ(g_reentrant_code, "state_mutation_reentrant");
  EXPECT_EQ(get("changes"), 0) << "the refused write left no trace";
  // Two bursts so far (on_wake, then run's first write); reads add none.
  auto before = call("stateChanges");
  ASSERT_TRUE(before);
  EXPECT_EQ(before->as_int(), 2);
  ASSERT_TRUE(call("get"));
  auto after = call("stateChanges");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->as_int(), 2) << "reads do not run on_state_change";
}

ActorDefinition stateless() {
  return actor<>("stateless").action("get", [](auto& c) {
    try {
      (void)std::as_const(c).state();
    } catch (const ActorError& e) {
      return Value::object({{"code", e.error().qualified_code()}, {"message", e.error().message}});
    }
    return Value{};
  });
}

class StatelessTest : public testing::RuntimeHarness {
 protected:
  ActorDefinition def() const override { return stateless(); }
};

TEST_F(StatelessTest, StateOfAnActorWithoutStateIsAnErrorThatNamesIt) {
  auto r = call("get");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->find("code")->as_string(), "actor.state_not_enabled");
  EXPECT_NE(r->find("message")->as_string().find("State"), std::string::npos);
}

}  // namespace
}  // namespace rivetkit::core
