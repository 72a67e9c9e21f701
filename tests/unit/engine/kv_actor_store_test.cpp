// Engine mode's actor storage over a model of the engine's KV (memory_engine_kv.hpp): a commit
// that fits one request is that one request; a larger one (hundreds of SQLite pages, a big KV
// batch, deletes with puts) goes through the commit journal, and a crash injected before or at
// every one of its requests, with or without the crashing request's answer lost, leaves after
// the next load either the whole previous commit or the whole new one, switching exactly at the
// journal's commit point.

#include "engine/kv_actor_store.hpp"

#include "engine/kv_commit_journal.hpp"
#include "engine/record_codec.hpp"
#include "memory_engine_kv.hpp"
#include "storage/runtime_records.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace rivetkit::engine {
namespace {

namespace runtime_records = storage::runtime_records;

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

// ---- the runtime's data as keys (runtime_keys.hpp) ----------------------------------------------

storage::PersistedConn conn(std::string id, std::uint16_t index) {
  storage::PersistedConn c;
  c.conn_id = std::move(id);
  c.params = "p";
  c.state = "s";
  c.subscriptions = {"e"};
  c.tunnel_id = "gw01rq01";
  c.server_message_index = index;
  c.client_message_index = index;
  return c;
}

storage::PersistedSchedule schedule(std::string id, std::int64_t at) {
  storage::PersistedSchedule s;
  s.event_id = std::move(id);
  s.trigger_at = at;
  s.action = "tick";
  s.args = std::string("\x80", 1);
  s.created_at = 1;
  return s;
}

/// A state of `size` bytes that differs at every position and between seeds.
std::string big_state(std::size_t size, char seed) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) {
    out[i] = static_cast<char>((i * 31 + static_cast<std::size_t>(seed)) & 0xff);
  }
  return out;
}

std::size_t keys_with_prefix(testing::MemoryEngineKv& engine, std::string_view prefix) {
  std::size_t n = 0;
  for (const auto& [k, v] : engine.actors[kActor]) {
    n += k.starts_with(prefix) ? 1u : 0u;
  }
  return n;
}

/// The record form of what a load returns (the old codec: what the data must equal).
std::string as_record(storage::PersistedActor actor) {
  actor.input.reset();
  return encode_record(actor);
}

storage::PersistedActor load_actor(const std::shared_ptr<testing::MemoryEngineKv>& engine,
                                   std::uint32_t generation) {
  KvActorStore store(engine, kActor, generation, std::nullopt);
  auto loaded = run(store.load());
  EXPECT_TRUE(loaded.has_value()) << (loaded ? "" : loaded.error().message);
  return loaded ? std::move(*loaded) : storage::PersistedActor{};
}

TEST(KvActorStoreTest, MessageIndexUpdatesWriteTheHeadAloneAndNeverTheState) {
  auto engine = std::make_shared<testing::MemoryEngineKv>();
  const std::string chunks{runtime_records::kPrefix, runtime_records::kChunks};
  KvActorStore store(engine, kActor, 1, std::nullopt);
  ASSERT_TRUE(run(store.load()));
  storage::ActorWrite first;
  first.has_initialized = true;
  first.state = big_state(500 * 1024, 'a');
  first.conn_upserts = {conn("c1", 0), conn("c2", 0), conn("c3", 0)};
  first.schedule_upserts = {schedule("e1", 10)};
  ASSERT_TRUE(run(store.commit(std::move(first))));
  const std::vector<std::string> head_only{runtime_records::head_key(1)};

  // Indexes of two connections: one request, one key (the head, which names the state's
  // chunks and holds no state bytes).
  engine->put_keys.clear();
  int before = engine->mutating_requests;
  storage::ActorWrite index;
  index.conn_upserts = {conn("c2", 7), conn("c3", 9)};
  ASSERT_TRUE(run(store.commit(std::move(index))));
  EXPECT_EQ(engine->mutating_requests - before, 1);
  EXPECT_EQ(engine->put_keys, head_only);
  EXPECT_LT(engine->actors[kActor][runtime_records::head_key(1)].size(), 512u);

  // Anything else about a connection changes: its key is written too.
  engine->put_keys.clear();
  storage::ActorWrite changed;
  changed.conn_upserts = {conn("c1", 3)};
  changed.conn_upserts[0].state = "s2";
  ASSERT_TRUE(run(store.commit(std::move(changed))));
  EXPECT_EQ(engine->put_keys, (std::vector<std::string>{runtime_records::conn_key(1, "c1"),
                                                        runtime_records::head_key(1)}));

  // A small state and indexes: still the head alone.
  engine->put_keys.clear();
  storage::ActorWrite small;
  small.state = "tiny";
  small.conn_upserts = {conn("c2", 8)};
  ASSERT_TRUE(run(store.commit(std::move(small))));
  EXPECT_EQ(engine->put_keys, head_only);
  EXPECT_EQ(keys_with_prefix(*engine, chunks), 0u);

  for (std::uint32_t generation : {2u, 3u}) {
    auto loaded = load_actor(engine, generation);  // 2 copies (no seal); 3 again
    ASSERT_EQ(loaded.conns.size(), 3u);
    EXPECT_EQ(loaded.conns[0].server_message_index, 3);
    EXPECT_EQ(loaded.conns[0].state, "s2");
    EXPECT_EQ(loaded.conns[1].server_message_index, 8);
    EXPECT_EQ(loaded.conns[1].client_message_index, 8);
    EXPECT_EQ(loaded.conns[2].client_message_index, 9);
    EXPECT_EQ(loaded.state, "tiny");
    EXPECT_EQ(loaded.schedules.size(), 1u);
  }
}

TEST(KvActorStoreTest, IndexesBeyondTheHeadsBudgetStayInTheirConnectionsKeys) {
  auto engine = std::make_shared<testing::MemoryEngineKv>();
  // As many 36-byte ids as the table takes, then some more.
  const std::size_t fits =
      runtime_records::kIndexTableBytes / runtime_records::index_entry_bytes(std::string(36, 'x'));
  auto id = [](std::size_t i) {
    std::string s = "conn-" + std::to_string(i);
    return s + std::string(36 - s.size(), '.');
  };
  {
    KvActorStore store(engine, kActor, 1, std::nullopt);
    ASSERT_TRUE(run(store.load()));
    for (std::size_t i = 0; i < fits + 20; i += 50) {
      storage::ActorWrite w;
      w.has_initialized = true;
      w.state = big_state(90 * 1024, 'a');  // inline: the largest head there is
      for (std::size_t j = i; j < std::min(fits + 20, i + 50); ++j) {
        w.conn_upserts.push_back(conn(id(j), 0));
      }
      ASSERT_TRUE(run(store.commit(std::move(w))));
    }
    EXPECT_LT(engine->actors[kActor][runtime_records::head_key(1)].size(), 128u * 1024);
    // One inside the table, one beyond it.
    engine->put_keys.clear();
    storage::ActorWrite w;
    w.conn_upserts = {conn(id(0), 5), conn(id(fits + 10), 6)};
    ASSERT_TRUE(run(store.commit(std::move(w))));
    EXPECT_EQ(engine->put_keys,
              (std::vector<std::string>{runtime_records::conn_key(1, id(fits + 10)),
                                        runtime_records::head_key(1)}));
    // A deleted connection leaves the table; its place goes to the next one that needs it.
    storage::ActorWrite gone;
    gone.conn_deletes = {id(1)};
    ASSERT_TRUE(run(store.commit(std::move(gone))));
    engine->put_keys.clear();
    storage::ActorWrite next;
    next.conn_upserts = {conn(id(fits + 11), 7)};
    ASSERT_TRUE(run(store.commit(std::move(next))));
    EXPECT_EQ(engine->put_keys, (std::vector<std::string>{runtime_records::head_key(1)}));
    run(store.close());
  }
  auto loaded = load_actor(engine, 2);
  ASSERT_EQ(loaded.conns.size(), fits + 19);
  std::map<std::string, storage::PersistedConn> by_id;
  for (auto& c : loaded.conns) {
    by_id[c.conn_id] = c;
  }
  EXPECT_EQ(by_id[id(0)].server_message_index, 5);
  EXPECT_EQ(by_id[id(fits + 10)].server_message_index, 6);
  EXPECT_EQ(by_id[id(fits + 11)].client_message_index, 7);
  EXPECT_EQ(by_id.count(id(1)), 0u);
}

TEST(KvActorStoreTest, AStateOfEightMebibytesSurvivesEveryKindOfHandOver) {
  auto engine = std::make_shared<testing::MemoryEngineKv>();
  const std::string chunks{runtime_records::kPrefix, runtime_records::kChunks};
  {
    KvActorStore store(engine, kActor, 1, std::nullopt);
    ASSERT_TRUE(run(store.load()));
    storage::ActorWrite w;
    w.has_initialized = true;
    w.state = big_state(8u << 20, 'a');
    ASSERT_TRUE(run(store.commit(std::move(w))));
    run(store.close());
  }
  EXPECT_EQ(keys_with_prefix(*engine, chunks), 69u);
  {
    // Sealed: taken over as is; then a new state in the other slot, and a crash (no close).
    KvActorStore store(engine, kActor, 2, std::nullopt);
    auto loaded = run(store.load());
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->state, big_state(8u << 20, 'a'));
    storage::ActorWrite w;
    w.state = big_state(8u << 20, 'b');
    ASSERT_TRUE(run(store.commit(std::move(w))));
    EXPECT_EQ(keys_with_prefix(*engine, chunks), 69u);  // the old slot is gone
  }
  {
    // Not sealed: copied into generation 3's epoch.
    KvActorStore store(engine, kActor, 3, std::nullopt);
    auto loaded = run(store.load());
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->state, big_state(8u << 20, 'b'));
    EXPECT_TRUE(loaded->has_initialized);
    storage::ActorWrite w;
    w.state = "small again";
    ASSERT_TRUE(run(store.commit(std::move(w))));
  }
  EXPECT_EQ(keys_with_prefix(*engine, chunks), 0u);
  EXPECT_EQ(load_actor(engine, 4).state, "small again");
}

TEST(KvActorStoreTest, ACleanStopHandsTheKeysOverInOnePut) {
  auto engine = std::make_shared<testing::MemoryEngineKv>();
  {
    KvActorStore store(engine, kActor, 1, std::nullopt);
    ASSERT_TRUE(run(store.load()));
    storage::ActorWrite w;
    w.state = "one";
    w.conn_upserts = {conn("c1", 1)};
    ASSERT_TRUE(run(store.commit(std::move(w))));
    run(store.close());
    storage::ActorWrite after;
    after.state = "too late";
    auto refused = run(store.commit(std::move(after)));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, "store_closed");
  }
  const int before = engine->mutating_requests;
  auto loaded = load_actor(engine, 2);
  EXPECT_EQ(loaded.state, "one");
  EXPECT_EQ(loaded.conns.size(), 1u);
  EXPECT_EQ(engine->mutating_requests - before, 1);
  EXPECT_EQ(engine->actors[kActor].count(runtime_records::head_key(1)), 1u);
  EXPECT_EQ(engine->actors[kActor].count(runtime_records::head_key(2)), 0u);
}

TEST(KvActorStoreTest, AfterAnUncleanStopAStaleGenerationCannotReachTheNewData) {
  auto engine = std::make_shared<testing::MemoryEngineKv>();
  KvActorStore stale(engine, kActor, 1, std::nullopt);
  ASSERT_TRUE(run(stale.load()));
  storage::ActorWrite w;
  w.state = "a";
  w.conn_upserts = {conn("c1", 1)};
  ASSERT_TRUE(run(stale.commit(std::move(w))));
  // Generation 2 starts while 1 still runs (its process lost the engine): 2 copies.
  KvActorStore next(engine, kActor, 2, std::nullopt);
  auto loaded = run(next.load());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state, "a");
  // Generation 1's late writes, even a seal, land where nobody reads.
  storage::ActorWrite late;
  late.state = "stale";
  late.conn_deletes = {"c1"};
  (void)run(stale.commit(std::move(late)));
  run(stale.close());
  storage::ActorWrite b;
  b.state = "b";
  ASSERT_TRUE(run(next.commit(std::move(b))));
  auto third = load_actor(engine, 3);
  EXPECT_EQ(third.state, "b");
  EXPECT_EQ(third.conns.size(), 1u);
  // And an instance of an older generation that only now loads does not start.
  KvActorStore older(engine, kActor, 2, std::nullopt);
  auto refused = run(older.load());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "stale_generation");
}

TEST(KvActorStoreTest, ARecordOfTheOldFormatMovesIntoKeysOnItsFirstLoad) {
  storage::PersistedActor old;
  old.has_initialized = true;
  old.state = big_state(200 * 1024, 'o');  // the record spans two chunks
  old.conns = {conn("c1", 4), conn("c2", 9)};
  old.schedules = {schedule("e1", 5), schedule("e2", 6)};
  const std::string record = encode_record(old);
  ASSERT_GT(record.size(), 120u * 1024);
  auto engine = std::make_shared<testing::MemoryEngineKv>();
  // The layout of earlier releases: 0x01 | generation | chunk, chunk 0 led by the count.
  auto legacy_key = [](std::uint32_t gen, std::uint16_t chunk) {
    std::string k{'\x01', static_cast<char>(gen >> 24), static_cast<char>(gen >> 16),
                  static_cast<char>(gen >> 8), static_cast<char>(gen)};
    k += static_cast<char>(chunk >> 8);
    k += static_cast<char>(chunk & 0xff);
    return k;
  };
  const std::size_t cut = 120 * 1024 - 2;
  engine->actors[kActor][legacy_key(3, 0)] = std::string("\x00\x02", 2) + record.substr(0, cut);
  engine->actors[kActor][legacy_key(3, 1)] = record.substr(cut);
  engine->actors[kActor]["\x04user"] = "kept";
  auto loaded = load_actor(engine, 4);
  EXPECT_EQ(as_record(loaded), record);
  EXPECT_EQ(keys_with_prefix(*engine, "\x01"), 0u);
  EXPECT_EQ(engine->actors[kActor]["\x04user"], "kept");
  EXPECT_EQ(as_record(load_actor(engine, 5)), record);
}

TEST(KvActorStoreTest, ACrashWhileALargeStateIsWrittenLeavesTheOldOrTheNewStateWhole) {
  auto base = std::make_shared<testing::MemoryEngineKv>();
  {
    KvActorStore store(base, kActor, 1, std::nullopt);
    ASSERT_TRUE(run(store.load()));
    storage::ActorWrite w;
    w.state = big_state(1 << 20, 'a');
    ASSERT_TRUE(run(store.commit(std::move(w))));
    run(store.close());
  }
  auto next = [] {
    storage::ActorWrite w;
    w.state = big_state(1 << 20, 'b');
    w.conn_upserts = {conn("c1", 1)};
    return w;
  };
  int total = 0;
  {
    auto engine = std::make_shared<testing::MemoryEngineKv>(*base);
    KvActorStore store(engine, kActor, 2, std::nullopt);
    ASSERT_TRUE(run(store.load()));
    const int before = engine->mutating_requests;
    ASSERT_TRUE(run(store.commit(next())));
    total = engine->mutating_requests - before;
  }
  ASSERT_GT(total, 2);  // chunk requests, the head's write, the old slot's delete
  for (const bool lose_answer : {false, true}) {
    bool switched = false;
    for (int cut = 0; cut < total; ++cut) {
      SCOPED_TRACE("crash at request " + std::to_string(cut) + (lose_answer ? " (applied)" : ""));
      auto engine = std::make_shared<testing::MemoryEngineKv>(*base);
      {
        KvActorStore store(engine, kActor, 2, std::nullopt);
        ASSERT_TRUE(run(store.load()));
        engine->crash_after = cut;
        engine->lose_crashing_answer = lose_answer;
        auto committed = run(store.commit(next()));
        // The last request deletes the old slot: the commit was durable before it.
        EXPECT_EQ(committed.has_value(), cut == total - 1);
      }
      engine->crashed = false;
      engine->crash_after.reset();
      auto seen = load_actor(engine, 3);
      if (seen.state == big_state(1 << 20, 'b')) {
        EXPECT_EQ(seen.conns.size(), 1u);
        switched = true;
      } else {
        EXPECT_EQ(seen.state, big_state(1 << 20, 'a'));
        EXPECT_TRUE(seen.conns.empty());
        EXPECT_FALSE(switched) << "an older state came back after the new one was durable";
      }
    }
  }
}

TEST(KvActorStoreTest, TwoThousandRandomCheckpointsLoadAsTheOldCodecAppliesThem) {
  std::mt19937 rng(20261207);
  auto pick = [&](int n) {
    return static_cast<int>(rng() % static_cast<unsigned>(n));
  };
  auto engine = std::make_shared<testing::MemoryEngineKv>();
  storage::PersistedActor model;
  std::uint32_t generation = 1;
  auto store = std::make_unique<KvActorStore>(engine, kActor, generation, std::nullopt);
  ASSERT_TRUE(run(store->load()));
  for (int i = 0; i < 2000; ++i) {
    storage::ActorWrite w;
    if (pick(3) == 0) {
      const int size_kind = pick(20);
      const std::size_t size = size_kind == 0   ? 300u * 1024 + static_cast<std::size_t>(pick(9999))
                               : size_kind == 1 ? 96u * 1024 + static_cast<std::size_t>(pick(3)) - 1
                                                : static_cast<std::size_t>(pick(200));
      w.state = big_state(size, static_cast<char>(i));
    }
    if (pick(10) == 0) {
      w.has_initialized = pick(4) != 0;
    }
    for (int n = pick(3); n > 0; --n) {
      auto c = conn("c" + std::to_string(pick(8)), static_cast<std::uint16_t>(pick(65536)));
      c.state = std::to_string(i);
      w.conn_upserts.push_back(std::move(c));
    }
    if (pick(4) == 0) {
      w.conn_deletes.push_back("c" + std::to_string(pick(8)));
    }
    for (int n = pick(2); n > 0; --n) {
      w.schedule_upserts.push_back(schedule("e" + std::to_string(pick(8)), pick(1000)));
    }
    if (pick(4) == 0) {
      w.schedule_deletes.push_back("e" + std::to_string(pick(8)));
    }
    apply_write(model, w);
    ASSERT_TRUE(run(store->commit(std::move(w)))) << "checkpoint " << i;
    if (pick(50) == 0) {
      // The next generation, after a clean stop or a crash.
      if (pick(2) == 0) {
        run(store->close());
      }
      store = std::make_unique<KvActorStore>(engine, kActor, ++generation, std::nullopt);
      auto loaded = run(store->load());
      ASSERT_TRUE(loaded);
      ASSERT_EQ(as_record(*loaded), as_record(model)) << "checkpoint " << i;
    }
  }
  EXPECT_EQ(as_record(load_actor(engine, generation + 1)), as_record(model));
  EXPECT_GT(generation, 20u);
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
