// Local mode's actor directory over a real SQLite store: concurrent get-or-create of one key
// makes one actor, a destroyed actor is found by id (as destroyed) but no longer by key, a
// destroy stops the running instance and wipes the data, and listing filters by name and key.

#include "local/local_directory.hpp"

#include "core/ids.hpp"
#include "core/keys.hpp"
#include "store_runtime_fixture.hpp"
#include "util/clock.hpp"
#include <rivetkit/rivetkit.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

namespace rivetkit::local {
namespace {

namespace asio = boost::asio;

struct State {
  std::int64_t count = 0;
};
RIVETKIT_FIELDS(State, count)

ActorDefinition counter() {
  return actor<ActorTypes<State>>("counter").action("increment", [](auto& c) {
    c.state().count += 1;
    return c.state().count;
  });
}

class LocalDirectoryTest : public testing::StoreRuntimeFixture {
 protected:
  void SetUp() override {
    open({counter()});
    directory_ = std::make_unique<LocalDirectory>(
        store_, *runtime_, [this](const std::string& id) { destroyed_.push_back(id); });
  }
  void TearDown() override {
    run(runtime_->shutdown());
    directory_.reset();
    close();
  }

  static Task<Result<core::ActorInstance::Spec>> spec_for(
      std::shared_ptr<storage::LocalStore> store,
      core::ActorRecord rec,
      std::shared_ptr<const detail::ActorDefinitionData> def) {
    auto gen_op = store->acquire_generation(rec.actor_id);
    auto gen = co_await std::move(gen_op);
    if (!gen) {
      co_return fail(gen.error());
    }
    core::ActorInstance::Spec spec;
    spec.actor_id = rec.actor_id;
    spec.name = rec.name;
    spec.key = {"a"};
    spec.generation = *gen;
    spec.definition = std::move(def);
    spec.store = store->actor_store(rec.actor_id);
    co_return spec;
  }

  static core::ActorListQuery query(std::string name, std::optional<std::string> key = {}) {
    core::ActorListQuery q;
    q.name = std::move(name);
    q.key = std::move(key);
    return q;
  }

  core::ActorRecord wanted(std::string key, std::string id = core::new_actor_id()) {
    core::ActorRecord r;
    r.actor_id = std::move(id);
    r.name = "counter";
    r.key = key.empty() ? std::string() : core::serialize_key({key});
    r.create_ts = clock_->now_ms();
    clock_->advance(std::chrono::milliseconds(1));  // distinct creation times, newest first
    return r;
  }

  std::unique_ptr<LocalDirectory> directory_;
  std::vector<std::string> destroyed_;
};

TEST_F(LocalDirectoryTest, ConcurrentGetOrCreateOfOneKeyCreatesOneActor) {
  constexpr int kCallers = 16;
  std::vector<std::future<Result<core::ActorDirectory::GetOrCreated>>> calls;
  for (int i = 0; i < kCallers; ++i) {
    calls.push_back(
        asio::co_spawn(io_, directory_->get_or_create(wanted("room")), asio::use_future));
  }
  for (int i = 0; i < 5000; ++i) {
    io_.restart();
    io_.run_for(std::chrono::milliseconds(2));
    if (std::all_of(calls.begin(), calls.end(), [](auto& f) {
          return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        })) {
      break;
    }
  }
  std::set<std::string> ids;
  int created = 0;
  for (auto& f : calls) {
    auto r = f.get();
    ASSERT_TRUE(r) << r.error().message;
    ids.insert(r->actor.actor_id);
    created += r->created ? 1 : 0;
  }
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(created, 1);
  auto listed = run(directory_->list(query("counter", core::serialize_key({"room"}))));
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->size(), 1u);
}

TEST_F(LocalDirectoryTest, ADestroyedActorIsFoundByIdOnlyAndItsKeyIsFreeAgain) {
  auto first = run(directory_->create(wanted("a")));
  ASSERT_TRUE(first) << first.error().message;
  // Running, so that the destroy has an instance to stop.
  auto store = store_;
  auto record = *first;
  auto def = runtime_->definition("counter");
  auto started = run(runtime_->acquire(
      first->actor_id, [store, record, def]() { return spec_for(store, record, def); }));
  ASSERT_TRUE(started) << started.error().message;

  auto destroyed = run(directory_->destroy(first->actor_id));
  ASSERT_TRUE(destroyed);
  EXPECT_TRUE(*destroyed);
  EXPECT_EQ(destroyed_, std::vector<std::string>{first->actor_id});
  EXPECT_TRUE((*started)->lifecycle().is(core::LifecycleState::kTerminated));

  auto by_id = run(directory_->get_for_id(first->actor_id));
  ASSERT_TRUE(by_id);
  ASSERT_TRUE(*by_id);
  EXPECT_TRUE((*by_id)->destroy_ts) << "found by id, as destroyed";
  auto by_key = run(directory_->get_with_key("counter", first->key));
  ASSERT_TRUE(by_key);
  EXPECT_FALSE(*by_key);
  auto again = run(directory_->destroy(first->actor_id));
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again) << "nothing left to destroy";

  auto second = run(directory_->get_or_create(wanted("a")));
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->created);
  EXPECT_NE(second->actor.actor_id, first->actor_id);

  auto unknown = run(directory_->get_for_id("no-such-actor"));
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(*unknown);
}

TEST_F(LocalDirectoryTest, ListsByNameAndKeyNewestFirst) {
  ASSERT_TRUE(run(directory_->create(wanted("x"))));
  ASSERT_TRUE(run(directory_->create(wanted("y"))));
  ASSERT_TRUE(run(directory_->create(wanted(""))));  // keyless
  auto duplicate = run(directory_->create(wanted("x")));
  ASSERT_FALSE(duplicate);
  EXPECT_EQ(duplicate.error().code, "duplicate_key");

  auto all = run(directory_->list(query("counter")));
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].key, "") << "newest first";
  EXPECT_EQ((*all)[2].key, core::serialize_key({"x"}));

  auto only_y = run(directory_->list(query("counter", core::serialize_key({"y"}))));
  ASSERT_TRUE(only_y);
  ASSERT_EQ(only_y->size(), 1u);
  auto keyless = run(directory_->get_with_key("counter", ""));
  ASSERT_TRUE(keyless);
  EXPECT_FALSE(*keyless) << "a keyless actor is never found by key";
  auto other = run(directory_->list(query("other")));
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->empty());
}

}  // namespace
}  // namespace rivetkit::local
