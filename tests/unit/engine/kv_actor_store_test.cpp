// Engine mode's actor storage over a model of the engine's KV (memory_engine_kv.hpp): a commit
// that fits one request is that one request; a larger one (hundreds of SQLite pages, a big KV
// batch, deletes with puts) goes through the commit journal, and a crash injected before or at
// every one of its requests, with or without the crashing request's answer lost, leaves after
// the next load either the whole previous commit or the whole new one, switching exactly at the
// journal's commit point.

#include "engine/kv_actor_store.hpp"

#include "engine/kv_commit_journal.hpp"
#include "memory_engine_kv.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::engine {
namespace {

const std::string kActor = "actor-1";

using testing::run;

std::string page_key(int i) {
  std::string k = "\x08\x01";
  k += static_cast<char>((i >> 8) & 0xff);
  k += static_cast<char>(i & 0xff);
  return k;
}

/// `pages` keys of 4 KiB holding `fill`, plus the state `fill`.
storage::ActorWrite version(char fill, int pages) {
  storage::ActorWrite w;
  w.state = std::string(1, fill);
  for (int i = 0; i < pages; ++i) {
    w.kv.put(page_key(i), std::string(4096, fill));
  }
  return w;
}

struct Seen {
  std::optional<std::string> state;
  std::map<std::string, std::string> kv;
};

Seen load(const std::shared_ptr<testing::MemoryEngineKv>& engine, std::uint32_t generation) {
  KvActorStore store(engine, kActor, generation, std::nullopt);
  auto loaded = run(store.load());
  EXPECT_TRUE(loaded.has_value()) << (loaded ? "" : loaded.error().message);
  Seen seen;
  if (loaded) {
    seen.state = loaded->state;
  }
  storage::KvQuery all;
  all.prefix = std::string(1, '\x08');
  auto listed = run(store.kv_store().list(all));
  EXPECT_TRUE(listed.has_value());
  if (listed) {
    for (auto& e : *listed) {
      seen.kv[e.key] = e.value;
    }
  }
  return seen;
}

/// Every key the journal may leave: none may remain after a load.
std::size_t journal_keys(testing::MemoryEngineKv& engine) {
  std::size_t n = 0;
  for (const auto& [k, v] : engine.actors[kActor]) {
    n += k[0] == journal::kJournalPrefix ? 1u : 0u;
  }
  return n;
}

TEST(KvActorStoreTest, ACommitThatFitsOneRequestIsOneRequestWithoutJournal) {
  auto engine = std::make_shared<testing::MemoryEngineKv>();
  KvActorStore store(engine, kActor, 1, std::nullopt);
  ASSERT_TRUE(run(store.load()));
  const int before = engine->mutating_requests;
  ASSERT_TRUE(run(store.commit(version('a', 20))));
  EXPECT_EQ(engine->mutating_requests - before, 1);
  EXPECT_EQ(journal_keys(*engine), 0u);
  auto seen = load(engine, 2);
  EXPECT_EQ(seen.state, "a");
  EXPECT_EQ(seen.kv.size(), 20u);
}

TEST(KvActorStoreTest, ALargeCommitIsAllOrNothingWhereverACrashCutsIt) {
  // The previous commit: 300 pages of 'a' and a key the new commit deletes.
  auto base = std::make_shared<testing::MemoryEngineKv>();
  {
    KvActorStore store(base, kActor, 1, std::nullopt);
    ASSERT_TRUE(run(store.load()));
    auto w = version('a', 300);
    w.kv.put(page_key(400), "doomed");
    ASSERT_TRUE(run(store.commit(std::move(w))));
  }
  EXPECT_EQ(journal_keys(*base), 0u);
  auto next = [] {
    auto w = version('b', 300);
    w.kv.remove(page_key(400));
    return w;
  };
  // How many requests the new commit takes without a crash.
  int total = 0;
  {
    auto engine = std::make_shared<testing::MemoryEngineKv>(*base);
    KvActorStore store(engine, kActor, 2, std::nullopt);
    ASSERT_TRUE(run(store.load()));
    const int before = engine->mutating_requests;
    ASSERT_TRUE(run(store.commit(next())));
    total = engine->mutating_requests - before;
  }
  ASSERT_GT(total, 4);  // journal chunks, chunk 0, deletes, puts, journal delete
  for (const bool lose_answer : {false, true}) {
    std::optional<int> switched;  // the first cut after which the new commit is what loads
    for (int cut = 0; cut < total; ++cut) {
      SCOPED_TRACE("crash at request " + std::to_string(cut) + (lose_answer ? " (applied)" : ""));
      auto engine = std::make_shared<testing::MemoryEngineKv>(*base);
      {
        KvActorStore store(engine, kActor, 2, std::nullopt);
        ASSERT_TRUE(run(store.load()));
        engine->crash_after = cut;
        engine->lose_crashing_answer = lose_answer;
        EXPECT_FALSE(run(store.commit(next())));
      }
      engine->crashed = false;
      engine->crash_after.reset();
      auto seen = load(engine, 3);
      EXPECT_EQ(journal_keys(*engine), 0u);
      const bool is_new = seen.state == "b";
      if (is_new) {
        EXPECT_EQ(seen.kv.size(), 300u);
        for (const auto& [k, v] : seen.kv) {
          EXPECT_EQ(v, std::string(4096, 'b')) << "key " << k.size();
        }
        if (!switched) {
          switched = cut;
        }
      } else {
        EXPECT_EQ(seen.state, "a");
        EXPECT_EQ(seen.kv.size(), 301u);
        EXPECT_EQ(seen.kv[page_key(400)], "doomed");
        for (int i = 0; i < 300; ++i) {
          EXPECT_EQ(seen.kv[page_key(i)], std::string(4096, 'a'));
        }
        EXPECT_FALSE(switched) << "an older commit came back after the new one was durable";
      }
    }
    // The switch is the journal's chunk 0: before every request that applies the commit.
    ASSERT_TRUE(switched.has_value());
    EXPECT_LE(*switched + 3, total);
  }
}

TEST(KvActorStoreTest, AfterARecoveredJournalTheNextCommitsBuildOnIt) {
  auto engine = std::make_shared<testing::MemoryEngineKv>();
  {
    KvActorStore store(engine, kActor, 1, std::nullopt);
    ASSERT_TRUE(run(store.load()));
    ASSERT_TRUE(run(store.commit(version('a', 200))));
    // Crash right after the commit point: 200 pages make a journal of 7 chunks, chunks 1-6 in
    // one request and chunk 0 in the second; the third request (the first to apply) fails.
    engine->crash_after = 2;
    EXPECT_FALSE(run(store.commit(version('b', 200))));
    EXPECT_GT(journal_keys(*engine), 0u);
  }
  engine->crashed = false;
  engine->crash_after.reset();
  {
    KvActorStore store(engine, kActor, 2, std::nullopt);
    auto loaded = run(store.load());
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->state, "b");
    ASSERT_TRUE(run(store.commit(version('c', 10))));
  }
  auto seen = load(engine, 3);
  EXPECT_EQ(seen.state, "c");
  EXPECT_EQ(seen.kv[page_key(0)], std::string(4096, 'c'));
  EXPECT_EQ(seen.kv[page_key(150)], std::string(4096, 'b'));
  EXPECT_EQ(journal_keys(*engine), 0u);
}

TEST(KvCommitJournalTest, OnlyCompleteJournalsOfThisOrOlderGenerationsCount) {
  journal::Writes w;
  w.ranges.emplace_back(
      "\x04"
      "a",
      "\x04"
      "z");
  w.deletes.push_back("\x04k");
  for (int i = 0; i < 100; ++i) {
    w.puts.push_back(storage::KvEntry{page_key(i), std::string(4096, static_cast<char>(i))});
  }
  auto entries_of = [](const std::vector<envoy::KvPutRequest>& puts) {
    std::vector<storage::KvEntry> out;
    for (const auto& p : puts) {
      for (std::size_t i = 0; i < p.keys.size(); ++i) {
        out.push_back(storage::KvEntry{p.keys[i], p.values[i]});
      }
    }
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.key < b.key; });
    return out;
  };
  auto puts = journal::journal_puts(w, 5, 7);
  ASSERT_GE(puts.size(), 2u);
  ASSERT_EQ(puts.back().keys.size(), 1u);  // chunk 0 alone, last
  auto entries = entries_of(puts);

  auto found = journal::complete_journals(entries, 5);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ(found->front().generation, 5u);
  EXPECT_EQ(found->front().writes.ranges, w.ranges);
  EXPECT_EQ(found->front().writes.deletes, w.deletes);
  EXPECT_EQ(found->front().writes.puts, w.puts);

  // A newer generation's journal is not this instance's to apply.
  auto older = journal::complete_journals(entries, 4);
  ASSERT_TRUE(older);
  EXPECT_TRUE(older->empty());

  // Without chunk 0 the commit point was never reached: skipped.
  auto no_head = entries;
  no_head.erase(no_head.begin());
  auto skipped = journal::complete_journals(no_head, 5);
  ASSERT_TRUE(skipped);
  EXPECT_TRUE(skipped->empty());

  // Chunk 0 with a chunk of another journal (another sequence number) is corrupt, not guessed.
  auto other = entries_of(journal::journal_puts(w, 5, 8));
  auto mixed = entries;
  mixed[1] = other[1];
  auto corrupt = journal::complete_journals(mixed, 5);
  ASSERT_FALSE(corrupt);
  EXPECT_EQ(corrupt.error().code, "journal_corrupt");
}

TEST(KvCommitJournalTest, ApplyRequestsStayWithinTheEnginesLimits) {
  journal::Writes w;
  for (int i = 0; i < 300; ++i) {
    w.deletes.push_back("\x04" + std::to_string(i));
  }
  for (int i = 0; i < 500; ++i) {
    w.puts.push_back(storage::KvEntry{page_key(i), std::string(100 * 1024, 'x')});
  }
  auto requests = journal::apply_requests(w);
  std::size_t deleted = 0;
  std::size_t put = 0;
  for (const auto& r : requests) {
    if (const auto* d = std::get_if<envoy::KvDeleteRequest>(&r)) {
      EXPECT_LE(d->keys.size(), journal::kMaxKeysPerRequest);
      deleted += d->keys.size();
    } else if (const auto* p = std::get_if<envoy::KvPutRequest>(&r)) {
      std::size_t bytes = 0;
      for (std::size_t i = 0; i < p->keys.size(); ++i) {
        bytes += p->keys[i].size() + 2 + p->values[i].size();
      }
      EXPECT_LE(p->keys.size(), journal::kMaxKeysPerRequest);
      EXPECT_LE(bytes, journal::kMaxPutBytes);
      put += p->keys.size();
    }
  }
  EXPECT_EQ(deleted, 300u);
  EXPECT_EQ(put, 500u);
}

}  // namespace
}  // namespace rivetkit::engine
