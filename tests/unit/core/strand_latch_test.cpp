// StrandLatch: waiters resume once it is set, a wait on a set latch returns at once.

#include "core/strand_latch.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

namespace rivetkit::core {
namespace {

TEST(StrandLatchTest, WaitersResumeOnceItIsSet) {
  boost::asio::io_context io;
  StrandLatch latch(io.get_executor());
  int resumed = 0;
  auto waiter = [&]() -> Task<void> {
    co_await latch.wait();
    ++resumed;
  };
  boost::asio::co_spawn(io, waiter(), boost::asio::detached);
  boost::asio::co_spawn(io, waiter(), boost::asio::detached);
  io.poll();
  EXPECT_EQ(resumed, 0);
  EXPECT_FALSE(latch.is_set());

  latch.set();
  io.restart();
  io.poll();
  EXPECT_EQ(resumed, 2);
  EXPECT_TRUE(latch.is_set());

  boost::asio::co_spawn(io, waiter(), boost::asio::detached);
  io.restart();
  io.poll();
  EXPECT_EQ(resumed, 3);
}

}  // namespace
}  // namespace rivetkit::core
