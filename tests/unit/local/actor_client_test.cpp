// `c.client()` in local mode, without sockets: the real directory over a real SQLite store, the
// real local driver (it wakes sleeping actors), and calls in process through Runtime::dispatch.
// An actor reaches another by get-or-create (with input), create, get, and id; a user error of
// the callee reaches the caller with its group, code and metadata; an unknown type, an unknown
// action and a missing actor are RivetKit's errors; an actor calls itself and two actors call
// each other without deadlock; a sleeping callee is woken; a destroyed one is not found, and a
// get-or-create handle then creates it anew. Queue sends reach the callee through its connection
// hooks and complete (the actors here declare no queues).

#include "core/errors.hpp"
#include "core/ids.hpp"
#include "core/keys.hpp"
#include "core/runtime.hpp"
#include "local/local_context.hpp"
#include "local/local_driver.hpp"
#include "store_runtime_fixture.hpp"
#include "util/clock.hpp"
#include <rivetkit/rivetkit.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <filesystem>

namespace rivetkit::local {
namespace {

namespace asio = boost::asio;

struct CounterState {
  std::int64_t count = 0;
};
RIVETKIT_FIELDS(CounterState, count)

ActorDefinition counter() {
  return actor<ActorTypes<CounterState>>("counter")
      .create_state([](auto&, const Value& input) {
        CounterState s;
        if (input.is_int()) {
          s.count = input.as_int();
        }
        return s;
      })
      .action("increment",
              [](auto& c) {
                c.state().count += 1;
                return c.state().count;
              })
      .action("get", [](auto& c) { return c.state().count; })
      .action("fail",
              [](auto&) -> std::int64_t {
                throw UserError("no luck", "unlucky", Value::object({{"tries", 3}}));
              })
      .action("crash", [](auto&) -> std::int64_t { throw std::runtime_error("secret detail"); })
      .action("sleep", [](auto& c) { c.sleep(); })
      .action("echo", [](auto&, Value v) { return v; })
      .action("big",
              [](auto&, std::int64_t n) { return std::string(static_cast<std::size_t>(n), 'x'); });
}

// What the caller saw: the result, or the error's group.code, message and metadata.
Task<Value> capture(Task<Value> call) {
  try {
    co_return co_await std::move(call);
  } catch (const ActorError& e) {
    Value out = Value::object(
        {{"error", e.error().group + "." + e.error().code}, {"message", e.error().message}});
    if (e.error().metadata) {
      out.set("metadata", *e.error().metadata);
    }
    co_return out;
  }
}

// (Free functions: GCC 12 miscompiles coroutine lambdas inside generic lambdas.)
Task<Value> create_and_get(Client client, std::string key, std::int64_t start) {
  CreateOptions options;
  options.input = Value(start);
  std::vector<std::string> k{std::move(key)};
  auto create_op = client.create("counter", std::move(k), std::move(options));
  auto handle = co_await std::move(create_op);
  auto get_op = handle.action("get");
  co_return co_await std::move(get_op);
}

Task<Value> resolve_counter(Client client, std::string key) {
  std::vector<std::string> k{std::move(key)};
  auto op = client.get_or_create("counter", std::move(k)).resolve();
  co_return Value(co_await std::move(op));
}

Task<Value> destroy_counter(Client client, std::string key) {
  std::vector<std::string> k{std::move(key)};
  auto op = client.get("counter", std::move(k)).destroy();
  co_await std::move(op);
  co_return Value(true);
}

Task<Value> send_to(Client client, std::string name, std::string key, Value body) {
  std::vector<std::string> k{std::move(key)};
  auto handle =
      name == "counter" ? client.get_or_create(name, std::move(k)) : client.get(name, std::move(k));
  auto op = handle.send("jobs", body);
  co_await std::move(op);
  co_return Value("sent");
}

Task<Value> send_and_wait_to(Client client, std::string key, Value body) {
  std::vector<std::string> k{std::move(key)};
  auto op = client.get_or_create("counter", std::move(k))
                .send_and_wait("jobs", body, std::chrono::milliseconds(5'000));
  QueueSendResult result = co_await std::move(op);
  co_return Value::object({{"status", result.status},
                           {"completed", result.completed()},
                           {"hasResponse", !result.response.is_undefined()}});
}

ActorDefinition caller() {
  return actor<>("caller")
      .action("incrementCounter",
              [](auto& c, std::string key) -> Task<Value> {
                return capture(c.client().get_or_create("counter", {key}).action("increment"));
              })
      .action("createCounter",
              [](auto& c, std::string key, std::int64_t start) -> Task<Value> {
                return capture(create_and_get(c.client(), std::move(key), start));
              })
      .action("get",
              [](auto& c, std::string name, std::string key, std::string action) -> Task<Value> {
                return capture(c.client().get(name, {key}).action(action));
              })
      .action("byId",
              [](auto& c, std::string id, std::string action) -> Task<Value> {
                return capture(c.client().get_for_id("counter", id).action(action));
              })
      .action("resolve",
              [](auto& c, std::string key) -> Task<Value> {
                return capture(resolve_counter(c.client(), std::move(key)));
              })
      .action("destroyCounter",
              [](auto& c, std::string key) -> Task<Value> {
                return capture(destroy_counter(c.client(), std::move(key)));
              })
      .action("echoVia",
              [](auto& c, std::string key, Value v) -> Task<Value> {
                return capture(c.client().get_or_create("counter", {key}).action("echo", v));
              })
      .action("bigVia",
              [](auto& c, std::string key, std::int64_t n) -> Task<Value> {
                return capture(c.client().get_or_create("counter", {key}).action("big", n));
              })
      .action("sendTo",
              [](auto& c, std::string name, std::string key, Value body) -> Task<Value> {
                return capture(send_to(c.client(), std::move(name), std::move(key), body));
              })
      .action("sendAndWait",
              [](auto& c, std::string key, Value body) -> Task<Value> {
                return capture(send_and_wait_to(c.client(), std::move(key), body));
              })
      .action("ping", [](auto&) { return std::string("pong"); })
      .action("pingSelf",
              [](auto& c) -> Task<Value> {
                return capture(c.client().get_for_id("caller", c.actor_id()).action("ping"));
              })
      // Calls `other`'s pingBack, which calls this actor's ping: a cycle of two.
      .action(
          "pingVia",
          [](auto& c, std::string other) -> Task<Value> {
            return capture(c.client()
                               .get_or_create("caller", {other})
                               .action("pingBack", c.key().empty() ? std::string() : c.key()[0]));
          })
      .action("pingBack", [](auto& c, std::string back) -> Task<Value> {
        return capture(c.client().get_or_create("caller", {back}).action("ping"));
      });
}

class ActorClientTest : public testing::StoreRuntimeFixture {
 protected:
  void SetUp() override {
    open({counter(), caller()});
    ctx_ = std::make_shared<LocalContext>(RegistryConfig{}, *runtime_, store_);
    driver_ = std::make_shared<LocalDriver>(io_, ctx_);
    driver_->start();
  }
  void TearDown() override {
    driver_->stop_alarms();
    run(runtime_->shutdown());
    driver_.reset();
    ctx_.reset();
    close();
  }

  // A caller actor (created on first use), as a client would reach it.
  std::string caller_id(const std::string& key) {
    core::ActorRecord wanted;
    wanted.actor_id = core::new_actor_id();
    wanted.name = "caller";
    wanted.key = core::serialize_key({key});
    wanted.create_ts = clock_->now_ms();
    wanted.generation = 0;
    auto made = run(ctx_->directory->get_or_create(wanted));
    EXPECT_TRUE(made);
    return made ? made->actor.actor_id : std::string();
  }

  Value call(const std::string& actor_id, std::string action, Array args = {}) {
    core::HttpActionCommand command;
    command.name = std::move(action);
    command.args = std::move(args);
    auto done = run(runtime_->dispatch(actor_id, std::move(command)));
    if (!done.result) {
      ADD_FAILURE() << "the caller's action failed: " << done.result.error().message;
      return Value{};
    }
    return std::move(*done.result);
  }

  static std::string error_of(const Value& v) {
    const Value* e = v.is_object() ? v.find("error") : nullptr;
    return e != nullptr ? e->as_string() : std::string();
  }

  std::shared_ptr<LocalContext> ctx_;
  std::shared_ptr<LocalDriver> driver_;
};

TEST_F(ActorClientTest, GetOrCreateCallsTheSameActorEachTime) {
  auto a = caller_id("a");
  EXPECT_EQ(call(a, "incrementCounter", {Value("room")}).as_int(), 1);
  EXPECT_EQ(call(a, "incrementCounter", {Value("room")}).as_int(), 2);
  auto b = caller_id("b");
  EXPECT_EQ(call(b, "incrementCounter", {Value("room")}).as_int(), 3) << "one actor per key";
  EXPECT_EQ(call(b, "incrementCounter", {Value("other")}).as_int(), 1);
}

TEST_F(ActorClientTest, CreateGivesTheInputAndRefusesADuplicateKey) {
  auto a = caller_id("a");
  EXPECT_EQ(call(a, "createCounter", {Value("fresh"), Value(41)}).as_int(), 41);
  auto dup = call(a, "createCounter", {Value("fresh"), Value(7)});
  EXPECT_EQ(error_of(dup), "actor.duplicate_key");
}

TEST_F(ActorClientTest, ArgumentsAndResultsKeepTheirTypes) {
  auto a = caller_id("a");
  Value v = Value::object({{"n", 1},
                           {"big", Value(*BigInt::parse("123456789012345678901234567890"))},
                           {"bytes", Value(Bytes{0, 1, 255})},
                           {"list", Value(Array{Value("x"), Value(nullptr), Value(2.5)})}});
  auto echoed = call(a, "echoVia", {Value("echo"), v});
  EXPECT_EQ(echoed, v);
}

TEST_F(ActorClientTest, ArgumentsAndResultsOverTheMessageLimitsAreRefused) {
  auto a = caller_id("a");
  // The limits are a client's (64 KiB in, 1 MiB out by default), measured as CBOR.
  auto fits = call(a, "echoVia", {Value("limits"), Value(std::string(60'000, 'y'))});
  EXPECT_EQ(fits.as_string().size(), 60'000u);
  auto too_big = call(a, "echoVia", {Value("limits"), Value(std::string(70'000, 'y'))});
  EXPECT_EQ(error_of(too_big), "message.incoming_too_long");
  auto bytes = call(a, "echoVia", {Value("limits"), Value(Bytes(60'000, 7))});
  EXPECT_EQ(error_of(bytes), "message.incoming_too_long") << "bytes travel as base64";
  EXPECT_EQ(call(a, "bigVia", {Value("limits"), Value(1'000'000)}).as_string().size(), 1'000'000u);
  auto result = call(a, "bigVia", {Value("limits"), Value(1'100'000)});
  EXPECT_EQ(error_of(result), "message.outgoing_too_long");
}

TEST_F(ActorClientTest, ErrorsReachTheCallerAsRivetKitErrors) {
  auto a = caller_id("a");
  auto user = call(a, "get", {Value("counter"), Value("room"), Value("fail")});
  EXPECT_EQ(error_of(user), "actor.not_found") << "get does not create";
  call(a, "incrementCounter", {Value("room")});
  user = call(a, "get", {Value("counter"), Value("room"), Value("fail")});
  EXPECT_EQ(error_of(user), "user.unlucky");
  EXPECT_EQ(user.find("message")->as_string(), "no luck");
  EXPECT_EQ(user.find("metadata")->find("tries")->as_int(), 3);

  auto crash = call(a, "get", {Value("counter"), Value("room"), Value("crash")});
  EXPECT_EQ(error_of(crash), "core.internal_error");
  EXPECT_EQ(crash.find("message")->as_string().find("secret"), std::string::npos)
      << "an internal error's detail stays with the callee";

  auto unknown_action = call(a, "get", {Value("counter"), Value("room"), Value("nope")});
  EXPECT_EQ(error_of(unknown_action), "actor.action_not_found");
  auto unknown_type = call(a, "get", {Value("nobody"), Value("room"), Value("get")});
  EXPECT_EQ(error_of(unknown_type), "actor.unknown_name");
  auto missing_id = call(a, "byId", {Value("no-such-actor"), Value("get")});
  EXPECT_EQ(error_of(missing_id), "actor.not_found");
}

TEST_F(ActorClientTest, AnActorCallsItselfAndTwoActorsCallEachOther) {
  auto a = caller_id("a");
  EXPECT_EQ(call(a, "pingSelf").as_string(), "pong");
  EXPECT_EQ(call(a, "pingVia", {Value("b")}).as_string(), "pong");
}

TEST_F(ActorClientTest, ASleepingCalleeIsWokenWithItsState) {
  auto a = caller_id("a");
  call(a, "incrementCounter", {Value("sleeper")});
  auto id = call(a, "resolve", {Value("sleeper")}).as_string();
  call(a, "byId", {Value(id), Value("sleep")});
  // The sleeping counter's slot goes; the caller's stays.
  for (int i = 0; i < 5000 && runtime_->slot_count() != 1; ++i) {
    io_.restart();
    io_.run_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(runtime_->slot_count(), 1u) << "the counter went to sleep";
  EXPECT_EQ(call(a, "byId", {Value(id), Value("increment")}).as_int(), 2);
}

TEST_F(ActorClientTest, ADestroyedCalleeIsNotFoundAndGetOrCreateMakesItAnew) {
  auto a = caller_id("a");
  call(a, "incrementCounter", {Value("doomed")});
  call(a, "incrementCounter", {Value("doomed")});
  auto old_id = call(a, "resolve", {Value("doomed")}).as_string();
  EXPECT_EQ(call(a, "destroyCounter", {Value("doomed")}), Value(true));
  EXPECT_EQ(error_of(call(a, "byId", {Value(old_id), Value("get")})), "actor.not_found");
  EXPECT_EQ(error_of(call(a, "destroyCounter", {Value("doomed")})), "actor.not_found");
  EXPECT_EQ(call(a, "incrementCounter", {Value("doomed")}).as_int(), 1) << "a fresh actor";
  EXPECT_NE(call(a, "resolve", {Value("doomed")}).as_string(), old_id);
}

TEST_F(ActorClientTest, QueueSendsReachTheCalleeAndComplete) {
  const auto id = caller_id("q");
  EXPECT_EQ(call(id, "sendTo", {Value("counter"), Value("q1"), Value::object({{"x", 1}})}),
            Value("sent"));
  EXPECT_EQ(call(id, "sendAndWait", {Value("q1"), Value(Array{Value(1), Value("two")})}),
            Value::object({{"status", "completed"}, {"completed", true}, {"hasResponse", false}}));
  EXPECT_EQ(call(id, "incrementCounter", {Value("q1")}), Value(1))
      << "the sends created the callee and changed nothing";
  EXPECT_EQ(error_of(call(id, "sendTo",
                          {Value("counter"), Value("q1"), Value(std::string(70'000, 'x'))})),
            "message.incoming_too_long");
  EXPECT_EQ(error_of(call(id, "sendTo", {Value("counter"), Value("missing"), Value(1)})), "")
      << "get-or-create";
  EXPECT_EQ(error_of(call(id, "sendTo", {Value("caller"), Value("nobody"), Value(1)})),
            "actor.not_found");
}

}  // namespace
}  // namespace rivetkit::local
