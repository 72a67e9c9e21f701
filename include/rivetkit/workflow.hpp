#pragma once
/// Durable workflows (RivetKit's `run: workflow(...)`): an actor's run handler written as steps
/// whose results are recorded, so that after a crash, a sleep or a move to another process the
/// workflow resumes where it was instead of starting over.
///
///     .workflow([](rivetkit::WorkflowContext<Types>& wf) -> rivetkit::Task<void> {
///       co_await wf.loop("tick", [](auto& lc) -> rivetkit::Task<rivetkit::Loop> {
///         co_await lc.step("count", [](auto& c) { c.state().ticks += 1; });
///         co_await lc.sleep("idle", std::chrono::seconds(10));
///         co_return rivetkit::Loop::next();
///       });
///     })
///
/// The rules (the same as RivetKit's):
/// - The function runs from the top at every start of the actor and must reach the same
///   operations in the same order: each is identified by its name within its block (the
///   workflow, a loop iteration). A completed step is not run again: its recorded result is
///   returned. Code between operations runs again, so it must not have effects of its own.
/// - Effects belong in steps. Inside a step the StepContext gives the state, vars, KV, database,
///   queue sends, broadcasts and the client; outside, the WorkflowContext gives none of them, and
///   a step's context used after its step has ended throws ("state is only available inside
///   workflow steps").
/// - A step's result is recorded as a Value (convert.hpp), so it must convert both ways.
/// - A step that throws is retried (StepOptions); past its retries the workflow fails: it is
///   recorded as failed, the on_error hook sees it, and it does not run again.
/// - sleep() is durable: the actor may sleep meanwhile and is woken at the deadline.
/// docs/workflows.md has the details (what is exactly once, what is not).

#include <rivetkit/actor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace rivetkit {

/// How a step is retried (RivetKit's step config).
/// The kinds of workflow entries (WorkflowContext::removed names what a removed entry was).
enum class WorkflowEntryKind { kStep, kLoop, kSleep, kMessage, kJoin, kRace, kRollbackCheckpoint };

namespace detail {
constexpr std::string_view workflow_kind_name(WorkflowEntryKind kind) {
  switch (kind) {
    case WorkflowEntryKind::kStep:
      return "step";
    case WorkflowEntryKind::kLoop:
      return "loop";
    case WorkflowEntryKind::kSleep:
      return "sleep";
    case WorkflowEntryKind::kMessage:
      return "message";
    case WorkflowEntryKind::kJoin:
      return "join";
    case WorkflowEntryKind::kRace:
      return "race";
    case WorkflowEntryKind::kRollbackCheckpoint:
      return "rollback_checkpoint";
  }
  return "step";
}
}  // namespace detail

struct StepOptions {
  /// Retries after the first attempt (RivetKit's default 3).
  std::uint32_t max_retries = 3;
  /// The delay before retry n is base * 2^n, at most max.
  std::chrono::milliseconds retry_backoff_base{100};
  std::chrono::milliseconds retry_backoff_max{30'000};
  /// An attempt still running after `timeout` (RivetKit's default 30 s; 0: no limit) fails with
  /// workflow.step_timeout: the step's coroutine is cancelled at its next cancellable wait (a
  /// timer, a sleep; code that does not suspend cannot be interrupted). A timeout is not retried
  /// unless `retry_on_timeout`.
  std::chrono::milliseconds timeout{30'000};
  bool retry_on_timeout = false;
  /// RivetKit's ephemeral step: its record (and the state changes of its last turn) is written
  /// with the workflow's next write instead of before the step returns, so a run of small steps
  /// costs one write. A crash before that write runs the step again.
  bool ephemeral = false;
};

/// What a step throws to fail the workflow at once, without retries, and roll it back
/// (RivetKit's RollbackError): `throw rivetkit::workflow_rollback("out of stock");`.
inline ActorError workflow_rollback(std::string message) {
  return ActorError(Error{"workflow", "rollback", std::move(message), std::nullopt, true});
}

/// What one iteration of a loop returns: `next(state)` goes on (with the loop's new state),
/// `done(result)` ends the loop with its result (RivetKit's Loop.continue / Loop.break).
template <class R = Empty, class S = Empty>
struct LoopResult {
  using result_type = R;
  using state_type = S;
  bool finished = false;
  S state{};
  R result{};
  static LoopResult next(S state = S{}) { return LoopResult{false, std::move(state), R{}}; }
  static LoopResult done(R result = R{}) { return LoopResult{true, S{}, std::move(result)}; }
};
/// A loop without result or state: `co_return rivetkit::Loop::next();`.
using Loop = LoopResult<>;

/// What a workflow's queue wait takes (RivetKit's `queue.next(name, {names, completable,
/// timeout})`).
struct QueueNextOptions {
  /// Queue names to take from; empty: any.
  std::vector<std::string> names;
  /// Leave the message queued until complete(): a sender waiting for it gets the response.
  bool completable = false;
  /// How long to wait (counted from the first time the wait is reached, across restarts); none:
  /// until a message comes.
  std::optional<std::chrono::milliseconds> timeout;
};

/// A failure as a workflow records it: RivetKit's `{name, message}`.
struct WorkflowErrorInfo {
  std::string name;
  std::string message;
};

/// Why a try_step failed (RivetKit's TryStepFailure).
struct TryStepFailure {
  /// "exhausted": it failed past its retries; "timeout": its last attempt ran past its timeout.
  std::string kind;
  std::string step_name;
  std::uint32_t attempts = 0;
  WorkflowErrorInfo error;
};

/// What try_step returns: the step's result, or why it failed.
template <class T>
struct TryStepResult {
  bool ok = false;
  T value{};
  TryStepFailure failure;
};

/// Why a try_block failed (RivetKit's TryBlockFailure): `source` is "step", "join" or "race";
/// `name` the step's, join's or race's name.
struct TryBlockFailure {
  std::string source;
  std::string name;
  WorkflowErrorInfo error;
  /// For source "step".
  std::optional<TryStepFailure> step;
};

template <class T>
struct TryBlockResult {
  bool ok = false;
  T value{};
  TryBlockFailure failure;
};

template <class Types>
class WorkflowContext;

/// One branch of a join or race: `run(WorkflowContext&) -> Task<R>`, in a block of its own.
template <class Types, class R = Value>
struct Branch {
  std::string name;
  std::function<Task<R>(WorkflowContext<Types>&)> run;
};

/// What a race returns: the branch that finished first and its result.
template <class R>
struct RaceResult {
  std::string winner;
  R value{};
};

/// A message a workflow's queue wait took. Its body, and complete() for a completable wait
/// (usable in the workflow or in a step; on replay a message completed before completes no
/// more).
template <class T = Value>
class WorkflowMessage {
 public:
  std::uint64_t id = 0;
  std::string name;
  T body{};
  std::int64_t created_at = 0;

  /// Completes the message: the queue drops it and a sender waiting for it gets `response`.
  template <class R = Value>
  Task<void> complete(const R& response = R{}) const {
    return api_->workflow().complete_message(scope_, wait_, index_, to_value(response));
  }

 private:
  template <class>
  friend class WorkflowContext;
  detail::ActorApi* api_ = nullptr;
  detail::WorkflowScope scope_;
  std::string wait_;
  std::size_t index_ = 0;
};

namespace detail {
template <class T>
using VoidAsEmpty = std::conditional_t<std::is_void_v<T>, Empty, T>;

/// The failure an exhausted step's error carries (its metadata: step, attempts, error).
inline TryStepFailure step_failure_of(const Error& e) {
  TryStepFailure f;
  f.kind = "exhausted";
  if (e.metadata) {
    if (const auto* kind = e.metadata->find("kind"); kind != nullptr && kind->is_string()) {
      f.kind = kind->as_string();
    }
    if (const auto* step = e.metadata->find("step"); step != nullptr && step->is_string()) {
      f.step_name = step->as_string();
    }
    if (const auto* n = e.metadata->find("attempts"); n != nullptr && n->is_int()) {
      f.attempts = static_cast<std::uint32_t>(n->as_int());
    }
    if (const auto* err = e.metadata->find("error"); err != nullptr && err->is_string()) {
      // Stored as "Name: message" (RivetKit's String(error)).
      const auto& text = err->as_string();
      const auto colon = text.find(": ");
      f.error = colon == std::string::npos
                    ? WorkflowErrorInfo{"Error", text}
                    : WorkflowErrorInfo{text.substr(0, colon), text.substr(colon + 2)};
    }
  }
  return f;
}
}  // namespace detail

/// A step's view of the actor: the handler Context, valid until the step ends. Every accessor
/// that reaches the actor's data or effects throws once the step has ended (RivetKit's guard).
template <class Types>
class StepContext : public Context<Types> {
 public:
  using Base = Context<Types>;
  using State = typename Types::StateType;
  using Vars = typename Types::VarsType;

  State& state() {
    check("state");
    return Base::state();
  }
  const State& state() const {
    check("state");
    return Base::state();
  }
  const State& read_state() const {
    check("state");
    return Base::read_state();
  }
  Vars& vars() {
    check("vars");
    return Base::vars();
  }
  Kv kv() const {
    check("kv");
    return Base::kv();
  }
  Database db() const {
    check("db");
    return Base::db();
  }
  Queue queue() const {
    check("queue");
    return Base::queue();
  }
  Client client() const {
    check("client");
    return Base::client();
  }
  Schedule schedule() const {
    check("schedule");
    return Base::schedule();
  }
  template <class... A>
  void broadcast(std::string name, const A&... args) const {
    check("broadcast");
    Base::broadcast(std::move(name), args...);
  }
  void destroy() const {
    check("destroy");
    Base::destroy();
  }
  /// Whether the step this context belongs to is still running.
  bool active() const { return *active_; }

 private:
  friend struct detail::Access;
  StepContext(detail::ActorApi* api, std::shared_ptr<bool> active)
      : Base(detail::Access::make<Base>(api, static_cast<detail::ConnApi*>(nullptr))),
        active_(std::move(active)) {}
  void check(const char* what) const {
    if (!*active_) {
      detail::Access::api(static_cast<const Base&>(*this))->workflow().guard_triggered();
      throw ActorError(Error{"workflow", "step_context_ended",
                             std::string(what) + " is only available inside workflow steps",
                             std::nullopt, true});
    }
  }
  std::shared_ptr<bool> active_;
};

/// The workflow function's view: what it may do between steps. A cheap handle, valid while the
/// workflow runs.
template <class Types>
class WorkflowContext {
 public:
  const std::string& actor_id() const { return api_->actor_id(); }
  const std::string& name() const { return api_->name(); }
  const std::vector<std::string>& key() const { return api_->key(); }
  ActorLog log() const { return detail::Access::make<ActorLog>(api_); }
  /// True once the actor is stopping, or (in a race branch) once another branch won.
  bool aborted() const { return api_->aborted() || api_->workflow().cancelled(scope_); }
  /// Resumes once aborted() is true (a race branch that lost; throws actor.aborted when the
  /// actor stops).
  Task<void> wait_aborted() const { return api_->workflow().wait_cancelled(scope_); }
  AbortSignal abort_signal() const { return detail::Access::make<AbortSignal>(api_); }

  /// Runs step `name`: `f(StepContext&) -> R` or `Task<R>`, once; its result is recorded (R must
  /// convert to and from a Value) and returned again on replay.
  template <class F>
  auto step(std::string name, F f, StepOptions options = {}) const
      -> Task<typename detail::Awaited<std::invoke_result_t<F&, StepContext<Types>&>>::type> {
    using R = typename detail::Awaited<std::invoke_result_t<F&, StepContext<Types>&>>::type;
    auto* api = api_;
    std::function<Task<Value>()> body = [api, f]() {
      return run_step<R>(api, f);
    };
    auto op = api_->workflow().step(scope_, config_of(std::move(name), options), std::move(body));
    Value recorded = co_await std::move(op);
    if constexpr (!std::is_void_v<R>) {
      co_return from_value<R>(recorded);
    }
  }

  /// Runs step `name` like step(), with `undo(StepContext&, const R& result) -> void or
  /// Task<void>` (`undo(StepContext&)` for a step without result) to compensate it: when the
  /// workflow fails later (a step past its retries, workflow_rollback(), any error of the
  /// workflow's own code), the undo handlers of the steps that completed run, latest first,
  /// each once (RivetKit's rollback). A rollback_checkpoint must come before the step, in its
  /// block or around it (workflow.rollback_checkpoint_missing otherwise).
  template <class F, class U>
  auto step_with_rollback(std::string name, F f, U undo, StepOptions options = {}) const
      -> Task<typename detail::Awaited<std::invoke_result_t<F&, StepContext<Types>&>>::type> {
    using R = typename detail::Awaited<std::invoke_result_t<F&, StepContext<Types>&>>::type;
    auto* api = api_;
    std::function<Task<Value>()> body = [api, f]() {
      return run_step<R>(api, f);
    };
    auto config = config_of(std::move(name), options);
    config.rollback = [api, undo](Value output) {
      return run_undo<R>(api, undo, std::move(output));
    };
    auto op = api_->workflow().step(scope_, std::move(config), std::move(body));
    Value recorded = co_await std::move(op);
    if constexpr (!std::is_void_v<R>) {
      co_return from_value<R>(recorded);
    }
  }

  /// Rollback checkpoint `name` (RivetKit's rollbackCheckpoint): steps with an undo handler
  /// (step_with_rollback) may follow it in this block and the blocks inside it.
  Task<void> rollback_checkpoint(std::string name) const {
    return api_->workflow().rollback_checkpoint(scope_, std::move(name));
  }

  /// Runs loop `name`: `f(WorkflowContext&) -> Task<LoopResult<R>>` once per iteration until it
  /// returns done(result); returns the result. Each iteration is recorded as it ends, so a
  /// restart resumes at the iteration that was running.
  template <class F>
  auto loop(std::string name, F f) const -> Task<
      typename detail::Awaited<std::invoke_result_t<F&, WorkflowContext&>>::type::result_type> {
    using LR = typename detail::Awaited<std::invoke_result_t<F&, WorkflowContext&>>::type;
    auto* api = api_;
    std::function<Task<detail::WorkflowLoopTurn>(detail::WorkflowScope, Value)> body =
        [api, f](detail::WorkflowScope scope, Value) {
          return run_turn<LR>(api, f, std::move(scope));
        };
    auto op = api_->workflow().loop(scope_, std::move(name), Value{}, std::move(body));
    Value recorded = co_await std::move(op);
    co_return result_of<typename LR::result_type>(recorded);
  }

  /// A loop with state: `f(WorkflowContext&, S& state) -> Task<LoopResult<R, S>>`, starting from
  /// `initial`; next(state) carries the state to the next iteration (recorded with it).
  template <class S, class F>
  auto loop(std::string name, S initial, F f) const -> Task<
      typename detail::Awaited<std::invoke_result_t<F&, WorkflowContext&, S&>>::type::result_type> {
    using LR = typename detail::Awaited<std::invoke_result_t<F&, WorkflowContext&, S&>>::type;
    auto* api = api_;
    std::function<Task<detail::WorkflowLoopTurn>(detail::WorkflowScope, Value)> body =
        [api, f](detail::WorkflowScope scope, Value state) {
          return run_stateful_turn<LR, S>(api, f, std::move(scope), std::move(state));
        };
    auto op = api_->workflow().loop(scope_, std::move(name), to_value(initial), std::move(body));
    Value recorded = co_await std::move(op);
    co_return result_of<typename LR::result_type>(recorded);
  }

  /// Runs step `name` like step(), but a failure past its retries is returned instead of failing
  /// the workflow (RivetKit's tryStep): `{ok, value}` or `{ok: false, failure}`.
  template <class F>
  auto try_step(std::string name, F f, StepOptions options = {}) const
      -> Task<TryStepResult<detail::VoidAsEmpty<
          typename detail::Awaited<std::invoke_result_t<F&, StepContext<Types>&>>::type>>> {
    using R = typename detail::Awaited<std::invoke_result_t<F&, StepContext<Types>&>>::type;
    TryStepResult<detail::VoidAsEmpty<R>> out;
    try {
      auto op = step(std::move(name), std::move(f), options);
      if constexpr (std::is_void_v<R>) {
        co_await std::move(op);
      } else {
        out.value = co_await std::move(op);
      }
      out.ok = true;
    } catch (const ActorError& e) {
      if (e.error().group != "workflow" || e.error().code != "step_exhausted") {
        throw;
      }
      out.failure = detail::step_failure_of(e.error());
    }
    co_return out;
  }

  /// Runs `f(WorkflowContext&) -> Task<R>` as block `name`; a step, join or race inside it that
  /// fails for good is returned as the failure instead of failing the workflow (RivetKit's
  /// `try`). Other errors pass through. State changes made before the failure stay (workflows
  /// roll forward).
  template <class F>
  auto try_block(std::string name, F f) const -> Task<TryBlockResult<detail::VoidAsEmpty<
      typename detail::Awaited<std::invoke_result_t<F&, WorkflowContext&>>::type>>> {
    using R = typename detail::Awaited<std::invoke_result_t<F&, WorkflowContext&>>::type;
    TryBlockResult<detail::VoidAsEmpty<R>> out;
    auto scope = api_->workflow().block(scope_, name);
    try {
      auto op = detail::call_async(std::move(f), WorkflowContext(api_, std::move(scope)));
      if constexpr (std::is_void_v<R>) {
        co_await std::move(op);
      } else {
        out.value = co_await std::move(op);
      }
      out.ok = true;
    } catch (const ActorError& e) {
      const auto& err = e.error();
      const bool caught = err.group == "workflow"
                          && (err.code == "step_exhausted" || err.code == "join_failed"
                              || err.code == "race_failed");
      if (!caught) {
        throw;
      }
      if (err.code == "step_exhausted") {
        auto step = detail::step_failure_of(err);
        out.failure.source = "step";
        out.failure.name = step.step_name;
        out.failure.error = step.error;
        out.failure.step = std::move(step);
      } else {
        out.failure.source = err.code == "join_failed" ? "join" : "race";
        if (err.metadata) {
          if (const auto* n = err.metadata->find("name"); n != nullptr && n->is_string()) {
            out.failure.name = n->as_string();
          }
        }
        out.failure.error = WorkflowErrorInfo{"Error", err.message};
      }
    }
    co_return out;
  }

  /// Waits for a message on the actor's queue (RivetKit's `queue.next`): the message is recorded
  /// with the queue's change in one write, so a replay returns the same message and no other.
  /// Past `options.timeout` it throws workflow.queue_timed_out. The wait lets the actor sleep.
  template <class T = Value>
  Task<WorkflowMessage<T>> queue_next(std::string name, QueueNextOptions options = {}) const {
    auto op = queue_next_batch<T>(std::move(name), std::move(options), 1);
    auto batch = co_await std::move(op);
    if (batch.empty()) {
      throw ActorError(Error{"workflow", "queue_timed_out",
                             "The workflow's queue wait timed out before a message came",
                             std::nullopt, true});
    }
    co_return std::move(batch.front());
  }
  /// Up to `count` messages (none when the timeout passes first).
  template <class T = Value>
  Task<std::vector<WorkflowMessage<T>>> queue_next_batch(std::string name,
                                                         QueueNextOptions options,
                                                         std::size_t count) const {
    detail::WorkflowQueueNext next{std::move(options.names), count, options.completable,
                                   options.timeout};
    auto op = api_->workflow().queue_next(scope_, name, std::move(next));
    auto taken = co_await std::move(op);
    std::vector<WorkflowMessage<T>> out;
    for (std::size_t i = 0; i < taken.size(); ++i) {
      WorkflowMessage<T> m;
      m.id = taken[i].id;
      m.name = std::move(taken[i].name);
      m.body = from_value<T>(taken[i].body);
      m.created_at = taken[i].created_at;
      m.api_ = api_;
      m.scope_ = scope_;
      m.wait_ = name;
      m.index_ = i;
      out.push_back(std::move(m));
    }
    co_return out;
  }

  /// Runs the branches concurrently (each in its own block) until all end; returns their results
  /// by name. If one fails, the join fails (workflow.join_failed) once all ended.
  template <class R>
  Task<std::map<std::string, R>> join(std::string name,
                                      std::vector<Branch<Types, R>> branches) const {
    auto op = api_->workflow().join(scope_, std::move(name), erase(std::move(branches)));
    Value results = co_await std::move(op);
    std::map<std::string, R> out;
    if (results.is_object()) {
      for (const auto& member : results.as_object()) {
        out.emplace(member.key, from_value<R>(member.value));
      }
    }
    co_return out;
  }
  /// Runs the branches concurrently; the first to return wins and the others are cancelled
  /// (their context's aborted() turns true, wait_aborted() resumes, their sleeps end).
  template <class R>
  Task<RaceResult<R>> race(std::string name, std::vector<Branch<Types, R>> branches) const {
    auto op = api_->workflow().race(scope_, std::move(name), erase(std::move(branches)));
    Value result = co_await std::move(op);
    RaceResult<R> out;
    if (const auto* w = result.find("winner"); w != nullptr && w->is_string()) {
      out.winner = w->as_string();
    }
    if (const auto* v = result.find("value")) {
      out.value = from_value<R>(*v);
    }
    co_return out;
  }

  /// Marks where the code used to run entry `name` of `kind` (a step, loop, ... since deleted): a
  /// workflow recorded by the old code replays past it, a new one records a placeholder, so the
  /// entries after it keep matching their history (RivetKit's removed()).
  Task<void> removed(std::string name, WorkflowEntryKind kind) const {
    return api_->workflow().removed(scope_, std::move(name),
                                    std::string(detail::workflow_kind_name(kind)));
  }
  /// A version gate for changing a workflow's code while runs are in flight: `latest` for a run
  /// reaching `name` for the first time; 1 for a run that went past this point under the code
  /// before the gate (its block already has history beyond it); on replay, what was recorded.
  /// `latest` must be at least 1 (workflow.invalid_version otherwise).
  Task<std::uint32_t> get_version(std::string name, std::int64_t latest) const {
    return api_->workflow().get_version(scope_, std::move(name), latest);
  }

  /// Sleeps `duration` from the first time this point is reached (durable: the deadline is
  /// recorded; the actor may sleep meanwhile and is woken for it).
  Task<void> sleep(std::string name, std::chrono::milliseconds duration) const {
    return api_->workflow().sleep(scope_, std::move(name), std::nullopt, duration);
  }
  /// Sleeps until `at_ms` (ms since the Unix epoch).
  Task<void> sleep_until(std::string name, std::int64_t at_ms) const {
    return api_->workflow().sleep(scope_, std::move(name), at_ms, std::chrono::milliseconds(0));
  }

 private:
  friend struct detail::Access;
  WorkflowContext(detail::ActorApi* api, detail::WorkflowScope scope)
      : api_(api), scope_(std::move(scope)) {}

  template <class R>
  std::vector<detail::WorkflowBranch> erase(std::vector<Branch<Types, R>> branches) const {
    std::vector<detail::WorkflowBranch> out;
    auto* api = api_;
    for (auto& b : branches) {
      std::function<Task<Value>(detail::WorkflowScope)> body =
          [api, run = std::move(b.run)](detail::WorkflowScope scope) {
            return run_branch<R>(api, run, std::move(scope));
          };
      out.push_back(detail::WorkflowBranch{std::move(b.name), std::move(body)});
    }
    return out;
  }
  template <class R>
  static Task<Value> run_branch(detail::ActorApi* api,
                                std::function<Task<R>(WorkflowContext&)> run,
                                detail::WorkflowScope scope) {
    WorkflowContext ctx(api, std::move(scope));
    auto op = run(ctx);
    R r = co_await std::move(op);
    co_return to_value(r);
  }

  template <class R>
  static R result_of(const Value& v) {
    if constexpr (std::is_same_v<R, Empty>) {
      return R{};
    } else {
      return from_value<R>(v);
    }
  }

  static detail::WorkflowStepConfig config_of(std::string name, const StepOptions& options) {
    detail::WorkflowStepConfig config;
    config.name = std::move(name);
    config.max_retries = options.max_retries;
    config.retry_backoff_base = options.retry_backoff_base;
    config.retry_backoff_max = options.retry_backoff_max;
    config.timeout = options.timeout;
    config.retry_on_timeout = options.retry_on_timeout;
    config.ephemeral = options.ephemeral;
    return config;
  }

  /// Runs a step's undo handler with a step context of its own (RivetKit runs rollbacks with an
  /// active step context).
  template <class R, class U>
  static Task<void> run_undo(detail::ActorApi* api, U undo, Value output) {
    StepScope scope(api);
    auto& c = scope.context;
    if constexpr (std::is_void_v<R>) {
      auto op = detail::call_async(undo, c);
      co_await std::move(op);
    } else {
      auto op = detail::call_async(undo, c, from_value<R>(output));
      co_await std::move(op);
    }
  }

  /// A step's context, ended with the scope, whatever way the step ends.
  struct StepScope {
    explicit StepScope(detail::ActorApi* api)
        : active(std::make_shared<bool>(true)),
          context(detail::Access::make<StepContext<Types>>(api, active)) {}
    StepScope(const StepScope&) = delete;
    StepScope& operator=(const StepScope&) = delete;
    ~StepScope() { *active = false; }
    std::shared_ptr<bool> active;
    StepContext<Types> context;
  };

  template <class R, class F>
  static Task<Value> run_step(detail::ActorApi* api, F f) {
    StepScope scope(api);
    auto& c = scope.context;
    // (each operation in a variable before its co_await: GCC 12 mishandles temporaries there)
    auto op = detail::call_async(f, c);
    if constexpr (std::is_void_v<R>) {
      co_await std::move(op);
      co_return Value{};
    } else {
      R r = co_await std::move(op);
      co_return to_value(r);
    }
  }

  template <class LR, class F>
  static Task<detail::WorkflowLoopTurn> run_turn(detail::ActorApi* api,
                                                 F f,
                                                 detail::WorkflowScope scope) {
    auto op = detail::call_async(f, WorkflowContext(api, std::move(scope)));
    LR r = co_await std::move(op);
    co_return turn_of(r);
  }

  template <class LR, class S, class F>
  static Task<detail::WorkflowLoopTurn> run_stateful_turn(detail::ActorApi* api,
                                                          F f,
                                                          detail::WorkflowScope scope,
                                                          Value state) {
    S typed = from_value<S>(state);
    auto op = detail::call_async(f, WorkflowContext(api, std::move(scope)), typed);
    LR r = co_await std::move(op);
    co_return turn_of(r);
  }

  template <class LR>
  static detail::WorkflowLoopTurn turn_of(const LR& r) {
    detail::WorkflowLoopTurn turn;
    turn.done = r.finished;
    turn.value = r.finished ? to_value(r.result) : to_value(r.state);
    return turn;
  }

  detail::ActorApi* api_;
  detail::WorkflowScope scope_;
};

namespace detail {

template <class Types, class F, class G>
Task<void> run_workflow(ActorApi* api, F f, G on_error) {
  std::function<Task<void>(WorkflowScope)> body = [api, f](WorkflowScope scope) {
    return call_async(f, Access::make<WorkflowContext<Types>>(api, std::move(scope)));
  };
  std::function<Task<void>(Value)> report;
  if constexpr (!std::is_same_v<G, std::nullptr_t>) {
    report = [api, on_error](Value event) {
      return call_async(on_error, Access::make<Context<Types>>(api, static_cast<ConnApi*>(nullptr)),
                        std::move(event));
    };
  }
  auto op = api->workflow().run(std::move(body), std::move(report));
  co_await std::move(op);
}

}  // namespace detail
}  // namespace rivetkit
