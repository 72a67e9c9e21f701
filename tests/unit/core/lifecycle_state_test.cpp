// The lifecycle states alone, without an instance: the transition table, what each state allows,
// and the abort and finalize notifiers.

#include "core/actor/lifecycle.hpp"

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

}  // namespace
}  // namespace rivetkit::core
