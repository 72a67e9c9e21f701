// The user KV part alone, over an in-memory store and a host the test drives: a write while the
// actor loads commits at once; a later write joins the next write of the actor (take_changes) and
// resumes only once it is durable; a refused call writes nothing; reads see the user's keys
// without the reserved prefix; a stopped actor's calls fail with kv.actor_stopped.

#include "core/actor/actor_kv.hpp"

#include "memory_kv.hpp"
#include <rivetkit/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;

class MemoryStore final : public testing::MapKvStore {
 public:
  int commits = 0;
  Task<Result<storage::PersistedActor>> load() override { co_return storage::PersistedActor{}; }
  Task<Result<void>> commit(storage::ActorWrite write) override {
    ++commits;
    storage::apply_kv(kv, write.kv);
    co_return Result<void>{};
  }
};

class ActorKvTest : public ::testing::Test, public ActorKv::Host {
 protected:
  // ActorKv::Host: a save takes the part's changes into one write, committed when the test says.
  bool kv_open() const override { return open; }
  bool kv_loading() const override { return loading; }
  Task<Result<void>> save_now() override {
    ++saves;
    storage::ActorWrite write;
    kv.take_changes(write);
    pending.push_back(std::move(write));
    while (!durable) {
      auto op = wait_durable();
      co_await std::move(op);
    }
    co_return Result<void>{};
  }
  std::shared_ptr<void> hold() override { return nullptr; }

  Task<void> wait_durable() {
    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_after(std::chrono::milliseconds(1));
    co_await t.async_wait(asio::use_awaitable);
  }
  void make_durable() {
    for (auto& w : pending) {
      auto op = store.commit(std::move(w));
      asio::co_spawn(io, std::move(op), [](std::exception_ptr, Result<void>) {});
    }
    pending.clear();
    durable = true;
  }

  // Runs a call to completion (or until `rounds` polls), returning what it threw.
  template <class T>
  std::pair<std::optional<T>, std::exception_ptr> call(Task<T> task, int rounds = 50) {
    auto done = std::make_shared<std::pair<std::optional<T>, std::exception_ptr>>();
    asio::co_spawn(io, std::move(task), [done](std::exception_ptr e, T v) {
      done->second = e;
      if (!e) {
        done->first = std::move(v);
      }
    });
    for (int i = 0; i < rounds && !done->first && !done->second; ++i) {
      io.restart();
      io.run_for(std::chrono::milliseconds(2));
    }
    return *done;
  }
  bool write(std::vector<detail::KvWrite> writes, int rounds = 50) {
    auto wrap = [](ActorKv& k, std::vector<detail::KvWrite> w) -> Task<bool> {
      co_await k.write(std::move(w));
      co_return true;
    };
    auto [ok, error] = call(wrap(kv, std::move(writes)), rounds);
    last_error = error;
    return ok.has_value();
  }
  static detail::KvWrite put(std::string k, std::string v) {
    return detail::KvWrite{detail::KvWrite::Kind::kPut, std::move(k), std::move(v)};
  }
  static std::string code_of(std::exception_ptr e) {
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
  ActorKv kv{"actor-1", store, *this};
  bool open = true;
  bool loading = false;
  bool durable = false;
  int saves = 0;
  std::vector<storage::ActorWrite> pending;
  std::exception_ptr last_error;
};

TEST_F(ActorKvTest, AWriteWhileLoadingCommitsAtOnce) {
  loading = true;
  ASSERT_TRUE(write({put("a", "1")}));
  EXPECT_EQ(store.commits, 1);
  EXPECT_EQ(saves, 0);
  auto [values, error] = call(kv.get({"a"}));
  ASSERT_TRUE(values);
  EXPECT_EQ((*values)[0], std::optional<std::string>("1"));
}

TEST_F(ActorKvTest, ALaterWriteJoinsTheActorsWriteAndResumesOnceDurable) {
  EXPECT_FALSE(write({put("a", "1"), put("b", "2")}, 10)) << "resumed before durable";
  EXPECT_EQ(saves, 1);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].kv.ops().size(), 2u);  // one batch, in call order
  EXPECT_EQ(store.commits, 0);

  make_durable();
  io.restart();
  io.run_for(std::chrono::milliseconds(20));
  EXPECT_EQ(store.commits, 1);
  auto [entries, error] = call(kv.list(detail::KvList{true, "", "", {}}));
  ASSERT_TRUE(entries) << code_of(error);
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0], (std::pair<std::string, std::string>{"a", "1"}));  // user keys
  for (const auto& [key, value] : store.kv) {
    EXPECT_EQ(key[0], storage::kUserKvPrefix) << "stored under the reserved user prefix";
  }
}

TEST_F(ActorKvTest, ARefusedCallWritesNothing) {
  durable = true;
  EXPECT_FALSE(write({put("ok", "1"), put(std::string(3000, 'k'), "too long a key")}));
  EXPECT_EQ(code_of(last_error).rfind("kv.", 0), 0u) << code_of(last_error);
  EXPECT_EQ(saves, 0);
  EXPECT_TRUE(store.kv.empty());

  EXPECT_FALSE(write({put("v", std::string(storage::kMaxKvValueSize + 1, 'x'))}));
  EXPECT_EQ(saves, 0);
}

TEST_F(ActorKvTest, AStoppedActorsCallsFail) {
  open = false;
  EXPECT_FALSE(write({put("a", "1")}));
  EXPECT_EQ(code_of(last_error), "kv.actor_stopped");
  auto [values, error] = call(kv.get({"a"}));
  EXPECT_FALSE(values);
  EXPECT_EQ(code_of(error), "kv.actor_stopped");
}

}  // namespace
}  // namespace rivetkit::core
