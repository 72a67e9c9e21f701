#pragma once
// SleepGates: what keeps an actor awake, and when an idle one goes to sleep
// (core-semantics.md §1.3).
//
// Each kind of work is a counted gate: entered when the work begins, left when it ends (a Work
// scope does both). Any change restarts the idle period, so an actor sleeps
// `sleep_timeout` after its last activity ends. `keeps_awake()` names the first kind that is
// open, which the instance's can_sleep answer turns into an AwakeReason: logged at debug when an
// actor stays awake, read by tests (and later by the inspector).
//
// wait_until work does not keep an actor awake (RivetKit), but a stop waits for it; the run
// handler keeps it awake and a sleep (not a destroy) waits for it, except while it waits in a
// queue receive (RivetKit: queue waits do not block idle sleep; the sleep's abort ends the wait).
//
// A freshly started actor may also wait for its first request (first_request_grace, engine
// mode): see ActorInstance::Spec. Single strand.

#include "core/notifier.hpp"
#include "util/clock.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

namespace rivetkit::core {

/// The kinds of work an instance counts.
enum class WorkKind : std::uint8_t {
  kAction,      // an action (client, connection or schedule), from arrival to reply
  kKeepAwake,   // c.keep_awake(task)
  kWaitUntil,   // c.wait_until(task): does not keep the actor awake, a stop waits for it
  kWsCallback,  // a raw WebSocket's open, message or close handler
  kDisconnect,  // an on_disconnect running
  kRun,         // the run handler
  kQueueWait,   // a queue receive of the run handler (or a hook) waiting for a message
};
inline constexpr std::size_t kWorkKinds = 7;

/// Why an actor does not go to sleep now.
enum class AwakeReason : std::uint8_t {
  kNotStarted,     // loading, stopping or stopped: the idle rule does not apply
  kStopRequested,  // it asked to be stopped already
  kNoSleep,        // ActorOptions::no_sleep
  kAction,
  kKeepAwake,
  kWsCallback,
  kDisconnect,
  kRunHandler,
  kConnection,  // a connection that cannot hibernate (incl. an HTTP request's)
  kInspector,   // an inspector WebSocket is attached
};

std::string_view to_string(AwakeReason reason);

class SleepGates {
 public:
  SleepGates(boost::asio::any_io_executor strand,
             const util::Clock& clock,
             std::chrono::milliseconds sleep_timeout,
             std::chrono::milliseconds first_request_grace);
  SleepGates(const SleepGates&) = delete;
  SleepGates& operator=(const SleepGates&) = delete;

  /// One unit of counted work, from construction to destruction. A client's work (an action, a
  /// socket callback, a disconnect) also counts as a request. `owner` keeps these gates' owner
  /// alive while the work is counted.
  class Work {
   public:
    Work(SleepGates& gates, WorkKind kind, std::shared_ptr<void> owner);
    Work(Work&& other) noexcept;
    Work(const Work&) = delete;
    Work& operator=(const Work&) = delete;
    Work& operator=(Work&&) = delete;
    ~Work();

   private:
    SleepGates* gates_;
    WorkKind kind_;
    std::shared_ptr<void> owner_;
  };
  Work track(WorkKind kind, std::shared_ptr<void> owner) {
    return Work(*this, kind, std::move(owner));
  }

  void enter(WorkKind kind);
  void leave(WorkKind kind);
  std::size_t count(WorkKind kind) const { return counts_[static_cast<std::size_t>(kind)]; }

  /// Something happened: the idle period starts again, and waiters re-check.
  void touch();
  /// The instance started: the idle period (and the first-request grace) begins now.
  void started();
  /// A request (action, connection, socket message) reached the actor.
  void note_request() { first_request_seen_ = true; }

  /// The first open gate that keeps the actor awake; nullopt when none is.
  std::optional<AwakeReason> keeps_awake() const;
  /// Whether the work a stop waits for is done: actions, keep_awake, socket callbacks and
  /// disconnects; with `include_wait_until` wait_until tasks, with `include_run` the run handler.
  bool drained(bool include_wait_until, bool include_run) const;
  /// When an actor that nothing keeps awake goes to sleep: sleep_timeout after its last
  /// activity, and not before the first-request grace while no request has come.
  util::SteadyTime sleep_deadline() const;
  std::chrono::milliseconds sleep_timeout() const { return sleep_timeout_; }

  /// Fires on every change (the idle watch and a stop's drain wait on it).
  Notifier& changed() { return changed_; }

 private:
  const util::Clock& clock_;
  std::chrono::milliseconds sleep_timeout_;
  std::chrono::milliseconds first_request_grace_;
  std::array<std::size_t, kWorkKinds> counts_{};
  util::SteadyTime idle_since_{};
  util::SteadyTime started_at_{};
  bool first_request_seen_ = false;
  Notifier changed_;
};

}  // namespace rivetkit::core
