// The sleep gates alone, without an instance, on a manual clock: each kind of work that keeps an
// actor awake and the reason it names, what a stop drains, the idle deadline, the first-request
// grace, and the Work scope that enters and leaves a gate.

#include "core/actor/sleep_gates.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <memory>
#include <utility>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using std::chrono::seconds;

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

// RivetKit: a queue wait does not block idle sleep. The run handler waiting in a receive lets the
// actor sleep; processing a message (no wait open) keeps it awake; a stop still waits for it.
TEST_F(SleepGatesTest, ARunHandlerWaitingInAQueueReceiveLetsTheActorSleep) {
  gates.enter(WorkKind::kRun);
  EXPECT_EQ(gates.keeps_awake(), AwakeReason::kRunHandler);
  gates.enter(WorkKind::kQueueWait);
  EXPECT_EQ(gates.keeps_awake(), std::nullopt);
  EXPECT_FALSE(gates.drained(true, true)) << "a sleep still waits for the run handler";
  gates.leave(WorkKind::kQueueWait);
  EXPECT_EQ(gates.keeps_awake(), AwakeReason::kRunHandler);
  gates.leave(WorkKind::kRun);
  gates.enter(WorkKind::kQueueWait);  // a hook's wait, no run handler: nothing to release
  EXPECT_EQ(gates.keeps_awake(), std::nullopt);
  gates.enter(WorkKind::kAction);
  EXPECT_EQ(gates.keeps_awake(), AwakeReason::kAction) << "an action waiting stays counted";
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

TEST_F(SleepGatesTest, AWorkScopeHoldsItsGateAndItsOwnerUntilItEnds) {
  auto owner = std::make_shared<int>(1);
  std::weak_ptr<int> watch = owner;
  {
    auto work = gates.track(WorkKind::kKeepAwake, std::move(owner));
    EXPECT_EQ(gates.keeps_awake(), AwakeReason::kKeepAwake);
    auto moved = std::move(work);  // counted once, left once
    EXPECT_EQ(gates.count(WorkKind::kKeepAwake), 1u);
    EXPECT_FALSE(watch.expired());
  }
  EXPECT_EQ(gates.count(WorkKind::kKeepAwake), 0u);
  EXPECT_TRUE(watch.expired());

  SleepGates engine{io.get_executor(), clock, seconds(30), seconds(60)};
  engine.started();
  const auto start = clock.steady_now();
  { auto work = engine.track(WorkKind::kAction, nullptr); }
  EXPECT_EQ(engine.sleep_deadline(), start + seconds(30)) << "an action counts as a request";
}

}  // namespace
}  // namespace rivetkit::core
