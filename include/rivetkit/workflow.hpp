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
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace rivetkit {

/// How a step is retried (RivetKit's step config).
struct StepOptions {
  /// Retries after the first attempt (RivetKit's default 3).
  std::uint32_t max_retries = 3;
  /// The delay before retry n is base * 2^n, at most max.
  std::chrono::milliseconds retry_backoff_base{100};
  std::chrono::milliseconds retry_backoff_max{30'000};
};

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
  /// True once the actor is stopping.
  bool aborted() const { return api_->aborted(); }
  AbortSignal abort_signal() const { return detail::Access::make<AbortSignal>(api_); }

  /// Runs step `name`: `f(StepContext&) -> R` or `Task<R>`, once; its result is recorded (R must
  /// convert to and from a Value) and returned again on replay.
  template <class F>
  auto step(std::string name, F f, StepOptions options = {}) const
      -> Task<typename detail::Awaited<std::invoke_result_t<F&, StepContext<Types>&>>::type> {
    using R = typename detail::Awaited<std::invoke_result_t<F&, StepContext<Types>&>>::type;
    detail::WorkflowStepConfig config{std::move(name), options.max_retries,
                                      options.retry_backoff_base, options.retry_backoff_max};
    auto* api = api_;
    std::function<Task<Value>()> body = [api, f]() {
      return run_step<R>(api, f);
    };
    auto op = api_->workflow().step(scope_, std::move(config), std::move(body));
    Value recorded = co_await std::move(op);
    if constexpr (!std::is_void_v<R>) {
      co_return from_value<R>(recorded);
    }
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
  static R result_of(const Value& v) {
    if constexpr (std::is_same_v<R, Empty>) {
      return R{};
    } else {
      return from_value<R>(v);
    }
  }

  template <class R, class F>
  static Task<Value> run_step(detail::ActorApi* api, F f) {
    auto active = std::make_shared<bool>(true);
    // The step's context ends with the step, whatever way it ends.
    struct End {
      std::shared_ptr<bool> active;
      ~End() { *active = false; }
    } end{active};
    auto c = detail::Access::make<StepContext<Types>>(api, active);
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
