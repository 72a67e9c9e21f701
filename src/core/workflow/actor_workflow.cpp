#include "core/workflow/actor_workflow.hpp"

#include "core/errors.hpp"
#include "core/ids.hpp"
#include "util/log.hpp"
#include <rivetkit/error.hpp>

#include <algorithm>

namespace rivetkit::core {

using workflow::Entry;
using workflow::EntryKind;
using workflow::EntryStatus;
using workflow::WorkflowState;

namespace {

[[noreturn]] void throw_error(std::string code,
                              std::string message,
                              std::optional<Value> meta = {}) {
  throw ActorError(Error{"workflow", std::move(code), std::move(message), std::move(meta), true});
}

bool is_abort(const Error& e) {
  return e.group == "actor" && e.code == "aborted";
}

/// RivetKit's `{name, message}` of a failure: a plain exception is an "Error"; an ActorError
/// keeps its group and code in the name.
Value error_info(std::exception_ptr failure) {
  std::string name = "Error";
  std::string message = exception_message(failure);
  try {
    std::rethrow_exception(failure);
  } catch (const ActorError& e) {
    name = e.error().group == "user" ? "UserError" : "ActorError";
    message = e.error().message;
  } catch (...) {
  }
  return Value::object({{"name", Value(name)}, {"message", Value(message)}});
}

/// RivetKit's deterministic backoff: base * 2^attempts, at most max.
std::int64_t backoff_ms(std::uint32_t attempts, const detail::WorkflowStepConfig& config) {
  const auto base = std::max<std::int64_t>(0, config.retry_backoff_base.count());
  const auto max = std::max<std::int64_t>(0, config.retry_backoff_max.count());
  std::int64_t delay = base;
  for (std::uint32_t i = 0; i < attempts && delay < max; ++i) {
    delay *= 2;
  }
  return std::min(delay, max);
}

ActorError exhausted_error(const std::string& step, const Entry& e) {
  std::string message = "Workflow step \"" + step + "\" failed after " + std::to_string(e.attempts);
  message += e.attempts == 1 ? " attempt" : " attempts";
  if (e.error) {
    message += ": " + *e.error;
  }
  return ActorError(Error{"workflow", "step_exhausted", std::move(message),
                          Value::object({{"step", Value(step)},
                                         {"attempts", Value(e.attempts)},
                                         {"error", e.error ? Value(*e.error) : Value{}}}),
                          true});
}

// Built outside the coroutines: GCC 12 mishandles initializer lists inside them.
Value workflow_event(const std::string& actor_id, const Value& info) {
  return Value::object(
      {{"workflow", Value::object({{"workflowId", Value(actor_id)}, {"error", info}})}});
}

/// RivetKit's step error event for attempt `e.attempts` of a step.
Value step_event(const std::string& actor_id,
                 const detail::WorkflowStepConfig& config,
                 const Entry& e,
                 bool will_retry,
                 const Value& info) {
  const std::uint32_t attempt = e.attempts;
  Value event = Value::object(
      {{"workflowId", Value(actor_id)},
       {"stepName", Value(config.name)},
       {"attempt", Value(attempt)},
       {"maxRetries", Value(config.max_retries)},
       {"remainingRetries",
        Value(config.max_retries + 1 > attempt ? config.max_retries + 1 - attempt : 0u)},
       {"willRetry", Value(will_retry)}});
  if (will_retry) {
    const auto delay = backoff_ms(attempt, config);
    event.set("retryDelay", Value(delay));
    event.set("retryAt", Value(e.last_attempt_at + delay));
  }
  event.set("error", info);
  return Value::object({{"step", std::move(event)}});
}

std::string described(const Value& info) {
  const auto* name = info.find("name");
  const auto* message = info.find("message");
  return (name != nullptr && name->is_string() ? name->as_string() : std::string("Error")) + ": "
         + (message != nullptr && message->is_string() ? message->as_string() : std::string());
}

}  // namespace

ActorWorkflow::ActorWorkflow(std::string actor_id, storage::ActorStore& store, Host& host)
    : actor_id_(std::move(actor_id)), store_(store), host_(host) {}

void ActorWorkflow::take_changes(storage::ActorWrite& write) {
  history_.take_changes(write.kv);
}

Task<Result<void>> ActorWorkflow::load() {
  if (loaded_) {
    co_return Result<void>{};
  }
  storage::KvQuery query;
  query.prefix = std::string(1, workflow::keys::kPrefix);
  auto op = store_.kv_list(std::move(query));
  auto listed = co_await std::move(op);
  if (!listed) {
    co_return fail(listed.error());
  }
  if (loaded_) {
    co_return Result<void>{};  // another caller loaded it meanwhile
  }
  auto r = history_.load(*listed);
  if (!r) {
    co_return fail(r.error());
  }
  loaded_ = true;
  co_return Result<void>{};
}

void ActorWorkflow::check_running() const {
  if (!running_) {
    throw_error("not_running",
                "Workflow operations are only available while the workflow runs (inside the "
                "function given to ActorBuilder::workflow)");
  }
}

std::string ActorWorkflow::enter(const detail::WorkflowScope& scope, const std::string& name) {
  check_running();
  auto loc = workflow::location::named(scope.location, history_.intern(name));
  if (!visited_.insert(loc).second) {
    throw_error("history_diverged",
                "Workflow entry \"" + name
                    + "\" was reached twice in one block: names must be unique within a block",
                Value::object({{"entry", Value(name)}}));
  }
  return loc;
}

Entry* ActorWorkflow::existing(const std::string& loc, EntryKind kind, const std::string& name) {
  Entry* e = history_.find(loc);
  if (e != nullptr && e->kind != kind) {
    throw_error("history_diverged",
                "Workflow history diverged at \"" + name + "\": the code runs a "
                    + std::string(workflow::to_string(kind)) + " where the history has a "
                    + std::string(workflow::to_string(e->kind)) + " (entry " + e->id + ")",
                Value::object({{"entry", Value(name)}, {"entryId", Value(e->id)}}));
  }
  return e;
}

Entry& ActorWorkflow::create(const std::string& loc, EntryKind kind) {
  Entry e;
  e.id = new_uuid_v4();
  e.kind = kind;
  e.created_at = host_.workflow_now_ms();
  host_.workflow_changed();
  return history_.put(loc, std::move(e));
}

Task<void> ActorWorkflow::flush() {
  host_.workflow_changed();
  auto op = host_.workflow_save();
  auto r = co_await std::move(op);
  if (!r) {
    throw ActorError(r.error());
  }
}

Task<void> ActorWorkflow::report(Value event) {
  if (!on_error_) {
    co_return;
  }
  std::exception_ptr failure;
  try {
    auto op = on_error_(std::move(event));
    co_await std::move(op);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    log::warn("workflow error hook failed actor_id={}: {}", actor_id_, exception_message(failure));
  }
}

Task<void> ActorWorkflow::park_until(std::int64_t deadline_ms) {
  if (host_.workflow_now_ms() >= deadline_ms) {
    co_return;
  }
  auto it = parked_.insert(deadline_ms);
  host_.set_wake(*parked_.begin());
  // The deadline and the wake alarm are durable before the wait: a crash or a sleep now still
  // comes back at the deadline.
  co_await flush();
  auto parked = host_.workflow_parked();
  for (auto now = host_.workflow_now_ms(); now < deadline_ms; now = host_.workflow_now_ms()) {
    auto op = host_.workflow_wait(std::chrono::milliseconds(deadline_ms - now));
    if (co_await std::move(op)) {
      // The actor stops: the wake alarm stays, so the deadline brings it back.
      parked_.erase(it);
      throw ActorError(Error{"actor", "aborted", "The actor is stopping", std::nullopt, true});
    }
  }
  parked_.erase(it);
  host_.set_wake(parked_.empty() ? std::nullopt : std::optional<std::int64_t>(*parked_.begin()));
}

// ---- the workflow
// ---------------------------------------------------------------------------------

Task<void> ActorWorkflow::run(std::function<Task<void>(detail::WorkflowScope)> body,
                              std::function<Task<void>(Value event)> on_error) {
  auto keep = host_.hold();
  if (running_) {
    throw_error("already_running", "The workflow is already running");
  }
  {
    auto op = load();
    auto loaded = co_await std::move(op);
    if (!loaded) {
      throw ActorError(loaded.error());
    }
  }
  auto& record = history_.record();
  if (record.state == WorkflowState::kCompleted || record.state == WorkflowState::kFailed) {
    log::debug("workflow already {} actor_id={}", workflow::to_string(record.state), actor_id_);
    co_return;
  }
  on_error_ = std::move(on_error);
  visited_.clear();
  running_ = true;
  if (record.state != WorkflowState::kRunning) {
    record.state = WorkflowState::kRunning;
    history_.touch_record();
    host_.workflow_changed();
  }
  std::exception_ptr failure;
  try {
    auto op = body(detail::WorkflowScope{});
    co_await std::move(op);
  } catch (...) {
    failure = std::current_exception();
  }
  running_ = false;
  visited_.clear();
  if (!failure) {
    record.state = WorkflowState::kCompleted;
    record.output = Value{};
    history_.touch_record();
    co_await flush();
    log::debug("workflow completed actor_id={}", actor_id_);
    co_return;
  }
  const Error error = error_from_exception(failure);
  if (is_abort(error)) {
    std::rethrow_exception(failure);  // the stop ended it; the next start resumes
  }
  Value info = error_info(failure);
  record.state = WorkflowState::kFailed;
  record.error = info;
  history_.touch_record();
  co_await flush();
  log::warn("workflow failed and will not run again actor_id={}: {}", actor_id_, described(info));
  // A step's exhaustion was reported as a step event already.
  if (!(error.group == "workflow" && error.code == "step_exhausted")) {
    auto op = report(workflow_event(actor_id_, info));
    co_await std::move(op);
  }
}

Task<Value> ActorWorkflow::step(detail::WorkflowScope scope,
                                detail::WorkflowStepConfig config,
                                std::function<Task<Value>()> body) {
  auto keep = host_.hold();
  const auto loc = enter(scope, config.name);
  if (Entry* found = existing(loc, EntryKind::kStep, config.name)) {
    if (found->status == EntryStatus::kCompleted) {
      co_return found->output.value_or(Value{});
    }
  } else {
    create(loc, EntryKind::kStep);
  }

  while (true) {
    Entry* e = history_.find(loc);
    if (e->status == EntryStatus::kExhausted) {
      throw exhausted_error(config.name, *e);
    }
    if (e->attempts > config.max_retries) {
      // Its retries were lowered since it failed.
      e->status = EntryStatus::kExhausted;
      history_.touch(loc);
      co_await flush();
      throw exhausted_error(config.name, *history_.find(loc));
    }
    if (e->status == EntryStatus::kFailed) {
      const auto retry_at = e->last_attempt_at + backoff_ms(e->attempts, config);
      co_await park_until(retry_at);
      e = history_.find(loc);
    }
    e->attempts += 1;
    e->last_attempt_at = host_.workflow_now_ms();
    e->status = EntryStatus::kRunning;
    history_.touch(loc);
    host_.workflow_changed();

    std::exception_ptr failure;
    Value output;
    try {
      auto op = body();
      output = co_await std::move(op);
    } catch (...) {
      failure = std::current_exception();
    }
    e = history_.find(loc);
    if (!failure) {
      e->output = std::move(output);
      e->status = EntryStatus::kCompleted;
      e->error.reset();
      e->completed_at = host_.workflow_now_ms();
      history_.touch(loc);
      co_await flush();
      co_return history_.find(loc)->output.value_or(Value{});
    }
    const Error error = error_from_exception(failure);
    if (is_abort(error)) {
      // Cut short by the stop: the attempt does not count; the next start runs it again.
      e->attempts -= 1;
      e->status = e->attempts == 0 ? EntryStatus::kPending : EntryStatus::kFailed;
      history_.touch(loc);
      std::rethrow_exception(failure);
    }
    const Value info = error_info(failure);
    const bool will_retry = e->attempts <= config.max_retries;
    e->status = will_retry ? EntryStatus::kFailed : EntryStatus::kExhausted;
    e->error = described(info);
    history_.touch(loc);
    co_await flush();
    e = history_.find(loc);
    auto op = report(step_event(actor_id_, config, *e, will_retry, info));
    co_await std::move(op);
    if (!will_retry) {
      throw exhausted_error(config.name, *history_.find(loc));
    }
  }
}

Task<Value> ActorWorkflow::loop(
    detail::WorkflowScope scope,
    std::string name,
    Value initial,
    std::function<Task<detail::WorkflowLoopTurn>(detail::WorkflowScope, Value)> body) {
  auto keep = host_.hold();
  const auto loc = enter(scope, name);
  if (Entry* found = existing(loc, EntryKind::kLoop, name)) {
    if (found->status == EntryStatus::kCompleted) {
      co_return found->output.value_or(Value{});
    }
  } else {
    Entry& e = create(loc, EntryKind::kLoop);
    e.loop_state = std::move(initial);
    e.status = EntryStatus::kRunning;
  }
  const auto index = history_.intern(name);
  while (true) {
    const std::uint32_t iteration = history_.find(loc)->iteration;
    const auto iteration_loc = workflow::location::iteration(scope.location, index, iteration);
    auto op = body(detail::WorkflowScope{iteration_loc}, history_.find(loc)->loop_state);
    auto turn = co_await std::move(op);
    Entry* e = history_.find(loc);
    // The iteration's locations are never reached again.
    visited_.erase(
        visited_.lower_bound(iteration_loc),
        visited_.lower_bound(storage::prefix_end(iteration_loc)
                                 .value_or(std::string(iteration_loc.size() + 1, '\xff'))));
    // Only the latest finished iteration is kept (what the inspector shows); older ones go.
    if (iteration > 0) {
      history_.erase_under(workflow::location::iteration(scope.location, index, iteration - 1));
    }
    if (turn.done) {
      e->output = std::move(turn.value);
      e->status = EntryStatus::kCompleted;
      e->completed_at = host_.workflow_now_ms();
      history_.touch(loc);
      co_await flush();
      co_return history_.find(loc)->output.value_or(Value{});
    }
    e->iteration = iteration + 1;
    e->loop_state = std::move(turn.value);
    history_.touch(loc);
    co_await flush();
  }
}

Task<void> ActorWorkflow::sleep(detail::WorkflowScope scope,
                                std::string name,
                                std::optional<std::int64_t> deadline_ms,
                                std::chrono::milliseconds relative) {
  auto keep = host_.hold();
  const auto loc = enter(scope, name);
  Entry* e = existing(loc, EntryKind::kSleep, name);
  if (e == nullptr) {
    e = &create(loc, EntryKind::kSleep);
    e->deadline = deadline_ms.value_or(host_.workflow_now_ms() + relative.count());
    e->status = EntryStatus::kRunning;
  }
  if (e->sleep_state == workflow::SleepState::kCompleted) {
    co_return;
  }
  co_await park_until(e->deadline);
  e = history_.find(loc);
  e->sleep_state = workflow::SleepState::kCompleted;
  e->status = EntryStatus::kCompleted;
  e->completed_at = host_.workflow_now_ms();
  // Written with the next operation's record: replaying a sleep whose deadline passed ends it
  // at once either way.
  history_.touch(loc);
  host_.workflow_changed();
}

}  // namespace rivetkit::core
