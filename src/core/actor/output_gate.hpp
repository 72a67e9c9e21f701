#pragma once
// OutputGate: the durability sequencing of one actor instance (workerd's output gate).
//
// Changes that must become durable (state, connections, schedules, user KV) are made in memory
// and marked (mark_changed). A checkpoint hands what changed to storage as one write, numbered
// with a sequence number; every output produced meanwhile (an action reply, an event, a socket
// close) carries the number of the latest write it depends on and is released only once that
// write is durable (durable() >= its number).
//
// The rules:
// - One write in flight at a time. Had a later write been sent before an earlier one failed, it
//   could make the failed change durable after its caller was told it failed. Changes made
//   while a write is under way get the next number (reserved) and go as one write when the one
//   under way completes: they coalesce.
// - A failed write breaks the gate for good: that write, the reserved one and every later
//   checkpoint fail, and nothing more is written (a later write would carry the failed change,
//   built on top of it in memory). The owner stops; its next generation loads the last durable
//   state (core-semantics.md, "storage failures").
// - Waiters resume in sequence order: a number is durable only once every lower one is.
// - Holds (hold_writes): while one lives, checkpoints reserve the next number and write nothing,
//   as behind a write in flight, so everything changed meanwhile goes as one write when the last
//   hold ends. A queue handler whose changes must commit with its message's completion holds
//   (actor_queue.hpp, QueueDelivery::exactly_once). Every hold has a deadline, and an explicit
//   save or the stop ends them all (end_holds): a hold delays writes, it never blocks them.
//
// The gate knows nothing of what a write contains: its Source (the actor instance) takes what
// changed and turns it into a storage operation. Single strand: every call on the owner's strand.

#include "core/notifier.hpp"
#include <rivetkit/error.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace rivetkit::core {

class OutputGate {
 public:
  /// One durable operation, as its source hands it over.
  struct Write {
    /// Makes the write durable (lazily started by the gate).
    Task<Result<void>> commit;
    /// Whether outputs depend on it. A write of bookkeeping only (a socket's message indexes)
    /// holds no output back.
    bool gating = true;
    /// Runs once the write is under way and the gate is locked (a checkpoint from here queues
    /// behind this write): the place for hooks that react to the change (on_state_change).
    std::function<void()> started;
    /// Keeps the gate's owner alive until the gate has handled the write's outcome.
    std::shared_ptr<void> hold;
  };

  /// The owner's side of the gate.
  class Source {
   public:
    virtual ~Source() = default;
    /// Whether anything may be written now (false while loading and once stopped or failed).
    virtual bool can_write() const = 0;
    /// Takes everything changed since the last take as one write; nullopt when nothing needs
    /// writing after all.
    virtual std::optional<Write> take_write() = 0;
    /// A write became durable (before waiters are told).
    virtual void write_durable() {}
    /// durable() or the failure moved on: release (or fail) the outputs that waited.
    virtual void outputs_progressed() = 0;
    /// Write `seq` failed; the gate is broken from now on.
    virtual void write_failed(std::uint64_t seq, const Error& error) = 0;
  };

  /// `gate_outputs` false (ActorOptions::durable_replies off): checkpoints return 0 and outputs
  /// leave at once; writes are still sequenced.
  OutputGate(boost::asio::any_io_executor strand, Source& source, bool gate_outputs);
  OutputGate(const OutputGate&) = delete;
  OutputGate& operator=(const OutputGate&) = delete;

  /// Something changed that the next checkpoint must write.
  void mark_changed() { changed_ = true; }
  /// Drops the mark (what changed is durable by other means, e.g. the creation commit).
  void forget_changes() { changed_ = false; }
  bool has_changes() const { return changed_; }

  /// Writes what changed, when it can. Returns the number outputs queued now must wait for
  /// (0: nothing to wait for).
  std::uint64_t checkpoint();
  /// Resumes once write `seq` (or a later one) is durable; an error once it failed.
  Task<Result<void>> wait(std::uint64_t seq);

  /// Holds writes back until the returned token goes or `until` passes, whichever comes first.
  /// `owner` is kept alive as long as the hold.
  std::shared_ptr<void> hold_writes(std::chrono::steady_clock::time_point until,
                                    std::shared_ptr<void> owner);
  /// Ends every hold now (an explicit save, the stop): what waited is written.
  void end_holds();
  /// Whether a hold keeps writes back now.
  bool held() const { return holds_ > 0; }

  /// The highest number that is durable (every lower one is too).
  std::uint64_t durable() const { return durable_; }
  /// The highest number handed out, reserved ones included: what waits for "everything so far".
  std::uint64_t latest() const { return std::max(requested_, reserved_); }
  /// The highest failed number, once final (no write in flight could still succeed); else 0.
  std::uint64_t failed() const { return failed_ > durable_ && !in_flight_ ? failed_ : 0; }
  /// A write failed: nothing more is written.
  bool broken() const { return broken_; }
  /// A write is under way.
  bool busy() const { return in_flight_; }
  /// Whether an output queued now would be held back: a write that outputs depend on is under
  /// way or queued (a bookkeeping write holds nothing back).
  bool holds_outputs() const { return gate_outputs_ && gated_ > durable_; }

  /// The error every failed wait returns.
  static Error save_failed_error();

 private:
  class Hold;
  Task<void> run(std::uint64_t seq, Write write);
  void release_hold(std::uint64_t epoch, std::shared_ptr<void> owner);
  /// Writes the changes that waited under a reserved number, once nothing is in flight or held;
  /// fails them when they cannot be written any more (the owner stopped).
  void write_reserved();
  void progressed();
  std::uint64_t outputs_wait_for(std::uint64_t seq) const { return gate_outputs_ ? seq : 0; }

  boost::asio::any_io_executor strand_;
  Source& source_;
  bool gate_outputs_;
  bool changed_ = false;
  bool broken_ = false;
  bool in_flight_ = false;
  std::uint64_t requested_ = 0;  // the last number given to a write (or failed change)
  std::uint64_t reserved_ = 0;   // the number the next write gets (0: none reserved)
  std::uint64_t gated_ = 0;      // the latest number outputs must wait for (<= latest())
  std::uint64_t durable_ = 0;
  std::uint64_t failed_ = 0;  // the highest failed number not superseded by a success
  std::size_t holds_ = 0;
  std::uint64_t hold_epoch_ = 0;  // end_holds() moves it on: older holds end as no-ops
  Notifier progress_;
};

}  // namespace rivetkit::core
