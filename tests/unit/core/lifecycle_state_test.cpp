// The lifecycle states and the sleep gates alone, without an instance: the transition table,
// what each state allows, the abort and finalize notifiers, each kind of work that keeps an
// actor awake, what a stop drains, and the idle deadline on a manual clock.

#include "core/actor/lifecycle.hpp"
#include "core/actor/sleep_gates.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using S = LifecycleState;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr S kAll[] = {S::kLoading,      S::kStarted,    S::kSleepGrace, S::kSleepFinalize,
                      S::kDestroyGrace, S::kDestroying, S::kTerminated, S::kFailed};

TEST(LifecycleStates, TheTableAllowsExactlyTheDocumentedTransitions) {
  const std::set<std::pair<S, S>> allowed = {
      {S::kLoading, S::kStarted},          {S::kLoading, S::kFailed},
      {S::kStarted, S::kSleepGrace},       {S::kStarted, S::kDestroyGrace},
      {S::kSleepGrace, S::kSleepFinalize}, {S::kDestroyGrace, S::kDestroying},
      {S::kSleepFinalize, S::kTerminated}, {S::kDestroying, S::kTerminated},
  };
  for (auto from : kAll) {
    for (auto to : kAll) {
      EXPECT_EQ(lifecycle_transition_allowed(from, to), allowed.count({from, to}) == 1)
          << to_string(from) << " -> " << to_string(to);
    }
  }
}

class LifecycleObject : public ::testing::Test {
 protected:
  asio::io_context io;
  Lifecycle life{io.get_executor()};
};

TEST_F(LifecycleObject, SleepPath) {
  EXPECT_TRUE(life.is(S::kLoading));
  EXPECT_FALSE(life.can_write()) << "nothing is written while loading";
  EXPECT_TRUE(life.storage_open()) << "start hooks may use KV";
  EXPECT_FALSE(life.request_stop()) << "a stop can only be asked for once started";
  EXPECT_FALSE(life.accepting());

  ASSERT_TRUE(life.start_completed());
  EXPECT_TRUE(life.accepting());
  EXPECT_TRUE(life.can_write());
  EXPECT_FALSE(life.aborted());

  ASSERT_TRUE(life.request_stop());
  EXPECT_TRUE(life.is(S::kStarted)) << "the driver runs the stop";
  EXPECT_TRUE(life.stop_requested());
  EXPECT_FALSE(life.accepting());

  ASSERT_TRUE(life.begin_grace(StopReason::kSleep));
  EXPECT_TRUE(life.is(S::kSleepGrace));
  EXPECT_TRUE(life.aborted());
  EXPECT_FALSE(life.finalizing());
  EXPECT_TRUE(life.can_write()) << "the grace still saves";

  ASSERT_TRUE(life.finalize());
  EXPECT_TRUE(life.is(S::kSleepFinalize));
  EXPECT_TRUE(life.finalizing());
  EXPECT_TRUE(life.can_write()) << "the final save";

  ASSERT_TRUE(life.terminate());
  EXPECT_TRUE(life.is(S::kTerminated));
  EXPECT_FALSE(life.can_write());
  EXPECT_FALSE(life.storage_open());
  EXPECT_TRUE(life.aborted());
}

TEST_F(LifecycleObject, DestroyPath) {
  ASSERT_TRUE(life.start_completed());
  ASSERT_TRUE(life.begin_grace(StopReason::kDestroy));
  EXPECT_TRUE(life.is(S::kDestroyGrace));
  EXPECT_TRUE(life.stop_requested());
  ASSERT_TRUE(life.finalize());
  EXPECT_TRUE(life.is(S::kDestroying));
  ASSERT_TRUE(life.terminate());
  EXPECT_TRUE(life.is(S::kTerminated));
}

TEST_F(LifecycleObject, AFailedStartEndsThere) {
  ASSERT_TRUE(life.start_failed());
  EXPECT_TRUE(life.is(S::kFailed));
  EXPECT_FALSE(life.storage_open());
  EXPECT_FALSE(life.aborted());
  EXPECT_FALSE(life.start_completed());
  EXPECT_FALSE(life.begin_grace(StopReason::kSleep));
  EXPECT_TRUE(life.is(S::kFailed));
}

TEST_F(LifecycleObject, RefusedTransitionsLeaveTheStateAlone) {
  EXPECT_FALSE(life.begin_grace(StopReason::kSleep)) << "not started";
  EXPECT_FALSE(life.finalize());
  EXPECT_FALSE(life.terminate());
  EXPECT_TRUE(life.is(S::kLoading));
  ASSERT_TRUE(life.start_completed());
  EXPECT_FALSE(life.terminate()) << "a stop goes through its grace";
  ASSERT_TRUE(life.begin_grace(StopReason::kSleep));
  EXPECT_FALSE(life.begin_grace(StopReason::kDestroy)) << "one stop at a time";
  EXPECT_TRUE(life.is(S::kSleepGrace));
}

TEST_F(LifecycleObject, WaitersResumeAtTheAbortAndAtTheEndOfTheGrace) {
  int aborted = 0;
  int finalizing = 0;
  asio::co_spawn(
      io,
      [&]() -> Task<void> {
        co_await life.wait_aborted();
        ++aborted;
        co_await life.wait_finalizing();
        ++finalizing;
      },
      [](std::exception_ptr e) {
        if (e) {
          std::rethrow_exception(e);
        }
      });
  io.poll();
  ASSERT_TRUE(life.start_completed());
  io.restart();
  io.poll();
  EXPECT_EQ(aborted, 0);
  ASSERT_TRUE(life.begin_grace(StopReason::kSleep));
  io.restart();
  io.poll();
  EXPECT_EQ(aborted, 1);
  EXPECT_EQ(finalizing, 0);
  ASSERT_TRUE(life.finalize());
  io.restart();
  io.poll();
  EXPECT_EQ(finalizing, 1);
}

class SleepGatesTest : public ::testing::Test {
 protected:
  asio::io_context io;
  util::ManualClock clock;
  SleepGates gates{io.get_executor(), clock, seconds(30), milliseconds(0)};
};

TEST_F(SleepGatesTest, EachKindOfWorkNamesItsReasonAndWaitUntilKeepsNoOneAwake) {
  EXPECT_EQ(gates.keeps_awake(), std::nullopt);
  const std::pair<WorkKind, AwakeReason> kinds[] = {
      {WorkKind::kAction, AwakeReason::kAction},
      {WorkKind::kKeepAwake, AwakeReason::kKeepAwake},
      {WorkKind::kWsCallback, AwakeReason::kWsCallback},
      {WorkKind::kDisconnect, AwakeReason::kDisconnect},
      {WorkKind::kRun, AwakeReason::kRunHandler},
  };
  for (auto [kind, reason] : kinds) {
    gates.enter(kind);
    EXPECT_EQ(gates.keeps_awake(), reason) << to_string(reason);
    gates.enter(kind);
    gates.leave(kind);
    EXPECT_EQ(gates.keeps_awake(), reason) << "counted, not a flag: " << to_string(reason);
    gates.leave(kind);
    EXPECT_EQ(gates.keeps_awake(), std::nullopt);
  }
  gates.enter(WorkKind::kWaitUntil);
  EXPECT_EQ(gates.keeps_awake(), std::nullopt);
  EXPECT_EQ(gates.count(WorkKind::kWaitUntil), 1u);
}

TEST_F(SleepGatesTest, AStopDrainsWaitUntilAndTheRunHandlerOnlyWhenAskedTo) {
  EXPECT_TRUE(gates.drained(true, true));
  gates.enter(WorkKind::kWaitUntil);
  EXPECT_TRUE(gates.drained(false, true));
  EXPECT_FALSE(gates.drained(true, false));
  gates.leave(WorkKind::kWaitUntil);
  gates.enter(WorkKind::kRun);
  EXPECT_TRUE(gates.drained(true, false)) << "destroy does not wait for run";
  EXPECT_FALSE(gates.drained(true, true)) << "sleep does";
  gates.leave(WorkKind::kRun);
  gates.enter(WorkKind::kAction);
  EXPECT_FALSE(gates.drained(false, false)) << "in-flight actions always drain";
}

TEST_F(SleepGatesTest, TheIdleDeadlineFollowsTheLastActivity) {
  gates.started();
  EXPECT_EQ(gates.sleep_deadline(), clock.steady_now() + seconds(30));
  clock.advance(seconds(20));
  gates.enter(WorkKind::kAction);
  clock.advance(seconds(5));
  gates.leave(WorkKind::kAction);
  EXPECT_EQ(gates.sleep_deadline(), clock.steady_now() + seconds(30))
      << "30 s after the work ended, not after the start";
}

TEST_F(SleepGatesTest, ANewActorWaitsForItsFirstRequestWithinTheGrace) {
  SleepGates engine{io.get_executor(), clock, seconds(30), seconds(60)};
  engine.started();
  const auto start = clock.steady_now();
  EXPECT_EQ(engine.sleep_deadline(), start + seconds(60));
  engine.note_request();
  EXPECT_EQ(engine.sleep_deadline(), start + seconds(30)) << "after a request: the usual rule";
}

TEST_F(SleepGatesTest, ChangesWakeWaiters) {
  int woke = 0;
  asio::co_spawn(
      io,
      [&]() -> Task<void> {
        co_await gates.changed().wait();
        ++woke;
      },
      [](std::exception_ptr e) {
        if (e) {
          std::rethrow_exception(e);
        }
      });
  io.poll();
  gates.enter(WorkKind::kKeepAwake);
  io.restart();
  io.poll();
  EXPECT_EQ(woke, 1);
}

}  // namespace
}  // namespace rivetkit::core
