#include "util/heap_trimmer.hpp"

#include "util/log.hpp"

#include <malloc.h>

#include <algorithm>

namespace rivetkit::util {

void trim_heap() noexcept {
  malloc_trim(0);
}

HeapSample sample_heap() noexcept {
  struct mallinfo2 mi = mallinfo2();
  return HeapSample{mi.uordblks, mi.fordblks};
}

namespace {

std::size_t distance(std::size_t a, std::size_t b) {
  return a > b ? a - b : b - a;
}

}  // namespace

HeapTrimmer::HeapTrimmer() : HeapTrimmer(Options{}) {}

HeapTrimmer::HeapTrimmer(Options options) : options_(options), thread_([this] { run(); }) {}

HeapTrimmer::~HeapTrimmer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void HeapTrimmer::released() {
  const auto now = Clock::now();
  std::lock_guard lock(mutex_);
  last_release_ = now;
  if (!pending_) {
    pending_ = true;
    first_release_ = now;
    cv_.notify_all();
  }
}

std::size_t HeapTrimmer::trims() const {
  std::lock_guard lock(mutex_);
  return trims_;
}

void HeapTrimmer::run() {
  const bool periodic = options_.check_interval.count() > 0;
  const auto sample = [this] {
    return options_.sample ? options_.sample() : sample_heap();
  };
  // Since the last trim: the most bytes in use and the fewest bytes free seen. Memory freed since
  // shows as in-use bytes below that peak or as free bytes above that low (either can hide:
  // freeing the top of an arena shrinks it, so its free bytes drop while pages elsewhere became
  // free). `previous` is the last sample.
  HeapSample previous = periodic ? sample() : HeapSample{};
  HeapSample extreme = previous;  // in_use: peak, free: low
  auto next_check = Clock::now() + options_.check_interval;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    auto wake = Clock::time_point::max();
    if (pending_) {
      wake = std::min(last_release_ + options_.quiet, first_release_ + options_.max_delay);
    }
    if (periodic) {
      wake = std::min(wake, next_check);
    }
    if (wake == Clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, wake);
    }
    if (stopping_) {
      break;
    }
    const auto now = Clock::now();
    bool trim = false;
    if (pending_
        && (now >= last_release_ + options_.quiet || now >= first_release_ + options_.max_delay)) {
      pending_ = false;
      trim = true;
    }
    const bool check = periodic && now >= next_check;
    if (check) {
      next_check = now + options_.check_interval;
    }
    if (!trim && !check) {
      continue;
    }
    lock.unlock();
    if (check && !trim) {
      const HeapSample s = sample();
      extreme.in_use = std::max(extreme.in_use, s.in_use);
      extreme.free = std::min(extreme.free, s.free);
      const bool freed = extreme.in_use >= s.in_use + options_.min_growth
                         || s.free >= extreme.free + options_.min_growth;
      const bool settled = distance(s.in_use, previous.in_use) < options_.min_growth
                           && distance(s.free, previous.free) < options_.min_growth;
      trim = freed && settled;
      previous = s;
    }
    if (trim) {
      const auto started = Clock::now();
      trim_heap();
      if (periodic) {
        previous = extreme = sample();
      }
      log::debug(
          "heap trimmed in {} us",
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count());
    }
    lock.lock();
    if (trim) {
      ++trims_;
    }
  }
}

}  // namespace rivetkit::util
