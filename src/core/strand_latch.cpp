#include "core/strand_latch.hpp"

namespace rivetkit::core {

void StrandLatch::set() {
  set_ = true;
  changed_.notify_all();
}

Task<void> StrandLatch::wait() {
  while (!set_) {
    co_await changed_.wait();
  }
}

}  // namespace rivetkit::core
