// One entry point for work (Runtime::dispatch, core/runtime/actor_slot.hpp), without sockets, on a
// manual clock: work that meets a stopping actor runs exactly once, on the next generation; a
// burst of work for a starting actor runs in arrival order; a destroyed actor answers not found;
// work sent from inside another actor is taken; the slot's buffer is bounded.

#include "core/errors.hpp"
#include "runtime_harness.hpp"

#include <atomic>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct State {
  std::int64_t count = 0;
  std::vector<std::int64_t> order;
};
RIVETKIT_FIELDS(State, count, order)

using Types = ActorTypes<State>;

Runtime* g_runtime = nullptr;  // for the action that calls another actor
bool g_slow_wake = false;      // on_wake takes a second of the test's clock
bool g_slow_connect = false;   // on_before_connect takes a second of the test's clock

HttpActionCommand action(std::string name, Array args = {}) {
  HttpActionCommand command;
  command.name = std::move(name);
  command.args = std::move(args);
  return command;
}

ActorDefinition counter() {
  return actor<Types>("counter")
      .on_wake([](auto& c) -> Task<void> {
        if (g_slow_wake) {
          co_await c.wait(seconds(1));
        }
      })
      .on_before_connect([](auto& c, const Value&) -> Task<void> {
        if (g_slow_connect) {
          co_await c.wait(seconds(1));
        }
      })
      .action("increment",
              [](auto& c) {
                c.state().count += 1;
                return c.state().count;
              })
      .action("append",
              [](auto& c, std::int64_t n) {
                c.state().order.push_back(n);
                return static_cast<std::int64_t>(c.state().order.size());
              })
      .action("get", [](auto& c) { return c.state(); })
      .action("sleep", [](auto& c) { c.sleep(); })
      .action("destroy", [](auto& c) { c.destroy(); })
      .action("incrementOther", [](auto& c, std::string other) -> Task<std::int64_t> {
        (void)c;
        auto op = g_runtime->dispatch(std::move(other), action("increment"));
        auto done = co_await std::move(op);
        if (!done.result) {
          throw std::runtime_error(done.result.error().message);
        }
        co_return done.result->as_int();
      });
}

class DispatchTest : public testing::RuntimeHarness {
 protected:
  ActorDefinition def() const override { return counter(); }

  void SetUp() override {
    RuntimeHarness::SetUp();
    restart_runtime(1024);
    storage::ActorRecord rec;
    rec.actor_id = "actor-2";
    rec.name = "counter";
    rec.key = "k2";
    rec.create_ts = clock_->now_ms();
    ASSERT_TRUE(run(store_->create_actor(rec)));
  }
  void TearDown() override {
    run(runtime_->shutdown());
    g_runtime = nullptr;
    g_slow_wake = false;
    g_slow_connect = false;
    RuntimeHarness::TearDown();
  }

  void restart_runtime(std::size_t max_waiting) {
    RuntimeConfig config;
    config.clock = clock_;
    config.max_waiting_commands = max_waiting;
    runtime_ = std::make_unique<Runtime>(io_, config, std::vector<ActorDefinition>{def()});
    driver_.runtime = runtime_.get();
    g_runtime = runtime_.get();
    runtime_->set_waker([this](std::string id) { return wake(std::move(id)); });
  }

  // Local mode's waker: start the actor in its slot.
  Task<Result<void>> wake(std::string actor_id) {
    ++wakes_;
    if (actor_id != "actor-1" && actor_id != "actor-2") {
      co_return fail(actor_not_found(actor_id));
    }
    auto store = store_;
    auto driver = &driver_;
    auto data = detail::Access::data(def());
    auto factory = [store, driver, data, actor_id]() {
      return spec(store, driver, data, actor_id);
    };
    auto op = runtime_->acquire(actor_id, factory);
    auto started = co_await std::move(op);
    if (!started) {
      co_return fail(started.error());
    }
    co_return Result<void>{};
  }
  static Task<Result<ActorInstance::Spec>> spec(
      std::shared_ptr<storage::LocalStore> store,
      ActorDriver* driver,
      std::shared_ptr<const detail::ActorDefinitionData> data,
      std::string actor_id) {
    auto gen_op = store->acquire_generation(actor_id);
    auto gen = co_await std::move(gen_op);
    if (!gen) {
      co_return fail(gen.error());
    }
    ActorInstance::Spec s;
    s.actor_id = actor_id;
    s.name = "counter";
    s.key = {actor_id};
    s.generation = *gen;
    s.definition = std::move(data);
    s.driver = driver;
    co_return s;
  }

  // Dispatches without waiting; the answer lands in the returned slot.
  using Answer = std::shared_ptr<std::optional<Dispatched<Value>>>;
  Answer send(std::string actor_id, HttpActionCommand command) {
    auto answer = std::make_shared<std::optional<Dispatched<Value>>>();
    asio::co_spawn(io_, runtime_->dispatch(std::move(actor_id), std::move(command)),
                   [answer](std::exception_ptr e, Dispatched<Value> d) {
                     ASSERT_FALSE(e);
                     *answer = std::move(d);
                   });
    return answer;
  }
  Dispatched<Value> call_on(std::string actor_id, HttpActionCommand command) {
    return run(runtime_->dispatch(std::move(actor_id), std::move(command)));
  }
  template <class Pred>
  bool wait_for(Pred pred) {
    for (int i = 0; i < 500 && !pred(); ++i) {
      settle();
    }
    return pred();
  }

  int wakes_ = 0;
};

TEST_F(DispatchTest, ASleepingActorIsWokenForWork) {
  auto first = call_on("actor-1", action("increment"));
  ASSERT_TRUE(first.result) << first.result.error().message;
  EXPECT_EQ(first.result->as_int(), 1);
  ASSERT_TRUE(first.instance);
  EXPECT_EQ(wakes_, 1);
  auto second = call_on("actor-1", action("increment"));
  ASSERT_TRUE(second.result);
  EXPECT_EQ(second.result->as_int(), 2);
  EXPECT_EQ(second.instance, first.instance) << "a running actor takes work without a wake";
  EXPECT_EQ(wakes_, 1);
}

TEST_F(DispatchTest, EveryStartTakesItsGenerationsStoreFromTheDriver) {
  driver_.run_sleeps = false;  // the stop is the test's to run
  auto first = call_on("actor-1", action("increment"));
  ASSERT_TRUE(first.result) << first.result.error().message;
  ASSERT_TRUE(call_on("actor-1", action("sleep")).result);
  run(runtime_->stop("actor-1", StopReason::kSleep));
  auto second = call_on("actor-1", action("increment"));
  ASSERT_TRUE(second.result) << second.result.error().message;
  EXPECT_EQ(second.result->as_int(), 2) << "the second generation loads what the first saved";
  ASSERT_TRUE(first.instance && second.instance);
  std::lock_guard lock(driver_.mutex);
  using Given = std::vector<std::pair<std::string, std::uint32_t>>;
  EXPECT_EQ(driver_.stores_given, (Given{{"actor-1", first.instance->generation()},
                                         {"actor-1", second.instance->generation()}}));
}

TEST_F(DispatchTest, AStartWithoutStorageFailsTheWorkAndTheNextWorkStartsTheActor) {
  driver_.storage_error = Error{"storage", "unavailable", "the disk is gone", std::nullopt, false};
  auto refused = call_on("actor-1", action("increment"));
  ASSERT_FALSE(refused.result);
  EXPECT_EQ(refused.result.error().group, "storage");
  EXPECT_EQ(refused.result.error().code, "unavailable");
  auto served = call_on("actor-1", action("increment"));
  ASSERT_TRUE(served.result) << served.result.error().message;
  EXPECT_EQ(served.result->as_int(), 1) << "the refused work never ran";
}

TEST_F(DispatchTest, AQueueSendToAnUndeclaredQueueCompletesAndEnqueuesNothing) {
  QueueSendCommand send;
  send.name = "jobs";
  send.body = Value{"work"};
  send.wait = true;
  auto op = runtime_->dispatch("actor-1", std::move(send));
  auto sent = run(std::move(op));
  ASSERT_TRUE(sent.result) << sent.result.error().message;
  EXPECT_FALSE(sent.result->timed_out);
  EXPECT_FALSE(sent.result->response);
  ASSERT_TRUE(sent.instance) << "a sleeping actor is woken for a send";
  auto state = call_on("actor-1", action("get"));
  ASSERT_TRUE(state.result);
  EXPECT_EQ(state.result->find("count")->as_int(), 0);
}

TEST_F(DispatchTest, WorkArrivingWhileTheActorStopsRunsOnceOnTheNextGeneration) {
  driver_.run_sleeps = false;  // the stop is the test's to run
  auto first = call_on("actor-1", action("increment"));
  ASSERT_TRUE(first.result);
  const auto first_generation = first.instance->generation();
  ASSERT_TRUE(call_on("actor-1", action("sleep")).result);
  ASSERT_FALSE(first.instance->lifecycle().accepting()) << "the actor asked to sleep";

  auto waiting = send("actor-1", action("increment"));
  settle();
  EXPECT_FALSE(*waiting) << "the stopping instance refuses it; it waits in the slot";

  run(runtime_->stop("actor-1", StopReason::kSleep));
  ASSERT_TRUE(wait_for([&] { return waiting->has_value(); }));
  const auto& answer = **waiting;
  ASSERT_TRUE(answer.result) << answer.result.error().message;
  EXPECT_EQ(answer.result->as_int(), 2) << "ran once, on the state the first generation saved";
  ASSERT_TRUE(answer.instance);
  EXPECT_GT(answer.instance->generation(), first_generation);
  auto state = call_on("actor-1", action("get"));
  ASSERT_TRUE(state.result);
  EXPECT_EQ(state.result->find("count")->as_int(), 2);
}

// Engine mode: the gateway sends a request to one generation and sends it again itself if that
// generation stops first. Bound to it, the request never runs on another one (nor wakes one).
TEST_F(DispatchTest, WorkBoundToAGenerationThatStopsNeverRunsElsewhere) {
  driver_.run_sleeps = false;  // the stop is the test's to run
  auto first = call_on("actor-1", action("increment"));
  ASSERT_TRUE(first.result);
  const auto generation = first.instance->generation();
  auto bound_op = runtime_->dispatch("actor-1", action("increment"), generation);
  auto bound = run(std::move(bound_op));
  ASSERT_TRUE(bound.result) << "its own generation runs it: " << bound.result.error().message;
  EXPECT_EQ(bound.result->as_int(), 2);

  ASSERT_TRUE(call_on("actor-1", action("sleep")).result);
  auto waiting = std::make_shared<std::optional<Dispatched<Value>>>();
  asio::co_spawn(io_, runtime_->dispatch("actor-1", action("increment"), generation),
                 [waiting](std::exception_ptr e, Dispatched<Value> d) {
                   ASSERT_FALSE(e);
                   *waiting = std::move(d);
                 });
  ASSERT_TRUE(wait_for([&] { return waiting->has_value(); }))
      << "a stopping generation fails it at once";
  ASSERT_FALSE((*waiting)->result);
  EXPECT_TRUE(is_generation_gone((*waiting)->result.error()));

  run(runtime_->stop("actor-1", StopReason::kSleep));
  const int wakes = wakes_;
  auto asleep_op = runtime_->dispatch("actor-1", action("increment"), generation);
  auto asleep = run(std::move(asleep_op));
  ASSERT_FALSE(asleep.result);
  EXPECT_TRUE(is_generation_gone(asleep.result.error()));
  EXPECT_EQ(wakes_, wakes) << "bound work wakes nothing";

  auto next = call_on("actor-1", action("get"));
  ASSERT_TRUE(next.result);
  EXPECT_EQ(next.result->find("count")->as_int(), 2) << "neither refused increment ran";
  ASSERT_NE(next.instance->generation(), generation);
  auto stale_op = runtime_->dispatch("actor-1", action("increment"), generation);
  auto stale = run(std::move(stale_op));
  ASSERT_FALSE(stale.result) << "another generation runs now";
  EXPECT_TRUE(is_generation_gone(stale.result.error()));
  EXPECT_EQ(call_on("actor-1", action("get")).result->find("count")->as_int(), 2);
}

TEST_F(DispatchTest, WorkArrivingDuringTheStopItselfWaitsForIt) {
  ASSERT_TRUE(call_on("actor-1", action("increment")).result);
  // The stop and the work are queued together: the work meets a stopping slot.
  util::spawn(io_.get_executor(), runtime_->stop("actor-1", StopReason::kSleep), "test stop");
  auto waiting = send("actor-1", action("increment"));
  ASSERT_TRUE(wait_for([&] { return waiting->has_value(); }));
  ASSERT_TRUE((*waiting)->result) << (*waiting)->result.error().message;
  EXPECT_EQ((*waiting)->result->as_int(), 2);
}

TEST_F(DispatchTest, ABurstForAStartingActorRunsInArrivalOrder) {
  std::vector<Answer> answers;
  for (std::int64_t i = 0; i < 20; ++i) {
    answers.push_back(send("actor-1", action("append", {Value{i}})));
  }
  ASSERT_TRUE(wait_for([&] {
    return std::all_of(answers.begin(), answers.end(),
                       [](const Answer& a) { return a->has_value(); });
  }));
  EXPECT_EQ(wakes_, 1) << "one start serves the burst";
  auto state = call_on("actor-1", action("get"));
  ASSERT_TRUE(state.result);
  const auto& order = state.result->find("order")->as_array();
  ASSERT_EQ(order.size(), 20u) << "each ran once";
  for (std::size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i].as_int(), static_cast<std::int64_t>(i));
  }
}

TEST_F(DispatchTest, ADestroyedActorAnswersNotFound) {
  ASSERT_TRUE(call_on("actor-1", action("increment")).result);
  run(runtime_->stop("actor-1", StopReason::kDestroy));
  auto after = call_on("actor-1", action("increment"));
  ASSERT_FALSE(after.result);
  EXPECT_EQ(after.result.error().group, "actor");
  EXPECT_EQ(after.result.error().code, "not_found");

  auto unknown = call_on("nobody", action("increment"));
  ASSERT_FALSE(unknown.result);
  EXPECT_EQ(unknown.result.error().code, "not_found") << "the mode's wake says it does not exist";
}

TEST_F(DispatchTest, WorkWaitingForAnActorThatIsDestroyedAnswersNotFound) {
  driver_.run_sleeps = false;
  ASSERT_TRUE(call_on("actor-1", action("sleep")).result);
  auto waiting = send("actor-1", action("increment"));
  settle();
  ASSERT_FALSE(*waiting);
  run(runtime_->stop("actor-1", StopReason::kDestroy));
  ASSERT_TRUE(wait_for([&] { return waiting->has_value(); }));
  ASSERT_FALSE((*waiting)->result);
  EXPECT_EQ((*waiting)->result.error().code, "not_found");
}

TEST_F(DispatchTest, WorkThatWokeTheActorRunsBeforeADestroyDuringTheStart) {
  g_slow_wake = true;
  auto waking = send("actor-1", action("increment"));
  ASSERT_TRUE(wait_for([&] { return wakes_ == 1; }));
  util::spawn(io_.get_executor(), runtime_->stop("actor-1", StopReason::kDestroy), "test destroy");
  settle();
  EXPECT_FALSE(*waking) << "the start is still in on_wake";
  advance(seconds(1));
  ASSERT_TRUE(wait_for([&] { return waking->has_value(); }));
  ASSERT_TRUE((*waking)->result) << "work that was waiting for the start runs on it: "
                                 << (*waking)->result.error().message;
  EXPECT_EQ((*waking)->result->as_int(), 1);
  auto after = call_on("actor-1", action("increment"));
  ASSERT_FALSE(after.result) << "the destroy followed";
  EXPECT_EQ(after.result.error().code, "not_found");
}

// An HTTP action's connection opens first (its hooks may suspend); an instance that began to stop
// meanwhile refuses the action, which must reach the next instance whole: its name and
// arguments were once moved out before the refusal ("Action `` was not found" on the retry).
TEST_F(DispatchTest, AnActionRefusedWhileItsConnectionOpenedRunsWholeOnTheNextGeneration) {
  driver_.run_sleeps = false;
  auto first = call_on("actor-1", action("append", {Value{7}}));
  ASSERT_TRUE(first.result);
  g_slow_connect = true;
  auto waiting = send("actor-1", action("append", {Value{8}}));
  settle();
  EXPECT_FALSE(*waiting) << "its connection is opening (on_before_connect waits)";
  g_slow_connect = false;
  util::spawn(io_.get_executor(), runtime_->stop("actor-1", StopReason::kSleep), "test sleep");
  settle();
  advance(seconds(1));
  ASSERT_TRUE(wait_for([&] { return waiting->has_value(); }));
  const auto& answer = **waiting;
  ASSERT_TRUE(answer.result) << answer.result.error().message;
  EXPECT_EQ(answer.result->as_int(), 2) << "appended once, with its argument";
  ASSERT_TRUE(answer.instance);
  EXPECT_GT(answer.instance->generation(), first.instance->generation());
  auto state = call_on("actor-1", action("get"));
  ASSERT_TRUE(state.result);
  EXPECT_EQ(*state.result->find("order"), Value(Array{Value{7}, Value{8}}));
}

TEST_F(DispatchTest, AnActorCallingAnotherIsServed) {
  auto relayed = call_on("actor-1", action("incrementOther", {Value{"actor-2"}}));
  ASSERT_TRUE(relayed.result) << relayed.result.error().message;
  EXPECT_EQ(relayed.result->as_int(), 1);
  auto other = call_on("actor-2", action("get"));
  ASSERT_TRUE(other.result);
  EXPECT_EQ(other.result->find("count")->as_int(), 1);
  auto self = call_on("actor-1", action("get"));
  ASSERT_TRUE(self.result);
  EXPECT_EQ(self.result->find("count")->as_int(), 0);
}

TEST_F(DispatchTest, AFloodForAStoppingActorIsBounded) {
  restart_runtime(4);
  driver_.run_sleeps = false;
  ASSERT_TRUE(call_on("actor-1", action("sleep")).result);
  std::vector<Answer> answers;
  for (int i = 0; i < 10; ++i) {
    answers.push_back(send("actor-1", action("increment")));
  }
  settle();
  int overloaded = 0;
  for (const auto& a : answers) {
    if (a->has_value()) {
      ASSERT_FALSE((*a)->result);
      EXPECT_EQ((*a)->result.error().group, "actor");
      EXPECT_EQ((*a)->result.error().code, "overloaded");
      ++overloaded;
    }
  }
  EXPECT_EQ(overloaded, 6) << "four wait, the rest are refused at once";
  run(runtime_->stop("actor-1", StopReason::kSleep));
  ASSERT_TRUE(wait_for([&] {
    return std::all_of(answers.begin(), answers.end(),
                       [](const Answer& a) { return a->has_value(); });
  }));
  auto state = call_on("actor-1", action("get"));
  ASSERT_TRUE(state.result);
  EXPECT_EQ(state.result->find("count")->as_int(), 4) << "the waiting ones ran once each";
}

TEST_F(DispatchTest, WorkWaitsForAStartOnlyAsLongAsTheLimit) {
  // A mode whose wake starts nothing here (engine mode: the actor went elsewhere).
  runtime_->set_waker([](std::string) -> Task<Result<void>> { co_return Result<void>{}; });
  auto waiting = send("actor-1", action("increment"));
  settle();
  EXPECT_FALSE(*waiting);
  advance(seconds(31));
  ASSERT_TRUE(wait_for([&] { return waiting->has_value(); }));
  ASSERT_FALSE((*waiting)->result);
  EXPECT_EQ((*waiting)->result.error().group, "guard");
  EXPECT_EQ((*waiting)->result.error().code, "actor_ready_timeout");
}

TEST_F(DispatchTest, AClosedConnectionWakesNothingUnlessItOutlivesItsInstance) {
  ConnectionClosedCommand closed;
  closed.conn_id = "gone";
  auto answer = run(runtime_->dispatch("actor-1", closed));
  ASSERT_TRUE(answer.result);
  EXPECT_FALSE(*answer.result);
  EXPECT_EQ(wakes_, 0) << "a close for a sleeping actor's plain connection wakes nothing";
  closed.wake = true;
  answer = run(runtime_->dispatch("actor-1", closed));
  ASSERT_TRUE(answer.result);
  EXPECT_FALSE(*answer.result) << "no such connection in the woken instance";
  EXPECT_EQ(wakes_, 1);
}

}  // namespace
}  // namespace rivetkit::core
