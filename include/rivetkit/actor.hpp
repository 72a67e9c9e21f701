#pragma once
/// Defining actors.
///
///     struct CounterState { std::int64_t count = 0; };
///     RIVETKIT_FIELDS(CounterState, count)
///
///     rivetkit::ActorDefinition counter() {
///       return rivetkit::actor<CounterState>("counter")
///           .action("increment", [](auto& c, std::int64_t amount) {
///             c.state().count += amount;
///             c.broadcast("newCount", c.state().count);
///             return c.state().count;
///           })
///           .action("getCount", [](auto& c) { return c.state().count; });
///     }
///
/// `actor<State>` gives an actor with that persisted state type. For more types use
/// `actor<rivetkit::ActorTypes<State, ConnState, Vars, ConnParams, Input>>`.
///
/// Handlers take the context first (`auto& c` or `rivetkit::Context<Types>& c`), then their
/// arguments as ordinary C++ parameters, converted from the client's values (convert.hpp). They
/// may be plain functions or coroutines returning rivetkit::Task<T>. All of an actor's code runs on
/// its strand: code between two co_awaits runs alone, so no locks are needed; handlers of one actor
/// may interleave at co_await points (as JS actors interleave at await).
///
/// Hooks, in the order they run (the same order as RivetKit's):
///   first start:  create_state(c, input) -> on_create(c, input) -> create_vars(c) -> on_wake(c)
///   later starts: create_vars(c) -> on_wake(c)
///   connection:   on_before_connect(c, params[, request]) -> create_conn_state(c, params[,
///   request])
///                 -> on_connect(c, conn) ... on_disconnect(c, conn)
///   raw traffic:  on_request(c, request) -> Response, on_websocket(c, websocket)
///   stopping:     on_sleep(c) or on_destroy(c)
/// Every HTTP action also runs as a short-lived connection (the connection hooks run around it),
/// as in RivetKit.
///
/// Errors: throw rivetkit::UserError (or ActorError) to send a structured error to the client;
/// any other exception reaches the client as `core.internal_error` and is logged.

#include <rivetkit/abort_signal.hpp>
#include <rivetkit/actor_log.hpp>
#include <rivetkit/client.hpp>
#include <rivetkit/convert.hpp>
#include <rivetkit/database.hpp>
#include <rivetkit/detail/access.hpp>
#include <rivetkit/detail/invoke.hpp>
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/driver_context.hpp>
#include <rivetkit/error.hpp>
#include <rivetkit/http.hpp>
#include <rivetkit/input_schema.hpp>
#include <rivetkit/kv.hpp>
#include <rivetkit/options.hpp>
#include <rivetkit/queue.hpp>
#include <rivetkit/schedule.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>
#include <rivetkit/websocket.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rivetkit {

/// Placeholder for "no state" / "no vars".
struct Empty {
  bool operator==(const Empty&) const = default;
};
template <>
struct Convert<Empty> {
  static void to(const Empty&, Value& out) { out = Value{}; }
  static void from(const Value&, Empty&) {}
};

template <class State = Empty,
          class ConnState = Value,
          class Vars = Empty,
          class ConnParams = Value,
          class Input = Value>
struct ActorTypes {
  using StateType = State;
  using ConnStateType = ConnState;
  using VarsType = Vars;
  using ConnParamsType = ConnParams;
  using InputType = Input;
};

namespace detail {

template <class T>
concept TypeBundle = requires {
  typename T::StateType;
  typename T::ConnStateType;
  typename T::VarsType;
  typename T::ConnParamsType;
  typename T::InputType;
};

template <class T>
struct NormalizeTypes {
  using type = ActorTypes<T>;
};
template <TypeBundle T>
struct NormalizeTypes<T> {
  using type = T;
};

/// The result of a task started by keep_awake / wait_until, for whoever awaits it.
template <class T>
struct PendingResult {
  std::shared_ptr<Latch> latch;
  std::optional<T> value;
  std::exception_ptr error;
};
template <>
struct PendingResult<void> {
  std::shared_ptr<Latch> latch;
  std::exception_ptr error;
};

/// Runs `task`, keeps its outcome in `pending` and rethrows its error (so the runtime logs it).
/// If the frame is destroyed before the task finished (the actor's grace period ran out), waiters
/// are released with an `actor.aborted` error.
template <class T>
Task<void> run_into(Task<T> task, std::shared_ptr<PendingResult<T>> pending) {
  struct Release {
    PendingResult<T>* p;
    ~Release() {
      if (!p->latch->is_set()) {
        if (!p->error) {
          p->error = std::make_exception_ptr(ActorError(
              Error{"actor", "aborted", "The actor stopped before the task finished", {}, true}));
        }
        p->latch->set();
      }
    }
  } release{pending.get()};
  try {
    if constexpr (std::is_void_v<T>) {
      co_await std::move(task);
    } else {
      pending->value.emplace(co_await std::move(task));
    }
  } catch (...) {
    pending->error = std::current_exception();
    pending->latch->set();
    throw;
  }
  pending->latch->set();
}

template <class T>
Task<T> await_pending(std::shared_ptr<PendingResult<T>> pending) {
  co_await pending->latch->wait();
  if (pending->error) {
    std::rethrow_exception(pending->error);
  }
  if constexpr (!std::is_void_v<T>) {
    co_return std::move(*pending->value);
  }
}

}  // namespace detail

/// A task started by keep_awake / wait_until. It runs whether or not anyone waits for it; drop
/// the handle to fire and forget, or `co_await handle.result()` for its value (its error is
/// rethrown there, and logged by the runtime either way).
template <class T>
class BackgroundTask {
 public:
  /// Resumes when the task has finished: its result, or its error rethrown.
  Task<T> result() const { return detail::await_pending<T>(pending_); }
  /// True once the task has finished.
  bool done() const { return pending_->latch->is_set(); }

 private:
  friend struct detail::Access;
  explicit BackgroundTask(std::shared_ptr<detail::PendingResult<T>> pending)
      : pending_(std::move(pending)) {}
  std::shared_ptr<detail::PendingResult<T>> pending_;
};

template <class Types>
class ActorBuilder;

namespace detail {
/// Runs a workflow function as the run handler (defined in workflow.hpp).
template <class Types, class F, class G>
Task<void> run_workflow(ActorApi* api, F f, G on_error);
}  // namespace detail

namespace detail {

template <class Types>
struct ActorData final : UserActorData {
  typename Types::StateType state{};
  typename Types::VarsType vars{};
  Value state_to_value() const override { return to_value(state); }
  void state_from_value(const Value& v) override {
    typename Types::StateType fresh{};
    Convert<typename Types::StateType>::from(v, fresh);
    state = std::move(fresh);
  }
};

template <class Types>
struct ConnData final : UserConnData {
  typename Types::ConnParamsType params{};
  typename Types::ConnStateType state{};
  Value state_to_value() const override { return to_value(state); }
  void state_from_value(const Value& v) override {
    typename Types::ConnStateType fresh{};
    Convert<typename Types::ConnStateType>::from(v, fresh);
    state = std::move(fresh);
  }
};

}  // namespace detail

/// One client connection, as seen from actor code. A cheap handle; valid while the connection is
/// open (use it only inside the actor's own handlers).
template <class Types>
class Conn {
 public:
  using ConnParams = typename Types::ConnParamsType;
  using ConnState = typename Types::ConnStateType;

  const std::string& id() const { return api_->id(); }
  const ConnParams& params() const { return data().params; }
  /// Per-connection state; marks it changed.
  ConnState& state() {
    api_->mark_state_dirty();
    return data().state;
  }
  /// Reads the per-connection state without marking it changed.
  const ConnState& state() const { return data().state; }
  const Request& request() const { return api_->request(); }
  bool is_hibernatable() const { return api_->is_hibernatable(); }

  /// Sends event `name` to this connection only (whether or not it subscribed).
  template <class... A>
  void send(std::string name, const A&... args) const {
    api_->send(std::move(name), Array{to_value(args)...});
  }
  /// Closes the connection (WebSocket close 1000 with `reason`).
  void disconnect(std::string reason = {}) const { api_->disconnect(std::move(reason)); }

 private:
  friend struct detail::Access;
  explicit Conn(detail::ConnApi* api) : api_(api) {}
  detail::ConnApi* api() const { return api_; }
  detail::ConnData<Types>& data() const {
    return *static_cast<detail::ConnData<Types>*>(api_->user_data());
  }
  detail::ConnApi* api_;
};

/// The schedule of one actor (`c.schedule()`): durable delayed calls of its own actions.
class Schedule {
 public:
  /// Calls `action(args...)` after `delay`. Returns the schedule's id.
  template <class... A>
  std::string after(std::chrono::milliseconds delay, std::string action, const A&... args) const {
    // Saturating: a delay taken from a client must not overflow (ScheduleApi::at refuses the
    // result).
    std::int64_t at = 0;
    if (__builtin_add_overflow(api_->now_ms(), static_cast<std::int64_t>(delay.count()), &at)) {
      at = delay.count() > 0 ? INT64_MAX : INT64_MIN;
    }
    return api_->at(at, std::move(action), Array{to_value(args)...});
  }
  /// Calls `action(args...)` at `at_ms` (ms since the Unix epoch; a past time runs at once).
  template <class... A>
  std::string at(std::int64_t at_ms, std::string action, const A&... args) const {
    return api_->at(at_ms, std::move(action), Array{to_value(args)...});
  }
  /// Cancels a pending schedule; false when there is none with this id.
  bool cancel(const std::string& id) const { return api_->cancel(id); }
  /// Pending schedules, soonest first.
  std::vector<ScheduledEvent> list() const { return api_->list(); }
  std::optional<ScheduledEvent> get(const std::string& id) const {
    for (auto& e : api_->list()) {
      if (e.id == id) {
        return e;
      }
    }
    return std::nullopt;
  }

 private:
  friend struct detail::Access;
  explicit Schedule(detail::ScheduleApi* api) : api_(api) {}
  detail::ScheduleApi* api_;
};

/// The context every handler receives. Valid only during the call it was given to.
template <class Types>
class Context {
 public:
  using State = typename Types::StateType;
  using Vars = typename Types::VarsType;

  /// The persisted state. Calling the non-const overload marks it changed: the runtime then
  /// saves it and, by default, holds this call's reply and events until the save is durable.
  /// Inside on_state_change it throws `actor.state_mutation_reentrant` (read through the const
  /// overload there, or take the state as the hook's second parameter). An actor declared without
  /// a state type (rivetkit::Empty) has none: both overloads throw `actor.state_not_enabled`.
  State& state() {
    if constexpr (std::is_same_v<State, Empty>) {
      detail::throw_state_not_enabled();
    } else {
      api_->mark_state_dirty();
      return data().state;
    }
  }
  const State& state() const {
    if constexpr (std::is_same_v<State, Empty>) {
      detail::throw_state_not_enabled();
    } else {
      return data().state;
    }
  }
  /// The persisted state, read only: unlike state() on a non-const context it does not mark it
  /// changed, so a handler that only reads costs no save check (no encode and compare at the end
  /// of its turn). Same errors as state().
  const State& read_state() const { return std::as_const(*this).state(); }
  /// Ephemeral per-instance values (rebuilt by create_vars on every start; never persisted).
  Vars& vars() { return data().vars; }

  const std::string& actor_id() const { return api_->actor_id(); }
  const std::string& name() const { return api_->name(); }
  const std::vector<std::string>& key() const { return api_->key(); }
  std::uint32_t generation() const { return api_->generation(); }
  /// The region this process runs in (RIVET_REGION; empty when unset), as RivetKit's `c.region`.
  const std::string& region() const { return api_->driver_context().region; }

  /// Sends event `name` with `args` to every connection subscribed to it.
  template <class... A>
  void broadcast(std::string name, const A&... args) const {
    api_->broadcast(std::move(name), Array{to_value(args)...});
  }

  /// The connection this call came from (actions, connection hooks, raw request/websocket).
  /// Throws when there is none (e.g. a scheduled action).
  Conn<Types> conn() const {
    if (conn_ == nullptr) {
      throw ActorError(Error{"actor", "no_connection", "This call has no connection", {}, true});
    }
    return detail::Access::make<Conn<Types>>(conn_);
  }
  bool has_conn() const { return conn_ != nullptr; }
  std::vector<Conn<Types>> conns() const {
    std::vector<Conn<Types>> out;
    for (auto* c : api_->conns()) {
      out.push_back(detail::Access::make<Conn<Types>>(c));
    }
    return out;
  }

  /// Saves the state now and resumes when it is durable.
  Task<void> save_state() const { return api_->save_state(); }
  /// Waits on the actor's clock (use instead of blocking sleeps).
  Task<void> wait(std::chrono::milliseconds duration) const { return api_->wait_for(duration); }
  /// Asks the runtime to put this actor to sleep / destroy it once the current work is done.
  void sleep() const { api_->sleep(); }
  void destroy() const { api_->destroy(); }
  /// True once the actor is stopping (sleep or destroy): long loops should return. Same as
  /// abort_signal().aborted().
  bool aborted() const { return api_->aborted(); }
  /// The abort signal: fires when the actor begins to stop. `run` and other long work watch it
  /// and return; what is still running when the grace period ends is cancelled.
  AbortSignal abort_signal() const { return detail::Access::make<AbortSignal>(api_); }
  /// Starts `task` now (on the actor's strand) and keeps the actor awake until it finishes:
  ///     auto v = co_await c.keep_awake(fetch()).result();   // or just c.keep_awake(fetch());
  template <class T>
  BackgroundTask<T> keep_awake(Task<T> task) const {
    return track<T>(std::move(task), true);
  }
  /// Starts `task` now in the background: the actor may sleep meanwhile, but stopping waits for
  /// it within the grace period. An error is logged and does not fail the caller.
  template <class T>
  BackgroundTask<T> wait_until(Task<T> task) const {
    return track<T>(std::move(task), false);
  }
  /// Durable delayed calls of this actor's actions.
  Schedule schedule() const { return detail::Access::make<Schedule>(&api_->schedule()); }
  /// The actor's key-value store (kv.hpp).
  Kv kv() const { return detail::Access::make<Kv>(&api_->kv()); }
  /// The actor's SQLite database (database.hpp); declare it with ActorBuilder::database.
  Database db() const { return detail::Access::make<Database>(&api_->db()); }
  /// The actor's durable queue (queue.hpp); declare its queues with ActorBuilder::queue.
  Queue queue() const { return detail::Access::make<Queue>(&api_->queue(), conn_); }
  /// The actor's logger (actor_log.hpp): lines stamped with its name, key and id.
  ActorLog log() const { return detail::Access::make<ActorLog>(api_); }
  /// Other actors of the registry, to call, create and destroy (client.hpp).
  Client client() const { return detail::Access::make<Client>(&api_->client(), api_); }
  /// Wall-clock ms since the Unix epoch, on the runtime's clock (tests may run it manually).
  std::int64_t now_ms() const { return api_->now_ms(); }
  /// The actor's strand, for Asio operations that must run with the actor's code.
  boost::asio::any_io_executor executor() const { return api_->executor(); }

 private:
  friend struct detail::Access;
  template <class>
  friend class ActorBuilder;
  Context(detail::ActorApi* api, detail::ConnApi* conn) : api_(api), conn_(conn) {}
  detail::ActorApi* api() const { return api_; }
  template <class T>
  BackgroundTask<T> track(Task<T> task, bool keep_awake) const {
    auto pending = std::make_shared<detail::PendingResult<T>>();
    pending->latch = api_->make_latch();
    auto runner = detail::run_into<T>(std::move(task), pending);
    if (keep_awake) {
      api_->keep_awake(std::move(runner));
    } else {
      api_->wait_until(std::move(runner));
    }
    return detail::Access::make<BackgroundTask<T>>(std::move(pending));
  }
  detail::ActorData<Types>& data() const {
    return *static_cast<detail::ActorData<Types>*>(api_->user_data());
  }
  detail::ActorApi* api_;
  detail::ConnApi* conn_;
};

/// A finished actor definition, registered with Registry::add.
class ActorDefinition {
 public:
  const std::string& name() const { return data_->name; }

 private:
  friend struct detail::Access;
  template <class>
  friend class ActorBuilder;
  explicit ActorDefinition(std::shared_ptr<const detail::ActorDefinitionData> data)
      : data_(std::move(data)) {}
  const std::shared_ptr<const detail::ActorDefinitionData>& data() const { return data_; }
  std::shared_ptr<const detail::ActorDefinitionData> data_;
};

template <class Types>
class ActorBuilder {
 public:
  using Ctx = Context<Types>;
  using State = typename Types::StateType;
  using Vars = typename Types::VarsType;
  using ConnState = typename Types::ConnStateType;
  using ConnParams = typename Types::ConnParamsType;
  using Input = typename Types::InputType;

  explicit ActorBuilder(std::string name) : data_(std::make_shared<detail::ActorDefinitionData>()) {
    data_->name = std::move(name);
    data_->hooks.make_data = [] {
      return std::make_unique<detail::ActorData<Types>>();
    };
    data_->hooks.create_conn_data =
        [](detail::ActorApi*, Value params,
           const Request*) -> Task<std::unique_ptr<detail::UserConnData>> {
      return make_conn_data(std::move(params));
    };
    data_->hooks.restore_conn_data = [](const Value& params, const Value& state) {
      auto data = std::make_unique<detail::ConnData<Types>>();
      data->params = decode_params(params);
      data->state_from_value(state);
      return std::unique_ptr<detail::UserConnData>(std::move(data));
    };
    if constexpr (!std::is_same_v<State, Empty>) {
      data_->types.state = &detail::ts_type_of<State>;
    }
    if constexpr (!std::is_same_v<ConnParams, Value>) {
      data_->types.conn_params = &detail::ts_type_of<ConnParams>;
    }
    if constexpr (!std::is_same_v<Input, Value>) {
      data_->types.input = &detail::ts_type_of<Input>;
    }
  }

  /// `f(c, const Input&) -> State` (or Task<State>); `f(c) -> State` also works. Runs once, when
  /// the actor is first created. Without it the state starts default-constructed.
  template <class F>
  ActorBuilder& create_state(F f) {
    data_->hooks.create_state = [f](detail::ActorApi* api, Value input) -> Task<void> {
      return run_create_state(f, api, std::move(input));
    };
    return *this;
  }
  /// `f(c, const Input&)` or `f(c)`; once, right after create_state.
  template <class F>
  ActorBuilder& on_create(F f) {
    data_->hooks.on_create = [f](detail::ActorApi* api, Value input) -> Task<void> {
      return run_with_input(f, api, std::move(input));
    };
    return *this;
  }
  /// `f(c) -> Vars` or `f(c, const DriverContext&) -> Vars` (or Task<Vars>); on every start.
  template <class F>
  ActorBuilder& create_vars(F f) {
    data_->hooks.create_vars = [f](detail::ActorApi* api) -> Task<void> {
      return run_create_vars(f, api);
    };
    return *this;
  }
  /// `f(c)`; on every start, after create_vars.
  template <class F>
  ActorBuilder& on_wake(F f) {
    data_->hooks.on_wake = actor_hook(f);
    return *this;
  }
  template <class F>
  ActorBuilder& on_sleep(F f) {
    data_->hooks.on_sleep = actor_hook(f);
    return *this;
  }
  template <class F>
  ActorBuilder& on_destroy(F f) {
    data_->hooks.on_destroy = actor_hook(f);
    return *this;
  }
  /// `f(c)` or `f(c, const State& state)`, synchronous; once per burst of state changes, when
  /// the change is handed to storage. Writing the state in it throws
  /// `actor.state_mutation_reentrant` (vars and connections may change).
  template <class F>
  ActorBuilder& on_state_change(F f) {
    data_->hooks.on_state_change = [f](detail::ActorApi* api) {
      Ctx c(api, nullptr);
      if constexpr (std::is_invocable_v<F&, Ctx&, const State&>) {
        f(c, std::as_const(c).state());
      } else {
        f(c);
      }
    };
    return *this;
  }
  /// `f(c, const ConnParams&[, const Request&])`; throw to reject the connection.
  template <class F>
  ActorBuilder& on_before_connect(F f) {
    data_->hooks.on_before_connect = [f](detail::ActorApi* api, Value params,
                                         const Request* req) -> Task<void> {
      return run_before_connect(f, api, std::move(params), req);
    };
    return *this;
  }
  /// `f(c, const ConnParams&[, const Request&]) -> ConnState` (or Task<ConnState>).
  template <class F>
  ActorBuilder& create_conn_state(F f) {
    data_->hooks.create_conn_data =
        [f](detail::ActorApi* api, Value params,
            const Request* req) -> Task<std::unique_ptr<detail::UserConnData>> {
      return run_create_conn_state(f, api, std::move(params), req);
    };
    return *this;
  }
  /// `f(c, Conn<Types>)`.
  template <class F>
  ActorBuilder& on_connect(F f) {
    data_->hooks.on_connect = conn_hook(f);
    return *this;
  }
  template <class F>
  ActorBuilder& on_disconnect(F f) {
    data_->hooks.on_disconnect = conn_hook(f);
    return *this;
  }
  /// Declares event `name` with its subscription rule: `can_subscribe(c) -> bool` (or
  /// Task<bool>) sees the subscribing connection as `c.conn()`. A connection refused (false, or
  /// the rule threw) is closed with the error (`auth.forbidden` for false), so the client's next
  /// call on it fails with that error. Events need not be declared: an undeclared one (or one
  /// declared without a rule) may be subscribed to by anyone.
  template <class F>
  ActorBuilder& event(std::string name, F can_subscribe) {
    data_->events[std::move(name)].can_subscribe =
        [can_subscribe](detail::ActorApi* api, detail::ConnApi* conn) -> Task<bool> {
      return detail::call_async(can_subscribe, Ctx(api, conn));
    };
    return *this;
  }
  ActorBuilder& event(std::string name) {
    data_->events.try_emplace(std::move(name));
    return *this;
  }
  /// Declares event `name` carrying a T (what `c.broadcast(name, t)` sends): the registry's
  /// TypeScript declarations type the client's `conn.on(name, (t) => ...)` with it.
  template <class T>
  ActorBuilder& event(std::string name) {
    data_->types.events[name] = &detail::ts_type_of<T>;
    return event(std::move(name));
  }
  template <class T, class F>
  ActorBuilder& event(std::string name, F can_subscribe) {
    data_->types.events[name] = &detail::ts_type_of<T>;
    return event(std::move(name), std::move(can_subscribe));
  }
  /// Declares queue `name` (queue.hpp): sends to it are kept; sends to a name no queue declares
  /// complete and keep nothing, as in RivetKit. `can_publish(c) -> bool` (or Task<bool>) sees
  /// the sending client's connection as `c.conn()`; false refuses the send with `auth.forbidden`.
  ActorBuilder& queue(std::string name) {
    data_->queues.try_emplace(std::move(name));
    return *this;
  }
  template <class F>
  ActorBuilder& queue(std::string name, F can_publish) {
    data_->queues[std::move(name)].can_publish =
        [can_publish](detail::ActorApi* api, detail::ConnApi* conn) -> Task<bool> {
      return detail::call_async(can_publish, Ctx(api, conn));
    };
    return *this;
  }
  /// Declares queue `name` with its redelivery rules (QueueDelivery, beyond RivetKit): a
  /// visibility timeout and a most deliveries before a message goes to the dead letters. Throws
  /// std::invalid_argument for a visibility timeout below 1 ms or max_deliveries 0.
  ActorBuilder& queue(std::string name, QueueDelivery delivery) {
    check_delivery(name, delivery);
    data_->queues[std::move(name)].delivery = delivery;
    return *this;
  }
  template <class F>
  ActorBuilder& queue(std::string name, F can_publish, QueueDelivery delivery) {
    check_delivery(name, delivery);
    data_->queues[name].delivery = delivery;
    return queue(std::move(name), std::move(can_publish));
  }
  /// Declares queue `name` whose messages are a Message and whose completion answers a
  /// Complete (what a `send(name, body, {wait: true})` resolves with): the registry's
  /// TypeScript declarations type the client's `send` with them. The types add nothing at run
  /// time; a can_publish rule is added with `.queue(name, can_publish)`.
  template <class Message, class Complete = Value>
  ActorBuilder& queue(std::string name) {
    data_->types.queues[name] = {&detail::ts_type_of<Message>, &detail::ts_type_of<Complete>};
    return queue(std::move(name));
  }
  template <class Message, class Complete = Value>
  ActorBuilder& queue(std::string name, QueueDelivery delivery) {
    data_->types.queues[name] = {&detail::ts_type_of<Message>, &detail::ts_type_of<Complete>};
    return queue(std::move(name), delivery);
  }
  /// `f(c, const Request&) -> Response` (or Task<Response>): raw HTTP under `/request/...`.
  /// Returning `std::optional<Response>` (or void) is allowed: nothing is answered with 500, as
  /// RivetKit answers an onRequest that returns nothing.
  template <class F>
  ActorBuilder& on_request(F f) {
    data_->hooks.on_request = [f](detail::ActorApi* api, detail::ConnApi* conn,
                                  Request req) -> Task<std::optional<Response>> {
      return run_on_request(f, api, conn, std::move(req));
    };
    return *this;
  }
  /// `f(c, WebSocket)`: raw WebSocket under `/websocket/...`. Register message handlers on the
  /// socket; the socket stays open after f returns.
  template <class F>
  ActorBuilder& on_websocket(F f) {
    data_->hooks.on_websocket = [f](detail::ActorApi* api, detail::ConnApi* conn,
                                    WebSocket ws) -> Task<void> {
      return detail::call_async(f, Ctx(api, conn), std::move(ws));
    };
    return *this;
  }
  /// `f(c) -> Task<void>`: a background loop started after on_wake on every start. While it runs
  /// the actor stays awake. When the actor stops (sleep or destroy) the abort signal fires
  /// (c.abort_signal()): the handler should then return; one still running when the grace period
  /// ends is cancelled (its next co_await throws). When it returns, or throws (the error is
  /// logged), the actor goes back to the idle sleep rules: it sleeps, it is not destroyed.
  template <class F>
  ActorBuilder& run(F f) {
    data_->hooks.run = actor_hook(f);
    return *this;
  }
  /// `f(WorkflowContext<Types>&) -> Task<void>`: the run handler as a durable workflow
  /// (workflow.hpp): its steps are recorded and replayed, so after a restart it resumes where it
  /// was. Once it returns it is complete and does not run again; once it fails (a step past its
  /// retries, an exception) it is recorded as failed and does not run again either.
  template <class F>
  ActorBuilder& workflow(F f) {
    return workflow(std::move(f), nullptr);
  }
  /// The same, with `on_error(c, const Value& event)` (or Task<void>): called for each failed
  /// step attempt and for the workflow's failure, with RivetKit's WorkflowErrorEvent
  /// (`{step: {stepName, attempt, willRetry, retryDelay, error: {name, message}, ...}}` or
  /// `{workflow: {workflowId, error}}`). It runs as a hook: it may change the state, broadcast
  /// and send to the queue; an exception it throws is logged.
  template <class F, class G>
  ActorBuilder& workflow(F f, G on_error) {
    data_->workflow = true;
    data_->hooks.run = [f, on_error](detail::ActorApi* api) -> Task<void> {
      return detail::run_workflow<Types>(api, f, on_error);
    };
    return *this;
  }
  /// Registers action `name`: `f(c, args...) -> R` or `Task<R>`. Arguments are converted from the
  /// client's values; a mismatch answers the client with `actor.invalid_request`. Dotted names
  /// (`calculator.add`) are what clients call for RivetKit's nested actions.
  template <class F>
  ActorBuilder& action(std::string name, F f) {
    data_->types.actions[name] = &detail::describe_action<Ctx, F>;
    data_->hooks.actions[name] = [f, name](detail::ActorApi* api, detail::ConnApi* conn,
                                           Array args) -> Task<Value> {
      return detail::invoke_action<Ctx>(f, Ctx(api, conn), name, std::move(args));
    };
    return *this;
  }
  /// The same, with an input schema checked first (`actor.validation_error` when it fails).
  template <class F>
  ActorBuilder& action(std::string name, F f, InputSchema schema) {
    data_->hooks.input_schemas[name] = std::move(schema);
    return action(std::move(name), std::move(f));
  }
  /// Gives the actor a SQLite database (`c.db()`, database.hpp) with these migrations: versions
  /// above 0, strictly increasing (else std::invalid_argument). Each runs once, in order, at the
  /// start of an actor whose database is older, before any hook.
  ActorBuilder& database(std::vector<Migration> migrations = {}, DatabaseOptions options = {}) {
    std::int64_t last = 0;
    for (const auto& m : migrations) {
      if (m.version <= last) {
        throw std::invalid_argument("actor " + data_->name +
                                    ": migration versions must be above 0 and strictly "
                                    "increasing (got " + std::to_string(m.version) + " after " +
                                    std::to_string(last) + ")");
      }
      last = m.version;
    }
    data_->database = detail::DatabaseDefinition{std::move(migrations), options};
    return *this;
  }

  ActorBuilder& options(ActorOptions opts) {
    data_->options = std::move(opts);
    return *this;
  }
  ActorOptions& options() { return data_->options; }

  ActorDefinition build() const { return ActorDefinition(data_); }
  operator ActorDefinition() const { return build(); }  // NOLINT(google-explicit-constructor)

 private:
  static void check_delivery(const std::string& name, const QueueDelivery& delivery) {
    if (delivery.visibility_timeout && delivery.visibility_timeout->count() < 1) {
      throw std::invalid_argument("queue " + name + ": visibility_timeout must be at least 1 ms");
    }
    if (delivery.max_deliveries && *delivery.max_deliveries == 0) {
      throw std::invalid_argument("queue " + name + ": max_deliveries must be at least 1");
    }
  }
  static Task<std::unique_ptr<detail::UserConnData>> make_conn_data(Value params) {
    auto data = std::make_unique<detail::ConnData<Types>>();
    data->params = decode_params(params);
    co_return data;
  }
  static ConnParams decode_params(const Value& params) {
    if (params.is_null() || params.is_undefined()) {
      return ConnParams{};  // no params sent: the default (TS: undefined)
    }
    try {
      return from_value<ConnParams>(params);
    } catch (const ConversionError& e) {
      throw ActorError(Error{"actor",
                             "invalid_params",
                             std::string("Invalid connection params: ") + e.what(),
                             {},
                             true});
    }
  }
  /// The creator's input as Input: none gives the default (TS: undefined), one that does not
  /// convert is the creator's error (actor.invalid_request), not an internal one.
  static Input decode_input(const Value& input) {
    if constexpr (std::is_same_v<Input, Value>) {
      return input;  // as sent: undefined stays undefined
    } else if (input.is_null() || input.is_undefined()) {
      return Input{};
    }
    try {
      return from_value<Input>(input);
    } catch (const ConversionError& e) {
      throw ActorError(
          Error{"actor", "invalid_request", std::string("Invalid input: ") + e.what(), {}, true});
    }
  }
  template <class F>
  static Task<void> run_create_state(F f, detail::ActorApi* api, Value input) {
    Ctx c(api, nullptr);
    auto* data = static_cast<detail::ActorData<Types>*>(api->user_data());
    if constexpr (std::is_invocable_v<F&, Ctx&, const Input&>) {
      Input typed = decode_input(input);
      data->state = co_await detail::call_async(f, c, std::move(typed));
    } else {
      data->state = co_await detail::call_async(f, c);
    }
    api->mark_state_dirty();
  }
  template <class F>
  static Task<void> run_with_input(F f, detail::ActorApi* api, Value input) {
    Ctx c(api, nullptr);
    if constexpr (std::is_invocable_v<F&, Ctx&, const Input&>) {
      Input typed = decode_input(input);
      co_await detail::call_async(f, c, std::move(typed));
    } else {
      co_await detail::call_async(f, c);
    }
  }
  template <class F>
  static Task<void> run_create_vars(F f, detail::ActorApi* api) {
    Ctx c(api, nullptr);
    auto* data = static_cast<detail::ActorData<Types>*>(api->user_data());
    if constexpr (std::is_invocable_v<F&, Ctx&, const DriverContext&>) {
      DriverContext driver = api->driver_context();
      data->vars = co_await detail::call_async(f, c, std::move(driver));
    } else {
      data->vars = co_await detail::call_async(f, c);
    }
  }
  template <class F>
  static Task<void> run_before_connect(F f,
                                       detail::ActorApi* api,
                                       Value params,
                                       const Request* req) {
    Ctx c(api, nullptr);
    ConnParams typed = decode_params(params);
    if constexpr (std::is_invocable_v<F&, Ctx&, const ConnParams&, const Request&>) {
      Request copy = *req;
      co_await detail::call_async(f, c, std::move(typed), std::move(copy));
    } else {
      co_await detail::call_async(f, c, std::move(typed));
    }
  }
  template <class F>
  static Task<std::unique_ptr<detail::UserConnData>> run_create_conn_state(F f,
                                                                           detail::ActorApi* api,
                                                                           Value params,
                                                                           const Request* req) {
    Ctx c(api, nullptr);
    auto data = std::make_unique<detail::ConnData<Types>>();
    data->params = decode_params(params);
    if constexpr (std::is_invocable_v<F&, Ctx&, const ConnParams&, const Request&>) {
      Request copy = *req;
      data->state = co_await detail::call_async(f, c, data->params, std::move(copy));
    } else {
      data->state = co_await detail::call_async(f, c, data->params);
    }
    co_return data;
  }
  template <class F>
  static Task<std::optional<Response>> run_on_request(F f,
                                                      detail::ActorApi* api,
                                                      detail::ConnApi* conn,
                                                      Request req) {
    using R = typename detail::Awaited<std::invoke_result_t<F&, Ctx&, Request&>>::type;
    if constexpr (std::is_void_v<R>) {
      co_await detail::call_async(f, Ctx(api, conn), std::move(req));
      co_return std::nullopt;
    } else {
      std::optional<Response> out = co_await detail::call_async(f, Ctx(api, conn), std::move(req));
      co_return out;
    }
  }
  template <class F>
  static std::function<Task<void>(detail::ActorApi*)> actor_hook(F f) {
    return [f](detail::ActorApi* api) -> Task<void> {
      return detail::call_async(f, Ctx(api, nullptr));
    };
  }
  template <class F>
  static std::function<Task<void>(detail::ActorApi*, detail::ConnApi*)> conn_hook(F f) {
    return [f](detail::ActorApi* api, detail::ConnApi* conn) -> Task<void> {
      return detail::call_async(f, Ctx(api, conn), detail::Access::make<Conn<Types>>(conn));
    };
  }

  std::shared_ptr<detail::ActorDefinitionData> data_;
};

/// Starts an actor definition. `T` is the state type, or an ActorTypes<...> bundle.
template <class T = Empty>
ActorBuilder<typename detail::NormalizeTypes<T>::type> actor(std::string name) {
  return ActorBuilder<typename detail::NormalizeTypes<T>::type>(std::move(name));
}

}  // namespace rivetkit

// The workflow API completes ActorBuilder::workflow.
#include <rivetkit/workflow.hpp>
