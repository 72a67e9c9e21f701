// ActorInstance on a single-threaded io_context, with a store whose commits complete only when
// the test says so: this is how the output gate (replies and events wait for durability) and the
// start sequence are checked deterministically.

#include "core/actor_instance.hpp"

#include "memory_kv.hpp"
#include "protocol/cbor/cbor.hpp"
#include "recording_socket.hpp"
#include <rivetkit/rivetkit.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;
using testing::RecordingSocket;

// A store whose commits wait in a queue until released (or failed) by the test.
class GatedStore final : public testing::MapKvStore {
 public:
  explicit GatedStore(asio::io_context& io) : io_(io) {}

  storage::PersistedActor persisted;
  std::vector<storage::ActorWrite> committed;

  Task<Result<storage::PersistedActor>> load() override { co_return persisted; }

  Task<Result<void>> commit(storage::ActorWrite write) override {
    auto op = asio::async_initiate<decltype(asio::use_awaitable), void(Result<void>)>(
        [this, write = std::move(write)](auto handler) mutable {
          // Completed through the handler's own executor (the actor's strand), as real stores do.
          auto ex = asio::get_associated_executor(handler, io_.get_executor());
          auto h = std::make_shared<decltype(handler)>(std::move(handler));
          pending_.push_back({std::move(write), [h, ex](Result<void> r) {
                                asio::post(ex,
                                           [h, r = std::move(r)]() mutable { (*h)(std::move(r)); });
                              }});
        },
        asio::use_awaitable);
    co_return co_await std::move(op);
  }

  /// close() calls, and how many commits were complete at the last one.
  int closed = 0;
  std::size_t committed_at_close = 0;
  Task<void> close() override {
    ++closed;
    committed_at_close = committed.size();
    co_return;
  }

  std::size_t pending() const { return pending_.size(); }
  const storage::ActorWrite& pending_write(std::size_t i) const { return pending_[i].write; }

  void release_all() {
    while (!pending_.empty()) {
      auto p = std::move(pending_.front());
      pending_.pop_front();
      if (p.write.state) {
        persisted.state = p.write.state;
      }
      if (p.write.has_initialized) {
        persisted.has_initialized = *p.write.has_initialized;
      }
      storage::apply_kv(kv, p.write.kv);
      committed.push_back(p.write);
      asio::post(io_, [complete = std::move(p.complete)] { complete(Result<void>{}); });
    }
  }
  void fail_all() {
    while (!pending_.empty()) {
      auto p = std::move(pending_.front());
      pending_.pop_front();
      asio::post(io_, [complete = std::move(p.complete)] {
        complete(fail(Error{"storage", "sqlite_error", "disk full", std::nullopt, false}));
      });
    }
  }

 private:
  struct Pending {
    storage::ActorWrite write;
    std::function<void(Result<void>)> complete;
  };
  asio::io_context& io_;
  std::deque<Pending> pending_;
};

// Forwards to a GatedStore owned by the test (the instance owns its store).
class StoreRef final : public storage::ActorStore {
 public:
  explicit StoreRef(GatedStore& s) : s_(s) {}
  Task<Result<storage::PersistedActor>> load() override { return s_.load(); }
  Task<Result<void>> commit(storage::ActorWrite w) override { return s_.commit(std::move(w)); }
  storage::ActorKv& kv_store() override { return s_.kv_store(); }
  Task<void> close() override { return s_.close(); }

 private:
  GatedStore& s_;
};

struct CounterState {
  std::int64_t count = 0;
};
RIVETKIT_FIELDS(CounterState, count)

struct Recorder {
  std::vector<std::string> hooks;
};

ActorDefinition counter_definition(std::shared_ptr<Recorder> rec) {
  return actor<CounterState>("counter")
      .create_state([rec](auto&) {
        rec->hooks.push_back("createState");
        return CounterState{10};
      })
      .on_create([rec](auto&) { rec->hooks.push_back("onCreate"); })
      .on_wake([rec](auto&) { rec->hooks.push_back("onWake"); })
      .on_before_connect([rec](auto&, const Value& params) {
        rec->hooks.push_back("onBeforeConnect");
        if (params.is_string() && params.as_string() == "deny") {
          throw UserError("denied", "denied");
        }
      })
      .on_connect([rec](auto&, auto) { rec->hooks.push_back("onConnect"); })
      .on_disconnect([rec](auto&, auto) { rec->hooks.push_back("onDisconnect"); })
      .action("increment",
              [](auto& c, std::int64_t n) {
                c.state().count += n;
                c.broadcast("newCount", c.state().count);
                return c.state().count;
              })
      .action("read", [](auto& c) { return std::as_const(c).state().count; })
      .action("read_state", [](auto& c) { return c.read_state().count; })
      .action("region", [](auto& c) { return c.region(); })
      // State and KV in one turn.
      .action("increment_kv",
              [](auto& c, std::int64_t n) -> Task<std::int64_t> {
                const std::int64_t count = c.state().count += n;
                co_await c.kv().put("count", std::to_string(count));
                co_return count;
              })
      .action("kv_get",
              [](auto& c, std::string key) -> Task<std::optional<std::string>> {
                co_return co_await c.kv().get(std::move(key));
              })
      .action("kv_put_bad",
              [](auto& c) -> Task<void> {
                // (Built first: GCC 12 miscompiles braced string literals inside coroutines.)
                std::vector<KvPair> entries;
                entries.emplace_back(std::string("ok"), std::string("1"));
                entries.emplace_back(std::string(2048, 'k'), std::string("2"));
                co_await c.kv().batch_put(std::move(entries));
              })
      .action("boom", [](auto&) -> int { throw std::runtime_error("secret detail"); })
      .action("user_fail", [](auto&) -> int { throw UserError("nope", "my_code"); })
      .action("slow", [](auto& c) -> Task<int> {
        co_await c.wait(std::chrono::seconds(30));
        co_return 1;
      });
}

class InstanceTest : public ::testing::Test {
 protected:
  asio::io_context io;
  RuntimeConfig config;
  GatedStore store{io};
  std::shared_ptr<Recorder> rec = std::make_shared<Recorder>();

  std::shared_ptr<ActorInstance> make(ActorDefinition def, ActorOptions options = {}) {
    auto data = std::make_shared<detail::ActorDefinitionData>(*detail::Access::data(def));
    data->options = std::move(options);
    ActorInstance::Spec spec;
    spec.actor_id = "actor1";
    spec.name = "counter";
    spec.key = {"k"};
    spec.generation = 1;
    spec.definition = data;
    spec.store = std::make_unique<StoreRef>(store);
    return std::make_shared<ActorInstance>(asio::make_strand(io), std::move(spec), config);
  }

  // Runs `task` on the instance's strand; returns a slot filled when it completes.
  template <class T>
  std::shared_ptr<std::optional<T>> spawn(const std::shared_ptr<ActorInstance>& inst,
                                          Task<T> task) {
    auto out = std::make_shared<std::optional<T>>();
    asio::co_spawn(inst->strand(), std::move(task), [out](std::exception_ptr e, T v) {
      if (e) {
        std::rethrow_exception(e);
      }
      *out = std::move(v);
    });
    return out;
  }

  void settle() {
    io.restart();
    io.poll();
  }

  std::shared_ptr<ActorInstance> started(ActorOptions options = {}) {
    auto inst = make(counter_definition(rec), std::move(options));
    auto done = spawn(inst, inst->start());
    for (int i = 0; i < 10 && !*done; ++i) {
      settle();
      store.release_all();
    }
    settle();
    EXPECT_TRUE(*done && **done) << "start did not complete";
    return inst;
  }

  // Opens a connect socket and lets every write it causes become durable; nullptr on failure.
  std::shared_ptr<Connection> opened(const std::shared_ptr<ActorInstance>& inst,
                                     std::shared_ptr<net::WebSocket> socket) {
    auto open =
        spawn(inst, inst->connection_lifecycle().open(ConnKind::kActorConnect, Value{}, Request{},
                                                      protocol::client::Encoding::kJson, socket));
    for (int i = 0; i < 4 && !*open; ++i) {
      settle();
      store.release_all();
    }
    settle();
    store.release_all();
    settle();
    return *open && **open ? ***open : nullptr;
  }
};

// A socket of engine mode: its resume point carries the last inbound index the session took,
// which a save of the connection records.
std::shared_ptr<RecordingSocket> resumable_socket() {
  auto socket = std::make_shared<RecordingSocket>();
  socket->point = net::WsResumePoint{"gw01rq01", 0, 0};
  return socket;
}

std::int64_t count_of(const std::string& cbor) {
  auto v = protocol::cbor_decode(cbor);
  EXPECT_TRUE(v.has_value());
  return v->find("count")->as_int();
}

TEST_F(InstanceTest, NewActorRunsCreateHooksAndCommitsInitializedStateBeforeStarting) {
  auto inst = make(counter_definition(rec));
  auto done = spawn(inst, inst->start());
  settle();
  // createState and onCreate ran; the initialized state is being committed; not started yet.
  EXPECT_EQ(rec->hooks, (std::vector<std::string>{"createState", "onCreate"}));
  ASSERT_EQ(store.pending(), 1u);
  EXPECT_EQ(store.pending_write(0).has_initialized, true);
  EXPECT_EQ(count_of(*store.pending_write(0).state), 10);
  EXPECT_FALSE(*done);
  store.release_all();
  settle();
  ASSERT_TRUE(*done);
  EXPECT_TRUE(**done);
  EXPECT_EQ(rec->hooks, (std::vector<std::string>{"createState", "onCreate", "onWake"}));
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kStarted);
}

TEST_F(InstanceTest, WakeRestoresStateAndRunsOnlyOnWake) {
  store.persisted.has_initialized = true;
  store.persisted.state = protocol::cbor_encode(Value::object({{"count", 42}}));
  auto inst = started();
  EXPECT_EQ(rec->hooks, (std::vector<std::string>{"onWake"}));
  auto r = spawn(inst, inst->run_action(nullptr, "read", {}));
  settle();
  ASSERT_TRUE(*r && **r);
  EXPECT_EQ((**r)->as_int(), 42);
}

TEST_F(InstanceTest, ReplyWaitsUntilTheStateChangeIsDurable) {
  auto inst = started();
  auto reply = std::make_shared<std::optional<Result<Value>>>();
  auto flow = [](std::shared_ptr<ActorInstance> i,
                 std::shared_ptr<std::optional<Result<Value>>> out) -> Task<bool> {
    auto action = i->run_action(nullptr, "increment", Array{Value{5}});
    auto result = co_await std::move(action);
    auto wait = i->wait_durable(i->checkpoint());
    auto durable = co_await std::move(wait);
    *out = durable ? std::move(result) : Result<Value>(fail(durable.error()));
    co_return true;
  };
  auto done = spawn(inst, flow(inst, reply));
  settle();
  EXPECT_FALSE(*reply) << "the reply must wait for the commit";
  ASSERT_EQ(store.pending(), 1u);
  EXPECT_EQ(count_of(*store.pending_write(0).state), 15);
  store.release_all();
  settle();
  ASSERT_TRUE(*reply);
  ASSERT_TRUE(**reply);
  EXPECT_EQ((**reply)->as_int(), 15);
}

TEST_F(InstanceTest, ReadStateReadsWithoutAWriteAndRegionIsTheRuntimes) {
  config.driver.region = "eu-central";
  auto inst = started();
  auto read = spawn(inst, inst->run_action(nullptr, "read_state", Array{}));
  settle();
  ASSERT_TRUE(*read && **read) << "a read-only turn waits for no write";
  EXPECT_EQ((**read)->as_int(), 10);
  EXPECT_EQ(store.pending(), 0u);
  auto region = spawn(inst, inst->run_action(nullptr, "region", Array{}));
  settle();
  ASSERT_TRUE(*region && **region);
  EXPECT_EQ(**region, Value("eu-central"));
}

TEST_F(InstanceTest, EventsAndResponsesLeaveInOrderAfterTheCommit) {
  auto inst = started();
  auto socket = std::make_shared<RecordingSocket>();
  auto open =
      spawn(inst, inst->connection_lifecycle().open(ConnKind::kActorConnect, Value{}, Request{},
                                                    protocol::client::Encoding::kJson, socket));
  settle();
  ASSERT_TRUE(*open && **open);
  auto conn = ***open;
  conn->subscribe("newCount");
  ASSERT_TRUE(socket->sent.empty());  // the router sends Init; nothing else yet

  auto flow = [](std::shared_ptr<ActorInstance> i, std::shared_ptr<Connection> c) -> Task<bool> {
    auto action = i->run_action(c.get(), "increment", Array{Value{1}});
    auto result = co_await std::move(action);
    i->connections().send_message(
        *c, protocol::client::ToClient{protocol::client::ActionResponse{7, *result}});
    co_return true;
  };
  auto done = spawn(inst, flow(inst, conn));
  settle();
  EXPECT_TRUE(socket->sent.empty()) << "event and response wait for durability";
  // One commit at a time: a change made while one is under way goes with the next.
  for (int i = 0; i < 4 && socket->sent.size() < 2; ++i) {
    store.release_all();
    settle();
  }
  ASSERT_EQ(socket->sent.size(), 2u);
  EXPECT_NE(socket->sent[0].data.find("\"Event\""), std::string::npos) << socket->sent[0].data;
  EXPECT_NE(socket->sent[1].data.find("\"ActionResponse\""), std::string::npos)
      << socket->sent[1].data;
  EXPECT_EQ(rec->hooks, (std::vector<std::string>{"createState", "onCreate", "onWake",
                                                  "onBeforeConnect", "onConnect"}));
}

TEST_F(InstanceTest, FailedCommitFailsTheReplyAndClosesGatedConnections) {
  auto inst = started();
  auto socket = std::make_shared<RecordingSocket>();
  auto open =
      spawn(inst, inst->connection_lifecycle().open(ConnKind::kActorConnect, Value{}, Request{},
                                                    protocol::client::Encoding::kJson, socket));
  settle();
  auto conn = ***open;
  conn->subscribe("newCount");
  auto flow = [](std::shared_ptr<ActorInstance> i) -> Task<bool> {
    auto action = i->run_action(nullptr, "increment", Array{Value{1}});
    co_await std::move(action);
    auto wait = i->wait_durable(i->checkpoint());
    auto durable = co_await std::move(wait);
    co_return durable.has_value();
  };
  auto durable = spawn(inst, flow(inst));
  settle();
  store.fail_all();
  settle();
  ASSERT_TRUE(*durable);
  EXPECT_FALSE(**durable) << "a reply whose state was not saved must not be acknowledged";
  EXPECT_TRUE(socket->sent.empty());
  ASSERT_TRUE(socket->closed);
  EXPECT_EQ(socket->closed->code, 1011);
}

// A failed save never becomes durable later (a retrying client would apply it twice): the
// instance writes nothing more, what waited for it fails, and it stops, so the next start loads
// the last durable state. Changes made while the failed commit was under way fail with it.
TEST_F(InstanceTest, FailedCommitIsNeverWrittenLaterAndTheInstanceStops) {
  auto inst = started();
  auto inc = [](std::shared_ptr<ActorInstance> i) -> Task<bool> {
    auto action = i->run_action(nullptr, "increment", Array{Value{1}});
    co_await std::move(action);
    auto wait = i->wait_durable(i->checkpoint());
    auto durable = co_await std::move(wait);
    co_return durable.has_value();
  };
  auto first = spawn(inst, inc(inst));
  settle();
  store.release_all();
  settle();
  ASSERT_TRUE(*first && **first);
  const auto durable_count = count_of(*store.persisted.state);

  auto second = spawn(inst, inc(inst));  // its commit will fail
  settle();
  ASSERT_EQ(store.pending(), 1u);
  auto third = spawn(inst, inc(inst));  // made while that commit is under way: waits for it
  settle();
  EXPECT_EQ(store.pending(), 1u) << "one commit at a time";
  store.fail_all();
  settle();
  ASSERT_TRUE(*second && *third);
  EXPECT_FALSE(**second);
  EXPECT_FALSE(**third) << "built on the lost change: fails with it";
  EXPECT_EQ(inst->lifecycle().state(), LifecycleState::kStarted);  // the driver runs the stop

  auto fourth = spawn(inst, inc(inst));
  settle();
  for (int i = 0; i < 3; ++i) {
    store.release_all();
    settle();
  }
  EXPECT_EQ(store.pending(), 0u);
  EXPECT_EQ(count_of(*store.persisted.state), durable_count)
      << "nothing reported failed became durable";
  if (*fourth) {
    EXPECT_FALSE(**fourth) << "no acknowledgement from an instance that can no longer save";
  }
}

/// The qualified code a KV read fails with ("none" when it succeeds).
Task<std::string> kv_error_of(std::shared_ptr<ActorInstance> inst) {
  std::string code = "none";
  try {
    std::vector<std::string> keys{std::string("k")};
    auto op = inst->kv().get(std::move(keys));
    co_await std::move(op);
  } catch (const ActorError& e) {
    code = e.error().qualified_code();
  }
  co_return code;
}

TEST_F(InstanceTest, StateAndKvOfOneTurnCommitAsOneWriteAndTheReplyWaitsForIt) {
  auto inst = started();
  auto r = spawn(inst, inst->run_action(nullptr, "increment_kv", Array{Value{5}}));
  settle();
  ASSERT_EQ(store.pending(), 1u) << "one commit for the state and the KV put";
  const auto& w = store.pending_write(0);
  ASSERT_TRUE(w.state);
  EXPECT_EQ(count_of(*w.state), 15);
  ASSERT_EQ(w.kv.ops().size(), 1u);
  const auto* put = std::get_if<storage::KvPut>(&w.kv.ops()[0]);
  ASSERT_NE(put, nullptr);
  EXPECT_EQ(put->key,
            std::string(1, storage::kUserKvPrefix) + "count");  // user keys live under their prefix
  EXPECT_EQ(put->value, "15");
  EXPECT_FALSE(*r) << "no reply before the write is durable";
  store.release_all();
  settle();
  ASSERT_TRUE(*r && **r);
  EXPECT_EQ((**r)->as_int(), 15);
  auto got = spawn(inst, inst->run_action(nullptr, "kv_get", Array{Value{"count"}}));
  settle();
  ASSERT_TRUE(*got && **got);
  EXPECT_EQ((**got)->as_string(), "15");
}

// The user's keys among what is durable (the runtime keeps its own, e.g. the inspector token).
std::size_t user_keys(const std::map<std::string, std::string>& kv) {
  return static_cast<std::size_t>(std::count_if(kv.begin(), kv.end(), [](const auto& e) {
    return !e.first.empty() && e.first[0] == storage::kUserKvPrefix;
  }));
}

TEST_F(InstanceTest, FailedKvCommitFailsTheCallAndNothingBecomesDurable) {
  auto inst = started();
  auto r = spawn(inst, inst->run_action(nullptr, "increment_kv", Array{Value{1}}));
  settle();
  ASSERT_EQ(store.pending(), 1u);
  store.fail_all();
  settle();
  ASSERT_TRUE(*r);
  ASSERT_FALSE(**r);
  EXPECT_EQ((*r)->error().qualified_code(), "actor.state_save_failed");
  EXPECT_EQ(user_keys(store.kv), 0u);
}

TEST_F(InstanceTest, RefusedKvBatchWritesNothing) {
  auto inst = started();
  auto r = spawn(inst, inst->run_action(nullptr, "kv_put_bad", {}));
  settle();
  ASSERT_TRUE(*r);
  ASSERT_FALSE(**r);
  EXPECT_EQ((*r)->error().qualified_code(), "kv.key_too_large");
  EXPECT_TRUE((*r)->error().is_public);
  EXPECT_EQ(store.pending(), 0u);
  EXPECT_EQ(user_keys(store.kv), 0u);
}

TEST_F(InstanceTest, KvWrittenInOnCreateIsReadableThereAndDurableBeforeTheStart) {
  auto seen = std::make_shared<std::optional<std::string>>();
  auto def = actor<CounterState>("counter").on_create([seen](auto& c) -> Task<void> {
    co_await c.kv().put(std::string("made"), std::string("in onCreate"));
    *seen = co_await c.kv().get(std::string("made"));
  });
  auto inst = make(def);
  auto done = spawn(inst, inst->start());
  for (int i = 0; i < 10 && !*done; ++i) {
    settle();
    store.release_all();
  }
  settle();
  ASSERT_TRUE(*done && **done);
  ASSERT_TRUE(seen->has_value()) << "a read right after the write sees it";
  EXPECT_EQ(**seen, "in onCreate");
  EXPECT_EQ(store.kv.count(std::string(1, storage::kUserKvPrefix) + "made"), 1u);
}

TEST_F(InstanceTest, KvAfterTheInstanceStoppedIsRefused) {
  auto inst = started();
  auto stop = spawn(inst, [](std::shared_ptr<ActorInstance> i) -> Task<bool> {
    co_await i->stop(StopReason::kSleep);
    co_return true;
  }(inst));
  for (int i = 0; i < 10 && !*stop; ++i) {
    settle();
    store.release_all();
  }
  ASSERT_TRUE(*stop);
  auto read = spawn(inst, kv_error_of(inst));
  settle();
  ASSERT_TRUE(*read);
  EXPECT_EQ(**read, "kv.actor_stopped");
}

Task<bool> stop_for(std::shared_ptr<ActorInstance> inst, StopReason reason) {
  co_await inst->stop(reason);
  co_return true;
}

TEST_F(InstanceTest, ACleanSleepClosesTheStoreAfterItsFinalSave) {
  auto inst = started();
  auto inc = spawn(inst, inst->run_action(nullptr, "increment", Array{Value{1}}));
  settle();
  auto stop = spawn(inst, stop_for(inst, StopReason::kSleep));
  for (int i = 0; i < 10 && !*stop; ++i) {
    settle();
    if (store.pending() > 0) {
      EXPECT_EQ(store.closed, 0) << "closed while a save was still pending";
    }
    store.release_all();
  }
  ASSERT_TRUE(*stop);
  EXPECT_EQ(store.closed, 1);
  EXPECT_EQ(store.committed_at_close, store.committed.size()) << "a commit after close";
  EXPECT_EQ(count_of(*store.persisted.state), 11);
}

TEST_F(InstanceTest, ADestroyDoesNotCloseTheStoreForAHandOver) {
  auto inst = started();
  auto gone = spawn(inst, stop_for(inst, StopReason::kDestroy));
  for (int i = 0; i < 10 && !*gone; ++i) {
    settle();
    store.release_all();
  }
  ASSERT_TRUE(*gone);
  EXPECT_EQ(store.closed, 0) << "a destroyed actor's data is wiped, not handed over";
}

TEST_F(InstanceTest, ErrorsAreStructuredAndInternalDetailsStayHidden) {
  auto inst = started();
  auto user = spawn(inst, inst->run_action(nullptr, "user_fail", {}));
  auto boom = spawn(inst, inst->run_action(nullptr, "boom", {}));
  auto missing = spawn(inst, inst->run_action(nullptr, "nope", {}));
  auto bad_arg = spawn(inst, inst->run_action(nullptr, "increment", Array{Value{"x"}}));
  settle();
  ASSERT_TRUE(*user && *boom && *missing && *bad_arg);
  EXPECT_EQ((*user)->error().qualified_code(), "user.my_code");
  EXPECT_EQ((*user)->error().message, "nope");
  EXPECT_EQ((*boom)->error().qualified_code(), "core.internal_error");
  EXPECT_EQ((*boom)->error().message, kInternalErrorMessage);
  EXPECT_EQ((*missing)->error().qualified_code(), "actor.action_not_found");
  EXPECT_EQ((*bad_arg)->error().qualified_code(), "actor.invalid_request");
}

TEST_F(InstanceTest, ActionTimeoutCancelsTheAction) {
  ActorOptions options;
  options.action_timeout = std::chrono::milliseconds(20);
  auto inst = started(options);
  auto r = spawn(inst, inst->run_action(nullptr, "slow", {}));
  for (int i = 0; i < 200 && !*r; ++i) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(*r);
  ASSERT_FALSE(**r);
  EXPECT_EQ((*r)->error().qualified_code(), "actor.action_timed_out");
}

TEST_F(InstanceTest, RejectedConnectionIsNeverAddedAndGetsNoDisconnect) {
  auto inst = started();
  auto open =
      spawn(inst, inst->connection_lifecycle().open(ConnKind::kHttp, Value{"deny"}, Request{},
                                                    protocol::client::Encoding::kJson, nullptr));
  settle();
  ASSERT_TRUE(*open);
  ASSERT_FALSE(**open);
  EXPECT_EQ((*open)->error().qualified_code(), "user.denied");
  EXPECT_TRUE(inst->conns().empty());
  EXPECT_EQ(std::count(rec->hooks.begin(), rec->hooks.end(), "onDisconnect"), 0);
}

TEST_F(InstanceTest, DisconnectRunsOnce) {
  auto inst = started();
  auto open =
      spawn(inst, inst->connection_lifecycle().open(ConnKind::kHttp, Value{}, Request{},
                                                    protocol::client::Encoding::kJson, nullptr));
  settle();
  auto conn = ***open;
  auto a = spawn(inst,
                 [](std::shared_ptr<ActorInstance> i, std::shared_ptr<Connection> c) -> Task<bool> {
                   auto first = i->connection_lifecycle().close(c);
                   co_await std::move(first);
                   auto second = i->connection_lifecycle().close(c);
                   co_await std::move(second);
                   co_return true;
                 }(inst, conn));
  settle();
  EXPECT_EQ(std::count(rec->hooks.begin(), rec->hooks.end(), "onDisconnect"), 1);
}

// The gateway re-sends every message whose index was not acknowledged, and an index is
// acknowledged once it is durable with the connection. So an action's reply may leave only once
// the message's index is durable too: otherwise a crash after the reply re-runs the action on
// the next instance (a counter incremented twice for one acknowledged call).
TEST_F(InstanceTest, AnActionReplyWaitsUntilItsMessageIndexIsDurable) {
  auto inst = started();
  auto socket = resumable_socket();
  auto conn = opened(inst, socket);
  ASSERT_NE(conn, nullptr);
  const auto committed_before = store.committed.size();

  socket->point->last_received = 5;  // the session took message 5: increment(2)
  auto delivered =
      inst->deliver(conn->id(), protocol::client::ActionRequest{0, "increment", Array{Value{2}}});
  ASSERT_EQ(delivered, ActorInstance::Delivery::kAccepted);
  auto replied = [&] {
    for (const auto& m : socket->sent) {
      if (m.data.find("ActionResponse") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  for (int i = 0; i < 6 && !replied(); ++i) {
    settle();
    store.release_all();  // one write at a time: each round makes the pending one durable
    settle();
  }
  ASSERT_TRUE(replied());
  bool index_durable = false;
  for (auto i = committed_before; i < store.committed.size(); ++i) {
    for (const auto& c : store.committed[i].conn_upserts) {
      index_durable = index_durable || (c.conn_id == conn->id() && c.client_message_index == 5);
    }
  }
  EXPECT_TRUE(index_durable) << "the reply left before message 5 was durable with the connection";
}

// The write of an action's own state change carries the action's message index too, so state and
// acknowledgement become durable together and the reply waits for one write, not two in a row
// (engine mode's increment latency).
TEST_F(InstanceTest, AnActionsIndexRidesInTheWriteOfItsOwnStateChange) {
  auto inst = started();
  auto socket = resumable_socket();
  auto conn = opened(inst, socket);
  ASSERT_NE(conn, nullptr);
  ASSERT_EQ(store.pending(), 0u);

  socket->point->last_received = 9;  // the session took message 9: increment(1)
  ASSERT_EQ(
      inst->deliver(conn->id(), protocol::client::ActionRequest{3, "increment", Array{Value{1}}}),
      ActorInstance::Delivery::kAccepted);
  settle();
  ASSERT_EQ(store.pending(), 1u) << "one write for the action";
  const auto& write = store.pending_write(0);
  EXPECT_TRUE(write.state.has_value());
  ASSERT_EQ(write.conn_upserts.size(), 1u);
  EXPECT_EQ(write.conn_upserts[0].client_message_index, 9);
  EXPECT_TRUE(socket->sent.empty()) << "the reply waits for the write";

  store.release_all();
  settle();
  ASSERT_EQ(socket->sent.size(), 1u);
  EXPECT_NE(socket->sent[0].data.find("ActionResponse"), std::string::npos);
  EXPECT_EQ(store.pending(), 0u) << "no second write before the reply";
}

}  // namespace
}  // namespace rivetkit::core
