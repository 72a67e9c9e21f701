#pragma once
// Shared helpers for the engine-module tests: an io_context run by one thread, a temp data dir,
// free guard ports (port, +1, +10 all free) and the rivet-engine binary of this checkout.

#include "engine/process_manager.hpp"
#include "util/log.hpp"
#include <rivetkit/task.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace rivetkit::engine::test_util {

#ifndef RIVETKIT_ENGINE_BINARY
#define RIVETKIT_ENGINE_BINARY ""
#endif

/// The engine binary: this checkout's tests/js copy, else the normal resolution (environment,
/// node_modules search). nullopt (with `why`) if there is none.
inline std::optional<std::string> engine_binary(std::string& why) {
  const std::string checkout = RIVETKIT_ENGINE_BINARY;
  if (!checkout.empty() && ::access(checkout.c_str(), X_OK) == 0) {
    return checkout;
  }
  auto found = find_engine_binary(std::nullopt);
  if (found) {
    return *found;
  }
  why = found.error().message;
  return std::nullopt;
}

inline bool port_bindable(std::uint16_t port) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::acceptor a(io);
  boost::system::error_code ec;
  a.open(asio::ip::tcp::v4(), ec);
  a.set_option(asio::socket_base::reuse_address(true), ec);
  a.bind(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  return !ec;
}

/// An ephemeral guard port whose +1 and +10 are free too.
inline std::uint16_t free_engine_port() {
  namespace asio = boost::asio;
  for (int i = 0; i < 200; ++i) {
    asio::io_context io;
    asio::ip::tcp::acceptor a(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    const std::uint16_t port = a.local_endpoint().port();
    a.close();
    if (port < 65000 && port_bindable(static_cast<std::uint16_t>(port + 1))
        && port_bindable(static_cast<std::uint16_t>(port + 10))) {
      return port;
    }
  }
  throw std::runtime_error("no free port triple found");
}

/// A loopback port with nothing listening.
inline std::uint16_t unused_port() {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::acceptor a(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();  // closed when `a` goes away
}

inline std::string endpoint_for(std::uint16_t port) {
  return "http://127.0.0.1:" + std::to_string(port);
}

class EngineTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    log::init();
    char tmpl[] = "/tmp/rivetkit-engine-test-XXXXXX";
    const char* dir = ::mkdtemp(tmpl);
    ASSERT_NE(dir, nullptr);
    data_dir_ = dir;
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    work_.reset();
    io_.stop();
    if (thread_.joinable()) {
      thread_.join();
    }
    std::error_code ec;
    std::filesystem::remove_all(data_dir_, ec);
  }

  /// Runs `task` on the io thread and waits (bounded) for its result.
  template <class T>
  T run(Task<T> task, std::chrono::seconds limit = std::chrono::seconds(50)) {
    auto fut = boost::asio::co_spawn(io_, std::move(task), boost::asio::use_future);
    if (fut.wait_for(limit) != std::future_status::ready) {
      throw std::runtime_error("task did not finish in time");
    }
    return fut.get();
  }

  Result<std::unique_ptr<EngineProcess>> ensure(EngineProcessOptions opts) {
    return run(EngineProcess::ensure(io_.get_executor(), std::move(opts)));
  }

  /// Spawns a real engine on fresh ports (skips the test when no binary exists).
  std::unique_ptr<EngineProcess> spawn_engine(SpawnMode mode = SpawnMode::kAlways) {
    std::string why;
    auto bin = engine_binary(why);
    if (!bin) {
      return nullptr;
    }
    EngineProcessOptions opts;
    opts.endpoint = endpoint_for(free_engine_port());
    opts.mode = mode;
    opts.binary_path = *bin;
    opts.data_dir = data_dir_;
    opts.health_timeout = std::chrono::seconds(45);
    auto p = ensure(std::move(opts));
    if (!p) {
      ADD_FAILURE() << p.error().code << ": " << p.error().message;
      return nullptr;
    }
    return std::move(*p);
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  std::thread thread_;
  std::string data_dir_;
};

/// GTEST_SKIP()s the current test, saying why, when no engine binary exists.
#define RIVETKIT_REQUIRE_ENGINE_BINARY()                                                   \
  do {                                                                                     \
    std::string why_;                                                                      \
    if (!::rivetkit::engine::test_util::engine_binary(why_)) {                             \
      GTEST_SKIP() << "no rivet-engine binary (run tools/install-node-deps.sh): " << why_; \
    }                                                                                      \
  } while (false)

}  // namespace rivetkit::engine::test_util
