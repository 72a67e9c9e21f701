#include "core/workflow/actor_workflow.hpp"

#include "core/actor/actor_queue.hpp"
#include "core/actor/stored_value.hpp"
#include "core/errors.hpp"
#include "core/ids.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"
#include <rivetkit/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace rivetkit::core {

namespace asio = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;
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
    if (e.error().group == "workflow" && e.error().code == "step_timeout") {
      name = "StepTimeoutError";  // RivetKit's
    }
    if (e.error().group == "workflow" && e.error().code == "rollback") {
      name = "RollbackError";  // RivetKit's
    }
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

constexpr std::string_view kTimeoutName = "StepTimeoutError: ";

ActorError exhausted_error(const std::string& step, const Entry& e) {
  std::string message = "Workflow step \"" + step + "\" failed after " + std::to_string(e.attempts);
  message += e.attempts == 1 ? " attempt" : " attempts";
  if (e.error) {
    message += ": " + *e.error;
  }
  // The last attempt's failure says whether it ran out of time (try_step's kind "timeout").
  const bool timed_out = e.error && e.error->rfind(kTimeoutName, 0) == 0;
  return ActorError(Error{"workflow", "step_exhausted", std::move(message),
                          Value::object({{"step", Value(step)},
                                         {"attempts", Value(e.attempts)},
                                         {"error", e.error ? Value(*e.error) : Value{}},
                                         {"kind", Value(timed_out ? "timeout" : "exhausted")}}),
                          true});
}

ActorError step_timeout(const std::string& step, std::chrono::milliseconds timeout) {
  return ActorError(
      Error{"workflow", "step_timeout",
            "Step \"" + step + "\" timed out after " + std::to_string(timeout.count()) + "ms",
            std::nullopt, true});
}

/// What a step attempt ended with, without throwing (so that racing it against its timeout
/// ends the race when it fails too).
struct Attempt {
  Value output;
  std::exception_ptr failure;
};
/// Runs one attempt; `succeeded` runs in the very turn the body returned in, before anything
/// else on the strand (a concurrent branch's write) can run.
Task<Attempt> attempt(std::function<Task<Value>()>& body,
                      const std::function<void(const Value&)>& succeeded) {
  Attempt out;
  try {
    auto op = body();
    out.output = co_await std::move(op);
  } catch (...) {
    out.failure = std::current_exception();
  }
  if (!out.failure) {
    succeeded(out.output);
  }
  co_return out;
}

// Built outside the coroutines: GCC 12 mishandles initializer lists inside them.
Value workflow_event(const std::string& actor_id, const Value& info) {
  return Value::object(
      {{"workflow", Value::object({{"workflowId", Value(actor_id)}, {"error", info}})}});
}

/// RivetKit's rollback error event: the undo handler of step `step` failed.
Value rollback_event(const std::string& actor_id, const std::string& step, const Value& info) {
  return Value::object({{"rollback", Value::object({{"workflowId", Value(actor_id)},
                                                    {"stepName", Value(step)},
                                                    {"error", info}})}});
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

// What one recorded value may take: an entry is one KV value (at most 128 KiB), with room for
// its metadata.
constexpr std::size_t kMaxRecordedValue = storage::kMaxKvValueSize - 4096;

bool recordable(const Value& v) {
  return encode_stored(v).size() <= kMaxRecordedValue;
}

ActorError value_too_large(const char* what, const std::string& name, const Value& v) {
  const auto size = encode_stored(v).size();
  return ActorError(Error{
      "workflow", "value_too_large",
      std::string("Workflow ") + what + " of \"" + name + "\" is " + std::to_string(size)
          + " bytes; a recorded value is at most " + std::to_string(kMaxRecordedValue) + " bytes",
      Value::object({{"entry", Value(name)}, {"size", Value(static_cast<std::int64_t>(size))}}),
      true});
}

std::string described(const Value& info) {
  const auto* name = info.find("name");
  const auto* message = info.find("message");
  return (name != nullptr && name->is_string() ? name->as_string() : std::string("Error")) + ": "
         + (message != nullptr && message->is_string() ? message->as_string() : std::string());
}

}  // namespace

ActorWorkflow::ActorWorkflow(boost::asio::any_io_executor strand,
                             std::string actor_id,
                             storage::ActorStore& store,
                             Host& host)
    : strand_(strand),
      actor_id_(std::move(actor_id)),
      store_(store),
      host_(host),
      branch_changed_(std::move(strand)) {}

void ActorWorkflow::take_changes(storage::ActorWrite& write) {
  history_.take_changes(write.kv);
}

Task<Result<void>> ActorWorkflow::load() {
  if (loaded_) {
    co_return Result<void>{};
  }
  storage::KvQuery query;
  query.prefix = std::string(1, workflow::keys::kPrefix);
  auto op = store_.kv_store().list(std::move(query));
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
  log::debug("workflow loaded actor_id={} keys={} entries={} names={} state={}", actor_id_,
             listed->size(), history_.entries().size(), history_.names().size(),
             workflow::to_string(history_.record().state));
  co_return Result<void>{};
}

bool ActorWorkflow::checkpoint_reached(const detail::WorkflowScope& scope) const {
  return std::any_of(checkpoints_.begin(), checkpoints_.end(), [&](const std::string& block) {
    return scope.location.compare(0, block.size(), block) == 0;
  });
}

void ActorWorkflow::stop_rollback_pass() const {
  throw ActorError(Error{"workflow", "rollback_pass_ended",
                         "The rollback pass reached an operation that never completed",
                         std::nullopt, true});
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
  if (rolling_back_) {
    stop_rollback_pass();  // the rollback pass records nothing
  }
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

Task<void> ActorWorkflow::park_until(std::int64_t deadline_ms, const detail::WorkflowScope& scope) {
  check_cancelled(scope);
  if (host_.workflow_now_ms() >= deadline_ms) {
    co_return;
  }
  auto it = parked_.insert(deadline_ms);
  host_.set_wake(*parked_.begin());
  // The deadline and the wake alarm are durable before the wait: a crash or a sleep now still
  // comes back at the deadline.
  co_await flush();
  auto parked = host_.workflow_parked();
  bool stopped = false;
  for (auto now = host_.workflow_now_ms(); now < deadline_ms && !cancelled(scope);
       now = host_.workflow_now_ms()) {
    auto wait = host_.workflow_wait(std::chrono::milliseconds(deadline_ms - now));
    if (scope.branch != 0) {
      // A race branch also ends its wait when it loses.
      auto lost = branch_changed_.wait();
      auto raced = co_await (std::move(wait) || std::move(lost));
      stopped = raced.index() == 0 && std::get<0>(raced);
    } else {
      stopped = co_await std::move(wait);
    }
    if (stopped) {
      break;
    }
  }
  parked_.erase(it);
  if (stopped) {
    // The actor stops: the wake alarm stays, so the deadline brings it back.
    throw ActorError(Error{"actor", "aborted", "The actor is stopping", std::nullopt, true});
  }
  host_.set_wake(parked_.empty() ? std::nullopt : std::optional<std::int64_t>(*parked_.begin()));
  check_cancelled(scope);
}

bool ActorWorkflow::cancelled(const detail::WorkflowScope& scope) const {
  for (auto id = scope.branch; id != 0;) {
    auto it = race_branches_.find(id);
    if (it == race_branches_.end()) {
      return false;
    }
    if (it->second.cancelled) {
      return true;
    }
    id = it->second.parent;
  }
  return false;
}

void ActorWorkflow::check_cancelled(const detail::WorkflowScope& scope) const {
  if (cancelled(scope)) {
    throw_error("branch_cancelled", "This race branch was cancelled: another branch won");
  }
}

Task<void> ActorWorkflow::wait_cancelled(detail::WorkflowScope scope) {
  auto keep = host_.hold();
  auto parked = host_.workflow_parked();
  while (!cancelled(scope)) {
    auto lost = branch_changed_.wait();
    auto stop = host_.workflow_wait(std::chrono::hours(24));
    auto raced = co_await (std::move(lost) || std::move(stop));
    if (raced.index() == 1 && std::get<1>(raced)) {
      throw ActorError(Error{"actor", "aborted", "The actor is stopping", std::nullopt, true});
    }
  }
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
  std::exception_ptr failure;
  Value info;
  bool report_failure = false;
  if (record.state == WorkflowState::kRollingBack) {
    // It failed and its rollback was cut short (a crash, a stop, an undo that threw): the
    // rollback resumes, the workflow does not.
    log::info("workflow resumes its rollback actor_id={}", actor_id_);
  } else {
    visited_.clear();
    checkpoints_.clear();
    running_ = true;
    if (record.state != WorkflowState::kRunning) {
      record.state = WorkflowState::kRunning;
      history_.touch_record();
      host_.workflow_changed();
    }
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
    info = error_info(failure);
    // A step's exhaustion was reported as a step event already.
    report_failure = !(error.group == "workflow" && error.code == "step_exhausted");
    // A rollback handler without its checkpoint is a programming error: nothing is undone.
    const bool rolls_back =
        !(error.group == "workflow" && error.code == "rollback_checkpoint_missing");
    record.state = rolls_back ? WorkflowState::kRollingBack : WorkflowState::kFailed;
    record.error = info;
    history_.touch_record();
    co_await flush();
    if (!rolls_back) {
      log::warn("workflow failed and will not run again actor_id={}: {}", actor_id_,
                described(info));
      if (report_failure) {
        auto op = report(workflow_event(actor_id_, info));
        co_await std::move(op);
      }
      co_return;
    }
  }
  auto rollback_op = roll_back(body);
  const bool rolled_back = co_await std::move(rollback_op);
  if (!rolled_back) {
    log::warn(
        "workflow rollback stopped at an undo handler that failed actor_id={}; the next "
        "start of the actor tries again",
        actor_id_);
    co_return;
  }
  record.state = WorkflowState::kFailed;
  history_.touch_record();
  co_await flush();
  log::warn("workflow failed and will not run again actor_id={}: {}", actor_id_,
            record.error ? described(*record.error) : std::string("(no error recorded)"));
  if (failure && report_failure) {
    auto op = report(workflow_event(actor_id_, info));
    co_await std::move(op);
  }
}

Task<bool> ActorWorkflow::roll_back(std::function<Task<void>(detail::WorkflowScope)>& body) {
  struct Running {
    ActorWorkflow* self;
    ~Running() {
      self->running_ = false;
      self->rolling_back_ = false;
      self->visited_.clear();
    }
  } running{this};
  // The rollback pass: the function once more, answered from the record, collecting the undo
  // handlers of the completed steps it goes through. Whatever ends it (an operation that never
  // completed, the failure itself, a history that no longer matches) ends only the pass.
  undos_.clear();
  checkpoints_.clear();
  visited_.clear();
  running_ = true;
  rolling_back_ = true;
  std::exception_ptr ended;
  try {
    auto op = body(detail::WorkflowScope{});
    co_await std::move(op);
  } catch (...) {
    ended = std::current_exception();
  }
  rolling_back_ = false;
  visited_.clear();
  if (ended && is_abort(error_from_exception(ended))) {
    std::rethrow_exception(ended);
  }
  auto undos = std::move(undos_);
  undos_.clear();
  log::debug("workflow rolls back actor_id={} steps={}", actor_id_, undos.size());
  for (auto it = undos.rbegin(); it != undos.rend(); ++it) {
    Entry* e = history_.find(it->location);
    if (e == nullptr || e->rollback_completed_at) {
      continue;  // undone before a restart
    }
    std::exception_ptr failure;
    try {
      auto op = it->handler(it->output);
      co_await std::move(op);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure && is_abort(error_from_exception(failure))) {
      std::rethrow_exception(failure);  // the stop: the next start undoes it
    }
    e = history_.find(it->location);
    if (!failure) {
      // Marked done in the same write as the state changes the handler made.
      e->rollback_completed_at = host_.workflow_now_ms();
      e->rollback_error.reset();
      history_.touch(it->location);
      co_await flush();
      continue;
    }
    const Value info = error_info(failure);
    e->rollback_error = described(info);
    history_.touch(it->location);
    co_await flush();
    auto op = report(rollback_event(actor_id_, it->name, info));
    co_await std::move(op);
    co_return false;
  }
  co_return true;
}

Task<void> ActorWorkflow::rollback_checkpoint(detail::WorkflowScope scope, std::string name) {
  auto keep = host_.hold();
  const auto loc = enter(scope, name);
  if (existing(loc, EntryKind::kRollbackCheckpoint, name) == nullptr) {
    Entry& e = create(loc, EntryKind::kRollbackCheckpoint);
    e.status = EntryStatus::kCompleted;
    e.completed_at = host_.workflow_now_ms();
    e.checkpoint = name;
    history_.touch(loc);
    co_await flush();
  }
  checkpoints_.push_back(scope.location);
}

Task<Value> ActorWorkflow::step(detail::WorkflowScope scope,
                                detail::WorkflowStepConfig config,
                                std::function<Task<Value>()> body) {
  auto keep = host_.hold();
  const auto loc = enter(scope, config.name);
  if (config.rollback && !checkpoint_reached(scope)) {
    throw_error("rollback_checkpoint_missing",
                "Workflow step \"" + config.name
                    + "\" has an undo handler, but no rollback checkpoint comes before it: call "
                      "rollback_checkpoint() first, in its block or a block around it",
                Value::object({{"entry", Value(config.name)}}));
  }
  if (Entry* found = existing(loc, EntryKind::kStep, config.name)) {
    if (found->status == EntryStatus::kCompleted) {
      if (rolling_back_ && config.rollback && !found->rollback_completed_at) {
        undos_.push_back(Undo{loc, config.name, found->output.value_or(Value{}), config.rollback});
      }
      co_return found->output.value_or(Value{});
    }
    if (rolling_back_ && found->status != EntryStatus::kExhausted) {
      stop_rollback_pass();
    }
  } else {
    create(loc, EntryKind::kStep);
    log::debug("workflow step runs for the first time actor_id={} step={} location_size={}",
               actor_id_, config.name, loc.size());
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
      co_await park_until(retry_at, scope);
      e = history_.find(loc);
    }
    e->attempts += 1;
    e->last_attempt_at = host_.workflow_now_ms();
    e->status = EntryStatus::kRunning;
    history_.touch(loc);
    host_.workflow_changed();

    std::exception_ptr failure;
    Value output;
    bool timed_out = false;
    // The record of a successful attempt is made in the turn its body returned in: from then on
    // its state changes and its record are in memory together, and whichever write comes next
    // (this step's flush, or a concurrent branch's) takes both. Recording it after a suspension
    // would let another branch's write take the state changes alone.
    const std::function<void(const Value&)> succeeded = [this, &loc](const Value& out) {
      if (!recordable(out)) {
        return;  // fails below
      }
      Entry* done = history_.find(loc);
      done->output = out;
      done->status = EntryStatus::kCompleted;
      done->error.reset();
      done->completed_at = host_.workflow_now_ms();
      history_.touch(loc);
      host_.workflow_changed();
    };
    if (config.timeout.count() > 0) {
      // The timer winning cancels the attempt (at its next cancellable wait) and waits for it.
      asio::steady_timer timer(strand_, config.timeout);
      auto attempt_op = attempt(body, succeeded);
      auto timer_op = timer.async_wait(asio::as_tuple(asio::use_awaitable));
      auto raced = co_await (std::move(attempt_op) || std::move(timer_op));
      if (raced.index() == 0) {
        auto& done = std::get<0>(raced);
        output = std::move(done.output);
        failure = done.failure;
      } else {
        timed_out = true;
        failure = std::make_exception_ptr(step_timeout(config.name, config.timeout));
      }
    } else {
      auto attempt_op = attempt(body, succeeded);
      auto done = co_await std::move(attempt_op);
      output = std::move(done.output);
      failure = done.failure;
    }
    e = history_.find(loc);
    // A result that cannot be recorded fails the step for good (retrying gives the same).
    bool too_large = false;
    if (!failure && !recordable(output)) {
      failure = std::make_exception_ptr(value_too_large("step", config.name, output));
      too_large = true;
    }
    if (!failure) {
      // (recorded by `succeeded` already)
      if (config.ephemeral) {
        host_.workflow_changed();  // written with the next write
      } else {
        co_await flush();
      }
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
    // workflow_rollback(): the step asks for the workflow to fail and roll back at once.
    const bool rollback = error.group == "workflow" && error.code == "rollback";
    const bool will_retry = !too_large && !rollback && (!timed_out || config.retry_on_timeout)
                            && e->attempts <= config.max_retries;
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
    auto op =
        body(detail::WorkflowScope{iteration_loc, scope.branch}, history_.find(loc)->loop_state);
    auto turn = co_await std::move(op);
    if (rolling_back_) {
      stop_rollback_pass();  // the iteration in progress replayed; nothing after it was recorded
    }
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
    if (!recordable(turn.value)) {
      throw value_too_large(turn.done ? "loop result" : "loop state", name, turn.value);
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
  if (rolling_back_) {
    stop_rollback_pass();
  }
  co_await park_until(e->deadline, scope);
  e = history_.find(loc);
  e->sleep_state = workflow::SleepState::kCompleted;
  e->status = EntryStatus::kCompleted;
  e->completed_at = host_.workflow_now_ms();
  // Written with the next operation's record: replaying a sleep whose deadline passed ends it
  // at once either way.
  history_.touch(loc);
  host_.workflow_changed();
}

// ---- replay (the inspector)
// ----------------------------------------------------------------------

Result<void> ActorWorkflow::replay_from(const std::optional<std::string>& entry_id) {
  auto in_flight = [] {
    return fail(Error{"actor", "workflow_in_flight",
                      "Workflow replay is unavailable while the workflow is currently in flight.",
                      std::nullopt, true});
  };
  if (running_) {
    return in_flight();
  }
  std::vector<std::pair<std::string, const Entry*>> ordered;
  for (const auto& [loc, e] : history_.in_creation_order()) {
    ordered.emplace_back(*loc, e);
  }
  std::size_t from = 0;
  if (entry_id) {
    auto target = std::find_if(ordered.begin(), ordered.end(),
                               [&](const auto& p) { return p.second->id == *entry_id; });
    if (target == ordered.end()) {
      return fail(Error{"workflow", "entry_not_found", "Workflow step not found: " + *entry_id,
                        std::nullopt, true});
    }
    if (target->second->kind != EntryKind::kStep) {
      return fail(Error{"workflow", "invalid_replay_target",
                        "Workflow replay target must be a step", std::nullopt, true});
    }
    // Inside a loop, the innermost loop around it replays whole.
    std::string boundary = target->first;
    std::size_t depth = 0;
    for (const auto& [loc, e] : ordered) {
      if (e->kind != EntryKind::kLoop || loc.size() >= target->first.size()) {
        continue;
      }
      // A loop's iterations sit under its parent with its name: compare the parents.
      auto parent_end = loc.size() - 5;  // the loop's own segment: 0x01 + u32
      if (target->first.compare(0, parent_end, loc, 0, parent_end) == 0
          && target->first.size() > parent_end && target->first[parent_end] == '\x02'
          && target->first.compare(parent_end + 1, 4, loc, parent_end + 1, 4) == 0
          && loc.size() > depth) {
        boundary = loc;
        depth = loc.size();
      }
    }
    from = static_cast<std::size_t>(std::find_if(ordered.begin(), ordered.end(),
                                                 [&](const auto& p) { return p.first == boundary; })
                                    - ordered.begin());
  }
  for (std::size_t i = from; i < ordered.size(); ++i) {
    if (ordered[i].second->status == EntryStatus::kRunning
        && ordered[i].second->kind == EntryKind::kStep) {
      return in_flight();
    }
  }
  std::vector<std::string> doomed;
  for (std::size_t i = from; i < ordered.size(); ++i) {
    doomed.push_back(ordered[i].first);
  }
  for (const auto& loc : doomed) {
    history_.erase(loc);
  }
  auto& record = history_.record();
  record.state = WorkflowState::kPending;
  record.output.reset();
  record.error.reset();
  history_.touch_record();
  host_.workflow_changed();
  return Result<void>{};
}

// ---- queue waits --------------------------------------------------------------------------------

namespace {

Value message_record(const detail::QueueMessageData& m) {
  return Value::object({{"id", Value(static_cast<std::int64_t>(m.id))},
                        {"name", Value(m.name)},
                        {"body", m.body},
                        {"createdAt", Value(m.created_at)},
                        {"completed", Value(false)}});
}

detail::WorkflowMessage message_of(const Value& record) {
  detail::WorkflowMessage m;
  if (const auto* id = record.find("id"); id != nullptr && id->is_number()) {
    m.id = id->is_int() ? static_cast<std::uint64_t>(id->as_int())
                        : static_cast<std::uint64_t>(id->is_double() ? id->as_double() : 0);
  }
  if (const auto* name = record.find("name"); name != nullptr && name->is_string()) {
    m.name = name->as_string();
  }
  if (const auto* body = record.find("body")) {
    m.body = *body;
  }
  if (const auto* at = record.find("createdAt"); at != nullptr && at->is_int()) {
    m.created_at = at->as_int();
  }
  if (const auto* done = record.find("completed"); done != nullptr && done->is_bool()) {
    m.completed = done->as_bool();
  }
  return m;
}

std::vector<detail::WorkflowMessage> messages_of(const Entry& e) {
  std::vector<detail::WorkflowMessage> out;
  if (e.output && e.output->is_array()) {
    for (const auto& record : e.output->as_array()) {
      out.push_back(message_of(record));
    }
  }
  return out;
}

}  // namespace

Task<std::vector<detail::WorkflowMessage>> ActorWorkflow::queue_next(
    detail::WorkflowScope scope, std::string name, detail::WorkflowQueueNext options) {
  auto keep = host_.hold();
  const auto loc = enter(scope, name);
  Entry* e = existing(loc, EntryKind::kMessage, name);
  if (e != nullptr && e->status == EntryStatus::kCompleted) {
    co_return messages_of(*e);  // replay: the messages it took
  }
  if (rolling_back_) {
    stop_rollback_pass();
  }
  if (e == nullptr) {
    e = &create(loc, EntryKind::kMessage);
    e->status = EntryStatus::kRunning;
    if (options.timeout) {
      // The timeout counts from the first time the wait is reached, across restarts.
      e->deadline = host_.workflow_now_ms() + options.timeout->count();
      history_.touch(loc);
      co_await flush();
    }
  }
  const std::int64_t deadline = history_.find(loc)->deadline;
  QueueReceive receive;
  receive.names = options.names;
  receive.count = std::max<std::size_t>(1, options.count);
  receive.completable = options.completable;
  std::vector<detail::QueueMessageData> taken;
  {
    // Waiting for a message lets the actor sleep, as a run handler's queue wait does.
    auto parked = host_.workflow_parked();
    if (deadline != 0) {
      host_.set_wake(deadline);
      const auto left = std::max<std::int64_t>(0, deadline - host_.workflow_now_ms());
      receive.timeout = std::chrono::milliseconds(left);
    }
    check_cancelled(scope);
    auto op = host_.workflow_queue().receive(this, std::move(receive), true);
    taken = co_await std::move(op);
    if (deadline != 0) {
      host_.set_wake(parked_.empty() ? std::nullopt
                                     : std::optional<std::int64_t>(*parked_.begin()));
    }
  }
  e = history_.find(loc);
  Array records;
  auto& handles = completions_[loc];
  handles.clear();
  for (const auto& m : taken) {
    if (m.completion) {
      // An exactly-once queue would hold the actor's writes until the completion; here the
      // record below is the exactly-once point, and holding it back would stall the workflow.
      m.completion->writes_held.reset();
    }
    records.push_back(message_record(m));
    handles.push_back(m.completion);
  }
  if (!options.completable) {
    completions_.erase(loc);
  }
  e->output = Value(std::move(records));
  e->status = EntryStatus::kCompleted;
  e->sleep_state =
      taken.empty() ? workflow::SleepState::kCompleted : workflow::SleepState::kInterrupted;
  e->completed_at = host_.workflow_now_ms();
  history_.touch(loc);
  // The queue's change (a plain receive removed the messages) and the record: one write.
  co_await flush();
  co_return messages_of(*history_.find(loc));
}

Task<void> ActorWorkflow::complete_message(detail::WorkflowScope scope,
                                           std::string name,
                                           std::size_t index,
                                           Value response) {
  if (rolling_back_) {
    co_return;  // the rollback pass changes nothing outside the undo handlers
  }
  auto keep = host_.hold();
  const auto loc = workflow::location::named(scope.location, history_.intern(name));
  Entry* e = history_.find(loc);
  if (e == nullptr || e->kind != EntryKind::kMessage || !e->output || !e->output->is_array()
      || index >= e->output->as_array().size()) {
    throw_error("message_not_found", "No message " + std::to_string(index) + " of queue wait \""
                                         + name + "\" to complete");
  }
  auto message = message_of(e->output->as_array()[index]);
  if (message.completed) {
    co_return;  // completed before (a replay): nothing to do
  }
  std::shared_ptr<detail::QueueCompletion> handle;
  if (auto it = completions_.find(loc); it != completions_.end() && index < it->second.size()) {
    handle = it->second[index];
  }
  if (handle) {
    auto op = host_.workflow_queue().complete(handle, std::move(response));
    co_await std::move(op);
  } else {
    auto op = host_.complete_queue_message(message.id, message.name, std::move(response));
    co_await std::move(op);
  }
  e = history_.find(loc);
  if (e != nullptr && e->output && index < e->output->as_array().size()) {
    e->output->as_array()[index].set("completed", Value(true));
    history_.touch(loc);
  }
  // The queue dropping the message and the record saying so: one write.
  co_await flush();
}

// ---- code changes: removed entries and version gates
// ---------------------------------------------

Task<void> ActorWorkflow::removed(detail::WorkflowScope scope,
                                  std::string name,
                                  std::string original_kind) {
  auto keep = host_.hold();
  const auto loc = enter(scope, name);
  if (Entry* e = history_.find(loc)) {
    if (e->kind != EntryKind::kRemoved && workflow::to_string(e->kind) != original_kind) {
      throw_error("history_diverged",
                  "Workflow history diverged at \"" + name + "\": removed() says a " + original_kind
                      + " was there, the history has a " + std::string(workflow::to_string(e->kind))
                      + " (entry " + e->id + ")",
                  Value::object({{"entry", Value(name)}, {"entryId", Value(e->id)}}));
    }
    co_return;  // what the old code recorded there is skipped
  }
  Entry& e = create(loc, EntryKind::kRemoved);
  e.status = EntryStatus::kCompleted;
  e.completed_at = host_.workflow_now_ms();
  e.original_kind = std::move(original_kind);
  e.original_name = name;
  history_.touch(loc);
  co_await flush();
}

bool ActorWorkflow::unvisited_under(const std::string& scope_location,
                                    const std::string& except) const {
  const auto& entries = history_.entries();
  const auto end = storage::prefix_end(scope_location);
  for (auto it = entries.lower_bound(scope_location);
       it != entries.end() && (!end || it->first < *end); ++it) {
    if (it->first == except || it->first == scope_location || visited_.count(it->first) != 0) {
      continue;
    }
    // A loop reached in this run keeps its latest finished iteration's entries, which this run
    // may not have reached itself (it resumed after them): they are behind, not ahead. (An
    // iteration's entries sit beside its loop: `02 <loop name> <iteration>` after the scope.)
    bool behind = false;
    std::size_t at = scope_location.size();
    while (!behind && at < it->first.size()) {
      const bool iteration = static_cast<unsigned char>(it->first[at]) == 2;
      if (iteration && at + 5 <= it->first.size()) {
        const std::string loop = it->first.substr(0, at) + '\x01' + it->first.substr(at + 1, 4);
        const auto found = entries.find(loop);
        behind = found != entries.end() && found->second.kind == EntryKind::kLoop
                 && visited_.count(loop) != 0;
      }
      at += iteration ? 9 : 5;
    }
    if (!behind) {
      return true;
    }
  }
  return false;
}

Task<std::uint32_t> ActorWorkflow::get_version(detail::WorkflowScope scope,
                                               std::string name,
                                               std::int64_t latest) {
  if (latest < 1 || latest > std::int64_t{UINT32_MAX}) {
    throw_error("invalid_version",
                "get_version(\"" + name + "\", " + std::to_string(latest)
                    + "): latest must be an integer from 1 to 4294967295",
                Value::object({{"entry", Value(name)}, {"latest", Value(latest)}}));
  }
  auto keep = host_.hold();
  const auto loc = enter(scope, name);
  if (Entry* e = existing(loc, EntryKind::kVersionCheck, name)) {
    co_return e->resolved;  // pinned when first reached
  }
  // History under this block that this run has not reached yet was recorded by code that ran
  // past this point without the gate: that run keeps the old behaviour (version 1).
  const auto resolved =
      unvisited_under(scope.location, loc) ? std::uint32_t{1} : static_cast<std::uint32_t>(latest);
  Entry& e = create(loc, EntryKind::kVersionCheck);
  e.status = EntryStatus::kCompleted;
  e.completed_at = host_.workflow_now_ms();
  e.resolved = resolved;
  e.latest = static_cast<std::uint32_t>(latest);
  history_.touch(loc);
  co_await flush();
  co_return resolved;
}

// ---- joins and races ----------------------------------------------------------------------------

Task<void> ActorWorkflow::run_branch(ActorWorkflow* self,
                                     std::shared_ptr<void> keep,
                                     detail::WorkflowBranch branch,
                                     detail::WorkflowScope scope,
                                     std::shared_ptr<BranchRun> run,
                                     std::size_t index,
                                     bool race,
                                     std::vector<std::uint64_t> siblings) {
  (void)keep;
  try {
    auto op = branch.body(std::move(scope));
    run->outputs[index] = co_await std::move(op);
    if (race && !run->winner) {
      run->winner = index;
      for (auto id : siblings) {
        if (auto it = self->race_branches_.find(id); it != self->race_branches_.end()) {
          it->second.cancelled = id != siblings[index];
        }
      }
    }
  } catch (...) {
    run->errors[index] = std::current_exception();
  }
  run->done[index] = true;
  run->remaining -= 1;
  self->branch_changed_.notify_all();
}

Task<std::shared_ptr<ActorWorkflow::BranchRun>> ActorWorkflow::run_branches(
    const detail::WorkflowScope& scope,
    const std::string& loc,
    std::vector<detail::WorkflowBranch> branches,
    bool race) {
  auto run = std::make_shared<BranchRun>(branches.size());
  run->remaining = branches.size();
  std::vector<std::uint64_t> ids;
  if (race) {
    for (std::size_t i = 0; i < branches.size(); ++i) {
      const auto id = next_branch_++;
      race_branches_[id] = RaceBranch{scope.branch, false};
      ids.push_back(id);
    }
  }
  for (std::size_t i = 0; i < branches.size(); ++i) {
    detail::WorkflowScope child{workflow::location::named(loc, history_.intern(branches[i].name)),
                                race ? ids[i] : scope.branch};
    util::spawn(
        strand_,
        run_branch(this, host_.hold(), std::move(branches[i]), std::move(child), run, i, race, ids),
        "workflow branch");
  }
  while (run->remaining > 0) {
    auto op = branch_changed_.wait();
    co_await std::move(op);
  }
  for (auto id : ids) {
    race_branches_.erase(id);
  }
  co_return run;
}

namespace {

/// Whether `e` is the ActorError `group`.`code`.
bool has_code(std::exception_ptr e, std::string_view group, std::string_view code) {
  try {
    std::rethrow_exception(e);
  } catch (const ActorError& err) {
    return err.error().group == group && err.error().code == code;
  } catch (...) {
    return false;
  }
}

bool is_abort_error(std::exception_ptr e) {
  return has_code(e, "actor", "aborted");
}

bool is_cancel_error(std::exception_ptr e) {
  return has_code(e, "workflow", "branch_cancelled");
}

Value branch_status(const char* status,
                    const std::optional<Value>& output,
                    const std::optional<std::string>& error) {
  Value v = Value::object({{"status", Value(status)}});
  if (output) {
    v.set("output", *output);
  }
  if (error) {
    v.set("error", Value(*error));
  }
  return v;
}

Value race_output(const std::string& winner, const Value& value) {
  return Value::object({{"winner", Value(winner)}, {"value", value}});
}

ActorError branches_failed(const char* source,
                           const std::string& name,
                           const std::string& branch,
                           const std::string& error) {
  return ActorError(Error{
      "workflow", std::string(source) + "_failed",
      std::string(source == std::string("join") ? "Join" : "Race") + " \"" + name
          + "\" failed: branch \"" + branch + "\": " + error,
      Value::object({{"source", Value(source)}, {"name", Value(name)}, {"branch", Value(branch)}}),
      true});
}

}  // namespace

Task<Value> ActorWorkflow::join(detail::WorkflowScope scope,
                                std::string name,
                                std::vector<detail::WorkflowBranch> branches) {
  auto keep = host_.hold();
  const auto loc = enter(scope, name);
  Entry* e = existing(loc, EntryKind::kJoin, name);
  if (rolling_back_) {
    // The rollback pass goes through the branches of a completed join (their steps may have
    // undo handlers); anything else ends it.
    if (e == nullptr || e->status != EntryStatus::kCompleted) {
      stop_rollback_pass();
    }
    auto op = run_branches(scope, loc, std::move(branches), false);
    auto run = co_await std::move(op);
    for (const auto& err : run->errors) {
      if (err) {
        std::rethrow_exception(err);
      }
    }
    co_return history_.find(loc)->output.value_or(Value{});
  }
  if (e != nullptr && e->status == EntryStatus::kCompleted) {
    co_return e->output.value_or(Value{});
  }
  if (e == nullptr) {
    create(loc, EntryKind::kJoin).status = EntryStatus::kRunning;
  }
  std::vector<std::string> names;
  for (const auto& b : branches) {
    names.push_back(b.name);
  }
  auto op = run_branches(scope, loc, std::move(branches), false);
  auto run = co_await std::move(op);
  for (const auto& err : run->errors) {
    if (err && is_abort_error(err)) {
      std::rethrow_exception(err);  // the stop: nothing is recorded
    }
  }
  Value statuses{Object{}};
  Value outputs{Object{}};
  std::optional<std::pair<std::string, std::string>> failed;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (run->errors[i]) {
      const auto message = described(error_info(run->errors[i]));
      statuses.set(names[i], branch_status("failed", std::nullopt, message));
      if (!failed) {
        failed.emplace(names[i], message);
      }
    } else {
      statuses.set(names[i], branch_status("completed", run->outputs[i], std::nullopt));
      outputs.set(names[i], run->outputs[i]);
    }
  }
  e = history_.find(loc);
  e->branches = std::move(statuses);
  if (failed) {
    e->status = EntryStatus::kFailed;
    e->error = failed->second;
    history_.touch(loc);
    co_await flush();
    throw branches_failed("join", name, failed->first, failed->second);
  }
  e->output = std::move(outputs);
  e->status = EntryStatus::kCompleted;
  e->completed_at = host_.workflow_now_ms();
  history_.touch(loc);
  co_await flush();
  co_return history_.find(loc)->output.value_or(Value{});
}

Task<Value> ActorWorkflow::race(detail::WorkflowScope scope,
                                std::string name,
                                std::vector<detail::WorkflowBranch> branches) {
  auto keep = host_.hold();
  const auto loc = enter(scope, name);
  Entry* e = existing(loc, EntryKind::kRace, name);
  if (e != nullptr && e->status == EntryStatus::kCompleted) {
    // (the rollback pass does not enter a race's branches: only the winner's result stands)
    co_return e->output.value_or(Value{});
  }
  if (rolling_back_) {
    stop_rollback_pass();
  }
  if (e == nullptr) {
    create(loc, EntryKind::kRace).status = EntryStatus::kRunning;
  }
  std::vector<std::string> names;
  for (const auto& b : branches) {
    names.push_back(b.name);
  }
  auto op = run_branches(scope, loc, std::move(branches), true);
  auto run = co_await std::move(op);
  if (!run->winner) {
    for (const auto& err : run->errors) {
      if (err && is_abort_error(err)) {
        std::rethrow_exception(err);
      }
    }
  }
  Value statuses{Object{}};
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (run->winner && *run->winner == i) {
      statuses.set(names[i], branch_status("completed", run->outputs[i], std::nullopt));
    } else if (run->errors[i] && !is_cancel_error(run->errors[i])
               && !is_abort_error(run->errors[i])) {
      statuses.set(names[i],
                   branch_status("failed", std::nullopt, described(error_info(run->errors[i]))));
    } else {
      statuses.set(names[i],
                   branch_status(run->winner ? "cancelled" : "failed", std::nullopt, std::nullopt));
    }
  }
  e = history_.find(loc);
  e->branches = std::move(statuses);
  if (!run->winner) {
    const auto message =
        names.empty() ? std::string("no branches") : described(error_info(run->errors.front()));
    e->status = EntryStatus::kFailed;
    e->error = message;
    history_.touch(loc);
    co_await flush();
    throw branches_failed("race", name, names.empty() ? std::string() : names.front(), message);
  }
  const auto winner = *run->winner;
  e->winner = names[winner];
  e->output = race_output(names[winner], run->outputs[winner]);
  e->status = EntryStatus::kCompleted;
  e->completed_at = host_.workflow_now_ms();
  history_.touch(loc);
  co_await flush();
  co_return history_.find(loc)->output.value_or(Value{});
}

}  // namespace rivetkit::core
