#pragma once
// A real SQLite local store in a fresh temporary directory and a runtime on a manual clock, for
// the local-mode tests that need both (the directory, the actor client). `run` drives the I/O
// context until a task finishes.

#include "core/runtime.hpp"
#include "storage/local_store.hpp"
#include "util/clock.hpp"
#include <rivetkit/rivetkit.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace rivetkit::local::testing {

class StoreRuntimeFixture : public ::testing::Test {
 protected:
  /// Opens the store and makes the runtime with `definitions`.
  void open(std::vector<ActorDefinition> definitions) {
    char tmpl[] = "/tmp/rivetkit-local-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto opened = storage::LocalStore::open(dir_);
    ASSERT_TRUE(opened) << opened.error().message;
    store_ = *opened;
    core::RuntimeConfig config;
    config.clock = clock_;
    runtime_ = std::make_unique<core::Runtime>(io_, config, std::move(definitions));
  }
  /// Stops every actor, then closes and removes the store.
  void close() {
    if (runtime_) {
      if (!runtime_->shutting_down()) {
        run(runtime_->shutdown());
      }
      runtime_.reset();
    }
    if (store_) {
      store_->close();
      store_.reset();
    }
    std::filesystem::remove_all(dir_);
  }

  template <class T>
  T run(Task<T> task) {
    auto fut = boost::asio::co_spawn(io_, std::move(task), boost::asio::use_future);
    for (int i = 0; i < 5000 && fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
         ++i) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(2));
    }
    return fut.get();
  }

  boost::asio::io_context io_;
  std::shared_ptr<util::ManualClock> clock_ = std::make_shared<util::ManualClock>();
  std::string dir_;
  std::shared_ptr<storage::LocalStore> store_;
  std::unique_ptr<core::Runtime> runtime_;
};

}  // namespace rivetkit::local::testing
