// The queue part alone, over an in-memory store and a host the test drives: sends become one
// message key each plus the next id, committed by the actor's write (take_changes); a load
// brings them back oldest first and ids go on from the stored next id; plain receives remove,
// completable ones stay until completed; RivetKit's errors for misuse and the limits; a waiting
// receive is woken by a send, ends at its timeout or with actor.aborted at the stop; a waiting
// sender gets the response. Redelivery (QueueDelivery): delivery counts that survive restarts,
// a visibility timeout that hides and then shows a message again, max_deliveries moving a
// message to the dead letters, replaying and dropping them; version 1 records still read.

#include "core/actor/actor_queue.hpp"

#include "memory_kv.hpp"
#include <rivetkit/error.hpp>
#include <rivetkit/queue.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

class MemoryStore final : public testing::MapKvStore {
 public:
  Task<Result<storage::PersistedActor>> load() override { co_return storage::PersistedActor{}; }
  Task<Result<void>> commit(storage::ActorWrite write) override {
    storage::apply_kv(kv, write.kv);
    co_return Result<void>{};
  }
};

detail::ActorDefinitionData definition_with(std::vector<std::string> queues) {
  detail::ActorDefinitionData d;
  d.name = "q";
  for (auto& q : queues) {
    d.queues.try_emplace(std::move(q));
  }
  return d;
}

// A free coroutine (GCC 12 mishandles coroutine lambdas called in place).
Task<bool> complete_one(ActorQueue& q, std::shared_ptr<detail::QueueCompletion> c, Value response) {
  auto op = q.complete(std::move(c), std::move(response));
  co_await std::move(op);
  co_return true;
}

class ActorQueueTest : public ::testing::Test, public ActorQueue::Host {
 protected:
  bool queue_open() const override { return open; }
  void queue_changed() override { ++changes; }
  Task<Result<void>> save_now() override {
    ++saves_now;
    save();
    co_return Result<void>{};
  }
  Task<Result<void>> save_after_holds() override {
    ++saves_now;
    save();
    co_return Result<void>{};
  }
  std::shared_ptr<void> hold_writes(std::chrono::milliseconds limit) override {
    auto hold = std::make_shared<std::chrono::milliseconds>(limit);
    holds.push_back(hold);
    return hold;
  }
  std::shared_ptr<void> hold() override { return nullptr; }
  std::int64_t queue_now_ms() const override { return 1'700'000'000'000; }
  std::shared_ptr<void> queue_wait_began() override {
    ++waits_began;
    return nullptr;
  }

  /// The actor's write: what the part changed, committed.
  void save() {
    storage::ActorWrite write;
    queue->take_changes(write);
    storage::apply_kv(store.kv, write.kv);
  }
  /// A new instance of the part over what is durable (a restart).
  void reload() {
    queue = std::make_unique<ActorQueue>(io.get_executor(), "actor-1", definition, *this);
    auto [ok, error] = call(queue->load(store));
    ASSERT_TRUE(ok && *ok) << "load";
  }

  template <class T>
  std::pair<std::optional<T>, std::exception_ptr> call(Task<T> task,
                                                       std::chrono::milliseconds max = 2s) {
    auto done = std::make_shared<std::pair<std::optional<T>, std::exception_ptr>>();
    asio::co_spawn(io, std::move(task), [done](std::exception_ptr e, T v) {
      done->second = e;
      if (!e) {
        done->first = std::move(v);
      }
    });
    const auto until = std::chrono::steady_clock::now() + max;
    while (!done->first && !done->second && std::chrono::steady_clock::now() < until) {
      io.restart();
      io.run_for(2ms);
    }
    return *done;
  }
  std::vector<detail::QueueMessageData> receive(QueueReceive r,
                                                bool wait = false,
                                                const void* scope = nullptr) {
    auto [list, error] = call(queue->receive(scope, std::move(r), wait));
    last_error = error;
    return list ? std::move(*list) : std::vector<detail::QueueMessageData>{};
  }
  static QueueReceive names(std::vector<std::string> n, std::size_t count = 1) {
    QueueReceive r;
    r.names = std::move(n);
    r.count = count;
    return r;
  }
  static std::string code_of(std::exception_ptr e) {
    if (!e) {
      return "";
    }
    try {
      std::rethrow_exception(e);
    } catch (const ActorError& err) {
      return err.error().group + "." + err.error().code;
    } catch (...) {
      return "?";
    }
  }

  asio::io_context io;
  MemoryStore store;
  detail::ActorDefinitionData definition = definition_with({"a", "b"});
  std::unique_ptr<ActorQueue> queue =
      std::make_unique<ActorQueue>(io.get_executor(), "actor-1", definition, *this);
  bool open = true;
  int changes = 0;
  int waits_began = 0;
  int saves_now = 0;
  // The holds the part asked for (alive while the token is).
  std::vector<std::weak_ptr<std::chrono::milliseconds>> holds;
  std::exception_ptr last_error;
};

TEST_F(ActorQueueTest, SendsAreStoredWithTheTurnAndComeBackOldestFirstAfterARestart) {
  EXPECT_EQ(queue->enqueue("a", 1), 1u);
  EXPECT_EQ(queue->enqueue("b", "two"), 2u);
  EXPECT_EQ(queue->enqueue("a", Value::object({{"x", 3}})), 3u);
  EXPECT_EQ(changes, 3);
  EXPECT_TRUE(store.kv.empty()) << "nothing is written before the actor's write";
  save();
  EXPECT_EQ(store.kv.size(), 4u);  // three messages and the next id
  EXPECT_EQ(store.kv.count(queue_keys::message_key(2)), 1u);

  reload();
  EXPECT_EQ(queue->size(), 3u);
  auto all = receive(names({}, 10));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, 1u);
  EXPECT_EQ(all[0].body, Value(1));
  EXPECT_EQ(all[1].name, "b");
  EXPECT_EQ(all[2].body, Value::object({{"x", 3}}));
  EXPECT_EQ(all[2].created_at, 1'700'000'000'000);
  save();
  reload();
  EXPECT_EQ(queue->size(), 0u);
  EXPECT_EQ(queue->enqueue("a", 4), 4u) << "ids are not reused once the queue is empty";
}

TEST_F(ActorQueueTest, NamesAndCountSelectOldestFirst) {
  for (int i = 0; i < 4; ++i) {
    queue->enqueue(i % 2 == 0 ? "a" : "b", i);
  }
  auto bs = receive(names({"b"}, 5));
  ASSERT_EQ(bs.size(), 2u);
  EXPECT_EQ(bs[0].body, Value(1));
  EXPECT_EQ(bs[1].body, Value(3));
  auto one = receive(names({"a", "b"}));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].body, Value(0));
  EXPECT_EQ(queue->size(), 1u);
}

TEST_F(ActorQueueTest, CompletableMessagesStayUntilCompleted) {
  queue->enqueue("a", "job");
  int scope_a = 0;
  int scope_b = 0;
  QueueReceive r = names({"a"});
  r.completable = true;
  auto first = receive(r, false, &scope_a);
  ASSERT_EQ(first.size(), 1u);
  ASSERT_TRUE(first[0].completion);
  // The same caller may not take another while it holds this one; another caller sees it again.
  receive(names({"a"}), false, &scope_a);
  EXPECT_EQ(code_of(last_error), "queue.previous_message_not_completed");
  auto again = receive(r, false, &scope_b);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].id, first[0].id);
  again.clear();  // dropped uncompleted: that caller may receive again
  EXPECT_EQ(receive(names({"a"}), false, &scope_b).size(), 1u) << "plain receive takes it";
  EXPECT_EQ(code_of(last_error), "");

  queue->enqueue("a", "second");
  auto held = receive(r, false, &scope_a);
  EXPECT_EQ(code_of(last_error), "queue.previous_message_not_completed")
      << "the first message is still held by scope_a";
  first.clear();
  held = receive(r, false, &scope_a);
  ASSERT_EQ(held.size(), 1u);
  auto [done, error] = call(complete_one(*queue, held[0].completion, Value("ok")));
  ASSERT_TRUE(done) << code_of(error);
  EXPECT_EQ(queue->size(), 0u);
  auto [twice, twice_error] = call(complete_one(*queue, held[0].completion, Value("ok")));
  EXPECT_EQ(code_of(twice_error), "queue.already_completed");
  auto [plain, plain_error] = call(complete_one(*queue, nullptr, Value()));
  EXPECT_EQ(code_of(plain_error), "queue.not_completable");
}

TEST_F(ActorQueueTest, LimitsRefuseWithoutKeepingAnything) {
  definition.options.max_queue_size = 2;
  definition.options.max_queue_message_size = 64;
  queue->enqueue("a", 1);
  try {
    queue->enqueue("a", std::string(100, 'x'));
    FAIL() << "a message over the size limit was kept";
  } catch (const ActorError& e) {
    EXPECT_EQ(e.error().code, "message_too_large");
  }
  queue->enqueue("a", 2);
  try {
    queue->enqueue("a", 3);
    FAIL() << "a message past the queue size was kept";
  } catch (const ActorError& e) {
    EXPECT_EQ(e.error().code, "full");
    EXPECT_NE(e.error().message.find("Queue is full. Limit is 2"), std::string::npos);
  }
  EXPECT_EQ(queue->size(), 2u);
  EXPECT_EQ(ActorQueue::measured_size("a", std::string(10, 'x')), 2u + 2 + 11 + 12);
}

TEST_F(ActorQueueTest, AWaitingReceiveIsWokenBySendEndsAtItsTimeoutOrWithTheStop) {
  QueueReceive r = names({"b"});
  r.timeout = 30ms;
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(receive(r, true).empty());
  EXPECT_GE(std::chrono::steady_clock::now() - started, 30ms);
  EXPECT_EQ(waits_began, 1) << "the run handler's wait lets the actor sleep";

  r.timeout = std::nullopt;
  auto done = std::make_shared<std::optional<std::vector<detail::QueueMessageData>>>();
  asio::co_spawn(io, queue->receive(nullptr, r, true),
                 [done](std::exception_ptr, std::vector<detail::QueueMessageData> v) {
                   *done = std::move(v);
                 });
  io.restart();
  io.run_for(5ms);
  EXPECT_FALSE(*done);
  queue->enqueue("b", "wake");
  for (int i = 0; i < 100 && !*done; ++i) {
    io.restart();
    io.run_for(2ms);
  }
  ASSERT_TRUE(*done);
  ASSERT_EQ((*done)->size(), 1u);

  auto aborted = std::make_shared<std::exception_ptr>();
  asio::co_spawn(
      io, queue->receive(nullptr, r, true),
      [aborted](std::exception_ptr e, std::vector<detail::QueueMessageData>) { *aborted = e; });
  io.restart();
  io.run_for(5ms);
  queue->abort();
  for (int i = 0; i < 100 && !*aborted; ++i) {
    io.restart();
    io.run_for(2ms);
  }
  EXPECT_EQ(code_of(*aborted), "actor.aborted");
  queue->enqueue("b", "after");
  EXPECT_EQ(receive(r, false).size(), 1u) << "a receive that does not wait still works";
}

TEST_F(ActorQueueTest, TheCallersCancelEndsAWaitingReceiveWithActorAborted) {
  QueueReceive r = names({"b"});
  r.cancel.emplace();
  auto aborted = std::make_shared<std::optional<std::exception_ptr>>();
  asio::co_spawn(
      io, queue->receive(nullptr, r, true),
      [aborted](std::exception_ptr e, std::vector<detail::QueueMessageData>) { *aborted = e; });
  io.restart();
  io.run_for(5ms);
  EXPECT_FALSE(*aborted) << "waiting until the cancel";
  r.cancel->cancel();
  for (int i = 0; i < 100 && !*aborted; ++i) {
    io.restart();
    io.run_for(2ms);
  }
  ASSERT_TRUE(*aborted);
  EXPECT_EQ(code_of(**aborted), "actor.aborted");
  // Cancelled before the receive began: aborted at once, even without waiting.
  queue->enqueue("b", 1);
  receive(r, false);
  EXPECT_EQ(code_of(last_error), "actor.aborted");
  EXPECT_EQ(queue->size(), 1u) << "nothing was taken";
}

// Bounded memory: timed-out receives and callers whose completable messages are gone leave no
// bookkeeping behind, however many there were.
TEST_F(ActorQueueTest, ManyTimedOutReceivesAndFinishedCallersLeaveNothingBehind) {
  QueueReceive r = names({"b"});
  for (int i = 0; i < 50; ++i) {
    r.timeout = std::chrono::milliseconds(i % 2);
    receive(r, true);
  }
  queue->enqueue("a", "job");
  QueueReceive c = names({"a"});
  c.completable = true;
  std::vector<int> callers(50);
  for (auto& caller : callers) {
    auto held = receive(c, false, &caller);
    ASSERT_EQ(held.size(), 1u);  // dropped at the end of the iteration, uncompleted
  }
  EXPECT_LE(queue->tracked_for_test(), 2u);
}

TEST_F(ActorQueueTest, AWaitingSenderGetsTheResponseOrItsDeadline) {
  const auto id = queue->enqueue("a", "job");
  queue->expect_completion(id);
  auto response = std::make_shared<std::optional<std::optional<Value>>>();
  asio::co_spawn(io, queue->wait_completion(id, std::chrono::steady_clock::now() + 10s),
                 [response](std::exception_ptr, std::optional<Value> v) { *response = v; });
  QueueReceive r = names({"a"});
  r.completable = true;
  auto held = receive(r);
  ASSERT_EQ(held.size(), 1u);
  call(complete_one(*queue, held[0].completion, Value::object({{"ok", true}})));
  for (int i = 0; i < 100 && !*response; ++i) {
    io.restart();
    io.run_for(2ms);
  }
  ASSERT_TRUE(*response);
  ASSERT_TRUE(**response);
  EXPECT_EQ(***response, Value::object({{"ok", true}}));

  const auto late = queue->enqueue("a", "nobody takes it");
  queue->expect_completion(late);
  auto [none, error] = call(queue->wait_completion(late, std::chrono::steady_clock::now() + 20ms));
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none) << "the deadline passed: no response";
}

QueueReceive completable(std::vector<std::string> n) {
  QueueReceive r;
  r.names = std::move(n);
  r.completable = true;
  return r;
}

// A handler that crashes the process after taking a message: with max_deliveries, the delivery
// is durable before the handler sees the message, so each crash counts, and the message goes
// to the dead letters instead of being delivered a third time.
TEST_F(ActorQueueTest, CrashedDeliveriesCountAndThePoisonMessageGoesToTheDeadLetters) {
  definition.queues["jobs"].delivery.max_deliveries = 2;
  queue->enqueue("jobs", "poison");
  queue->enqueue("jobs", "fine");
  save();
  for (std::uint32_t delivery = 1; delivery <= 2; ++delivery) {
    const int saves_before = saves_now;
    auto held = receive(completable({"jobs"}));
    ASSERT_EQ(held.size(), 1u);
    EXPECT_EQ(held[0].body, Value("poison"));
    EXPECT_EQ(held[0].deliveries, delivery);
    EXPECT_EQ(held[0].completion->delivery, delivery);
    EXPECT_EQ(saves_now, saves_before + 1) << "counted durably before it is handed out";
    reload();  // the crash: nothing more was saved
  }
  auto next = receive(completable({"jobs"}));
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].body, Value("fine")) << "the poison message is not delivered a third time";
  auto dead = queue->dead_letters();
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].id, 1u);
  EXPECT_EQ(dead[0].body, Value("poison"));
  EXPECT_EQ(dead[0].deliveries, 2u);
  EXPECT_EQ(queue->size(), 1u) << "dead letters are not in the queue's size";

  reload();
  EXPECT_EQ(queue->dead_letters().size(), 1u) << "the move to the dead letters is durable";
  definition.options.max_queue_size = 2;
  try {
    queue->enqueue("jobs", "no room");
    FAIL() << "dead letters count towards max_queue_size";
  } catch (const ActorError& e) {
    EXPECT_EQ(e.error().code, "full");
    EXPECT_NE(e.error().message.find("1 of them are dead letters"), std::string::npos);
  }

  auto [replayed, replay_error] = call(queue->replay_dead_letter(1));
  ASSERT_TRUE(replayed && *replayed) << code_of(replay_error);
  EXPECT_EQ(**replayed, 3u) << "a replay gets a new id at the end of the queue";
  auto [missing, missing_error] = call(queue->replay_dead_letter(1));
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
  reload();
  EXPECT_TRUE(queue->dead_letters().empty());
  auto all = receive(completable({}));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].body, Value("fine"));
  EXPECT_EQ(all[0].deliveries, 2u);
  call(complete_one(*queue, all[0].completion, Value()));
  all = receive(completable({}));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, 3u);
  EXPECT_EQ(all[0].deliveries, 1u) << "a replay starts counting again";

  // Dropping: two crashes more, then the drop deletes it for good.
  reload();
  ASSERT_EQ(receive(completable({})).size(), 1u);
  reload();
  EXPECT_TRUE(receive(completable({})).empty());
  ASSERT_EQ(queue->dead_letters().size(), 1u);
  auto [dropped, drop_error] = call(queue->drop_dead_letter(3));
  ASSERT_TRUE(dropped && *dropped) << code_of(drop_error);
  auto [again, again_error] = call(queue->drop_dead_letter(3));
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  reload();
  EXPECT_TRUE(queue->dead_letters().empty());
  EXPECT_EQ(queue->size(), 0u);
}

TEST_F(ActorQueueTest, AVisibilityTimeoutHidesAMessageThenDeliversItAgain) {
  definition.queues["jobs"].delivery.visibility_timeout = 40ms;
  queue->enqueue("jobs", "job");
  int first_caller = 0;
  int second_caller = 0;
  auto first = receive(completable({"jobs"}), false, &first_caller);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(saves_now, 0) << "without max_deliveries the count rides with the turn";
  EXPECT_TRUE(receive(completable({"jobs"}), false, &second_caller).empty())
      << "hidden while its handler runs";
  EXPECT_TRUE(receive(names({"jobs"}), false, &second_caller).empty()) << "from plain receives too";

  // A waiting receive is woken when the timeout passes.
  QueueReceive waiting = completable({"jobs"});
  waiting.timeout = 5s;
  const auto started = std::chrono::steady_clock::now();
  auto second = receive(waiting, true, &second_caller);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 4s);
  EXPECT_EQ(second[0].deliveries, 2u);

  auto [stale, stale_error] = call(complete_one(*queue, first[0].completion, Value()));
  EXPECT_EQ(code_of(stale_error), "queue.delivery_expired");
  EXPECT_EQ(queue->size(), 1u) << "the stale delivery removed nothing";
  auto [done, error] = call(complete_one(*queue, second[0].completion, Value()));
  ASSERT_TRUE(done) << code_of(error);
  EXPECT_EQ(queue->size(), 0u);

  // A restart shows hidden messages at once; the count goes on.
  queue->enqueue("jobs", "again");
  ASSERT_EQ(receive(completable({"jobs"}), false, &first_caller).size(), 1u);
  save();
  reload();
  auto after = receive(completable({"jobs"}), false, &first_caller);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].deliveries, 2u);
}

TEST_F(ActorQueueTest, ASenderWaitingForADeadLetterFollowsItsReplay) {
  definition.queues["jobs"].delivery.max_deliveries = 1;
  const auto id = queue->enqueue("jobs", "job");
  queue->expect_completion(id);
  auto response = std::make_shared<std::optional<std::optional<Value>>>();
  asio::co_spawn(io, queue->wait_completion(id, std::chrono::steady_clock::now() + 10s),
                 [response](std::exception_ptr, std::optional<Value> v) { *response = v; });
  int caller = 0;
  ASSERT_EQ(receive(completable({"jobs"}), false, &caller).size(), 1u);  // dropped uncompleted
  EXPECT_TRUE(receive(completable({"jobs"}), false, &caller).empty());
  ASSERT_EQ(queue->dead_letters().size(), 1u);
  auto [replayed, error] = call(queue->replay_dead_letter(id));
  ASSERT_TRUE(replayed && *replayed) << code_of(error);
  auto held = receive(completable({"jobs"}), false, &caller);
  ASSERT_EQ(held.size(), 1u);
  call(complete_one(*queue, held[0].completion, Value("done")));
  for (int i = 0; i < 100 && !*response; ++i) {
    io.restart();
    io.run_for(2ms);
  }
  ASSERT_TRUE(*response && **response);
  EXPECT_EQ(***response, Value("done"));
}

TEST_F(ActorQueueTest, VersionOneRecordsAreStillRead) {
  // created_at 5, name "a", body CBOR 7: what the first release wrote.
  std::string record{'\x01', 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 1, 'a', '\x07'};
  store.kv[queue_keys::message_key(4)] = record;
  reload();
  auto got = receive(completable({"a"}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, 4u);
  EXPECT_EQ(got[0].created_at, 5);
  EXPECT_EQ(got[0].body, Value(7));
  EXPECT_EQ(got[0].deliveries, 1u);
  EXPECT_EQ(queue->enqueue("a", 8), 5u);
}

// Exactly once: a completable receive holds the actor's writes until complete() (or until the
// message is dropped), and hides the message meanwhile even without a visibility timeout.
TEST_F(ActorQueueTest, AnExactlyOnceDeliveryHoldsWritesUntilItsCompletion) {
  definition.queues["ledger"].delivery.exactly_once = true;
  queue->enqueue("ledger", 1);
  queue->enqueue("ledger", 2);
  int caller_a = 0;
  int caller_b = 0;
  auto held = receive(completable({"ledger"}), false, &caller_a);
  ASSERT_EQ(held.size(), 1u);
  ASSERT_EQ(holds.size(), 1u);
  ASSERT_FALSE(holds[0].expired());
  EXPECT_EQ(*holds[0].lock(), ActorQueue::kDefaultHoldLimit);
  auto other = receive(completable({"ledger"}), false, &caller_b);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].body, Value(2)) << "the first is hidden from other receives meanwhile";
  ASSERT_EQ(holds.size(), 2u);

  call(complete_one(*queue, held[0].completion, Value()));
  EXPECT_TRUE(holds[0].expired()) << "the completion ends the hold";
  EXPECT_FALSE(holds[1].expired());
  other.clear();  // dropped uncompleted: its hold ends too
  EXPECT_TRUE(holds[1].expired());

  // Plain receives do not hold.
  queue->enqueue("ledger", 3);
  EXPECT_EQ(receive(names({"ledger"}), false, &caller_b).size(), 1u);
  EXPECT_EQ(holds.size(), 2u);
}

Task<bool> wait_available_one(ActorQueue& q, QueueReceive r) {
  auto op = q.wait_available(nullptr, std::move(r));
  co_await std::move(op);
  co_return true;
}

Task<Value> wait_for_names_one(Queue q, std::vector<std::string> names, QueueReceive r) {
  auto op = q.wait_for_names(std::move(names), std::move(r));
  auto m = co_await std::move(op);
  co_return m.body();
}

// RivetKit's waitForNamesAvailable and waitForNames: the first takes nothing, both throw
// queue.timed_out at their timeout.
TEST_F(ActorQueueTest, WaitForNamesAndWaitForNamesAvailable) {
  QueueReceive r = names({"b"});
  r.timeout = 20ms;
  auto [none, timed_out] = call(wait_available_one(*queue, r));
  EXPECT_EQ(code_of(timed_out), "queue.timed_out");

  r.timeout = std::nullopt;
  auto done = std::make_shared<std::optional<std::exception_ptr>>();
  asio::co_spawn(io, wait_available_one(*queue, r),
                 [done](std::exception_ptr e, bool) { *done = e; });
  io.restart();
  io.run_for(5ms);
  queue->enqueue("a", 1);
  io.restart();
  io.run_for(5ms);
  EXPECT_FALSE(*done) << "another name does not end the wait";
  queue->enqueue("b", 2);
  for (int i = 0; i < 100 && !*done; ++i) {
    io.restart();
    io.run_for(2ms);
  }
  ASSERT_TRUE(*done);
  EXPECT_FALSE(**done);
  EXPECT_EQ(queue->size(), 2u) << "waiting for availability takes nothing";

  int scope = 0;
  Queue q = detail::Access::make<Queue>(queue.get(), static_cast<const void*>(&scope));
  auto [body, error] = call(wait_for_names_one(q, {"b"}, QueueReceive{}));
  ASSERT_TRUE(body) << code_of(error);
  EXPECT_EQ(*body, Value(2));
  QueueReceive short_wait;
  short_wait.timeout = 10ms;
  auto [missing, missing_error] = call(wait_for_names_one(q, {"b"}, short_wait));
  EXPECT_EQ(code_of(missing_error), "queue.timed_out");
  EXPECT_EQ(queue->size(), 1u);
}

}  // namespace
}  // namespace rivetkit::core
