// EnvoyLink's waits run on the clock it is given (EnvoyLinkOptions::clock): a KV request's
// deadline, the reconnect backoff and the lost timer. The engine here is a small scripted one on
// the project's own HttpServer over loopback: the real rivet-engine cannot be told to withhold a
// KV answer or to stay away for exactly its lost threshold, and it runs on the real clock. The
// link's side is the real one (its socket, codec and strand); time moves only when a test
// advances its ManualClock, so a 30-second deadline takes no real time and is exact.

#include "engine/envoy_link.hpp"

#include "scripted_engine.hpp"
#include "util/clock.hpp"
#include "util/log.hpp"
#include <rivetkit/task.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rivetkit::engine {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// The engine's lost threshold here: the link gives up 6 s after a disconnect (threshold minus a
// third of it, at most 5 s).
constexpr envoy::ProtocolMetadata kMetadata{9'000, 60'000, 20u << 20};

class EnvoyLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log::init();
    engine_ = std::make_unique<ScriptedEngine>(kMetadata);
    EnvoyLinkOptions options;
    options.endpoint = engine_->endpoint();
    options.envoy_key = "envoy-link-test";
    options.kv_timeout = 30s;
    options.clock = clock_;
    link_ = std::make_shared<EnvoyLink>(io_.get_executor(), std::move(options));
    link_->start(&handler_);
    thread_ = std::thread([this] { io_.run(); });
    auto connected = run(link_->wait_connected(std::chrono::milliseconds(60'000)));
    ASSERT_TRUE(connected) << connected.error().message;
  }
  void TearDown() override {
    link_->stop();
    clock_->advance(1h);  // a backoff or lost wait still pending ends now
    work_.reset();
    io_.stop();
    thread_.join();
    link_.reset();
    engine_.reset();
  }

  template <class T>
  T run(Task<T> task) {
    auto fut = asio::co_spawn(io_, std::move(task), asio::use_future);
    if (fut.wait_for(kWaitLimit) != std::future_status::ready) {
      throw std::runtime_error("task did not finish in time");
    }
    return fut.get();
  }

  /// Starts a KV get of the link's.
  std::future<Result<envoy::KvResponseData>> kv_get(std::string key) {
    auto task = [](std::shared_ptr<EnvoyLink> link,
                   std::string k) -> Task<Result<envoy::KvResponseData>> {
      auto op = link->kv("actor-1", envoy::KvRequestData{envoy::KvGetRequest{{std::move(k)}}});
      co_return co_await std::move(op);
    };
    return asio::co_spawn(io_, task(link_, std::move(key)), asio::use_future);
  }

  /// Waits (real time, bounded) until the clock holds at least `n` waits.
  bool waits_registered(std::size_t n) {
    return eventually([&] { return clock_->pending_waits() >= n; });
  }

  std::unique_ptr<ScriptedEngine> engine_;
  RecordingHandler handler_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  // After io_: its waits hold timers of io_, so it must go first.
  std::shared_ptr<util::ManualClock> clock_ = std::make_shared<util::ManualClock>();
  std::shared_ptr<EnvoyLink> link_;
  std::thread thread_;
};

TEST_F(EnvoyLinkTest, AKvRequestIsAnsweredUntilItsDeadlineOnTheLinksClock) {
  auto answer = kv_get("k");
  ASSERT_TRUE(eventually([&] { return !engine_->kv_requests().empty(); }));
  ASSERT_TRUE(waits_registered(1));
  clock_->advance(29'999ms);  // one millisecond short of the deadline
  const auto request_id = engine_->kv_requests().front().request_id;
  engine_->answer(request_id, envoy::KvGetResponse{{"k"}, {"v"}, {envoy::KvMetadata{}}});
  ASSERT_EQ(answer.wait_for(kWaitLimit), std::future_status::ready);
  auto result = answer.get();
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_TRUE(std::holds_alternative<envoy::KvGetResponse>(*result));
  EXPECT_EQ(std::get<envoy::KvGetResponse>(*result).values, std::vector<std::string>{"v"});
}

TEST_F(EnvoyLinkTest, AKvRequestWithoutAnAnswerFailsAtItsDeadlineOnTheLinksClock) {
  auto answer = kv_get("k");
  ASSERT_TRUE(eventually([&] { return !engine_->kv_requests().empty(); }));
  ASSERT_TRUE(waits_registered(1));
  clock_->advance(30s);
  ASSERT_EQ(answer.wait_for(kWaitLimit), std::future_status::ready)
      << "the deadline is the link's clock, not the real one";
  auto result = answer.get();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, "kv_timeout");
}

TEST_F(EnvoyLinkTest, TheLinkReconnectsAfterItsBackoffOnItsClock) {
  ASSERT_EQ(engine_->connections(), 1);
  engine_->drop(false);
  // The lost timer and the backoff (1 s to 1.25 s) wait on the clock.
  ASSERT_TRUE(waits_registered(2));
  EXPECT_EQ(engine_->connections(), 1);
  clock_->advance(1'250ms);
  ASSERT_TRUE(eventually([&] { return engine_->connections() == 2; }));
  ASSERT_TRUE(run(link_->wait_connected(std::chrono::milliseconds(60'000))));
  EXPECT_TRUE(engine_->first_was_metadata()) << "every connection starts with the metadata";
  clock_->advance(10s);  // past the lost threshold: reconnected in time, nothing is lost
  EXPECT_FALSE(handler_.lost);
  EXPECT_FALSE(handler_.evicted);
}

TEST_F(EnvoyLinkTest, AnEngineGoneForItsLostThresholdStopsTheActorsHere) {
  engine_->drop(true);
  ASSERT_TRUE(waits_registered(2));  // the lost timer and the first backoff
  auto answer = kv_get("k");         // queued: the link is disconnected
  clock_->advance(5'999ms);
  EXPECT_FALSE(handler_.lost) << "6 s (the threshold less a third) have not passed";
  clock_->advance(1ms);
  ASSERT_TRUE(eventually([&] { return handler_.lost.load(); }));
  ASSERT_EQ(answer.wait_for(kWaitLimit), std::future_status::ready);
  auto result = answer.get();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, "engine_lost") << "failed by the lost timer, not its deadline";
}

}  // namespace
}  // namespace rivetkit::engine
