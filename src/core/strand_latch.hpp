#pragma once
// StrandLatch: detail::Latch on one strand, the one-shot flag behind the results of keep_awake and
// wait_until tasks (c.keep_awake returns something the caller may wait for). Set once, waited on
// by any number of coroutines on the same strand; no locking.

#include "core/notifier.hpp"
#include <rivetkit/detail/runtime_api.hpp>

#include <boost/asio/any_io_executor.hpp>

namespace rivetkit::core {

class StrandLatch final : public detail::Latch {
 public:
  explicit StrandLatch(boost::asio::any_io_executor strand) : changed_(std::move(strand)) {}

  void set() override;
  bool is_set() const override { return set_; }
  Task<void> wait() override;

 private:
  bool set_ = false;
  Notifier changed_;
};

}  // namespace rivetkit::core
