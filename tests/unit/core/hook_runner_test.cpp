// Running user code: a throw becomes an Error in RivetKit's shape, a hook past its limit ends
// with actor.callback_timed_out (on a manual clock, no real waiting), and with_deadline gives up
// at its deadline.

#include "core/actor/hook_runner.hpp"

#include <rivetkit/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

template <class T>
std::optional<T> run_until_done(asio::io_context& io,
                                util::ManualClock& clock,
                                Task<T> task,
                                milliseconds step = milliseconds(0)) {
  std::optional<T> out;
  asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
    if (e) {
      std::rethrow_exception(e);
    }
    out = std::move(value);
  });
  for (int i = 0; i < 20 && !out; ++i) {
    io.restart();
    io.poll();
    if (!out && step.count() > 0) {
      clock.advance(step);
    }
  }
  return out;
}

Task<void> throws_user_error() {
  throw UserError("The room is full", "no_seats");
  co_return;
}

Task<void> waits_on(util::Clock& clock, milliseconds d) {
  auto op = clock.wait_for(d);
  co_await std::move(op);
}

TEST(HookRunnerTest, AThrowBecomesAnError) {
  asio::io_context io;
  util::ManualClock clock;
  auto r = run_until_done(io, clock, guarded("onConnect", "actor-1", throws_user_error()));
  ASSERT_TRUE(r);
  ASSERT_FALSE(*r);
  EXPECT_EQ(r->error().group, "user");
  EXPECT_EQ(r->error().code, "no_seats");

  auto action = []() -> Task<Value> {
    throw std::runtime_error("boom");
    co_return Value{};
  };
  auto caught = run_until_done(io, clock, catching(action()));
  ASSERT_TRUE(caught);
  ASSERT_FALSE(*caught);
  EXPECT_FALSE(caught->error().is_public);  // internal errors stay internal

  auto none = run_until_done(io, clock, capture(waits_on(clock, milliseconds(0))));
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, nullptr);
}

TEST(HookRunnerTest, AHookPastItsLimitTimesOut) {
  asio::io_context io;
  util::ManualClock clock;
  auto r = run_until_done(
      io, clock,
      run_hook(clock, "actor-1", "onWake", waits_on(clock, milliseconds(5000)), milliseconds(100)),
      milliseconds(50));
  ASSERT_TRUE(r);
  ASSERT_FALSE(*r);
  EXPECT_EQ(r->error().group, "actor");
  EXPECT_EQ(r->error().code, "callback_timed_out");
  EXPECT_NE(r->error().message.find("onWake"), std::string::npos);

  auto quick = run_until_done(
      io, clock,
      run_hook(clock, "actor-1", "onWake", waits_on(clock, milliseconds(10)), milliseconds(100)),
      milliseconds(5));
  ASSERT_TRUE(quick);
  EXPECT_TRUE(*quick);
}

TEST(HookRunnerTest, WithDeadlineGivesUpAtTheDeadline) {
  asio::io_context io;
  util::ManualClock clock;
  auto late = [](util::Clock& c) -> Task<int> {
    auto op = c.wait_for(milliseconds(1000));
    co_await std::move(op);
    co_return 1;
  };
  auto r = run_until_done(io, clock,
                          with_deadline(clock, late(clock), clock.steady_now() + milliseconds(100)),
                          milliseconds(50));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->has_value());

  auto done = run_until_done(
      io, clock, with_deadline(clock, late(clock), clock.steady_now() + milliseconds(5000)),
      milliseconds(250));
  ASSERT_TRUE(done);
  ASSERT_TRUE(done->has_value());
  EXPECT_EQ(**done, 1);
}

}  // namespace
}  // namespace rivetkit::core
