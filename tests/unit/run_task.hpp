#pragma once
// Runs a coroutine to its end on an io_context of its own, for tests whose code under test waits
// on nothing but in-memory models (storage stores over a map, the engine KV model).

#include <rivetkit/task.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <exception>
#include <optional>
#include <utility>

namespace rivetkit::testing {

template <class T>
T run(Task<T> task) {
  boost::asio::io_context io;
  std::optional<T> out;
  boost::asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T v) {
    if (e) {
      std::rethrow_exception(e);
    }
    out = std::move(v);
  });
  io.run();
  EXPECT_TRUE(out.has_value());
  return std::move(*out);
}

inline void run(Task<void> task) {
  boost::asio::io_context io;
  bool done = false;
  boost::asio::co_spawn(io, std::move(task), [&](std::exception_ptr e) {
    if (e) {
      std::rethrow_exception(e);
    }
    done = true;
  });
  io.run();
  EXPECT_TRUE(done);
}

}  // namespace rivetkit::testing
