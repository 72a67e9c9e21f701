// Engine mode's actor directory against the real rivet-engine (spawned on free ports): one actor
// for concurrent get-or-create of one key, get by key and by id, list by name and key, a
// duplicate create refused with the engine's error, destroy and what is found after it.

#include "engine/engine_directory.hpp"

#include "core/keys.hpp"
#include "engine_test_util.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <set>
#include <thread>

namespace rivetkit::engine {
namespace {

using test_util::EngineTestBase;

class EngineDirectoryTest : public EngineTestBase {
 protected:
  core::ActorRecord wanted(std::string key) {
    core::ActorRecord r;
    r.name = "counter";
    r.key = key.empty() ? std::string() : core::serialize_key({key});
    return r;
  }
};

TEST_F(EngineDirectoryTest, FindsCreatesListsAndDestroysActorsOnARealEngine) {
  RIVETKIT_REQUIRE_ENGINE_BINARY();
  auto engine = spawn_engine();
  ASSERT_TRUE(engine);
  EngineApiOptions api;
  api.endpoint = engine->endpoint();
  api.pool = "cpp-directory-pool";
  auto pool = run(ensure_runner_config(io_.get_executor(), api));
  ASSERT_TRUE(pool) << pool.error().message;
  EngineDirectory directory(io_.get_executor(), api);

  // Concurrent get-or-create of one key: one actor.
  std::vector<std::future<Result<core::ActorDirectory::GetOrCreated>>> calls;
  for (int i = 0; i < 8; ++i) {
    calls.push_back(boost::asio::co_spawn(io_, directory.get_or_create(wanted("room")),
                                          boost::asio::use_future));
  }
  std::set<std::string> ids;
  int created = 0;
  for (auto& call : calls) {
    ASSERT_EQ(call.wait_for(std::chrono::seconds(50)), std::future_status::ready);
    auto r = call.get();
    ASSERT_TRUE(r) << r.error().group << "." << r.error().code << ": " << r.error().message;
    ids.insert(r->actor.actor_id);
    created += r->created ? 1 : 0;
    EXPECT_EQ(r->actor.name, "counter");
    EXPECT_EQ(r->actor.key, core::serialize_key({"room"}));
  }
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(created, 1);
  const std::string room = *ids.begin();

  auto by_key = run(directory.get_with_key("counter", core::serialize_key({"room"})));
  ASSERT_TRUE(by_key) << by_key.error().message;
  ASSERT_TRUE(*by_key);
  EXPECT_EQ((*by_key)->actor_id, room);
  auto by_id = run(directory.get_for_id(room));
  ASSERT_TRUE(by_id) << by_id.error().message;
  ASSERT_TRUE(*by_id);
  EXPECT_EQ((*by_id)->name, "counter");
  EXPECT_FALSE((*by_id)->destroy_ts);

  auto duplicate = run(directory.create(wanted("room")));
  ASSERT_FALSE(duplicate);
  EXPECT_EQ(duplicate.error().group, "actor");
  EXPECT_EQ(duplicate.error().code, "duplicate_key");

  auto other = run(directory.create(wanted("other")));
  ASSERT_TRUE(other) << other.error().message;
  core::ActorListQuery all;
  all.name = "counter";
  auto listed = run(directory.list(all));
  ASSERT_TRUE(listed) << listed.error().message;
  EXPECT_EQ(listed->size(), 2u);
  core::ActorListQuery only_other = all;
  only_other.key = core::serialize_key({"other"});
  auto filtered = run(directory.list(only_other));
  ASSERT_TRUE(filtered) << filtered.error().message;
  ASSERT_EQ(filtered->size(), 1u);
  EXPECT_EQ((*filtered)[0].actor_id, other->actor_id);

  // Destroy: the engine marks it destroyed (the TS client polls for that too).
  auto destroyed = run(directory.destroy(room));
  ASSERT_TRUE(destroyed) << destroyed.error().message;
  EXPECT_TRUE(*destroyed);
  std::optional<core::ActorRecord> after;
  for (int i = 0; i < 200; ++i) {
    auto got = run(directory.get_for_id(room));
    ASSERT_TRUE(got) << got.error().message;
    after = *got;
    if (!after || after->destroy_ts) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(after) << "a destroyed actor is still found by id";
  EXPECT_TRUE(after->destroy_ts);
  auto gone = run(directory.get_with_key("counter", core::serialize_key({"room"})));
  ASSERT_TRUE(gone) << gone.error().message;
  EXPECT_FALSE(*gone) << "but no longer by key";
  auto again = run(directory.destroy(room));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_FALSE(*again);

  auto fresh = run(directory.get_or_create(wanted("room")));
  ASSERT_TRUE(fresh) << fresh.error().message;
  EXPECT_TRUE(fresh->created);
  EXPECT_NE(fresh->actor.actor_id, room);
}

}  // namespace
}  // namespace rivetkit::engine
