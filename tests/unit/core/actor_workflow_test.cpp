// The workflow part alone (core/workflow/), over an in-memory store and a host the test drives:
// the history's keys and records; steps recorded and replayed after a restart (their bodies do
// not run again); loops resuming at the recorded iteration with the recorded state, finished
// iterations pruned; a failing step retried with RivetKit's backoff and events, exhausted past
// its retries (the workflow recorded as failed, never run again); a sleep that parks, sets the
// wake alarm durably, survives a stop and ends at once on replay past its deadline; a history
// the code diverges from fails naming the entry; a name used twice in one block is refused.

#include "core/workflow/actor_workflow.hpp"

#include "core/actor/stored_value.hpp"
#include "memory_kv.hpp"
#include <rivetkit/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using detail::WorkflowLoopTurn;
using detail::WorkflowScope;
using detail::WorkflowStepConfig;

class MemoryStore final : public testing::MapKvStore {
 public:
  Task<Result<storage::PersistedActor>> load() override { co_return storage::PersistedActor{}; }
  Task<Result<void>> commit(storage::ActorWrite write) override {
    storage::apply_kv(kv, write.kv);
    co_return Result<void>{};
  }
};

/// A step's configuration (the fields tests set, in order; the rest default).
WorkflowStepConfig config_of(std::string name,
                             std::uint32_t retries = 3,
                             std::chrono::milliseconds base = 100ms,
                             std::chrono::milliseconds max = 30'000ms,
                             std::chrono::milliseconds timeout = 30'000ms,
                             bool retry_on_timeout = false) {
  WorkflowStepConfig config;
  config.name = std::move(name);
  config.max_retries = retries;
  config.retry_backoff_base = base;
  config.retry_backoff_max = max;
  config.timeout = timeout;
  config.retry_on_timeout = retry_on_timeout;
  return config;
}

[[noreturn]] void throw_aborted() {
  throw ActorError(Error{"actor", "aborted", "stopping", std::nullopt, true});
}

// Free coroutines (GCC 12 mishandles coroutine lambdas).
Task<Value> counted(int* runs, Value result) {
  ++*runs;
  co_return result;
}
Task<Value> failing(int* runs, int fail_times) {
  ++*runs;
  if (*runs <= fail_times) {
    throw std::runtime_error("boom " + std::to_string(*runs));
  }
  co_return Value("ok");
}
Task<void> nothing() {
  co_return;
}
Task<WorkflowLoopTurn> finished_turn() {
  co_return WorkflowLoopTurn{true, Value()};
}
Task<Value> aborting() {
  throw_aborted();
  co_return Value{};
}

/// An on_error hook that keeps every event in `events`.
std::function<Task<void>(Value)> collect(std::vector<Value>& events) {
  return [&events](Value e) -> Task<void> {
    events.push_back(std::move(e));
    return nothing();
  };
}

class ActorWorkflowTest : public ::testing::Test, public ActorWorkflow::Host {
 protected:
  void SetUp() override { restart(); }

  // ---- ActorWorkflow::Host ----
  void workflow_changed() override { ++changes; }
  Task<Result<void>> workflow_save() override {
    ++saves;
    storage::ActorWrite write;
    wf->take_changes(write);
    storage::apply_kv(store.kv, write.kv);
    co_return Result<void>{};
  }
  std::shared_ptr<void> hold() override { return nullptr; }
  std::int64_t workflow_now_ms() const override { return now; }
  Task<bool> workflow_wait(std::chrono::milliseconds timeout) override {
    if (stop_waits) {
      co_return true;
    }
    now += timeout.count();
    waited += timeout.count();
    co_return false;
  }
  std::shared_ptr<void> workflow_parked() override {
    ++parks;
    return nullptr;
  }
  void set_wake(std::optional<std::int64_t> at_ms) override { wake = at_ms; }
  void write_guard_flag() override { ++guards; }
  detail::QueueApi& workflow_queue() override { throw std::logic_error("no queue in this test"); }
  Task<void> complete_queue_message(std::uint64_t, std::string, Value) override { co_return; }

  /// A new instance of the part over what is durable (a restart).
  void restart() {
    wf = std::make_unique<ActorWorkflow>(io.get_executor(), "actor-1", store, *this);
  }

  std::exception_ptr run(std::function<Task<void>(WorkflowScope)> body,
                         std::function<Task<void>(Value)> on_error = {}) {
    auto done = std::make_shared<std::optional<std::exception_ptr>>();
    asio::co_spawn(io, wf->run(std::move(body), std::move(on_error)),
                   [done](std::exception_ptr e) { *done = e; });
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (!*done && std::chrono::steady_clock::now() < until) {
      io.restart();
      io.run_for(2ms);
    }
    EXPECT_TRUE(done->has_value()) << "the workflow did not end";
    return done->value_or(nullptr);
  }
  static std::string code_of(std::exception_ptr e) {
    if (!e) {
      return "";
    }
    try {
      std::rethrow_exception(e);
    } catch (const ActorError& err) {
      return err.error().qualified_code();
    } catch (...) {
      return "?";
    }
  }
  workflow::WorkflowState state() const { return wf->history().record().state; }
  std::size_t entry_keys() const {
    std::size_t n = 0;
    for (const auto& [k, v] : store.kv) {
      n += (k.size() > 1 && k[0] == workflow::keys::kPrefix && k[1] == '\x02') ? 1u : 0u;
    }
    return n;
  }

  asio::io_context io;
  MemoryStore store;
  std::unique_ptr<ActorWorkflow> wf;
  std::int64_t now = 1'700'000'000'000;
  std::int64_t waited = 0;
  bool stop_waits = false;
  int changes = 0, saves = 0, parks = 0, guards = 0;
  std::optional<std::int64_t> wake;
};

// Two steps, then a restart: nothing runs again, results come from the record.
Task<void> two_steps(ActorWorkflow* wf, int* runs, std::vector<Value>* results) {
  auto a = wf->step({}, config_of("a"), [runs] { return counted(runs, Value(1)); });
  results->push_back(co_await std::move(a));
  auto b = wf->step({}, config_of("b"), [runs] { return counted(runs, Value("two")); });
  results->push_back(co_await std::move(b));
}

TEST_F(ActorWorkflowTest, StepsAreRecordedAndReplayed) {
  int runs = 0;
  std::vector<Value> results;
  auto body = [&](WorkflowScope) {
    return two_steps(wf.get(), &runs, &results);
  };
  EXPECT_EQ(run(body), nullptr);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(state(), workflow::WorkflowState::kCompleted);
  EXPECT_EQ(entry_keys(), 2u);
  EXPECT_EQ(store.kv.count(workflow::keys::name_key(0)), 1u);
  EXPECT_EQ(store.kv.at(workflow::keys::name_key(1)), "b");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1], Value("two"));

  // A completed workflow does not run again.
  restart();
  results.clear();
  EXPECT_EQ(run(body), nullptr);
  EXPECT_TRUE(results.empty());

  // With the workflow record gone (as mid-run), the steps replay from their records.
  store.kv.erase(workflow::keys::meta_key());
  restart();
  EXPECT_EQ(run(body), nullptr);
  EXPECT_EQ(runs, 2) << "a recorded step ran again";
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], Value(1));
  EXPECT_EQ(results[1], Value("two"));
}

// A loop counting to `until` with its state; a step per iteration; `crash_at` aborts the step of
// that iteration (the process stops mid-loop).
Task<WorkflowLoopTurn> count_turn(
    ActorWorkflow* wf, WorkflowScope scope, Value state, int* runs, int crash_at, int until) {
  const auto n = state.as_int();
  if (n == crash_at) {
    auto op = wf->step(scope, config_of("work"), [] { return aborting(); });
    co_await std::move(op);
  }
  auto op = wf->step(scope, config_of("work"), [runs, n] { return counted(runs, Value(n)); });
  co_await std::move(op);
  if (n + 1 >= until) {
    co_return WorkflowLoopTurn{true, Value(n + 1)};
  }
  co_return WorkflowLoopTurn{false, Value(n + 1)};
}
Task<void> counting_loop(ActorWorkflow* wf, int* runs, int crash_at, Value* result) {
  auto op = wf->loop({}, "count", Value(0), [=](WorkflowScope scope, Value state) {
    return count_turn(wf, std::move(scope), std::move(state), runs, crash_at, 5);
  });
  *result = co_await std::move(op);
}

TEST_F(ActorWorkflowTest, LoopsResumeAtTheRecordedIterationAndPrune) {
  int runs = 0;
  Value result;
  EXPECT_EQ(code_of(run([&](WorkflowScope) { return counting_loop(wf.get(), &runs, 3, &result); })),
            "actor.aborted");
  EXPECT_EQ(runs, 3);  // iterations 0, 1, 2
  EXPECT_EQ(state(), workflow::WorkflowState::kRunning);

  restart();
  EXPECT_EQ(run([&](WorkflowScope) { return counting_loop(wf.get(), &runs, -1, &result); }),
            nullptr);
  EXPECT_EQ(runs, 5) << "iterations 3 and 4 only";
  EXPECT_EQ(result, Value(5));
  // The loop entry and the last iteration's step; older iterations were pruned.
  EXPECT_EQ(entry_keys(), 2u);
}

Task<void> flaky_step(ActorWorkflow* wf, int* runs, int fail_times, std::uint32_t retries) {
  WorkflowStepConfig config = config_of("flaky", retries, 10ms, 15ms);
  auto op = wf->step({}, config, [=] { return failing(runs, fail_times); });
  co_await std::move(op);
}

TEST_F(ActorWorkflowTest, FailedStepsRetryWithBackoffAndReportEvents) {
  int runs = 0;
  std::vector<Value> events;
  auto on_error = collect(events);
  EXPECT_EQ(run([&](WorkflowScope) { return flaky_step(wf.get(), &runs, 2, 3); }, on_error),
            nullptr);
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(state(), workflow::WorkflowState::kCompleted);
  ASSERT_EQ(events.size(), 2u);
  const Value& first = *events[0].find("step");
  EXPECT_EQ(*first.find("stepName"), Value("flaky"));
  EXPECT_EQ(*first.find("attempt"), Value(1));
  EXPECT_EQ(*first.find("willRetry"), Value(true));
  EXPECT_EQ(*first.find("retryDelay"), Value(15));  // min(15, 10 * 2^1)
  EXPECT_EQ(*first.find("error")->find("message"), Value("boom 1"));
  EXPECT_EQ(*first.find("error")->find("name"), Value("Error"));
  EXPECT_GE(parks, 2);
  EXPECT_EQ(waited, 30);
}

TEST_F(ActorWorkflowTest, ExhaustedStepsFailTheWorkflowForGood) {
  int runs = 0;
  std::vector<Value> events;
  auto on_error = collect(events);
  auto body = [&](WorkflowScope) {
    return flaky_step(wf.get(), &runs, 100, 1);
  };
  EXPECT_EQ(run(body, on_error), nullptr) << "a failed workflow ends the run handler quietly";
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
  ASSERT_EQ(events.size(), 2u) << "one event per attempt, no separate workflow event";
  EXPECT_EQ(*events[1].find("step")->find("willRetry"), Value(false));
  ASSERT_TRUE(wf->history().record().error);
  EXPECT_NE(
      wf->history().record().error->find("message")->as_string().find("failed after 2 attempts"),
      std::string::npos);

  restart();
  EXPECT_EQ(run(body, on_error), nullptr);
  EXPECT_EQ(runs, 2) << "a failed workflow runs no more";
}

Task<void> sleeper(ActorWorkflow* wf, int* after) {
  auto op = wf->sleep({}, "nap", std::nullopt, 1000ms);
  co_await std::move(op);
  ++*after;
}

TEST_F(ActorWorkflowTest, SleepsAreDurableAndSurviveAStop) {
  int after = 0;
  const auto start = now;
  stop_waits = true;  // the actor stops while the workflow sleeps
  EXPECT_EQ(code_of(run([&](WorkflowScope) { return sleeper(wf.get(), &after); })),
            "actor.aborted");
  EXPECT_EQ(after, 0);
  ASSERT_TRUE(wake);
  EXPECT_EQ(*wake, start + 1000) << "the wake alarm stays for the stopped actor";
  EXPECT_EQ(entry_keys(), 1u) << "the deadline is durable";

  // Woken past the deadline: the sleep ends at once, its recorded deadline wins.
  restart();
  stop_waits = false;
  now = start + 5000;
  EXPECT_EQ(run([&](WorkflowScope) { return sleeper(wf.get(), &after); }), nullptr);
  EXPECT_EQ(after, 1);
  EXPECT_EQ(waited, 0);

  // Woken early: it waits the rest.
  store.kv.clear();
  restart();
  now = start;
  stop_waits = true;
  EXPECT_EQ(code_of(run([&](WorkflowScope) { return sleeper(wf.get(), &after); })),
            "actor.aborted");
  EXPECT_EQ(after, 1);
  EXPECT_EQ(entry_keys(), 1u);
  restart();
  stop_waits = false;
  now = start + 400;
  EXPECT_EQ(run([&](WorkflowScope) { return sleeper(wf.get(), &after); }), nullptr);
  EXPECT_EQ(waited, 600);
  EXPECT_FALSE(wake) << "no wake alarm once nothing waits";
}

Task<void> step_named(ActorWorkflow* wf, std::string name, int* runs) {
  auto op = wf->step({}, config_of(std::move(name)), [runs] { return counted(runs, Value()); });
  co_await std::move(op);
}
Task<void> loop_named(ActorWorkflow* wf, std::string name) {
  auto op =
      wf->loop({}, std::move(name), Value(), [](WorkflowScope, Value) { return finished_turn(); });
  co_await std::move(op);
}
Task<void> twice(ActorWorkflow* wf, int* runs) {
  co_await step_named(wf, "same", runs);
  co_await step_named(wf, "same", runs);
}

TEST_F(ActorWorkflowTest, DivergedHistoryFailsNamingTheEntry) {
  int runs = 0;
  store.kv.clear();
  EXPECT_EQ(run([&](WorkflowScope) { return step_named(wf.get(), "a", &runs); }), nullptr);
  store.kv.erase(workflow::keys::meta_key());  // as if it had not finished
  restart();
  std::vector<Value> events;
  auto on_error = collect(events);
  EXPECT_EQ(run([&](WorkflowScope) { return loop_named(wf.get(), "a"); }, on_error), nullptr);
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
  ASSERT_EQ(events.size(), 1u);
  const auto& message = events[0].find("workflow")->find("error")->find("message")->as_string();
  EXPECT_NE(message.find("diverged at \"a\""), std::string::npos) << message;

  store.kv.clear();
  restart();
  EXPECT_EQ(run([&](WorkflowScope) { return twice(wf.get(), &runs); }), nullptr);
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
  EXPECT_NE(wf->history().record().error->find("message")->as_string().find("reached twice"),
            std::string::npos);
}

// Code changes while runs are in flight: version gates and removed entries.
Task<void> gated(ActorWorkflow* wf, int* runs, std::int64_t latest, std::uint32_t* version) {
  co_await step_named(wf, "a", runs);
  auto op = wf->get_version({}, "v", latest);
  *version = co_await std::move(op);
  co_await step_named(wf, "b", runs);
}
Task<void> ungated(ActorWorkflow* wf, int* runs) {
  co_await step_named(wf, "a", runs);
  co_await step_named(wf, "b", runs);
}
Task<void> three_steps(ActorWorkflow* wf, int* runs) {
  co_await step_named(wf, "a", runs);
  co_await step_named(wf, "b", runs);
  co_await step_named(wf, "c", runs);
}
Task<void> b_removed(ActorWorkflow* wf, int* runs, std::string kind) {
  co_await step_named(wf, "a", runs);
  auto op = wf->removed({}, "b", std::move(kind));
  co_await std::move(op);
  co_await step_named(wf, "c", runs);
}
Task<void> gated_after_loop(ActorWorkflow* wf, int* runs, std::uint32_t* version) {
  auto loop_op = wf->loop({}, "l", Value(0), [wf, runs](WorkflowScope scope, Value state) {
    return count_turn(wf, std::move(scope), std::move(state), runs, -1, 3);
  });
  co_await std::move(loop_op);
  auto op = wf->get_version({}, "v", 5);
  *version = co_await std::move(op);
}

TEST_F(ActorWorkflowTest, VersionGatesPinFreshRunsToLatestAndOldRunsToOne) {
  int runs = 0;
  std::uint32_t version = 0;
  EXPECT_EQ(run([&](WorkflowScope) { return gated(wf.get(), &runs, 3, &version); }), nullptr);
  EXPECT_EQ(version, 3u) << "a run reaching the gate fresh takes the latest";
  store.kv.erase(workflow::keys::meta_key());  // as if it had not finished
  restart();
  version = 0;
  EXPECT_EQ(run([&](WorkflowScope) { return gated(wf.get(), &runs, 4, &version); }), nullptr);
  EXPECT_EQ(version, 3u) << "replay returns what was recorded, whatever the code says now";
  EXPECT_EQ(runs, 2) << "no step ran again";

  // A run recorded by the code before the gate went past it: it keeps the old behaviour.
  store.kv.clear();
  restart();
  runs = 0;
  EXPECT_EQ(run([&](WorkflowScope) { return ungated(wf.get(), &runs); }), nullptr);
  store.kv.erase(workflow::keys::meta_key());
  restart();
  EXPECT_EQ(run([&](WorkflowScope) { return gated(wf.get(), &runs, 2, &version); }), nullptr);
  EXPECT_EQ(version, 1u);
  EXPECT_EQ(runs, 2);

  // History a finished loop leaves behind does not count as ahead of a gate after the loop.
  store.kv.clear();
  restart();
  EXPECT_EQ(run([&](WorkflowScope) { return gated_after_loop(wf.get(), &runs, &version); }),
            nullptr);
  EXPECT_EQ(version, 5u);

  store.kv.clear();
  restart();
  EXPECT_EQ(code_of(run([&](WorkflowScope) { return gated(wf.get(), &runs, 0, &version); })), "");
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
  EXPECT_NE(wf->history().record().error->find("message")->as_string().find("latest must be"),
            std::string::npos);
}

TEST_F(ActorWorkflowTest, RemovedEntriesAreSkippedOnReplayAndRecordedFresh) {
  int runs = 0;
  EXPECT_EQ(run([&](WorkflowScope) { return three_steps(wf.get(), &runs); }), nullptr);
  EXPECT_EQ(runs, 3);
  store.kv.erase(workflow::keys::meta_key());
  restart();
  EXPECT_EQ(run([&](WorkflowScope) { return b_removed(wf.get(), &runs, "step"); }), nullptr);
  EXPECT_EQ(state(), workflow::WorkflowState::kCompleted);
  EXPECT_EQ(runs, 3) << "step c replays past the removed b";

  store.kv.clear();
  restart();
  runs = 0;
  EXPECT_EQ(run([&](WorkflowScope) { return b_removed(wf.get(), &runs, "step"); }), nullptr);
  EXPECT_EQ(runs, 2);
  bool placeholder = false;
  for (const auto& [loc, e] : wf->history().entries()) {
    if (e.kind == workflow::EntryKind::kRemoved) {
      placeholder = e.original_kind == "step" && e.original_name == std::string("b");
    }
  }
  EXPECT_TRUE(placeholder) << "a fresh run records where b was";
  const auto bytes = workflow::encode_entry([&] {
    for (const auto& [loc, e] : wf->history().entries()) {
      if (e.kind == workflow::EntryKind::kRemoved) {
        return e;
      }
    }
    return workflow::Entry{};
  }());
  auto back = workflow::decode_entry(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->original_kind, "step");

  // What removed() says was there must match the history.
  store.kv.clear();
  restart();
  EXPECT_EQ(run([&](WorkflowScope) { return three_steps(wf.get(), &runs); }), nullptr);
  store.kv.erase(workflow::keys::meta_key());
  restart();
  EXPECT_EQ(run([&](WorkflowScope) { return b_removed(wf.get(), &runs, "loop"); }), nullptr);
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
  EXPECT_NE(wf->history().record().error->find("message")->as_string().find("diverged at \"b\""),
            std::string::npos);
}

// Step timeouts: an attempt still running at its timeout is cancelled and fails; not retried
// unless the step says so. A failing attempt is not held back until its timeout.
Task<Value> slow(int* runs) {
  ++*runs;
  asio::steady_timer timer(co_await asio::this_coro::executor, 60s);
  co_await timer.async_wait(asio::use_awaitable);
  co_return Value("late");
}
Task<void> timed_step(ActorWorkflow* wf, int* runs, std::uint32_t retries, bool retry_on_timeout) {
  WorkflowStepConfig config = config_of("slow", retries, 1ms, 1ms, 20ms, retry_on_timeout);
  auto op = wf->step({}, config, [runs] { return slow(runs); });
  co_await std::move(op);
}
Task<void> failing_with_long_timeout(ActorWorkflow* wf, int* runs) {
  WorkflowStepConfig config = config_of("fails", 0, 1ms, 1ms, std::chrono::hours(1), false);
  auto op = wf->step({}, config, [runs] { return failing(runs, 10); });
  co_await std::move(op);
}

TEST_F(ActorWorkflowTest, StepsRunningPastTheirTimeoutFail) {
  int runs = 0;
  std::vector<Value> events;
  auto on_error = collect(events);
  EXPECT_EQ(run([&](WorkflowScope) { return timed_step(wf.get(), &runs, 3, false); }, on_error),
            nullptr);
  EXPECT_EQ(runs, 1) << "a timeout is not retried by default";
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
  const auto& error = *wf->history().record().error;
  EXPECT_NE(error.find("message")->as_string().find("StepTimeoutError: Step \"slow\" timed out "
                                                    "after 20ms"),
            std::string::npos)
      << error.find("message")->as_string();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(*events[0].find("step")->find("error")->find("name"), Value("StepTimeoutError"));
  EXPECT_EQ(*events[0].find("step")->find("willRetry"), Value(false));

  store.kv.clear();
  restart();
  runs = 0;
  EXPECT_EQ(run([&](WorkflowScope) { return timed_step(wf.get(), &runs, 1, true); }), nullptr);
  EXPECT_EQ(runs, 2) << "retry_on_timeout retries it like any failure";
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);

  store.kv.clear();
  restart();
  runs = 0;
  EXPECT_EQ(run([&](WorkflowScope) { return failing_with_long_timeout(wf.get(), &runs); }), nullptr)
      << "a failing attempt ends the step at once, not at its timeout";
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
}

TEST_F(ActorWorkflowTest, OperationsOutsideTheRunAreRefused) {
  auto [ok, error] = [&] {
    auto done = std::make_shared<std::optional<std::exception_ptr>>();
    asio::co_spawn(io, wf->sleep({}, "x", std::nullopt, 1ms),
                   [done](std::exception_ptr e) { *done = e; });
    io.run_for(50ms);
    return std::pair{done->has_value(), done->value_or(nullptr)};
  }();
  EXPECT_TRUE(ok);
  EXPECT_EQ(code_of(error), "workflow.not_running");
}

// A join of two branches with a step each; `fail_b` makes branch b's step fail for good.
Task<Value> branch_step(
    ActorWorkflow* wf, WorkflowScope scope, std::string step, int* runs, bool fail) {
  WorkflowStepConfig config = config_of(std::move(step), 0);
  auto op = wf->step(std::move(scope), config, [runs, fail] {
    return fail ? failing(runs, 100) : counted(runs, Value("done"));
  });
  co_return co_await std::move(op);
}
Task<void> joined(ActorWorkflow* wf, int* runs, bool fail_b, Value* out) {
  std::vector<detail::WorkflowBranch> branches;
  branches.push_back({"a", [=](WorkflowScope s) {
                        return branch_step(wf, std::move(s), "sa", runs, false);
                      }});
  branches.push_back({"b", [=](WorkflowScope s) {
                        return branch_step(wf, std::move(s), "sb", runs, fail_b);
                      }});
  auto op = wf->join({}, "both", std::move(branches));
  *out = co_await std::move(op);
}

TEST_F(ActorWorkflowTest, JoinsRunEveryBranchAndReplayTheirSteps) {
  int runs = 0;
  Value out;
  EXPECT_EQ(run([&](WorkflowScope) { return joined(wf.get(), &runs, false, &out); }), nullptr);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(*out.find("a"), Value("done"));
  EXPECT_EQ(*out.find("b"), Value("done"));
  store.kv.erase(workflow::keys::meta_key());
  restart();
  EXPECT_EQ(run([&](WorkflowScope) { return joined(wf.get(), &runs, false, &out); }), nullptr);
  EXPECT_EQ(runs, 2) << "a completed join replays";

  store.kv.clear();
  restart();
  std::vector<Value> events;
  auto on_error = collect(events);
  EXPECT_EQ(run([&](WorkflowScope) { return joined(wf.get(), &runs, true, &out); }, on_error),
            nullptr);
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
  const auto& message = wf->history().record().error->find("message")->as_string();
  EXPECT_NE(message.find("Join \"both\" failed: branch \"b\""), std::string::npos) << message;
}

// A race: "fast" returns at once, "slow" waits until it is cancelled.
Task<Value> slow(ActorWorkflow* wf, WorkflowScope scope, bool* cancelled) {
  auto op = wf->wait_cancelled(scope);
  co_await std::move(op);
  *cancelled = true;
  co_return Value("slow");
}
Task<Value> fast() {
  co_return Value("fast");
}
Task<void> raced(ActorWorkflow* wf, bool* cancelled, Value* out) {
  std::vector<detail::WorkflowBranch> branches;
  branches.push_back({"slow", [=](WorkflowScope s) {
                        return slow(wf, std::move(s), cancelled);
                      }});
  branches.push_back({"fast", [](WorkflowScope) {
                        return fast();
                      }});
  auto op = wf->race({}, "pick", std::move(branches));
  *out = co_await std::move(op);
}

TEST_F(ActorWorkflowTest, RacesTakeTheFirstBranchAndCancelTheOthers) {
  bool cancelled = false;
  Value out;
  EXPECT_EQ(run([&](WorkflowScope) { return raced(wf.get(), &cancelled, &out); }), nullptr);
  EXPECT_TRUE(cancelled) << "the losing branch saw its cancellation";
  EXPECT_EQ(*out.find("winner"), Value("fast"));
  EXPECT_EQ(*out.find("value"), Value("fast"));
}

TEST_F(ActorWorkflowTest, ReplayFromAStepDeletesItAndEverythingAfter) {
  int runs = 0;
  std::vector<Value> results;
  auto body = [&](WorkflowScope) {
    return two_steps(wf.get(), &runs, &results);
  };
  EXPECT_EQ(run(body), nullptr);
  ASSERT_EQ(runs, 2);
  std::string b_id;
  for (const auto& [loc, e] : wf->history().entries()) {
    if (e.created_at >= 0 && b_id.empty() && loc == workflow::location::named("", 1)) {
      b_id = e.id;
    }
  }
  ASSERT_FALSE(b_id.empty());
  EXPECT_EQ(wf->replay_from(std::string("no-such-entry")).error().code, "entry_not_found");
  ASSERT_TRUE(wf->replay_from(b_id));
  EXPECT_EQ(state(), workflow::WorkflowState::kPending);
  EXPECT_EQ(run(body), nullptr);
  EXPECT_EQ(runs, 3) << "only step b ran again";
  ASSERT_TRUE(wf->replay_from(std::nullopt));
  EXPECT_EQ(run(body), nullptr);
  EXPECT_EQ(runs, 5) << "both ran again";
}

Task<Value> huge() {
  co_return Value(std::string(200 * 1024, 'x'));
}
Task<void> huge_step(ActorWorkflow* wf) {
  auto op = wf->step({}, config_of("big"), [] { return huge(); });
  co_await std::move(op);
}

TEST_F(ActorWorkflowTest, AResultTooLargeToRecordFailsTheStepAtOnce) {
  std::vector<Value> events;
  auto on_error = collect(events);
  EXPECT_EQ(run([&](WorkflowScope) { return huge_step(wf.get()); }, on_error), nullptr);
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
  ASSERT_EQ(events.size(), 1u) << "not retried";
  EXPECT_NE(events[0].find("step")->find("error")->find("message")->as_string().find("at most"),
            std::string::npos);
  for (const auto& [k, v] : store.kv) {
    EXPECT_LE(v.size(), storage::kMaxKvValueSize);
  }
}

// ---- rollback (sagas) ---------------------------------------------------------------------------

// Undo handlers record what they undid; `fail_undo` names one that throws (once per entry in
// *fail_undo_times), `abort_undo` one the stop cuts short.
struct UndoLog {
  std::vector<std::string> undone;
  std::string fail_undo;
  int fail_undo_times = 0;
  std::string abort_undo;
};
Task<void> undo(UndoLog* log, std::string name, Value output) {
  if (name == log->abort_undo) {
    log->abort_undo.clear();
    throw_aborted();
  }
  if (name == log->fail_undo && log->fail_undo_times > 0) {
    --log->fail_undo_times;
    throw std::runtime_error("cannot undo " + name);
  }
  log->undone.push_back(name + "=" + output.as_string());
  co_return;
}
WorkflowStepConfig undoable(std::string name, UndoLog* log) {
  WorkflowStepConfig config = config_of(name, 0);
  config.rollback = [log, name](Value output) {
    return undo(log, name, std::move(output));
  };
  return config;
}
Task<Value> throwing(int* runs, bool rollback_error) {
  ++*runs;
  if (rollback_error) {
    throw ActorError(Error{"workflow", "rollback", "out of stock", std::nullopt, true});
  }
  throw std::runtime_error("payment declined");
}

// checkpoint; a (undo); b (no undo); loop "l" whose iteration 0 runs c (undo) and then the
// failing step; the failure rolls back c, then a.
Task<WorkflowLoopTurn> saga_turn(
    ActorWorkflow* wf, WorkflowScope scope, int* runs, UndoLog* log, bool rollback_error) {
  auto c = wf->step(scope, undoable("c", log), [runs] { return counted(runs, Value("C")); });
  co_await std::move(c);
  WorkflowStepConfig failing_config = config_of("charge", 3, 1ms, 1ms);
  auto f = wf->step(scope, failing_config,
                    [runs, rollback_error] { return throwing(runs, rollback_error); });
  co_await std::move(f);
  co_return WorkflowLoopTurn{true, Value()};
}
Task<void> saga(ActorWorkflow* wf, int* runs, UndoLog* log, bool rollback_error) {
  auto cp = wf->rollback_checkpoint({}, "start");
  co_await std::move(cp);
  auto a = wf->step({}, undoable("a", log), [runs] { return counted(runs, Value("A")); });
  co_await std::move(a);
  auto b = wf->step({}, config_of("b"), [runs] { return counted(runs, Value("B")); });
  co_await std::move(b);
  auto l = wf->loop({}, "l", Value(), [=](WorkflowScope scope, Value) {
    return saga_turn(wf, std::move(scope), runs, log, rollback_error);
  });
  co_await std::move(l);
}

const workflow::Entry* entry_named(const workflow::WorkflowHistory& h, const std::string& name) {
  const auto& names = h.names();
  for (const auto& [loc, e] : h.entries()) {
    auto parsed = workflow::location::parse(loc);
    if (!parsed || parsed->empty()) {
      continue;
    }
    if (const auto* n = std::get_if<workflow::location::NameSegment>(&parsed->back());
        n != nullptr && n->name < names.size() && names[n->name] == name) {
      return &e;
    }
  }
  return nullptr;
}

TEST_F(ActorWorkflowTest, AFailedWorkflowUndoesItsCompletedStepsLatestFirst) {
  int runs = 0;
  UndoLog log;
  std::vector<Value> events;
  auto on_error = collect(events);
  auto body = [&](WorkflowScope) {
    return saga(wf.get(), &runs, &log, true);
  };
  EXPECT_EQ(run(body, on_error), nullptr);
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
  EXPECT_EQ(runs, 4) << "a, b, c, then the step asking for the rollback: not retried";
  EXPECT_EQ(log.undone, (std::vector<std::string>{"c=C", "a=A"}));
  ASSERT_EQ(events.size(), 1u) << "the step's event only";
  EXPECT_EQ(*events[0].find("step")->find("error")->find("name"), Value("RollbackError"));
  ASSERT_NE(entry_named(wf->history(), "a"), nullptr);
  EXPECT_TRUE(entry_named(wf->history(), "a")->rollback_completed_at);
  EXPECT_FALSE(entry_named(wf->history(), "b")->rollback_completed_at);
  const auto* cp = entry_named(wf->history(), "start");
  ASSERT_NE(cp, nullptr);
  EXPECT_EQ(cp->kind, workflow::EntryKind::kRollbackCheckpoint);
  EXPECT_EQ(cp->checkpoint, "start");

  // Durable: a restart finds it failed and undoes nothing again.
  restart();
  EXPECT_EQ(run(body, on_error), nullptr);
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(log.undone.size(), 2u);
  EXPECT_TRUE(entry_named(wf->history(), "c")->rollback_completed_at);
}

TEST_F(ActorWorkflowTest, AFailingUndoLeavesItRollingBackAndTheNextStartGoesOn) {
  int runs = 0;
  UndoLog log;
  log.fail_undo = "c";
  log.fail_undo_times = 1;
  std::vector<Value> events;
  auto on_error = collect(events);
  auto body = [&](WorkflowScope) {
    return saga(wf.get(), &runs, &log, false);
  };
  EXPECT_EQ(run(body, on_error), nullptr);
  EXPECT_EQ(runs, 3 + 4) << "the failing step ran with its 3 retries";
  EXPECT_EQ(state(), workflow::WorkflowState::kRollingBack);
  EXPECT_TRUE(log.undone.empty()) << "a waits until c is undone";
  ASSERT_FALSE(events.empty());
  const auto* rollback = events.back().find("rollback");
  ASSERT_NE(rollback, nullptr);
  EXPECT_EQ(*rollback->find("stepName"), Value("c"));
  EXPECT_EQ(*entry_named(wf->history(), "c")->rollback_error, "Error: cannot undo c");

  // The next start resumes the rollback, not the workflow.
  restart();
  EXPECT_EQ(run(body, on_error), nullptr);
  EXPECT_EQ(runs, 7) << "no step ran again";
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
  EXPECT_EQ(log.undone, (std::vector<std::string>{"c=C", "a=A"}));
  EXPECT_FALSE(entry_named(wf->history(), "c")->rollback_error);
}

TEST_F(ActorWorkflowTest, AStopDuringTheRollbackUndoesNothingTwice) {
  int runs = 0;
  UndoLog log;
  log.abort_undo = "a";
  auto body = [&](WorkflowScope) {
    return saga(wf.get(), &runs, &log, true);
  };
  EXPECT_EQ(code_of(run(body)), "actor.aborted");
  EXPECT_EQ(state(), workflow::WorkflowState::kRollingBack);
  EXPECT_EQ(log.undone, (std::vector<std::string>{"c=C"}));

  restart();
  EXPECT_EQ(run(body), nullptr);
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed);
  EXPECT_EQ(log.undone, (std::vector<std::string>{"c=C", "a=A"})) << "c was not undone twice";
}

Task<void> undo_without_checkpoint(ActorWorkflow* wf, int* runs, UndoLog* log) {
  auto a = wf->step({}, undoable("a", log), [runs] { return counted(runs, Value("A")); });
  co_await std::move(a);
}

TEST_F(ActorWorkflowTest, AnUndoHandlerWithoutACheckpointIsRefused) {
  int runs = 0;
  UndoLog log;
  std::vector<Value> events;
  auto on_error = collect(events);
  EXPECT_EQ(
      run([&](WorkflowScope) { return undo_without_checkpoint(wf.get(), &runs, &log); }, on_error),
      nullptr);
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(state(), workflow::WorkflowState::kFailed) << "failed without a rollback";
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0]
                .find("workflow")
                ->find("error")
                ->find("message")
                ->as_string()
                .find("rollback checkpoint"),
            std::string::npos);
}

Task<void> ephemeral_then_durable(ActorWorkflow* wf, int* runs) {
  WorkflowStepConfig quick = config_of("quick");
  quick.ephemeral = true;
  auto a = wf->step({}, quick, [runs] { return counted(runs, Value(1)); });
  co_await std::move(a);
  auto b = wf->step({}, config_of("durable"), [runs] { return counted(runs, Value(2)); });
  co_await std::move(b);
}

TEST_F(ActorWorkflowTest, EphemeralStepsAreWrittenWithTheNextWrite) {
  int runs = 0;
  auto body = [&](WorkflowScope) {
    return ephemeral_then_durable(wf.get(), &runs);
  };
  const int before = saves;
  EXPECT_EQ(run(body), nullptr);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(saves - before, 2) << "the durable step's write and the completion's, none for the "
                                  "ephemeral step";
  EXPECT_EQ(entry_keys(), 2u) << "its record went out with the next write";

  // And it replays like any step.
  store.kv.erase(workflow::keys::meta_key());
  restart();
  EXPECT_EQ(run(body), nullptr);
  EXPECT_EQ(runs, 2);
}

// ---- a crash at every write ---------------------------------------------------------------------
// The process dies at write n (that write and everything after it never reach storage), for
// every n a clean run makes; the next start runs the workflow to its end. Each step's effect is
// state of the actor, written with the step's record: every step and every undo must take effect
// exactly once, whatever write the crash hit.

class CrashingWorkflowTest : public ActorWorkflowTest {
 protected:
  Task<Result<void>> workflow_save() override {
    ++saves;
    if (crash_at != 0 && saves >= crash_at) {
      // Dead: nothing more is written; the run ends as a stop would.
      co_return fail(Error{"actor", "aborted", "crashed", std::nullopt, true});
    }
    storage::ActorWrite write;
    wf->take_changes(write);
    storage::apply_kv(store.kv, write.kv);
    durable = pending;
    co_return Result<void>{};
  }
  void crash_and_restart() {
    pending = durable;  // memory is lost
    crash_at = 0;
    saves = 0;
    restart();
  }

  std::map<std::string, int> pending;  // the actor's state in memory
  std::map<std::string, int> durable;  // what storage has
  int crash_at = 0;
};

Task<Value> effect(std::map<std::string, int>* state, std::string name, int delta) {
  (*state)[name] += delta;
  co_return Value(name);
}
Task<void> undo_effect(std::map<std::string, int>* state, std::string name) {
  (*state)[name] -= 1;
  (*state)["undo " + name] += 1;
  co_return;
}
WorkflowStepConfig undoable_effect(std::string name, std::map<std::string, int>* state) {
  WorkflowStepConfig config = config_of(name, 0);
  config.rollback = [state, name](Value) {
    return undo_effect(state, name);
  };
  return config;
}
Task<Value> failing_effect(std::map<std::string, int>* state) {
  (*state)["attempts"] += 1;
  throw std::runtime_error("declined");
  co_return Value{};
}
Task<WorkflowLoopTurn> mixed_turn(ActorWorkflow* wf,
                                  WorkflowScope scope,
                                  Value st,
                                  std::map<std::string, int>* state) {
  const auto n = st.as_int();
  auto op = wf->step(scope, config_of("tick"),
                     [state, n] { return effect(state, "tick " + std::to_string(n), 1); });
  co_await std::move(op);
  co_return WorkflowLoopTurn{n + 1 >= 3, Value(n + 1)};
}
Task<Value> branch_effect(ActorWorkflow* wf,
                          WorkflowScope scope,
                          std::map<std::string, int>* state,
                          std::string name) {
  auto op = wf->step(scope, config_of("work"), [state, name] { return effect(state, name, 1); });
  co_return co_await std::move(op);
}
/// Every kind of operation, then (with `fail`) a failing step and the rollback.
Task<void> mixed(ActorWorkflow* wf, std::map<std::string, int>* state, bool fail) {
  auto cp = wf->rollback_checkpoint({}, "cp");
  co_await std::move(cp);
  auto a = wf->step({}, undoable_effect("a", state), [state] { return effect(state, "a", 1); });
  co_await std::move(a);
  WorkflowStepConfig quick = config_of("quick");
  quick.ephemeral = true;
  auto q = wf->step({}, quick, [state] { return effect(state, "quick", 1); });
  co_await std::move(q);
  auto l = wf->loop({}, "l", Value(0), [=](WorkflowScope scope, Value st) {
    return mixed_turn(wf, std::move(scope), std::move(st), state);
  });
  co_await std::move(l);
  auto s = wf->sleep({}, "nap", std::nullopt, 50ms);
  co_await std::move(s);
  std::vector<detail::WorkflowBranch> branches;
  branches.push_back({"x", [=](WorkflowScope sc) {
                        return branch_effect(wf, std::move(sc), state, "x");
                      }});
  branches.push_back({"y", [=](WorkflowScope sc) {
                        return branch_effect(wf, std::move(sc), state, "y");
                      }});
  auto j = wf->join({}, "both", std::move(branches));
  co_await std::move(j);
  auto v = wf->get_version({}, "v", 2);
  co_await std::move(v);
  auto b = wf->step({}, undoable_effect("b", state), [state] { return effect(state, "b", 1); });
  co_await std::move(b);
  if (fail) {
    auto f = wf->step({}, config_of("pay", 0), [state] { return failing_effect(state); });
    co_await std::move(f);
  }
}

TEST_F(CrashingWorkflowTest, ACrashAtAnyWriteLosesNothingAndRepeatsNothing) {
  for (bool fail : {false, true}) {
    SCOPED_TRACE(fail ? "failing and rolling back" : "completing");
    auto body = [&](WorkflowScope) {
      return mixed(wf.get(), &pending, fail);
    };
    // A clean run: how many writes it makes, and the state it ends with.
    store.kv.clear();
    durable.clear();
    crash_and_restart();
    ASSERT_EQ(run(body), nullptr);
    const int writes = saves;
    const auto expected = durable;
    ASSERT_GE(writes, 8);
    EXPECT_EQ(state(),
              fail ? workflow::WorkflowState::kFailed : workflow::WorkflowState::kCompleted);
    for (int n = 1; n <= writes; ++n) {
      SCOPED_TRACE("crash at write " + std::to_string(n));
      store.kv.clear();
      durable.clear();
      crash_and_restart();
      crash_at = n;
      EXPECT_EQ(code_of(run(body)), "actor.aborted");
      crash_and_restart();
      EXPECT_EQ(run(body), nullptr);
      // A crash after the failing step's attempt and before its record lets it run again: an
      // attempt is not an effect the workflow promises once (docs/workflows.md).
      auto got = durable;
      auto want = expected;
      got.erase("attempts");
      want.erase("attempts");
      EXPECT_EQ(got, want);
      EXPECT_EQ(state(),
                fail ? workflow::WorkflowState::kFailed : workflow::WorkflowState::kCompleted);
    }
  }
}

TEST(WorkflowHistoryTest, RecordsRoundTripAndCorruptionIsAnError) {
  workflow::Entry e;
  e.id = "id-1";
  e.kind = workflow::EntryKind::kLoop;
  e.status = workflow::EntryStatus::kRunning;
  e.attempts = 2;
  e.loop_state = Value::object({{"n", Value(3)}});
  e.iteration = 7;
  e.output = Value{};  // an undefined result is still a result
  auto back = workflow::decode_entry(workflow::encode_entry(e));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->iteration, 7u);
  EXPECT_EQ(back->loop_state, e.loop_state);
  ASSERT_TRUE(back->output);
  // (undefined is stored as null: both read back as "no value")
  EXPECT_TRUE(back->output->is_undefined() || back->output->is_null());

  const auto loc = workflow::location::iteration(workflow::location::named("", 1), 2, 9);
  auto parsed = workflow::location::parse(loc);
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ(std::get<workflow::location::IterationSegment>((*parsed)[1]).iteration, 9u);
  EXPECT_FALSE(workflow::location::parse("\x01\x00"));

  workflow::WorkflowHistory h;
  std::vector<storage::KvEntry> stored{{workflow::keys::entry_key(loc), "not cbor \xff"}};
  auto r = h.load(stored);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "history_corrupt");
  // A record from a newer format is refused, naming both formats.
  auto newer = workflow::decode_record(
      encode_stored(Value::object({{"v", Value(2)}, {"state", Value("running")}})));
  ASSERT_FALSE(newer);
  EXPECT_EQ(newer.error().code, "history_version");
  EXPECT_NE(newer.error().message.find("format 2"), std::string::npos);
  workflow::WorkflowHistory gap;
  EXPECT_FALSE(gap.load({{workflow::keys::name_key(1), "b"}})) << "a name registry with a gap";
}

}  // namespace
}  // namespace rivetkit::core
