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
// usual).
//
// Rollback (RivetKit's sagas): a workflow that fails is first recorded as rolling back (durable,
// so a crash resumes the rollback, never the workflow), then its function runs once more in
// rollback mode: every operation answers from the record and nothing is written; the first one
// that would have to run for real ends that pass. The completed steps it went through that have
// an undo handler (after a rollback checkpoint) are undone latest first, each marked done in
// the same write as the state changes its handler made. An undo that throws leaves the workflow
// rolling back (on_error sees the rollback event); the next start of the actor tries the rest. A
// history the code no longer matches (another kind of entry at a location, a name used twice in one
// block) fails the workflow with workflow.history_diverged, naming the entry.
//
// Single strand.

#include "core/notifier.hpp"
#include "core/workflow/workflow_history.hpp"
#include "storage/actor_store.hpp"
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
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
    /// The actor's queue (queue waits).
    virtual detail::QueueApi& workflow_queue() = 0;
    /// Completes queued message `id` (of queue `name`) without the receive's handle: a message
    /// a replay returned. Nothing happens when it is no longer queued.
    virtual Task<void> complete_queue_message(std::uint64_t id,
                                              std::string name,
                                              Value response) = 0;
  };

  ActorWorkflow(boost::asio::any_io_executor strand,
                std::string actor_id,
                storage::ActorStore& store,
                Host& host);
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
  /// Loads the history if it is not yet (the inspector may ask before the run handler did).
  Task<Result<void>> ensure_loaded() { return load(); }
  /// Deletes entry `entry_id` (a step) and everything recorded after it (from the innermost
  /// loop around it, whose iterations replay whole), or the whole history without an id, and
  /// makes the workflow pending again, so that its next run replays from there (RivetKit's
  /// replayWorkflowFromStep). The caller writes the change and restarts the run handler.
  /// actor.workflow_in_flight (409) while the workflow runs.
  Result<void> replay_from(const std::optional<std::string>& entry_id);

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
  Task<std::vector<detail::WorkflowMessage>> queue_next(detail::WorkflowScope scope,
                                                        std::string name,
                                                        detail::WorkflowQueueNext options) override;
  Task<void> complete_message(detail::WorkflowScope scope,
                              std::string name,
                              std::size_t index,
                              Value response) override;
  Task<Value> join(detail::WorkflowScope scope,
                   std::string name,
                   std::vector<detail::WorkflowBranch> branches) override;
  Task<Value> race(detail::WorkflowScope scope,
                   std::string name,
                   std::vector<detail::WorkflowBranch> branches) override;
  Task<void> removed(detail::WorkflowScope scope,
                     std::string name,
                     std::string original_kind) override;
  Task<std::uint32_t> get_version(detail::WorkflowScope scope,
                                  std::string name,
                                  std::int64_t latest) override;
  Task<void> rollback_checkpoint(detail::WorkflowScope scope, std::string name) override;
  detail::WorkflowScope block(const detail::WorkflowScope& scope,
                              const std::string& name) override {
    return detail::WorkflowScope{enter(scope, name), scope.branch};
  }
  bool cancelled(const detail::WorkflowScope& scope) const override;
  Task<void> wait_cancelled(detail::WorkflowScope scope) override;
  void guard_triggered() override { host_.write_guard_flag(); }

 private:
  /// Whether history under `scope_location` (other than `except`) was not reached in this run.
  bool unvisited_under(const std::string& scope_location, const std::string& except) const;
  /// The outcome of each branch of a join or race while they run.
  struct BranchRun {
    explicit BranchRun(std::size_t n) : outputs(n), errors(n), done(n, false) {}
    std::vector<Value> outputs;
    std::vector<std::exception_ptr> errors;
    std::vector<bool> done;
    std::size_t remaining = 0;
    std::optional<std::size_t> winner;
  };
  struct RaceBranch {
    std::uint64_t parent = 0;
    bool cancelled = false;
  };
  /// Runs `branches` concurrently in blocks under `loc`; for a race, the first to return wins
  /// and the others are cancelled. Resumes once every branch ended.
  Task<std::shared_ptr<BranchRun>> run_branches(const detail::WorkflowScope& scope,
                                                const std::string& loc,
                                                std::vector<detail::WorkflowBranch> branches,
                                                bool race);
  static Task<void> run_branch(ActorWorkflow* self,
                               std::shared_ptr<void> keep,
                               detail::WorkflowBranch branch,
                               detail::WorkflowScope scope,
                               std::shared_ptr<BranchRun> run,
                               std::size_t index,
                               bool race,
                               std::vector<std::uint64_t> siblings);
  /// Throws workflow.branch_cancelled when the block of `scope` was cancelled.
  void check_cancelled(const detail::WorkflowScope& scope) const;
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
  /// Parks until `deadline_ms` (throws actor.aborted when the actor stops first, and
  /// workflow.branch_cancelled when the block of `scope` is cancelled).
  Task<void> park_until(std::int64_t deadline_ms, const detail::WorkflowScope& scope);
  Task<void> report(Value event);
  void check_running() const;
  /// Whether a rollback checkpoint was reached in this run in the block of `scope` or around it.
  bool checkpoint_reached(const detail::WorkflowScope& scope) const;
  /// Ends the rollback pass (an operation that would have to run for real).
  [[noreturn]] void stop_rollback_pass() const;
  /// Rolls the failed workflow back: the rollback pass over `body`, then the undo handlers,
  /// latest first. False when one failed (the workflow stays rolling back).
  Task<bool> roll_back(std::function<Task<void>(detail::WorkflowScope)>& body);

  boost::asio::any_io_executor strand_;
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
  /// Race branches by id (a scope's `branch`), while their race runs.
  std::map<std::uint64_t, RaceBranch> race_branches_;
  std::uint64_t next_branch_ = 1;
  /// Fires when a branch ends or is cancelled.
  Notifier branch_changed_;
  /// The receive handles of completable messages this run took, by queue wait location.
  std::map<std::string, std::vector<std::shared_ptr<detail::QueueCompletion>>> completions_;
  /// The run is the rollback pass (operations answer from the record only).
  bool rolling_back_ = false;
  /// The blocks (locations) in which this run reached a rollback checkpoint.
  std::vector<std::string> checkpoints_;
  /// A completed step the rollback pass went through that has an undo handler.
  struct Undo {
    std::string location;
    std::string name;
    Value output;
    std::function<Task<void>(Value)> handler;
  };
  std::vector<Undo> undos_;
};

}  // namespace rivetkit::core
