#pragma once
// Storage threads and the operations they run (private to the storage module).
//
// A Worker<Conn> is one thread that owns a `Conn` (a SQLite connection plus its prepared
// statements) and runs queued operations against it. The owner supplies `process`, which gets
// every queued operation at once (up to `max_batch`): the writer runs them in one transaction
// (group commit), the reader one by one.
//
// An operation is started with async_submit(worker, name, fn, token). `fn` is a callable
// `Result<T>(Conn&)` run on the worker thread. When the batch is done, the result is posted to
// the completion handler's associated executor, so the awaiting coroutine resumes where it
// started, never on the storage thread. Any completion token works (use_awaitable, callbacks,
// use_future). The handler's executor is kept busy (outstanding work) until the handler ran, so
// an io_context does not run out of work while a coroutine waits for storage.
//
// Idle hook (optional, set before start()): once the queue stayed empty for `idle_after` after a
// batch, the worker calls `on_idle(conn)` on its thread, once per idle period. The store uses it
// to give the connection's page cache back when the burst of work that filled it is over.
//
// Every submitted operation completes exactly once: with its result, with the batch's commit
// error, with an internal error if something threw, or with `storage.closed` when submitted after
// stop(). Exceptions never leave the worker thread.

#include <rivetkit/result.hpp>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace rivetkit::storage::detail {

Error closed_error();
Error exception_error(std::string_view where, std::exception_ptr e);
/// Logs an error that cannot be reported to any caller (storage thread boundary).
void log_storage_failure(std::string_view what, std::exception_ptr e) noexcept;

template <class Conn>
class Op {
 public:
  explicit Op(const char* name) : name_(name) {}
  virtual ~Op() = default;
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  /// Runs the body on the worker thread and keeps its result. Never throws.
  virtual void run(Conn& conn) noexcept = 0;
  /// Replaces the result with an error (commit failed, batch aborted, ...).
  virtual void fail(Error e) noexcept = 0;
  /// True when run() produced a value (not an error).
  virtual bool ok() const noexcept = 0;
  /// True once run() or fail() set a result.
  virtual bool has_result() const noexcept = 0;
  /// Posts the result to the handler's executor. Call once, after run()/fail(). Never throws.
  virtual void complete() noexcept = 0;

  const char* name() const { return name_; }

 private:
  const char* name_;
};

template <class Conn, class T, class Handler, class Fn>
class OpImpl final : public Op<Conn> {
 public:
  OpImpl(const char* name, Handler handler, Fn fn)
      : Op<Conn>(name),
        handler_(std::move(handler)),
        work_(boost::asio::make_work_guard(boost::asio::get_associated_executor(handler_))),
        fn_(std::move(fn)) {}

  void run(Conn& conn) noexcept override {
    try {
      result_.emplace(fn_(conn));
    } catch (...) {
      fail(exception_error(this->name(), std::current_exception()));
    }
  }

  void fail(Error e) noexcept override {
    try {
      result_.emplace(tl::unexpected<Error>(std::move(e)));
    } catch (...) {
      // Only bad_alloc can get here; has_result() stays false and complete() reports it.
      result_.reset();
    }
  }

  bool ok() const noexcept override { return result_.has_value() && result_->has_value(); }
  bool has_result() const noexcept override { return result_.has_value(); }

  void complete() noexcept override {
    try {
      if (!result_) {
        result_.emplace(tl::unexpected<Error>(
            Error{"storage", "internal_error", "storage operation produced no result", {}, false}));
      }
      auto ex = boost::asio::get_associated_executor(handler_);
      boost::asio::post(ex, [handler = std::move(handler_), result = std::move(*result_),
                             work = std::move(work_)]() mutable {
        std::move(handler)(std::move(result));
        work.reset();
      });
    } catch (...) {
      log_storage_failure(this->name(), std::current_exception());
    }
  }

 private:
  Handler handler_;
  boost::asio::executor_work_guard<boost::asio::associated_executor_t<Handler>> work_;
  Fn fn_;
  std::optional<Result<T>> result_;
};

template <class Conn>
class Worker {
 public:
  using OpPtr = std::unique_ptr<Op<Conn>>;
  using Batch = std::vector<OpPtr>;
  /// Runs a batch on the worker thread; must leave a result on every op (unset ones get an
  /// internal error). May throw: the worker then fails every op without a result.
  using Process = std::function<void(Conn&, Batch&)>;

  Worker(std::string name, Conn conn, std::size_t max_batch, Process process)
      : name_(std::move(name)),
        conn_(std::move(conn)),
        max_batch_(max_batch == 0 ? 1 : max_batch),
        process_(std::move(process)) {}

  ~Worker() { stop(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Sets the idle hook (see the top of this file). Call before start().
  void set_idle_hook(std::chrono::milliseconds idle_after, std::function<void(Conn&)> on_idle) {
    idle_after_ = idle_after;
    on_idle_ = std::move(on_idle);
  }

  void start() {
    thread_ = std::thread([this] { loop(); });
  }

  /// Queues an op; after stop() the op completes at once with `storage.closed`.
  void submit(OpPtr op) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stopping_) {
        queue_.push_back(std::move(op));
        cv_.notify_one();
        return;
      }
    }
    op->fail(closed_error());
    op->complete();
  }

  /// Drains the queue, then joins the thread. Idempotent. Called from the worker thread itself
  /// (a completion that drops the last reference), it detaches instead of deadlocking.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable()) {
      if (thread_.get_id() == std::this_thread::get_id()) {
        thread_.detach();
      } else {
        thread_.join();
      }
    }
  }

  /// While paused the worker starts no new batch (stop() still drains). Test hook.
  void set_paused(bool paused) {
    std::lock_guard<std::mutex> lock(mu_);
    paused_ = paused;
    cv_.notify_all();
  }

  std::size_t queued() const {
    std::lock_guard<std::mutex> lock(mu_);
    return queue_.size();
  }

  /// The connection; only touch it from the worker thread or after stop().
  Conn& conn() { return conn_; }

 private:
  void loop() noexcept {
    while (true) {
      Batch batch;
      {
        std::unique_lock<std::mutex> lock(mu_);
        auto ready = [this] {
          return stopping_ || (!paused_ && !queue_.empty());
        };
        if (!busy_since_idle_ || !on_idle_) {
          cv_.wait(lock, ready);
        } else if (!cv_.wait_for(lock, idle_after_, ready)) {
          busy_since_idle_ = false;
          lock.unlock();
          run_idle_hook();
          continue;
        }
        if (queue_.empty()) {
          return;  // stopping and drained
        }
        std::size_t n = queue_.size() < max_batch_ ? queue_.size() : max_batch_;
        try {
          batch.reserve(n);
          for (std::size_t i = 0; i < n; ++i) {
            batch.push_back(std::move(queue_.front()));  // no throw: capacity reserved
            queue_.pop_front();
          }
        } catch (...) {
          // Out of memory while taking the batch: fail the oldest op so the queue keeps moving.
          log_storage_failure(name_, std::current_exception());
          if (batch.empty()) {
            OpPtr op = std::move(queue_.front());
            queue_.pop_front();
            lock.unlock();
            run_alone(std::move(op));
            continue;
          }
        }
      }
      try {
        process_(conn_, batch);
      } catch (...) {
        auto e = std::current_exception();
        log_storage_failure(name_, e);
        for (auto& op : batch) {
          if (!op->has_result()) {
            op->fail(exception_error(name_, e));
          }
        }
      }
      for (auto& op : batch) {
        op->complete();
      }
      busy_since_idle_ = true;
    }
  }

  void run_idle_hook() noexcept {
    try {
      on_idle_(conn_);
    } catch (...) {
      log_storage_failure(name_, std::current_exception());
    }
  }

  void run_alone(OpPtr op) noexcept {
    op->fail(Error{"storage", "internal_error", "out of memory in the storage thread", {}, false});
    op->complete();
  }

  std::string name_;
  Conn conn_;
  std::size_t max_batch_;
  Process process_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<OpPtr> queue_;
  bool stopping_ = false;
  bool paused_ = false;
  std::chrono::milliseconds idle_after_{0};
  std::function<void(Conn&)> on_idle_;
  bool busy_since_idle_ = false;  // worker thread only
  std::thread thread_;
};

/// Starts an operation on `worker`. The handler's signature is void(Result<T>). `keep_alive`
/// (the worker's owner) is held until the op is queued, so a caller may drop its last reference
/// between creating the operation and awaiting it. Ops themselves never hold the owner: the last
/// reference must not be released on the worker thread.
template <class T, class Conn, class Fn, class Token>
auto async_submit(Worker<Conn>& worker,
                  std::shared_ptr<const void> keep_alive,
                  const char* name,
                  Fn fn,
                  Token&& token) {
  return boost::asio::async_initiate<Token, void(Result<T>)>(
      [&worker, keep = std::move(keep_alive), name](auto handler, Fn f) {
        using Handler = decltype(handler);
        auto op =
            std::make_unique<OpImpl<Conn, T, Handler, Fn>>(name, std::move(handler), std::move(f));
        worker.submit(std::move(op));
      },
      token, std::move(fn));
}

}  // namespace rivetkit::storage::detail
