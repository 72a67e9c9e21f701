#include "core/actor_instance.hpp"

#include "core/actor/action_meter.hpp"
#include "core/actor/hook_runner.hpp"
#include "core/actor/stored_value.hpp"
#include "core/errors.hpp"
#include "core/inspector/inspector.hpp"
#include "core/inspector/inspector_token.hpp"
#include "core/keys.hpp"
#include "core/strand_latch.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"
#include <rivetkit/convert.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>

namespace rivetkit::core {

namespace asio = boost::asio;
namespace client = protocol::client;
using namespace boost::asio::experimental::awaitable_operators;

std::optional<AwakeReason> ActorInstance::awake_reason() const {
  if (!lifecycle_.is(LifecycleState::kStarted)) {
    return AwakeReason::kNotStarted;
  }
  if (lifecycle_.stop_requested()) {
    return AwakeReason::kStopRequested;
  }
  if (definition_->options.no_sleep) {
    return AwakeReason::kNoSleep;
  }
  if (auto busy = sleep_.keeps_awake()) {
    return busy;
  }
  // Hibernatable connections let the actor sleep (their sockets wait in the driver); any other
  // connection, including the short-lived one of an HTTP request, keeps it awake.
  if (conns_.keep_awake()) {
    return AwakeReason::kConnection;
  }
  if (!watchers_.empty()) {
    return AwakeReason::kInspector;
  }
  return std::nullopt;
}

// ---- construction and start -------------------------------------------------------------------

ActorInstance::ActorInstance(asio::any_io_executor strand, Spec spec, const RuntimeConfig& config)
    : strand_(std::move(strand)),
      actor_id_(std::move(spec.actor_id)),
      name_(std::move(spec.name)),
      key_(std::move(spec.key)),
      key_string_(serialize_key(key_)),
      generation_(spec.generation),
      definition_(std::move(spec.definition)),
      store_(std::move(spec.store)),
      driver_(spec.driver),
      config_(config),
      lifecycle_(strand_),
      sleep_(strand_, *config_.clock, definition_->options.sleep_timeout, spec.first_request_grace),
      conns_(actor_id_, config_.max_outgoing_message_size, *this, name_),
      conn_life_(strand_, actor_id_, *definition_, lifecycle_, sleep_, conns_, *this),
      abort_(strand_, actor_id_),
      schedules_(strand_, actor_id_, *config_.clock, definition_->options, *this),
      storage_{ActorKv(actor_id_, *store_, *this),
               ActorDatabase(actor_id_,
                             definition_->database ? &*definition_->database : nullptr,
                             *store_,
                             strand_,
                             // Past the action's own timeout, so the caller gets that error:
                             // the statement is then interrupted, which ends the action.
                             definition_->options.action_timeout + std::chrono::seconds(1),
                             *this),
               ActorQueue(strand_, actor_id_, *definition_, *this),
               ActorWorkflow(strand_, actor_id_, *store_, *this)},
      state_(actor_id_),
      actions_(config_.clock),
      acks_(*config_.clock, *this),
      gate_(strand_, *this, definition_->options.durable_replies),
      watchers_(*config_.clock, *this) {
  data_ = definition_->hooks.make_data();
}

ActorInstance::~ActorInstance() = default;

Task<Result<void>> ActorInstance::start() {
  auto self = shared_from_this();
  const auto& hooks = definition_->hooks;
  auto fail_start = [this](Error e) {
    lifecycle_.start_failed();
    return fail(std::move(e));
  };
  auto load_op = store_->load();
  auto loaded = co_await std::move(load_op);
  if (!loaded) {
    co_return fail_start(loaded.error());
  }

  // The database first: its migrations run before any hook can see it.
  auto db_op = storage_.db.open();
  auto opened = co_await std::move(db_op);
  if (!opened) {
    co_return fail_start(opened.error());
  }

  auto queue_op = storage_.queue.load(*store_);
  auto queue_loaded = co_await std::move(queue_op);
  if (!queue_loaded) {
    co_return fail_start(queue_loaded.error());
  }

  Value input{Undefined{}};  // no input given: JS undefined (not null)
  if (loaded->input) {
    auto decoded = decode_stored(*loaded->input);
    if (!decoded) {
      co_return fail_start(decoded.error());
    }
    input = std::move(*decoded);
  }

  if (!loaded->has_initialized) {
    // A new actor: its state is created and committed as initialized before anything can see it,
    // so a crash before this point simply re-runs creation (the TS adapter's manual startup).
    const auto limit = definition_->options.create_state_timeout;
    if (hooks.create_state) {
      auto task = hooks.create_state(this, input);
      auto r = co_await run_hook("createState", std::move(task), limit);
      if (!r) {
        co_return fail_start(r.error());
      }
    }
    if (hooks.on_create) {
      auto task = hooks.on_create(this, input);
      auto r = co_await run_hook("onCreate", std::move(task), limit);
      if (!r) {
        co_return fail_start(r.error());
      }
    }
    std::string bytes = StateRecord::encode(*data_);
    storage::ActorWrite write;
    write.state = bytes;
    write.has_initialized = true;
    if (auto token = inspector::token_for_new_actor(config_)) {
      write.kv.put(inspector::token_key(), std::move(*token));
    }
    // What the migrations and the creation hooks did to the database and the queue commits
    // with it.
    storage_.queue.take_changes(write);
    storage_.db.take_changes(write);
    auto commit_op = store_->commit(std::move(write));
    auto committed = co_await std::move(commit_op);
    if (!committed) {
      co_return fail_start(committed.error());
    }
    storage_.write_durable();
    state_.stored(std::move(bytes));
  } else if (loaded->state) {
    auto decoded = decode_stored(*loaded->state);
    if (!decoded) {
      co_return fail_start(decoded.error());
    }
    try {
      data_->state_from_value(*decoded);
    } catch (const ConversionError& e) {
      log::error("stored state does not fit the state type actor_id={} error={}", actor_id_,
                 e.what());
      co_return fail_start(internal_error());
    }
    state_.stored(*loaded->state);
  }
  gate_.forget_changes();  // what the start hooks changed is in the state just loaded or written
  if (storage_.db.has_changes() || storage_.queue.has_changes()) {
    gate_.mark_changed();  // the migrations of a woken actor: written after the start
  }
  schedules_.load(loaded->schedules);

  if (hooks.create_vars) {
    auto task = hooks.create_vars(this);
    auto r =
        co_await run_hook("createVars", std::move(task), definition_->options.create_vars_timeout);
    if (!r) {
      co_return fail_start(r.error());
    }
  }
  if (hooks.on_wake) {
    auto task = hooks.on_wake(this);
    auto r = co_await run_hook("onWake", std::move(task), definition_->options.on_wake_timeout);
    if (!r) {
      co_return fail_start(r.error());
    }
  }
  lifecycle_.start_completed();
  conn_life_.restore(loaded->conns, driver_);
  sleep_.started();
  checkpoint();
  schedules_.sync_alarm();
  util::spawn(strand_, idle_watch(), "actor idle watch");
  spawn_task(schedules_.run(), "actor schedules");
  if (hooks.run) {
    util::spawn(strand_, run_handler(), "actor run handler");
  }
  conn_life_.reap_stale();
  log::debug("actor started actor_id={} name={} generation={}", actor_id_, name_, generation_);
  co_return Result<void>{};
}

// ---- stopping -----------------------------------------------------------------------------------

Task<void> ActorInstance::stop(StopReason reason) {
  auto self = shared_from_this();
  const auto& hooks = definition_->hooks;
  const bool destroying = reason == StopReason::kDestroy;
  if (!lifecycle_.is(LifecycleState::kStarted) || !lifecycle_.begin_grace(reason)) {
    co_return;
  }
  const auto deadline = config_.clock->steady_now() + definition_->options.sleep_grace_period;
  log::debug("actor stopping actor_id={} reason={}", actor_id_, destroying ? "destroy" : "sleep");

  // 1. The abort signal: `run` and long loops see it and return; schedules stop firing. Inspector
  // WebSockets are closed (they reconnect to the next instance).
  watchers_.close_all(1001, destroying ? "actor.destroyed" : "actor.sleeping");
  schedules_.stop();
  storage_.queue.abort();
  abort_.fire();

  // Waits (within the grace period) until the work that must finish first is done.
  auto drain = [&](bool include_wait_until, bool include_run) -> Task<void> {
    while (!sleep_.drained(include_wait_until, include_run)
           && config_.clock->steady_now() < deadline) {
      auto changed = sleep_.changed().wait();
      auto timer = config_.clock->wait_until(deadline);
      co_await (std::move(changed) || std::move(timer));
    }
  };
  // 2. In-flight actions, requests and socket callbacks finish. The run handler is not waited
  // for here: it has seen the abort and may still be winding down.
  co_await drain(false, false);

  // 3. on_sleep / on_destroy, while every connection is still open (RivetKit runs onSleep
  // before it closes the connections, so the hook can still message them), bounded by what is
  // left of the grace period.
  const auto& cleanup = destroying ? hooks.on_destroy : hooks.on_sleep;
  if (cleanup) {
    auto task = guarded(destroying ? "onDestroy" : "onSleep", actor_id_, cleanup(this));
    auto done = co_await with_deadline(*config_.clock, std::move(task), deadline);
    if (!done) {
      log::warn("{} did not finish within the grace period actor_id={}",
                destroying ? "onDestroy" : "onSleep", actor_id_);
    }
  }

  // 4. Connections that do not survive: every one on destroy, non-hibernatable ones on sleep.
  // Short-lived HTTP connections are left to the requests that own them.
  for (auto& conn : conns_.ended_by_stop(destroying)) {
    auto op = conn_life_.end(conn, destroying ? 1011 : 1000,
                             destroying ? "actor.destroyed" : "actor.sleeping");
    co_await std::move(op);
  }

  // 5. Everything else (keep_awake, wait_until, socket callbacks, and on sleep the run handler)
  // within the grace period; then whatever is still running is cancelled. A destroy does not
  // wait for `run` (RivetKit: destroy may cut through it).
  co_await drain(true, !destroying);
  if (!sleep_.drained(true, !destroying)) {
    log::warn("grace period over; cancelling remaining work actor_id={}", actor_id_);
  }
  lifecycle_.finalize();
  actions_.abort_all();

  // 6. Hibernatable sockets stay with the driver while the actor sleeps.
  if (!destroying) {
    conns_.save_hibernating();
  }

  // 7. The final save; nothing the actor acknowledged may be lost. (A destroyed actor's data is
  // wiped by the driver: only the saves already under way are waited for.) A handler still
  // holding writes (an exactly-once queue message) holds them no longer.
  gate_.end_holds();
  if (!destroying) {
    gate_.mark_changed();
    checkpoint();
  }
  auto wait_op = wait_durable(gate_.latest());
  auto saved = co_await std::move(wait_op);
  if (!saved) {
    log::error("final save failed actor_id={}: {}", actor_id_, saved.error().message);
  }
  auto close_op = storage_.db.close();
  co_await std::move(close_op);
  storage_.queue.close();
  if (saved && !destroying) {
    // Nothing more is written: the store may hand its data to the next instance as it is.
    auto store_close_op = store_->close();
    co_await std::move(store_close_op);
  }
  conns_.clear();
  lifecycle_.terminate();
  sleep_.changed().notify_all();
  log::debug("actor stopped actor_id={}", actor_id_);
}

void ActorInstance::on_abort(std::function<void()> listener) {
  abort_.add(std::move(listener), shared_from_this());
}

void ActorInstance::on_abort_owned(std::weak_ptr<void> owner, std::function<void()> listener) {
  abort_.add_owned(std::move(owner), std::move(listener), shared_from_this());
}

Task<void> ActorInstance::wait_hard_abort() {
  auto self = shared_from_this();
  co_await lifecycle_.wait_finalizing();
}

Task<void> ActorInstance::wait_aborted() {
  auto self = shared_from_this();
  co_await lifecycle_.wait_aborted();
}

Task<bool> ActorInstance::wait_aborted_for(std::chrono::milliseconds timeout) {
  auto self = shared_from_this();
  const auto until = config_.clock->steady_now() + timeout;
  while (!lifecycle_.aborted() && config_.clock->steady_now() < until) {
    auto fired = lifecycle_.abort_notifier().wait();
    auto timer = config_.clock->wait_until(until);
    co_await (std::move(fired) || std::move(timer));
  }
  co_return lifecycle_.aborted();
}

std::shared_ptr<detail::Latch> ActorInstance::make_latch() {
  return std::make_shared<StrandLatch>(strand_);
}

Task<Result<void>> ActorInstance::run_hook(const char* what,
                                           Task<void> task,
                                           std::chrono::milliseconds limit) {
  auto self = shared_from_this();
  auto op = core::run_hook(*config_.clock, actor_id_, what, std::move(task), limit);
  co_return co_await std::move(op);
}

void ActorInstance::request_stop(StopReason reason) {
  if (!lifecycle_.is(LifecycleState::kStarted)) {
    return;
  }
  if (reason == StopReason::kSleep && lifecycle_.stop_requested()) {
    return;  // a repeated sleep() is a no-op
  }
  lifecycle_.request_stop();
  sleep_.changed().notify_all();
  if (driver_ == nullptr) {
    return;
  }
  if (reason == StopReason::kDestroy) {
    driver_->request_destroy(actor_id_);
  } else {
    driver_->request_sleep(actor_id_);
  }
}

void ActorInstance::sleep() {
  request_stop(StopReason::kSleep);
}

void ActorInstance::destroy() {
  if (!lifecycle_.is(LifecycleState::kStarted)) {
    return;
  }
  if (driver_ != nullptr) {
    lifecycle_.request_stop();
    driver_->request_destroy(actor_id_);
  }
}

Task<void> ActorInstance::idle_watch() {
  auto self = shared_from_this();
  std::optional<AwakeReason> logged;
  while (lifecycle_.accepting()) {
    if (auto reason = awake_reason()) {
      if (reason != logged) {
        log::debug("actor stays awake actor_id={} reason={}", actor_id_, to_string(*reason));
        logged = reason;
      }
      co_await sleep_.changed().wait();
      continue;
    }
    logged.reset();
    const auto deadline = sleep_.sleep_deadline();
    if (config_.clock->steady_now() >= deadline) {
      log::debug("actor idle for {} ms, sleeping actor_id={}", sleep_.sleep_timeout().count(),
                 actor_id_);
      request_stop(StopReason::kSleep);
      co_return;
    }
    auto timer = config_.clock->wait_until(deadline);
    auto changed = sleep_.changed().wait();
    co_await (std::move(timer) || std::move(changed));
  }
}

// ---- background work ----------------------------------------------------------------------------

Task<void> ActorInstance::run_background(Task<void> task, WorkKind kind) {
  auto self = shared_from_this();
  auto work = track(kind);
  auto cancel = wait_hard_abort();
  auto raced = co_await (capture(std::move(task)) || std::move(cancel));
  if (raced.index() == 1) {
    co_return;  // the grace period ran out: cancelled
  }
  if (auto failure = std::get<0>(raced)) {
    Error e = error_from_exception(failure);
    // Worded as RivetKit logs it ("actor wait_until promise rejected"), for those who grep.
    log::warn("actor {} promise rejected: the task threw actor_id={} error={}.{} message={}",
              kind == WorkKind::kWaitUntil ? "wait_until" : "keep_awake", actor_id_, e.group,
              e.code, exception_message(failure));
  }
}

void ActorInstance::keep_awake(Task<void> task) {
  util::spawn(strand_, run_background(std::move(task), WorkKind::kKeepAwake), "keep_awake task");
}

void ActorInstance::wait_until(Task<void> task) {
  util::spawn(strand_, run_background(std::move(task), WorkKind::kWaitUntil), "wait_until task");
}

Task<void> ActorInstance::run_handler() {
  auto self = shared_from_this();
  auto work = track(WorkKind::kRun);
  // The handler is not cancelled at the abort signal: it sees c.abort_signal() and returns
  // within the grace period; only then (hard abort) is it cancelled. Its errors are caught here
  // (`||` would otherwise wait for the other operand after a failure).
  auto handler = capture(definition_->hooks.run(this));
  auto cancel = wait_hard_abort();
  auto raced = co_await (std::move(handler) || std::move(cancel));
  if (raced.index() == 1) {
    log::warn("run handler still running at the end of the grace period; cancelled actor_id={}",
              actor_id_);
    co_return;
  }
  if (auto failure = std::get<0>(raced)) {
    // As RivetKit: the error is logged and the actor falls back to the idle sleep rules (it
    // sleeps; it is not destroyed).
    Error e = error_from_exception(failure);
    if (e.group == "actor" && e.code == "aborted" && lifecycle_.aborted()) {
      // A wait the stop ended (a queue receive): how a run loop learns it should return.
      log::debug("run handler ended by the stop actor_id={}", actor_id_);
      co_return;
    }
    log::error("run handler failed actor_id={} error={}.{} message={}", actor_id_, e.group, e.code,
               exception_message(failure));
  } else {
    log::debug("run handler returned actor_id={}", actor_id_);
  }
}

void ActorInstance::restart_run() {
  if (definition_->hooks.run && lifecycle_.is(LifecycleState::kStarted) && !lifecycle_.aborted()
      && sleep_.count(WorkKind::kRun) == 0) {
    util::spawn(strand_, run_handler(), "actor run handler");
  }
}

std::int64_t ActorInstance::now_ms() const {
  return config_.clock->now_ms();
}

Task<void> ActorInstance::wait_for(std::chrono::milliseconds duration) {
  auto op = config_.clock->wait_for(duration);
  co_await std::move(op);
}

// ---- connections ------------------------------------------------------------------------------

ActorInstance::Delivery ActorInstance::deliver(const std::string& conn_id,
                                               client::ToServer message) {
  if (!lifecycle_.accepting()) {
    return Delivery::kRetry;
  }
  auto conn = conns_.find(conn_id);
  if (!conn) {
    return Delivery::kGone;
  }
  if (auto* action = std::get_if<client::ActionRequest>(&message)) {
    // Counted from now, so an action waiting for the strand already keeps the actor awake.
    auto work = track(WorkKind::kAction);
    // Due from now: the write of the action's own changes carries its index (message_acks.hpp).
    const auto index = conn->received_index();
    note_message_taken(*conn);
    auto run = [](std::shared_ptr<ActorInstance> self, std::shared_ptr<Connection> c,
                  client::ActionRequest request, std::optional<std::uint16_t> taken_index,
                  SleepGates::Work scope) -> Task<void> {
      auto action_op = self->run_action(c.get(), request.name, std::move(request.args));
      auto result = co_await std::move(action_op);
      const auto encoding = c->encoding();
      // The reply leaves only once the message's index is durable (reply_follows: see
      // note_message_taken); usually the write of the action's state carries it already.
      self->note_message_taken(*c, 0, true, taken_index);
      if (result) {
        std::string frame = client::encode_to_client(
            encoding, client::ToClient{client::ActionResponse{request.id, std::move(*result)}});
        if (frame.size() <= self->config().max_outgoing_message_size) {
          self->conns_.send_frame(*c, net::WsMessage{!client::is_text(encoding), std::move(frame)});
          co_return;
        }
        result = fail(outgoing_too_long());
      }
      Error e = sanitize_for_client(result.error());
      client::ErrorMessage msg{e.group,    e.code,     e.message,
                               e.metadata, request.id, self->specifier()};
      self->conns_.send_message(*c, client::ToClient{std::move(msg)});
      (void)scope;
    };
    util::spawn(strand_, run(shared_from_this(), conn, std::move(*action), index, std::move(work)),
                "connection action");
  } else {
    // (The command runner awaits subscription() instead, so the socket's next message waits.)
    auto& sub = std::get<client::SubscriptionRequest>(message);
    note_message_taken(*conn);
    util::spawn(strand_, conn_life_.subscription(conn, std::move(sub.event_name), sub.subscribe),
                "subscription");
  }
  return Delivery::kAccepted;
}

Task<ActorInstance::Delivery> ActorInstance::subscription(std::string conn_id,
                                                          client::SubscriptionRequest request) {
  auto conn = conns_.find(conn_id);
  if (!conn) {
    co_return Delivery::kGone;
  }
  note_message_taken(*conn);
  auto op =
      conn_life_.subscription(std::move(conn), std::move(request.event_name), request.subscribe);
  co_await std::move(op);
  co_return Delivery::kAccepted;
}

void ActorInstance::note_message_taken(const Connection& conn,
                                       std::size_t bytes,
                                       bool reply_follows,
                                       std::optional<std::uint16_t> index) {
  // A resumable socket acknowledges an inbound message only once its index is durable with the
  // connection (envoy-protocol.md §4.11); when that save happens: core/actor/message_acks.hpp.
  if (!conn.is_hibernatable()) {
    return;
  }
  auto transport = conn.transport();
  if (!transport || !transport->resume_point()) {
    return;
  }
  acks_.taken(conn.id(), bytes, reply_follows, index);
}

// ---- actions
// --------------------------------------------------------------------------------------

Task<Result<Value>> ActorInstance::run_action(Connection* conn, std::string name, Array args) {
  auto self = shared_from_this();
  auto work = track(WorkKind::kAction);
  auto it = definition_->hooks.actions.find(name);
  if (it == definition_->hooks.actions.end()) {
    ActionMeter::not_found(name_);
    co_return fail(action_not_found(name));
  }
  if (auto schema = definition_->hooks.input_schemas.find(name);
      schema != definition_->hooks.input_schemas.end() && schema->second.check) {
    if (auto problem = schema->second.check(args)) {
      co_return fail(Error{"actor", "validation_error",
                           "Invalid arguments for action `" + name + "`: " + *problem, std::nullopt,
                           true});
    }
  }
  ActionMeter meter(name_, it->first);
  auto run_op = actions_.run(catching(it->second(this, conn, std::move(args))),
                             definition_->options.action_timeout);
  auto ended = co_await std::move(run_op);
  if (ended.outcome == ActionWatch::Outcome::kTimedOut) {
    log::warn("action timed out actor_id={} action={}", actor_id_, name);
    co_return meter.finished(fail(action_timed_out()));
  }
  if (ended.outcome == ActionWatch::Outcome::kAborted) {
    co_return meter.finished(fail(Error{
        "actor", "aborted", "The actor stopped before the action finished", std::nullopt, true}));
  }
  Result<Value> result = std::move(ended.result);
  if (!result && !result.error().is_public) {
    log::warn("action failed actor_id={} action={} error={}.{}", actor_id_, name,
              result.error().group, result.error().code);
  }
  co_return meter.finished(std::move(result));
}

// ---- schedules (core/actor/schedules.hpp) -----------------------------------------------------

Task<Result<Value>> ActorInstance::run_scheduled_action(std::string action, Array args) {
  auto self = shared_from_this();
  auto work = track(WorkKind::kAction);
  auto op = run_action(nullptr, std::move(action), std::move(args));
  co_return co_await std::move(op);
}

void ActorInstance::schedules_changed() {
  request_save();
}

void ActorInstance::alarm_changed(std::optional<std::int64_t> at_ms) {
  if (driver_ != nullptr) {
    driver_->alarm_changed(actor_id_, at_ms);
  }
}

void ActorInstance::spawn_task(Task<void> task, const char* what) {
  auto held = [](std::shared_ptr<ActorInstance> self, Task<void> t) -> Task<void> {
    (void)self;
    co_await std::move(t);
  };
  util::spawn(strand_, held(shared_from_this(), std::move(task)), what);
}

// ---- outputs and saving -------------------------------------------------------------------------

void ActorInstance::mark_state_dirty() {
  state_.check_writable();
  request_save();
}

void ActorInstance::request_save() {
  gate_.mark_changed();
  if (save_posted_) {
    return;
  }
  save_posted_ = true;
  // Runs after the current handler yields, i.e. after the mutation the caller is about to make.
  asio::post(strand_, [self = shared_from_this()] {
    self->save_posted_ = false;
    self->checkpoint();
  });
}

std::uint64_t ActorInstance::checkpoint() {
  return gate_.checkpoint();
}

Task<Result<void>> ActorInstance::wait_durable(std::uint64_t seq) {
  auto self = shared_from_this();
  co_return co_await gate_.wait(seq);
}

// ---- what the output gate writes (OutputGate::Source) -------------------------------------------

bool ActorInstance::can_write() const {
  return lifecycle_.can_write();
}

std::optional<OutputGate::Write> ActorInstance::take_write() {
  storage::ActorWrite write;
  conns_.take_changes(write);
  schedules_.take_changes(write);
  storage_.take_changes(write);
  bool state_changed = false;
  if (auto bytes = state_.take_changed(*data_)) {
    write.state = std::move(*bytes);
    state_changed = true;
    watchers_.state_changed();
  }
  // Everything in the write so far is something outputs may depend on. Message indexes waiting
  // to be saved (core/actor/message_acks.hpp) ride along, or go alone when their delay is over;
  // a save of only indexes holds nothing back, unless a reply waits for one.
  const bool gating = !write.empty() || acks_.gates_output();
  conns_.add_records(acks_.take(gating), write);
  acks_.wrote(write, gating);
  if (write.empty()) {
    return std::nullopt;
  }
  OutputGate::Write out;
  out.gating = gating;
  out.hold = shared_from_this();
  out.commit = store_->commit(std::move(write));
  if (state_changed && definition_->hooks.on_state_change && !state_.in_on_change()) {
    out.started = [this] {
      state_.run_on_change(definition_->hooks.on_state_change, this);
    };
  }
  return out;
}

void ActorInstance::write_durable() {
  storage_.write_durable();
  schedules_.sync_alarm();  // the driver's alarm follows what is durable
}

void ActorInstance::outputs_progressed() {
  conns_.release(gate_.durable(), gate_.failed());
}

void ActorInstance::write_failed(std::uint64_t seq, const Error& error) {
  // The change is lost, and so is everything made after it (it is in memory only, built on the
  // lost one). Retrying would make durable what its callers were told failed (a client that
  // retries would apply it twice), so the gate writes nothing more, fails what waits, and the
  // instance goes: the next request starts the actor again from its last durable state
  // (core-semantics.md, "storage failures").
  log::error(
      "state save failed actor_id={} seq={}: {}.{}: {}; the actor restarts from its last "
      "durable state",
      actor_id_, seq, error.group, error.code, error.message);
  request_stop(StopReason::kSleep);
}

protocol::client::ActorSpecifier ActorInstance::specifier() const {
  return protocol::client::ActorSpecifier{actor_id_, generation_, key_string_};
}

void ActorInstance::broadcast(std::string event, Array args) {
  conns_.broadcast(event, args);
}

std::vector<detail::ConnApi*> ActorInstance::conns() {
  std::vector<detail::ConnApi*> out;
  out.reserve(conns_.live().size());
  for (const auto& [id, conn] : conns_.live()) {
    out.push_back(conn.get());
  }
  return out;
}

Task<void> ActorInstance::save_state() {
  auto self = shared_from_this();
  gate_.end_holds();  // an explicit save is written now, held or not
  gate_.mark_changed();
  std::uint64_t seq = checkpoint();
  auto op = wait_durable(seq == 0 ? gate_.latest() : seq);
  auto r = co_await std::move(op);
  if (!r) {
    throw ActorError(r.error());
  }
}

// ---- connections (core/actor/connection_set.hpp) -------------------------------------------

void ActorInstance::connections_changed() {
  request_save();
}

std::uint64_t ActorInstance::output_seq() {
  return checkpoint();
}

// ---- message acknowledgements (core/actor/message_acks.hpp)
// --------------------------------------

void ActorInstance::acks_need_save() {
  request_save();
}

bool ActorInstance::replies_held() const {
  return gate_.holds_outputs();
}

// ---- user KV (core/actor/actor_kv.hpp) ---------------------------------------------------------

bool ActorInstance::kv_open() const {
  return lifecycle_.storage_open();
}

bool ActorInstance::kv_loading() const {
  return lifecycle_.is(LifecycleState::kLoading);
}

Task<Result<void>> ActorInstance::save_now() {
  auto self = shared_from_this();
  gate_.end_holds();  // an explicit save is written now, held or not
  gate_.mark_changed();
  checkpoint();
  auto op = gate_.wait(gate_.latest());
  co_return co_await std::move(op);
}

std::shared_ptr<void> ActorInstance::hold() {
  return shared_from_this();
}

// ---- the database (core/actor/actor_database.hpp) -----------------------------------------------

bool ActorInstance::db_open() const {
  return lifecycle_.storage_open();
}

void ActorInstance::database_changed() {
  if (lifecycle_.is(LifecycleState::kLoading)) {
    // Taken by the creation write, or by the first write after the start.
    gate_.mark_changed();
    return;
  }
  request_save();
}

// ---- the queue (core/actor/actor_queue.hpp) ----------------------------------------------------

bool ActorInstance::queue_open() const {
  return lifecycle_.storage_open();
}

void ActorInstance::queue_changed() {
  database_changed();  // the same rule: while loading, taken by the creation or first write
  watchers_.queue_changed();
}

std::optional<std::string> ActorInstance::inspector_state() {
  return inspector::wire_state(*this);
}

std::optional<std::string> ActorInstance::inspector_workflow_history() {
  return inspector::wire_workflow_history(*this);
}

std::vector<protocol::inspector::Connection> ActorInstance::inspector_connections() {
  return inspector::wire_connections(*this);
}

std::int64_t ActorInstance::queue_now_ms() const {
  return now_ms();
}

std::shared_ptr<void> ActorInstance::queue_wait_began() {
  return std::make_shared<SleepGates::Work>(track(WorkKind::kQueueWait));
}

// ---- the workflow (core/workflow/actor_workflow.hpp)
// ---------------------------------------------

void ActorInstance::workflow_changed() {
  request_save();
  watchers_.workflow_changed();
}

Task<Result<void>> ActorInstance::workflow_save() {
  auto op = save_after_holds();
  co_return co_await std::move(op);
}

std::int64_t ActorInstance::workflow_now_ms() const {
  return now_ms();
}

Task<bool> ActorInstance::workflow_wait(std::chrono::milliseconds timeout) {
  auto op = wait_aborted_for(timeout);
  co_return co_await std::move(op);
}

std::shared_ptr<void> ActorInstance::workflow_parked() {
  return std::make_shared<SleepGates::Work>(track(WorkKind::kQueueWait));
}

void ActorInstance::set_wake(std::optional<std::int64_t> at_ms) {
  schedules_.set_wake(at_ms);
}

void ActorInstance::write_guard_flag() {
  // RivetKit's flag (its fixture reads it back with c.kv().get): a user KV key, written in the
  // background so the misuse itself still throws at once.
  std::vector<detail::KvWrite> writes(1);
  writes[0].kind = detail::KvWrite::Kind::kPut;
  writes[0].key = "__rivet_actor_workflow_guard_triggered";
  writes[0].value = "true";
  spawn_task(write_kv_in_background(shared_from_this(), std::move(writes)), "workflow guard flag");
}

Task<void> ActorInstance::write_kv_in_background(std::shared_ptr<ActorInstance> self,
                                                 std::vector<detail::KvWrite> writes) {
  auto op = self->storage_.kv.write(std::move(writes));
  co_await std::move(op);
}

Task<Result<void>> ActorInstance::save_after_holds() {
  auto self = shared_from_this();
  gate_.mark_changed();
  checkpoint();
  auto op = gate_.wait(gate_.latest());
  co_return co_await std::move(op);
}

std::shared_ptr<void> ActorInstance::hold_writes(std::chrono::milliseconds limit) {
  return gate_.hold_writes(std::chrono::steady_clock::now() + limit, shared_from_this());
}

}  // namespace rivetkit::core
