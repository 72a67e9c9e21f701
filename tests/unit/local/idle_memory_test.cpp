// What a sleeping actor leaves behind in local mode: the directory cache forgets it, and the heap
// trimmer gives freed memory back after a burst of sleeps or of unreported frees
// (docs/memory.md).

#include "local/directory_cache.hpp"
#include "util/heap_trimmer.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rivetkit {
namespace {

using namespace std::chrono_literals;

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

storage::ActorRecord record(int i) {
  storage::ActorRecord r;
  r.actor_id = "id-" + std::to_string(i);
  r.name = "sleepy";
  r.key = "key-" + std::to_string(i);
  return r;
}

TEST(DirectoryCache, ForgetsErasedActorsAndStaysUsable) {
  local::DirectoryCache cache;
  for (int i = 0; i < 5000; ++i) {
    cache.put(record(i));
  }
  ASSERT_TRUE(cache.by_key("sleepy", "key-42"));
  for (int i = 0; i < 5000; ++i) {
    cache.erase("id-" + std::to_string(i));  // shrinks its tables on the way
  }
  EXPECT_FALSE(cache.by_id("id-42"));
  EXPECT_FALSE(cache.by_key("sleepy", "key-42"));
  cache.put(record(7));
  ASSERT_TRUE(cache.by_key("sleepy", "key-7"));
  EXPECT_EQ(cache.by_key("sleepy", "key-7")->actor_id, "id-7");
}

TEST(DirectoryCache, ADestroyedActorIsNeverCachedAgain) {
  // A lookup that read the record before the destroy reached the store puts it back late: the
  // key must not keep naming the dead actor (seen as getOrCreate returning a destroyed id).
  local::DirectoryCache cache;
  cache.put(record(1));
  cache.erase_destroyed("id-1");
  cache.put(record(1));
  EXPECT_FALSE(cache.by_id("id-1"));
  EXPECT_FALSE(cache.by_key("sleepy", "key-1"));
  // The key's next actor is cached as usual.
  auto next = record(2);
  next.key = "key-1";
  cache.put(next);
  ASSERT_TRUE(cache.by_key("sleepy", "key-1"));
  EXPECT_EQ(cache.by_key("sleepy", "key-1")->actor_id, "id-2");
}

TEST(HeapTrimmer, TrimsOnceWhenABurstOfReleasesIsOver) {
  util::HeapTrimmer::Options options;
  options.quiet = 50ms;
  options.max_delay = 10s;
  options.check_interval = 0ms;  // releases only
  util::HeapTrimmer trimmer(options);
  for (int i = 0; i < 20; ++i) {
    trimmer.released();
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(wait_until([&] { return trimmer.trims() == 1; }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(trimmer.trims(), 1u);
}

TEST(HeapTrimmer, BurstThatDoesNotStopIsTrimmedAfterMaxDelay) {
  util::HeapTrimmer::Options options;
  options.quiet = 1s;
  options.max_delay = 100ms;
  options.check_interval = 0ms;
  util::HeapTrimmer trimmer(options);
  const auto until = std::chrono::steady_clock::now() + 500ms;
  while (std::chrono::steady_clock::now() < until) {
    trimmer.released();
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_GE(trimmer.trims(), 2u);
}

// True when a sanitizer replaced malloc: glibc's mallinfo2 then does not see the program's
// allocations, so a test about the real heap has no premise.
constexpr bool kMallocReplaced =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) \
    || __has_feature(memory_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

/// A heap the test scripts, for the periodic check's decision (independent of the allocator).
struct ScriptedHeap {
  std::mutex mutex;
  util::HeapSample now{10u << 20, 0};
  int samples = 0;

  util::HeapSample read() {
    std::lock_guard lock(mutex);
    ++samples;
    return now;
  }
  void free_bytes(std::size_t n) {
    std::lock_guard lock(mutex);
    now.in_use -= n;
    now.free += n;
  }
  int sample_count() {
    std::lock_guard lock(mutex);
    return samples;
  }
};

TEST(HeapTrimmer, PeriodicCheckTrimsOnceFreesSettleAndNotOtherwise) {
  ScriptedHeap heap;
  util::HeapTrimmer::Options options;
  options.check_interval = 10ms;
  options.min_growth = 64u << 10;
  options.sample = [&heap] {
    return heap.read();
  };
  util::HeapTrimmer trimmer(options);

  // A heap that does not move is never trimmed.
  ASSERT_TRUE(wait_until([&] { return heap.sample_count() >= 10; }));
  EXPECT_EQ(trimmer.trims(), 0u);

  // Frees below the threshold are not worth a trim.
  heap.free_bytes(16u << 10);
  const int seen = heap.sample_count();
  ASSERT_TRUE(wait_until([&] { return heap.sample_count() >= seen + 5; }));
  EXPECT_EQ(trimmer.trims(), 0u);

  // A megabyte freed, then the heap holds still: one trim.
  heap.free_bytes(1u << 20);
  EXPECT_TRUE(wait_until([&] { return trimmer.trims() == 1; }));
  const int after = heap.sample_count();
  ASSERT_TRUE(wait_until([&] { return heap.sample_count() >= after + 10; }));
  EXPECT_EQ(trimmer.trims(), 1u) << "nothing was freed since the trim";
}

TEST(HeapTrimmer, TrimsAfterUnreportedFreesOnceTheyStop) {
  if (kMallocReplaced) {
    GTEST_SKIP() << "a sanitizer replaced malloc: mallinfo2 does not see these frees "
                    "(PeriodicCheckTrimsOnceFreesSettleAndNotOtherwise covers the decision)";
  }
  util::HeapTrimmer::Options options;
  options.check_interval = 20ms;
  util::HeapTrimmer trimmer(options);
  // Free every other one of many small blocks: the freed half cannot merge into the top of the
  // heap, so it stays free inside the arena until a trim.
  std::vector<std::unique_ptr<char[]>> blocks(8192);
  for (auto& b : blocks) {
    b = std::make_unique<char[]>(2000);
    b[0] = 1;
  }
  std::this_thread::sleep_for(100ms);
  const std::size_t before = trimmer.trims();
  for (std::size_t i = 0; i < blocks.size(); i += 2) {
    blocks[i].reset();
  }
  EXPECT_TRUE(wait_until([&] { return trimmer.trims() > before; }));
}

}  // namespace
}  // namespace rivetkit
