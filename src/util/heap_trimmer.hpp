#pragma once
// Gives freed heap memory back to the operating system. glibc keeps freed chunks in its arenas
// and by itself returns only memory at the top of an arena, so after thousands of actors went to
// sleep (or many connections closed) the freed pages between the few long-lived allocations would
// stay resident: the process's RSS would stay at its high-water mark. See docs/memory.md.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>

namespace rivetkit::util {

/// malloc_trim(0): returns every whole free page of every arena to the OS (MADV_DONTNEED). Takes
/// each arena's lock in turn while it walks that arena's free chunks (a few milliseconds after a
/// burst of 10,000 actors), so call it after a burst, not per operation. Thread-safe.
void trim_heap() noexcept;

/// Bytes in use and free inside the malloc arenas. A trimmed chunk stays free in the arena's
/// accounting (its pages are just no longer resident).
struct HeapSample {
  std::size_t in_use = 0;
  std::size_t free = 0;
};

/// The heap as glibc accounts it (mallinfo2). Under a sanitizer that replaces malloc, glibc's
/// arenas do not see the program's allocations, so this hardly moves.
HeapSample sample_heap() noexcept;

/// Trims on its own thread (never on an I/O thread), in two cases:
///  - a burst of releases is over: `quiet` after the last released(), and at the latest
///    `max_delay` after the first released() of a burst that does not stop;
///  - frees nobody reported (e.g. closed connections): every `check_interval` it samples the
///    heap (mallinfo2) and trims once `min_growth` bytes were freed since the last trim and the
///    heap then held still for one interval (the frees are over: trimming in the middle of them
///    would leave the pages freed afterwards resident; and the bytes freed say little about how
///    many whole pages became free, so the threshold is low).
class HeapTrimmer {
 public:
  struct Options {
    std::chrono::milliseconds quiet{250};
    std::chrono::milliseconds max_delay{2000};
    std::chrono::milliseconds check_interval{500};  // 0: no periodic check
    std::size_t min_growth = 64u << 10;
    /// Where the periodic check reads the heap; empty: sample_heap(). Tests give it a scripted
    /// heap so that the decision does not depend on the allocator in use.
    std::function<HeapSample()> sample;
  };

  HeapTrimmer();
  explicit HeapTrimmer(Options options);
  ~HeapTrimmer();
  HeapTrimmer(const HeapTrimmer&) = delete;
  HeapTrimmer& operator=(const HeapTrimmer&) = delete;

  /// Notes that memory was released (e.g. an actor went to sleep). Cheap; thread-safe.
  void released();
  /// Trims done so far (tests, diagnostics).
  std::size_t trims() const;

 private:
  using Clock = std::chrono::steady_clock;
  void run();

  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool pending_ = false;
  Clock::time_point first_release_;
  Clock::time_point last_release_;
  std::size_t trims_ = 0;
  std::thread thread_;  // last: started once the fields above are initialized
};

}  // namespace rivetkit::util
