// The abort signal's listeners: they run once, in order, when it fires; one that throws does not
// stop the others; one added after the signal fired runs at once, but not inside the caller; one
// that belongs to an owner runs only while the owner lives, and is dropped once it is gone.

#include "core/actor/abort_signal.hpp"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace rivetkit::core {
namespace {

TEST(AbortSignalTest, ListenersRunOnceInOrderWhenItFires) {
  boost::asio::io_context io;
  AbortSignal signal(io.get_executor(), "actor-1");
  std::vector<std::string> ran;
  signal.add([&] { ran.push_back("a"); }, nullptr);
  signal.add([] { throw std::runtime_error("listener bug"); }, nullptr);
  signal.add([&] { ran.push_back("b"); }, nullptr);
  signal.add(nullptr, nullptr);  // ignored
  EXPECT_FALSE(signal.fired());
  EXPECT_TRUE(ran.empty());

  signal.fire();
  EXPECT_TRUE(signal.fired());
  EXPECT_EQ(ran, (std::vector<std::string>{"a", "b"}));
  signal.fire();
  io.poll();
  EXPECT_EQ(ran.size(), 2u);
}

TEST(AbortSignalTest, AListenerAddedAfterItFiredRunsAtOnceButNotInsideTheCaller) {
  boost::asio::io_context io;
  AbortSignal signal(io.get_executor(), "actor-1");
  signal.fire();
  auto owner = std::make_shared<int>(7);
  std::weak_ptr<int> watch = owner;
  bool ran = false;
  signal.add([&] { ran = true; }, std::move(owner));
  EXPECT_FALSE(ran);
  EXPECT_FALSE(watch.expired());  // held until the listener has run
  io.poll();
  EXPECT_TRUE(ran);
  EXPECT_TRUE(watch.expired());
}

TEST(AbortSignalTest, AnOwnedListenerRunsOnlyWhileItsOwnerLives) {
  boost::asio::io_context io;
  AbortSignal signal(io.get_executor(), "actor-1");
  std::vector<std::string> ran;
  auto kept = std::make_shared<int>(1);
  signal.add_owned(
      kept, [&] { ran.push_back("kept"); }, nullptr);
  for (int i = 0; i < 1000; ++i) {
    // Owners that come and go (connections opened and dropped) leave nothing behind to run.
    auto gone = std::make_shared<int>(i);
    signal.add_owned(
        gone, [&] { ran.push_back("gone"); }, nullptr);
  }
  signal.fire();
  EXPECT_EQ(ran, (std::vector<std::string>{"kept"}));

  auto late = std::make_shared<int>(2);
  signal.add_owned(
      late, [&] { ran.push_back("late"); }, nullptr);
  late.reset();  // gone before its posted run
  io.poll();
  EXPECT_EQ(ran, (std::vector<std::string>{"kept"}));
}

}  // namespace
}  // namespace rivetkit::core
