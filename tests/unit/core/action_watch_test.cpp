// ActionWatch alone on a manual clock: an action's result comes back as it is; one past its limit
// is cancelled and ends as timed out; abort_all() cancels what runs and refuses what comes later;
// and however many actions run, one after another or at once, the actor holds one wait, none
// once it stopped.

#include "core/actor/action_watch.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using Outcome = ActionWatch::Outcome;

constexpr milliseconds kLimit{60'000};

class ActionWatchTest : public ::testing::Test {
 protected:
  void settle() {
    io.restart();
    io.poll();
  }
  void advance(milliseconds d) {
    clock->advance(d);
    settle();
  }

  /// Starts `action` under the watch; the returned slot holds how it ended, once it has.
  std::shared_ptr<std::optional<ActionWatch::Ended>> start(Task<Result<Value>> action,
                                                           milliseconds limit = kLimit) {
    auto out = std::make_shared<std::optional<ActionWatch::Ended>>();
    auto run = [](ActionWatch& w, Task<Result<Value>> a, milliseconds l,
                  std::shared_ptr<std::optional<ActionWatch::Ended>> o) -> Task<void> {
      auto op = w.run(std::move(a), l);
      *o = co_await std::move(op);
    };
    asio::co_spawn(strand, run(watch, std::move(action), limit, out), [](std::exception_ptr e) {
      if (e) {
        std::rethrow_exception(e);
      }
    });
    settle();
    return out;
  }

  /// An action that returns `v` at once.
  static Task<Result<Value>> instant(std::int64_t v) { co_return Result<Value>(Value(v)); }
  /// An action that waits `d` on the clock (cancellable there), then returns `v`; a cancelled one
  /// returns the error it saw, as catching() would.
  Task<Result<Value>> waiting(milliseconds d, std::int64_t v) {
    try {
      auto op = clock->wait_for(d);
      co_await std::move(op);
    } catch (const boost::system::system_error&) {
      co_return fail(Error{"test", "cancelled", "cancelled", std::nullopt, true});
    }
    co_return Result<Value>(Value(v));
  }

  asio::io_context io;
  asio::strand<asio::io_context::executor_type> strand = asio::make_strand(io);
  std::shared_ptr<util::ManualClock> clock = std::make_shared<util::ManualClock>();
  ActionWatch watch{clock};
};

TEST_F(ActionWatchTest, ACompletedActionReturnsItsOwnResult) {
  auto ended = start(instant(7));
  ASSERT_TRUE(ended->has_value());
  EXPECT_EQ((*ended)->outcome, Outcome::kCompleted);
  ASSERT_TRUE((*ended)->result);
  EXPECT_EQ((*ended)->result->as_int(), 7);
  EXPECT_EQ(watch.running(), 0u);
}

TEST_F(ActionWatchTest, AnActionPastItsLimitIsCancelledAndTimesOut) {
  auto slow = start(waiting(milliseconds(10'000), 1), milliseconds(5'000));
  auto quick = start(waiting(milliseconds(1'000), 2), milliseconds(5'000));
  advance(milliseconds(1'000));
  ASSERT_TRUE(quick->has_value());
  EXPECT_EQ((*quick)->outcome, Outcome::kCompleted);
  EXPECT_FALSE(slow->has_value());
  advance(milliseconds(3'999));
  EXPECT_FALSE(slow->has_value()) << "1 ms before its limit";
  advance(milliseconds(1));
  ASSERT_TRUE(slow->has_value());
  EXPECT_EQ((*slow)->outcome, Outcome::kTimedOut);
  EXPECT_FALSE((*slow)->result) << "it was cancelled, not left to finish";
  EXPECT_EQ(watch.running(), 0u);
  EXPECT_EQ(clock->pending_waits(), 0u) << "with nothing running, nothing waits";
}

TEST_F(ActionWatchTest, ALaterActionGetsItsOwnFullLimit) {
  auto first = start(waiting(milliseconds(100'000), 1), milliseconds(5'000));
  advance(milliseconds(3'000));
  auto second = start(waiting(milliseconds(100'000), 2), milliseconds(5'000));
  advance(milliseconds(2'000));
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->outcome, Outcome::kTimedOut);
  EXPECT_FALSE(second->has_value());
  advance(milliseconds(2'999));
  EXPECT_FALSE(second->has_value());
  advance(milliseconds(1));
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ((*second)->outcome, Outcome::kTimedOut);
}

TEST_F(ActionWatchTest, AbortCancelsWhatRunsAndRefusesWhatComesLater) {
  auto a = start(waiting(milliseconds(10'000), 1));
  auto b = start(waiting(milliseconds(20'000), 2));
  watch.abort_all();
  settle();
  ASSERT_TRUE(a->has_value());
  ASSERT_TRUE(b->has_value());
  EXPECT_EQ((*a)->outcome, Outcome::kAborted);
  EXPECT_EQ((*b)->outcome, Outcome::kAborted);
  EXPECT_EQ(clock->pending_waits(), 0u) << "the stopped actor left nothing in the timer queue";
  auto later = start(instant(3));
  ASSERT_TRUE(later->has_value());
  EXPECT_EQ((*later)->outcome, Outcome::kAborted);
}

TEST_F(ActionWatchTest, ManyActionsShareOneWait) {
  for (int i = 0; i < 100; ++i) {
    auto ended = start(instant(i));
    ASSERT_TRUE(ended->has_value());
    EXPECT_LE(clock->pending_waits(), 1u) << "action " << i;
  }
  std::vector<std::shared_ptr<std::optional<ActionWatch::Ended>>> running;
  for (int i = 0; i < 50; ++i) {
    running.push_back(start(waiting(milliseconds(1'000), i)));
  }
  EXPECT_EQ(clock->pending_waits(), 50u + 1u) << "the actions' own waits and one deadline wait";
  advance(milliseconds(1'000));
  for (auto& r : running) {
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->outcome, Outcome::kCompleted);
  }
  advance(kLimit);
  EXPECT_EQ(clock->pending_waits(), 0u) << "the wait ended once nothing ran at its deadline";
}

}  // namespace
}  // namespace rivetkit::core
