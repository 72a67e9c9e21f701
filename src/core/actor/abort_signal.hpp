#pragma once
// AbortSignal: the listeners of an actor's abort signal (ActorApi::on_abort, the C++ side of
// RivetKit's `c.abortSignal`).
//
// The signal fires once, when the actor begins to stop (the grace period, lifecycle.hpp): every
// listener runs then, in the order added. A listener added after that runs at once, posted to the
// strand rather than inside the caller (as an AbortSignal that has already fired calls a new
// listener). What a listener throws is logged, never propagated: one failing listener does not
// keep the others, or the stop, from running. Waiting for the signal is the Lifecycle's
// (wait_aborted); this part holds the callbacks. Single strand.

#include <boost/asio/any_io_executor.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rivetkit::core {

class AbortSignal {
 public:
  AbortSignal(boost::asio::any_io_executor strand, std::string actor_id);
  AbortSignal(const AbortSignal&) = delete;
  AbortSignal& operator=(const AbortSignal&) = delete;

  /// Adds a listener. Once fired, it runs at once (posted), `hold` kept alive until it has run.
  void add(std::function<void()> listener, std::shared_ptr<void> hold);
  /// Adds a listener that belongs to `owner`: once the owner is gone it never runs, and it is
  /// dropped (so an actor that opens and drops many connections keeps no listener per one).
  void add_owned(std::weak_ptr<void> owner,
                 std::function<void()> listener,
                 std::shared_ptr<void> hold);
  /// Fires the signal: every listener runs now, once. Later calls do nothing.
  void fire();
  bool fired() const { return fired_; }

 private:
  struct Listener {
    std::function<void()> run;
    bool owned = false;
    std::weak_ptr<void> owner;  // owned: runs only while this lives
  };
  void run(const Listener& listener) const;

  boost::asio::any_io_executor strand_;
  std::string actor_id_;
  bool fired_ = false;
  std::vector<Listener> listeners_;
};

}  // namespace rivetkit::core
