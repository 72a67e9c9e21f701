// The storage worker and async_submit, independent of SQLite: any completion token works, results
// arrive on the caller's executor, exceptions become errors, ops after stop() fail cleanly.

#include "storage/worker.hpp"

#include "test_util.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

namespace rivetkit::storage::detail {
namespace {

struct Counter {
  int value = 0;
  std::thread::id thread;
};

using IntWorker = Worker<Counter>;

std::unique_ptr<IntWorker> make_worker(std::vector<std::size_t>* batch_sizes = nullptr) {
  auto w = std::make_unique<IntWorker>("test worker", Counter{}, 8,
                                       [batch_sizes](Counter& c, IntWorker::Batch& batch) {
                                         c.thread = std::this_thread::get_id();
                                         if (batch_sizes != nullptr) {
                                           batch_sizes->push_back(batch.size());
                                         }
                                         for (auto& op : batch) {
                                           op->run(c);
                                         }
                                       });
  w->start();
  return w;
}

TEST(Worker, CallbackTokenCompletesOnTheCallersExecutor) {
  auto w = make_worker();
  boost::asio::io_context io(1);
  std::thread::id completed_on;
  std::optional<Result<int>> out;
  async_submit<int>(
      *w, nullptr, "add", [](Counter& c) -> Result<int> { return c.value += 5; },
      boost::asio::bind_executor(io.get_executor(), [&](Result<int> r) {
        completed_on = std::this_thread::get_id();
        out = std::move(r);
      }));
  io.run();  // returns only after the completion ran: the op keeps the io_context busy
  ASSERT_TRUE(out && *out);
  EXPECT_EQ(**out, 5);
  EXPECT_EQ(completed_on, std::this_thread::get_id());
  EXPECT_NE(w->conn().thread, std::this_thread::get_id());
}

TEST(Worker, UseFutureToken) {
  auto w = make_worker();
  auto f = async_submit<int>(
      *w, nullptr, "get", [](Counter&) -> Result<int> { return 42; }, boost::asio::use_future);
  Result<int> r = f.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 42);
}

TEST(Worker, UseAwaitableToken) {
  auto w = make_worker();
  auto task = async_submit<int>(
      *w, nullptr, "get", [](Counter&) -> Result<int> { return 7; }, boost::asio::use_awaitable);
  Result<int> r = test::run_sync(std::move(task));
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 7);
}

TEST(Worker, ExceptionsBecomeErrors) {
  auto w = make_worker();
  auto f = async_submit<int>(
      *w, nullptr, "boom", [](Counter&) -> Result<int> { throw std::runtime_error("kaboom"); },
      boost::asio::use_future);
  Result<int> r = f.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().qualified_code(), "storage.internal_error");
  EXPECT_NE(r.error().message.find("kaboom"), std::string::npos);
  // The worker survives.
  auto g = async_submit<int>(
      *w, nullptr, "ok", [](Counter&) -> Result<int> { return 1; }, boost::asio::use_future);
  EXPECT_TRUE(g.get());
}

TEST(Worker, ProcessThatThrowsFailsOnlyOpsWithoutResult) {
  auto w = std::make_unique<IntWorker>("throwing", Counter{}, 8, [](Counter&, IntWorker::Batch&) {
    throw std::runtime_error("process failed");
  });
  w->start();
  auto f = async_submit<int>(
      *w, nullptr, "x", [](Counter&) -> Result<int> { return 1; }, boost::asio::use_future);
  Result<int> r = f.get();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("process failed"), std::string::npos);
}

TEST(Worker, BatchesQueuedOpsInFifoOrderUpToMaxBatch) {
  std::vector<std::size_t> sizes;
  auto w = make_worker(&sizes);
  w->set_paused(true);
  std::vector<std::future<Result<int>>> futures;
  for (int i = 0; i < 20; ++i) {
    futures.push_back(async_submit<int>(
        *w, nullptr, "seq",
        [i](Counter& c) -> Result<int> {
          if (c.value != i) {
            return fail(Error{"test", "order", "out of order", std::nullopt, false});
          }
          return c.value++;
        },
        boost::asio::use_future));
  }
  EXPECT_EQ(w->queued(), 20u);
  w->set_paused(false);
  for (int i = 0; i < 20; ++i) {
    Result<int> r = futures[static_cast<std::size_t>(i)].get();
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(*r, i);
  }
  w->stop();
  EXPECT_EQ(sizes, (std::vector<std::size_t>{8, 8, 4}));
}

TEST(Worker, StopDrainsThenRejects) {
  auto w = make_worker();
  w->set_paused(true);
  auto queued = async_submit<int>(
      *w, nullptr, "q", [](Counter&) -> Result<int> { return 3; }, boost::asio::use_future);
  w->stop();  // drains despite the pause
  EXPECT_TRUE(queued.get());
  auto late = async_submit<int>(
      *w, nullptr, "late", [](Counter&) -> Result<int> { return 4; }, boost::asio::use_future);
  Result<int> r = late.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().qualified_code(), "storage.closed");
  w->stop();  // idempotent
}

TEST(Worker, IdleHookRunsOnceAfterEachBurstOnTheWorkerThread) {
  std::atomic<int> idle_calls{0};
  std::atomic<bool> on_worker_thread{true};
  IntWorker w("test worker", Counter{}, 8, [](Counter& c, IntWorker::Batch& batch) {
    c.thread = std::this_thread::get_id();
    for (auto& op : batch) {
      op->run(c);
    }
  });
  w.set_idle_hook(std::chrono::milliseconds(20), [&](Counter& c) {
    if (c.thread != std::this_thread::get_id()) {
      on_worker_thread = false;
    }
    ++idle_calls;
  });
  w.start();
  auto wait_for_calls = [&](int n) {
    for (int i = 0; i < 500 && idle_calls.load() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return idle_calls.load();
  };
  auto submit = [&] {
    auto f = async_submit<int>(
        w, nullptr, "add", [](Counter& c) -> Result<int> { return ++c.value; },
        boost::asio::use_future);
    ASSERT_TRUE(f.get());
  };

  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(idle_calls.load(), 0);  // no work yet: nothing to give back
  submit();
  submit();
  EXPECT_EQ(wait_for_calls(1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(idle_calls.load(), 1);  // once per idle period, not every idle_after
  submit();
  EXPECT_EQ(wait_for_calls(2), 2);
  w.stop();
  EXPECT_EQ(idle_calls.load(), 2);
  EXPECT_TRUE(on_worker_thread.load());
}

}  // namespace
}  // namespace rivetkit::storage::detail
