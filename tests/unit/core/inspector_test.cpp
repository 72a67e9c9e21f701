// The inspector part (core/inspector): the token's form, parsing and comparison, where a token
// is kept, who gets in, and a state patch that changes all of the state or none of it.

#include "core/inspector/inspector.hpp"

#include "core/inspector/inspector_token.hpp"
#include "recording_socket.hpp"
#include "runtime_harness.hpp"

#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace rivetkit::core::testing {
namespace {

using namespace inspector;

TEST(InspectorTokenTest, ATokenIs32RandomBytesInBase64UrlWithoutPadding) {
  const std::string a = generate_token();
  const std::string b = generate_token();
  EXPECT_EQ(a.size(), 43u);
  EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
           || c == '_';
  })) << a;
  EXPECT_NE(a, b);
  EXPECT_EQ(token_key(), std::string(1, '\x03'))
      << "RivetKit's KV [3], where the dashboard reads it";
}

TEST(InspectorTokenTest, OnlyTheSameTokenMatches) {
  EXPECT_TRUE(token_matches("abc", "abc"));
  EXPECT_FALSE(token_matches("abd", "abc"));
  EXPECT_FALSE(token_matches("ab", "abc"));
  EXPECT_FALSE(token_matches("abcd", "abc"));
  EXPECT_FALSE(token_matches("", "abc"));
}

TEST(InspectorTokenTest, BearerTokensAreReadWithTheSchemeInAnyCase) {
  EXPECT_EQ(bearer_token("Bearer abc"), "abc");
  EXPECT_EQ(bearer_token("bearer    abc  "), "abc");
  EXPECT_EQ(bearer_token("BEARER\tabc"), "abc");
  EXPECT_EQ(bearer_token("  Bearer a.b-c_d"), "a.b-c_d");
  EXPECT_EQ(bearer_token("Basic abc"), std::nullopt);
  EXPECT_EQ(bearer_token("Bearer"), std::nullopt);
  EXPECT_EQ(bearer_token("Bearer   "), std::nullopt);
  EXPECT_EQ(bearer_token("Bearerabc"), std::nullopt);
  EXPECT_EQ(bearer_token("abc"), std::nullopt);
  EXPECT_EQ(bearer_token(""), std::nullopt);
}

TEST(InspectorTokenTest, WebSocketsPresentTheTokenAsASubprotocol) {
  EXPECT_EQ(subprotocol_token("rivet, rivet_inspector_token.tok"), "tok");
  EXPECT_EQ(subprotocol_token("rivet_inspector_token.a-b_c,rivet"), "a-b_c");
  EXPECT_EQ(subprotocol_token("rivet"), std::nullopt);
  EXPECT_EQ(subprotocol_token("rivet_inspector_token."), std::nullopt);
  EXPECT_EQ(subprotocol_token(""), std::nullopt);
}

struct Tally {
  std::int64_t count = 0;
  std::string label = "start";
};
RIVETKIT_FIELDS(Tally, count, label)

class InspectorTest : public RuntimeHarness {
 protected:
  ActorDefinition def() const override {
    return actor<Tally>("counter").action("get", [](auto& c) {
      return Value::object({{"count", c.state().count}, {"label", c.state().label}});
    });
  }

  std::shared_ptr<ActorInstance> started() {
    auto inst = run(acquire());
    EXPECT_TRUE(inst) << (inst ? "" : inst.error().message);
    return inst ? *inst : nullptr;
  }
  template <class T>
  T on_strand(const std::shared_ptr<ActorInstance>& inst, Task<T> task) {
    return run(asio::co_spawn(inst->strand(), std::move(task), asio::use_awaitable));
  }
  Result<void> authorize_with(const std::shared_ptr<ActorInstance>& inst,
                              std::optional<std::string> token) {
    return on_strand(inst, authorize(*inst, std::move(token)));
  }
  Result<Value> ask(const std::shared_ptr<ActorInstance>& inst, InspectorRequest request) {
    return on_strand(inst, answer(*inst, std::move(request)));
  }
  std::optional<std::string> stored_token() {
    auto values = run(store_->actor_store("actor-1")->kv_store().get({token_key()}));
    EXPECT_TRUE(values);
    return values ? values->front() : std::nullopt;
  }
};

TEST_F(InspectorTest, ANewActorKeepsItsOwnTokenAndOnlyThatTokenGetsIn) {
  auto inst = started();
  auto token = stored_token();
  ASSERT_TRUE(token) << "written with the actor's creation";
  EXPECT_EQ(token->size(), 43u);

  EXPECT_TRUE(authorize_with(inst, *token));
  for (std::optional<std::string> wrong :
       {std::optional<std::string>(), std::optional<std::string>(""),
        std::optional<std::string>("token"), std::optional<std::string>(*token + "x"),
        std::optional<std::string>(generate_token())}) {
    auto refused = authorize_with(inst, wrong);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().group, "inspector");
    EXPECT_EQ(refused.error().code, "unauthorized");
    EXPECT_EQ(status_of(refused.error()), 401u);
  }

  // Kept across a sleep: the next instance accepts the same token.
  run(runtime_->stop("actor-1", StopReason::kSleep));
  auto again = started();
  EXPECT_EQ(stored_token(), token);
  EXPECT_TRUE(authorize_with(again, *token));
}

TEST_F(InspectorTest, AnActorStoredWithoutATokenGetsOneAtItsFirstRequest) {
  auto inst = started();
  storage::ActorWrite wipe;
  wipe.kv.remove(token_key());
  ASSERT_TRUE(run(store_->actor_store("actor-1")->commit(std::move(wipe))));
  ASSERT_FALSE(stored_token());

  auto first = authorize_with(inst, "guess");
  ASSERT_FALSE(first) << "nobody can hold a token that did not exist";
  auto token = stored_token();
  ASSERT_TRUE(token);
  EXPECT_TRUE(authorize_with(inst, *token));
}

TEST_F(InspectorTest, APatchThatDoesNotFitChangesNothingAndOneThatFitsIsDurableWhenAnswered) {
  auto inst = started();
  auto bad = ask(inst, PatchState{Value::object({{"count", "many"}, {"label", "x"}})});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "invalid_request");
  EXPECT_EQ(status_of(bad.error()), 400u);
  auto state = ask(inst, GetState{});
  ASSERT_TRUE(state);
  EXPECT_EQ(state->find("state")->find("label")->as_string(), "start");
  EXPECT_EQ(state->find("state")->find("count")->as_int(), 0);

  auto ok = ask(inst, PatchState{Value::object({{"count", 41}, {"label", "patched"}})});
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_TRUE(ok->find("ok")->as_bool());
  // Durable once answered: the store has it, without any further save.
  auto loaded = run(store_->actor_store("actor-1")->load());
  ASSERT_TRUE(loaded);
  ASSERT_TRUE(loaded->state);
  auto v = call("get");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->find("count")->as_int(), 41);
  EXPECT_NE(loaded->state->find("patched"), std::string::npos);
}

TEST_F(InspectorTest, AnAttachedSocketGetsInitKeepsTheActorAwakeAndIsClosedByAStop) {
  auto inst = started();
  settle();
  EXPECT_FALSE(inst->awake_reason()) << "idle";
  auto socket = std::make_shared<RecordingSocket>();
  ASSERT_TRUE(ask(inst, AttachSocket{socket, {6, false}}));
  ASSERT_EQ(socket->sent.size(), 1u);
  EXPECT_EQ(static_cast<unsigned char>(socket->sent[0].data.at(0)), 17u) << "Init (v6 tag 17)";
  EXPECT_EQ(inst->awake_reason(), AwakeReason::kInspector);
  advance(std::chrono::minutes(2));
  EXPECT_FALSE(asleep()) << "watched: no idle sleep";

  run(runtime_->stop("actor-1", StopReason::kSleep));
  ASSERT_TRUE(socket->closed);
  EXPECT_EQ(socket->closed->code, 1001);
  EXPECT_EQ(socket->closed->reason, "actor.sleeping");
}

TEST_F(InspectorTest, ASocketThatLeavesLetsTheActorSleepAgain) {
  auto inst = started();
  auto socket = std::make_shared<RecordingSocket>();
  ASSERT_TRUE(ask(inst, AttachSocket{socket, {6, false}}));
  on_strand(inst, detach(inst, socket.get()));
  EXPECT_FALSE(inst->awake_reason());
  advance(std::chrono::minutes(2));
  EXPECT_TRUE(asleep());
  EXPECT_FALSE(socket->closed) << "it had left";
}

TEST_F(InspectorTest, WithTheTestOverrideOnlyThatTokenGetsIn) {
  auto inst = started();
  auto& config = const_cast<RuntimeConfig&>(inst->config());
  config.inspector_test_token = "sekret";
  EXPECT_TRUE(authorize_with(inst, "sekret"));
  auto own = stored_token();
  ASSERT_TRUE(own);
  EXPECT_FALSE(authorize_with(inst, *own)) << "the override wins over the stored token";
  config.inspector_test_token.reset();
  config.inspector_enabled = false;
  auto off = authorize_with(inst, *own);
  ASSERT_FALSE(off);
  EXPECT_EQ(off.error().code, "disabled");
  EXPECT_EQ(status_of(off.error()), 404u);
  config.inspector_enabled = true;
}

}  // namespace
}  // namespace rivetkit::core::testing

// ---- the live pushes (InspectorWatchers) --------------------------------------------------------

namespace rivetkit::core::testing {
namespace {

namespace wire = protocol::inspector;

class FakeWatchersHost final : public inspector::InspectorWatchers::Host {
 public:
  explicit FakeWatchersHost(asio::io_context& io) : io_(io) {}
  std::optional<std::string> state = std::string("\x01");
  std::vector<wire::Connection> conns;
  std::uint64_t queue = 0;
  int detached = 0;

  std::optional<std::string> inspector_state() override { return state; }
  std::vector<wire::Connection> inspector_connections() override { return conns; }
  std::uint64_t inspector_queue_size() override { return queue; }
  std::optional<std::string> inspector_workflow_history() override { return std::nullopt; }
  void inspector_detached() override { ++detached; }
  void inspector_spawn(Task<void> task) override {
    asio::co_spawn(io_, std::move(task), asio::detached);
  }

 private:
  asio::io_context& io_;
};

class InspectorWatchersTest : public ::testing::Test {
 protected:
  void settle() {
    for (int i = 0; i < 20; ++i) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(1));
    }
  }
  // The debounce passes (the flush's timer is registered first).
  void debounce() {
    settle();
    clock_.advance(inspector::InspectorWatchers::kDebounce);
    settle();
  }
  // The tags of what `socket` received, decoded as version 6.
  static std::vector<std::size_t> tags(const RecordingSocket& socket) {
    std::vector<std::size_t> out;
    for (const auto& m : socket.sent) {
      out.push_back(static_cast<unsigned char>(m.data.at(0)));
    }
    return out;
  }

  asio::io_context io_;
  util::ManualClock clock_;
  FakeWatchersHost host_{io_};
  inspector::InspectorWatchers watchers_{clock_, host_};
};

TEST_F(InspectorWatchersTest, SignalsWithinTheDebounceGoOutTogetherInTheOrderTheyHappened) {
  auto socket = std::make_shared<RecordingSocket>();
  watchers_.attach(socket, {6, false});
  EXPECT_FALSE(watchers_.empty());
  watchers_.connections_changed();
  watchers_.state_changed();
  watchers_.connections_changed();  // once per flush
  host_.queue = 2;
  watchers_.queue_changed();
  settle();
  EXPECT_TRUE(socket->sent.empty()) << "nothing before the debounce";
  debounce();
  // ConnectionsUpdated (3), StateUpdated (5), QueueUpdated (4): first-signal order.
  EXPECT_EQ(tags(*socket), (std::vector<std::size_t>{3, 5, 4}));
}

TEST_F(InspectorWatchersTest, QueueSizeIsPushedOnlyWhenItChanged) {
  auto socket = std::make_shared<RecordingSocket>();
  host_.queue = 1;
  watchers_.attach(socket, {6, false});
  watchers_.queue_changed();  // same size as at attach
  debounce();
  EXPECT_TRUE(socket->sent.empty());
  host_.queue = 0;
  watchers_.queue_changed();
  debounce();
  ASSERT_EQ(socket->sent.size(), 1u);
  EXPECT_EQ(socket->sent[0].data, wire::encode_to_client(wire::QueueUpdated{0}, 6));
}

TEST_F(InspectorWatchersTest, EachSocketGetsItsOwnVersionAndFraming) {
  auto v1 = std::make_shared<RecordingSocket>();
  auto legacy = std::make_shared<RecordingSocket>();
  watchers_.attach(v1, {1, false});
  watchers_.attach(legacy, {5, true});
  watchers_.state_changed();
  debounce();
  ASSERT_EQ(v1->sent.size(), 1u);
  ASSERT_EQ(legacy->sent.size(), 1u);
  EXPECT_EQ(v1->sent[0].data, wire::encode_to_client(wire::StateUpdated{"\x01"}, 1));
  EXPECT_EQ(legacy->sent[0].data, wire::encode_to_client_embedded(wire::StateUpdated{"\x01"}, 5));
  EXPECT_TRUE(v1->sent[0].binary);
}

TEST_F(InspectorWatchersTest, NothingIsKeptWithoutWatchersAndAStopClosesEverySocket) {
  watchers_.state_changed();
  debounce();
  EXPECT_EQ(clock_.pending_waits(), 0u) << "no timer armed for nobody";

  auto a = std::make_shared<RecordingSocket>();
  auto b = std::make_shared<RecordingSocket>();
  watchers_.attach(a, {6, false});
  watchers_.attach(b, {6, false});
  watchers_.detach(a.get());
  EXPECT_EQ(host_.detached, 0) << "one still attached";
  watchers_.close_all(1001, "actor.sleeping");
  EXPECT_TRUE(watchers_.empty());
  ASSERT_TRUE(b->closed);
  EXPECT_EQ(b->closed->code, 1001);
  EXPECT_FALSE(a->closed) << "a detached socket is left alone";
  auto c = std::make_shared<RecordingSocket>();
  watchers_.attach(c, {6, false});
  watchers_.detach(c.get());
  EXPECT_EQ(host_.detached, 1) << "the last one went";
}

}  // namespace
}  // namespace rivetkit::core::testing
