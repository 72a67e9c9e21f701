// The inspector part (core/inspector): the token's form, parsing and comparison, where a token
// is kept, who gets in, and a state patch that changes all of the state or none of it.

#include "core/inspector/inspector.hpp"

#include "core/inspector/inspector_token.hpp"
#include "runtime_harness.hpp"

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
    auto values = run(store_->actor_store("actor-1")->kv_get({token_key()}));
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
