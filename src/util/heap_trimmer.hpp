#pragma once
// Gives freed heap memory back to the operating system after many objects were released (e.g.
// thousands of actors going to sleep). glibc keeps freed chunks in its arenas, so without this the
// process's resident memory would stay at its high-water mark although the actors are gone.
// Trims at most a few times a second, shortly after the last release of a burst.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <memory>

namespace rivetkit::util {

class HeapTrimmer {
 public:
  explicit HeapTrimmer(boost::asio::any_io_executor ex);
  /// Notes one release; schedules a trim if none is pending. Thread-safe.
  void released();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace rivetkit::util
