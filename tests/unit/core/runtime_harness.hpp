#pragma once
// Test harness for the actor lifecycle: a Runtime on a util::ManualClock with a real SQLite
// store in a temporary directory, a driver like local mode's minus the network, and helpers to
// call actions and move time. Time moves only when a test advances it.

#include "core/runtime.hpp"
#include "no_client.hpp"
#include "storage/local_store.hpp"
#include "util/clock.hpp"
#include "util/spawn.hpp"
#include <rivetkit/rivetkit.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

namespace rivetkit::core::testing {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// A driver like local mode's, minus the network: sleep/destroy requests stop the instance; alarms
// are recorded for the test to act on.
class TestDriver final : public ActorDriver {
 public:
  Runtime* runtime = nullptr;
  asio::io_context* io = nullptr;
  std::mutex mutex;
  std::vector<std::string> sleeps;
  std::map<std::string, std::optional<std::int64_t>> alarms;
  /// false: sleep requests are only recorded (the stop is left to the test).
  bool run_sleeps = true;

  void request_sleep(const std::string& actor_id) override {
    {
      std::lock_guard lock(mutex);
      sleeps.push_back(actor_id);
    }
    if (!run_sleeps) {
      return;
    }
    util::spawn(io->get_executor(), runtime->stop(actor_id, StopReason::kSleep), "test sleep");
  }
  void request_destroy(const std::string& actor_id) override {
    util::spawn(io->get_executor(), runtime->stop(actor_id, StopReason::kDestroy), "test destroy");
  }
  void alarm_changed(const std::string& actor_id, std::optional<std::int64_t> at) override {
    std::lock_guard lock(mutex);
    alarms[actor_id] = at;
  }
  std::shared_ptr<net::WebSocket> hibernated_socket(const storage::PersistedConn&) override {
    return nullptr;
  }
  detail::ClientApi& actor_client() override { return no_client; }
  testing::NoClient no_client;
  Task<Result<void>> wake(std::string actor_id) override {
    co_return fail(Error{"actor", "not_found", "No actor " + actor_id, std::nullopt, true});
  }

  /// Where starts keep their data, and every (actor, generation) a start asked for.
  std::shared_ptr<storage::LocalStore> store;
  std::vector<std::pair<std::string, std::uint32_t>> stores_given;
  /// Set: the next start's storage fails with it.
  std::optional<Error> storage_error;
  Task<Result<std::unique_ptr<storage::ActorStore>>> storage_for(
      std::string actor_id, std::uint32_t generation) override {
    std::unique_lock lock(mutex);
    if (storage_error) {
      co_return fail(*std::exchange(storage_error, std::nullopt));
    }
    stores_given.emplace_back(actor_id, generation);
    lock.unlock();
    co_return store->actor_store(actor_id);
  }
};

/// A runtime on a manual clock with a real SQLite store in a temporary directory, serving one
/// actor type (`def()`) under the id actor-1.
class RuntimeHarness : public ::testing::Test {
 protected:
  virtual ActorDefinition def() const = 0;

  void SetUp() override {
    char tmpl[] = "/tmp/rivetkit-lifecycle-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto opened = storage::LocalStore::open(dir_);
    ASSERT_TRUE(opened) << opened.error().message;
    store_ = *opened;
    driver_.store = store_;
    RuntimeConfig config;
    config.clock = clock_;
    runtime_ = std::make_unique<Runtime>(io_, config, std::vector<ActorDefinition>{def()});
    driver_.runtime = runtime_.get();
    driver_.io = &io_;
    storage::ActorRecord rec;
    rec.actor_id = "actor-1";
    rec.name = "counter";
    rec.key = "k";
    rec.generation = 0;
    rec.create_ts = clock_->now_ms();
    auto created = run(store_->create_actor(rec));
    ASSERT_TRUE(created);
  }
  void TearDown() override {
    runtime_.reset();
    store_->close();
    std::filesystem::remove_all(dir_);
  }

  // Runs the io_context (and the storage threads) until `task` completes.
  template <class T>
  T run(Task<T> task) {
    auto fut = asio::co_spawn(io_, std::move(task), asio::use_future);
    for (int i = 0; i < 2000 && fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
         ++i) {
      io_.restart();
      io_.run_for(milliseconds(2));
    }
    return fut.get();
  }
  void settle() {
    for (int i = 0; i < 20; ++i) {
      io_.restart();
      io_.run_for(milliseconds(2));
    }
  }
  void advance(milliseconds d) {
    clock_->advance(d);
    settle();
  }

  Task<Result<std::shared_ptr<ActorInstance>>> acquire() {
    auto store = store_;
    auto driver = &driver_;
    auto data = detail::Access::data(def());
    auto grace = first_request_grace_;
    auto factory = [store, driver, data, grace]() -> Task<Result<ActorInstance::Spec>> {
      return make_spec(store, driver, data, grace);
    };
    return runtime_->acquire("actor-1", factory);
  }
  static Task<Result<ActorInstance::Spec>> make_spec(
      std::shared_ptr<storage::LocalStore> store,
      ActorDriver* driver,
      std::shared_ptr<const detail::ActorDefinitionData> data,
      milliseconds first_request_grace = milliseconds(0)) {
    auto gen_op = store->acquire_generation("actor-1");
    auto gen = co_await std::move(gen_op);
    if (!gen) {
      co_return fail(gen.error());
    }
    ActorInstance::Spec spec;
    spec.actor_id = "actor-1";
    spec.name = "counter";
    spec.key = {"k"};
    spec.generation = *gen;
    spec.definition = std::move(data);
    spec.driver = driver;
    spec.first_request_grace = first_request_grace;
    co_return spec;
  }
  Result<Value> call(std::string action, Array args = {}) {
    auto inst = run(acquire());
    EXPECT_TRUE(inst) << (inst ? "" : inst.error().message);
    if (!inst) {
      return fail(inst.error());
    }
    auto task = [](std::shared_ptr<ActorInstance> i, std::string a,
                   Array x) -> Task<Result<Value>> {
      auto op = asio::co_spawn(i->strand(), i->run_action(nullptr, std::move(a), std::move(x)),
                               asio::use_awaitable);
      auto r = co_await std::move(op);
      auto wait = asio::co_spawn(i->strand(), i->wait_durable(i->requested_seq_for_test()),
                                 asio::use_awaitable);
      co_await std::move(wait);
      co_return r;
    }(*inst, std::move(action), std::move(args));
    return run(std::move(task));
  }
  std::int64_t field(const char* name) {
    auto v = call("get");
    EXPECT_TRUE(v);
    return v ? v->find(name)->as_int() : -1;
  }
  bool asleep() { return runtime_->slot_count() == 0; }

  asio::io_context io_;
  std::shared_ptr<util::ManualClock> clock_ = std::make_shared<util::ManualClock>();
  std::string dir_;
  std::shared_ptr<storage::LocalStore> store_;
  std::unique_ptr<Runtime> runtime_;
  TestDriver driver_;
  milliseconds first_request_grace_{0};  // what the next start's Spec carries (engine mode: 3 s)
};

}  // namespace rivetkit::core::testing
