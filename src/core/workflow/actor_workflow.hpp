#pragma once
// ActorWorkflow: an actor's durable workflow (`ActorBuilder::workflow`, include/rivetkit/
// workflow.hpp; core-semantics.md §8) as a part of the instance: the engine behind the typed
// WorkflowContext.
//
// How it runs: the workflow is the actor's run handler. At each start it loads the history
// (workflow_history.hpp) and runs the user's function from the top; every operation it reaches
// looks up its location first. A completed step returns its recorded result without running, a
// loop resumes at its recorded iteration and state, a sleep keeps its recorded deadline. Unlike
// RivetKit, which re-runs the function after every sleep, the coroutine stays alive while the
// actor is awake: replay happens once per start.
//
// Durability: what an operation records (a step's result and metadata, a loop's next iteration,
// a sleep's deadline) is kept until the actor's next write takes it, with the state changes of
// the same turn, and the operation resumes only once that write is durable. So a step that does
// not suspend commits its state changes and its record atomically: after a crash it has either
// happened (and is replayed) or not (and runs again). A step that suspends may have its earlier
// changes written by another turn's write first; the exactly-once boundary (docs/workflows.md)
// is the step's last turn.
//
// Waiting: a sleep, or a step's retry backoff, parks the run handler (the actor may sleep
// meanwhile, unlike a running step) and sets the actor's wake alarm to the deadline (Host::
// set_wake), in the same write as the record, so a sleeping actor is woken on time in both
// modes. The stop's abort signal ends a wait with actor.aborted, which ends the run handler
// quietly; the next start resumes.
//
// Errors: a step that throws is retried with exponential backoff (RivetKit's base * 2^attempts,
// capped), each failure reported to on_error; past its retries the workflow fails (its record
// says so, on_error sees the workflow event, the run handler returns and the actor sleeps as
// usual). A history the code no longer matches (another kind of entry at a location, a name used
// twice in one block) fails the workflow with workflow.history_diverged, naming the entry.
//
// Single strand.

#include "core/workflow/workflow_history.hpp"
#include "storage/actor_store.hpp"
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace rivetkit::core {

class ActorWorkflow final : public detail::WorkflowApi {
 public:
  class Host {
   public:
    virtual ~Host() = default;
    /// Something changed that the next write must take.
    virtual void workflow_changed() = 0;
    /// Writes what changed (once no exactly-once queue handler holds writes back) and resumes
    /// once it is durable.
    virtual Task<Result<void>> workflow_save() = 0;
    /// Keeps the owner alive for the duration of a call.
    virtual std::shared_ptr<void> hold() = 0;
    virtual std::int64_t workflow_now_ms() const = 0;
    /// Waits up to `timeout`; true when the actor began to stop first.
    virtual Task<bool> workflow_wait(std::chrono::milliseconds timeout) = 0;
    /// The run handler parks (a sleep, a retry backoff): until the token goes it does not keep
    /// the actor awake.
    virtual std::shared_ptr<void> workflow_parked() = 0;
    /// The actor must be woken at `at_ms` (nullopt: no longer) even if it sleeps meanwhile;
    /// written with the next write.
    virtual void set_wake(std::optional<std::int64_t> at_ms) = 0;
    /// Writes RivetKit's guard flag into the actor's KV (a step context used after its step).
    virtual void write_guard_flag() = 0;
  };

  ActorWorkflow(std::string actor_id, storage::ActorStore& store, Host& host);
  ActorWorkflow(const ActorWorkflow&) = delete;
  ActorWorkflow& operator=(const ActorWorkflow&) = delete;

  /// Moves the changes not yet written into `write`.
  void take_changes(storage::ActorWrite& write);
  bool has_changes() const { return history_.has_changes(); }

  /// The history (loaded by run(); empty before).
  const workflow::WorkflowHistory& history() const { return history_; }
  bool loaded() const { return loaded_; }
  /// Whether the workflow's function is running now.
  bool running() const { return running_; }

  // ---- detail::WorkflowApi --------------------------------------------------------------------
  Task<void> run(std::function<Task<void>(detail::WorkflowScope)> body,
                 std::function<Task<void>(Value event)> on_error) override;
  Task<Value> step(detail::WorkflowScope scope,
                   detail::WorkflowStepConfig config,
                   std::function<Task<Value>()> body) override;
  Task<Value> loop(
      detail::WorkflowScope scope,
      std::string name,
      Value initial,
      std::function<Task<detail::WorkflowLoopTurn>(detail::WorkflowScope, Value)> body) override;
  Task<void> sleep(detail::WorkflowScope scope,
                   std::string name,
                   std::optional<std::int64_t> deadline_ms,
                   std::chrono::milliseconds relative) override;
  void guard_triggered() override { host_.write_guard_flag(); }

 private:
  /// Loads the history once.
  Task<Result<void>> load();
  /// The location of entry `name` under `scope`; throws workflow.history_diverged when this run
  /// reached it already (a name used twice in one block).
  std::string enter(const detail::WorkflowScope& scope, const std::string& name);
  /// The entry at `loc` when it is of `kind`; nullptr when there is none; throws
  /// workflow.history_diverged when there is one of another kind.
  workflow::Entry* existing(const std::string& loc,
                            workflow::EntryKind kind,
                            const std::string& name);
  workflow::Entry& create(const std::string& loc, workflow::EntryKind kind);
  /// Makes what changed durable (throws the write's error).
  Task<void> flush();
  /// Parks until `deadline_ms` (throws actor.aborted when the actor stops first).
  Task<void> park_until(std::int64_t deadline_ms);
  Task<void> report(Value event);
  void check_running() const;

  std::string actor_id_;  // for logs
  storage::ActorStore& store_;
  Host& host_;
  workflow::WorkflowHistory history_;
  bool loaded_ = false;
  bool running_ = false;
  /// Locations this run has reached (a second visit is a duplicate name).
  std::set<std::string> visited_;
  /// Deadlines of the waits parked now (the wake alarm is the earliest).
  std::multiset<std::int64_t> parked_;
  std::function<Task<void>(Value)> on_error_;
};

}  // namespace rivetkit::core
