#pragma once
/// The boundary between the typed, header-only user API (actor.hpp) and the runtime (src/core).
/// User code never names these types; the templates in actor.hpp adapt typed handlers to them,
/// and src/core implements ActorApi and ConnApi. Everything here runs on the actor's strand.

#include <rivetkit/driver_context.hpp>
#include <rivetkit/http.hpp>
#include <rivetkit/input_schema.hpp>
#include <rivetkit/kv_types.hpp>
#include <rivetkit/options.hpp>
#include <rivetkit/queue_types.hpp>
#include <rivetkit/schedule.hpp>
#include <rivetkit/sql_types.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/typescript.hpp>
#include <rivetkit/value.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit {
class WebSocket;

/// What a queue send that waited answers (`ActorHandle::send_and_wait`, RivetKit's
/// `handle.send(name, body, {wait: true})`).
struct QueueSendResult {
  /// "completed" (the consumer completed the message, or the actor declares no such queue) or
  /// "timedOut" (the wait ended first).
  std::string status;
  /// The consumer's response; undefined when it gave none.
  Value response{Undefined{}};
  bool completed() const { return status == "completed"; }
};
}  // namespace rivetkit

namespace rivetkit::detail {

/// Typed per-instance data (state, vars) created by the typed definition.
class UserActorData {
 public:
  virtual ~UserActorData() = default;
  virtual Value state_to_value() const = 0;
  /// Throws ConversionError when the persisted value does not fit the state type.
  virtual void state_from_value(const Value& v) = 0;
};

/// Typed per-connection data (params, state).
class UserConnData {
 public:
  virtual ~UserConnData() = default;
  virtual Value state_to_value() const = 0;
  virtual void state_from_value(const Value& v) = 0;
};

/// A one-shot flag on the actor's strand that coroutines can wait for (the results of
/// keep_awake / wait_until tasks).
class Latch {
 public:
  virtual ~Latch() = default;
  virtual void set() = 0;
  virtual bool is_set() const = 0;
  /// Resumes once set() has been called (at once if it has).
  virtual Task<void> wait() = 0;
};

class ConnApi {
 public:
  virtual ~ConnApi() = default;
  virtual const std::string& id() const = 0;
  /// Params as sent by the client (JSON), or null.
  virtual const Value& params() const = 0;
  virtual UserConnData* user_data() = 0;
  virtual void mark_state_dirty() = 0;
  /// Sends an event to this connection only (subscribed or not).
  virtual void send(std::string event, Array args) = 0;
  virtual void disconnect(std::string reason) = 0;
  virtual bool is_hibernatable() const = 0;
  /// The request that opened the connection.
  virtual const Request& request() const = 0;
};

/// The schedule of one actor (`c.schedule()`).
class ScheduleApi {
 public:
  virtual ~ScheduleApi() = default;
  /// Wall-clock ms since the epoch, from the runtime's clock.
  virtual std::int64_t now_ms() const = 0;
  /// Schedules `action(args...)` at `at_ms`; durable before any later reply or event.
  virtual std::string at(std::int64_t at_ms, std::string action, Array args) = 0;
  virtual bool cancel(const std::string& id) = 0;
  /// Pending schedules, soonest first.
  virtual std::vector<ScheduledEvent> list() const = 0;
};

/// The actor's KV (kv.hpp). Errors are thrown as ActorError.
class KvApi {
 public:
  virtual ~KvApi() = default;
  virtual Task<std::vector<std::optional<std::string>>> get(std::vector<std::string> keys) = 0;
  virtual Task<std::vector<std::pair<std::string, std::string>>> list(KvList list) = 0;
  /// Applies the writes in order, atomically; resumes once they are durable.
  virtual Task<void> write(std::vector<KvWrite> writes) = 0;
};

/// The actor's SQLite database (database.hpp). Statements run off the I/O threads, one at a
/// time per actor and in call order. Errors are thrown as ActorError.
/// A completable message as its receiver holds it (defined by the runtime).
struct QueueCompletion;

/// One message as a receive returns it (queue.hpp's QueueMessage).
struct QueueMessageData : QueueRecord {
  /// Set for a completable receive.
  std::shared_ptr<QueueCompletion> completion;
};

/// The actor's queue (queue.hpp). Errors are thrown as ActorError.
class QueueApi {
 public:
  virtual ~QueueApi() = default;
  /// Adds a message; resumes once it is durable.
  virtual Task<void> send(std::string name, Value body) = 0;
  virtual Task<QueueSendResult> send_and_wait(std::string name,
                                              Value body,
                                              std::optional<std::chrono::milliseconds> timeout) = 0;
  /// Takes matching messages; `wait`: up to options.timeout for the first. `scope`: the caller
  /// (its uncompleted completable messages refuse its next receive).
  virtual Task<std::vector<QueueMessageData>> receive(const void* scope,
                                                      QueueReceive options,
                                                      bool wait) = 0;
  virtual Task<void> complete(std::shared_ptr<QueueCompletion> completion, Value response) = 0;
  /// Resumes once a message matching `options.names` can be received (taking nothing), or
  /// throws queue.timed_out after `options.timeout` / actor.aborted.
  virtual Task<void> wait_available(const void* scope, QueueReceive options) = 0;
  /// Messages queued now.
  virtual std::size_t size() const = 0;
  /// The dead letters, oldest first.
  virtual std::vector<QueueDeadLetter> dead_letters() const = 0;
  /// Moves dead letter `id` back to the end of its queue under a new id (returned; nullopt when
  /// there is no such dead letter); resumes once durable.
  virtual Task<std::optional<std::uint64_t>> replay_dead_letter(std::uint64_t id) = 0;
  /// Deletes dead letter `id` (false when there is none); resumes once durable.
  virtual Task<bool> drop_dead_letter(std::uint64_t id) = 0;
};

class DbApi {
 public:
  virtual ~DbApi() = default;
  /// Runs `sql` (one or more statements) outside any transaction of another caller.
  virtual Task<SqlResult> execute(std::string sql, SqlParams params) = 0;
  /// Begins a transaction; statements of other callers wait until it ends. Returns its id. Past
  /// `timeout` (default: the action timeout plus a second) it expires: rolled back, the
  /// statements waiting behind it rejected, and its handle answers `sqlite.transaction_expired`.
  virtual Task<std::uint64_t> begin(std::optional<std::chrono::milliseconds> timeout) = 0;
  /// Runs `sql` inside transaction `txn`.
  virtual Task<SqlResult> execute_in(std::uint64_t txn, std::string sql, SqlParams params) = 0;
  virtual Task<void> commit(std::uint64_t txn) = 0;
  virtual Task<void> rollback(std::uint64_t txn) = 0;
  /// Rolls `txn` back without waiting (a transaction object dropped without commit).
  virtual void abandon(std::uint64_t txn) = 0;
};

/// Where a workflow operation sits: the location of the block it runs in (the workflow's root,
/// a loop iteration, a join branch), as the runtime encodes it. Opaque to the typed API.
struct WorkflowScope {
  std::string location;
  /// The race branch the block belongs to (0: none); cancelled when another branch won.
  std::uint64_t branch = 0;
};

/// A step as the typed API hands it to the runtime (workflow.hpp's StepOptions, with its name).
struct WorkflowStepConfig {
  std::string name;
  std::uint32_t max_retries = 3;
  std::chrono::milliseconds retry_backoff_base{100};
  std::chrono::milliseconds retry_backoff_max{30'000};
  /// An attempt still running after this fails (0: no limit); not retried unless
  /// retry_on_timeout.
  std::chrono::milliseconds timeout{30'000};
  bool retry_on_timeout = false;
  /// Its record is written with the next write instead of before the step returns.
  bool ephemeral = false;
  /// Undoes the step (given its recorded result) when the workflow fails after it; empty: none.
  std::function<Task<void>(Value output)> rollback;
};

/// What one turn of a workflow loop returns: go on with `value` as the loop's state, or end the
/// loop with `value` as its result.
struct WorkflowLoopTurn {
  bool done = false;
  Value value;
};

/// What a workflow's queue wait takes (workflow.hpp's QueueNextOptions).
struct WorkflowQueueNext {
  /// Queue names to take from; empty: any.
  std::vector<std::string> names;
  /// The most messages to take (at least 1).
  std::size_t count = 1;
  /// Leave them queued until completed (a waiting sender gets the response).
  bool completable = false;
  /// How long to wait for a first message (from the first time the wait is reached); none:
  /// until one comes.
  std::optional<std::chrono::milliseconds> timeout;
};

/// One message a workflow's queue wait returned (recorded, so a replay returns it again).
struct WorkflowMessage {
  std::uint64_t id = 0;
  std::string name;
  Value body;
  std::int64_t created_at = 0;
  /// It was completed (in this run or before the replay).
  bool completed = false;
};

/// One branch of a workflow join or race: its name and its body (run in its own block).
struct WorkflowBranch {
  std::string name;
  std::function<Task<Value>(WorkflowScope)> body;
};

/// An actor's durable workflow (workflow.hpp; the runtime's ActorWorkflow). Every operation is
/// an entry of the workflow's history at a location under `scope`: run for real the first time
/// and recorded durably, answered from the record when the workflow replays after a restart.
/// Errors are thrown as ActorError.
class WorkflowApi {
 public:
  virtual ~WorkflowApi() = default;
  /// Runs the workflow (the actor's run handler): loads its history, runs `body` unless it has
  /// completed or failed before, and records how it ended. `on_error` (may be empty) sees each
  /// failure as RivetKit's WorkflowErrorEvent value.
  virtual Task<void> run(std::function<Task<void>(WorkflowScope)> body,
                         std::function<Task<void>(Value event)> on_error) = 0;
  /// A step: `body` runs (retried on failure per `config`) until it returns; its result is
  /// recorded with the state changes of the same turn, and replayed from the record afterwards.
  virtual Task<Value> step(WorkflowScope scope,
                           WorkflowStepConfig config,
                           std::function<Task<Value>()> body) = 0;
  /// A loop: `body` runs once per iteration with the loop's state (`initial` at first) until it
  /// returns done; each iteration is recorded as it ends. Returns the loop's result.
  virtual Task<Value> loop(WorkflowScope scope,
                           std::string name,
                           Value initial,
                           std::function<Task<WorkflowLoopTurn>(WorkflowScope, Value)> body) = 0;
  /// A durable sleep until `deadline_ms` (ms since the epoch; the deadline recorded the first
  /// time wins on replay, so a relative sleep passes `relative_ms` instead: deadline = now +
  /// relative_ms, fixed when first reached).
  virtual Task<void> sleep(WorkflowScope scope,
                           std::string name,
                           std::optional<std::int64_t> deadline_ms,
                           std::chrono::milliseconds relative) = 0;
  /// Takes up to `options.count` messages from the actor's queue, waiting for the first one (or
  /// until the timeout: then none). Recorded with the queue's change in one write.
  virtual Task<std::vector<WorkflowMessage>> queue_next(WorkflowScope scope,
                                                        std::string name,
                                                        WorkflowQueueNext options) = 0;
  /// Completes message `index` of queue wait `name` under `scope` (a no-op when it was completed
  /// before): the queue drops it and a waiting sender gets `response`.
  virtual Task<void> complete_message(WorkflowScope scope,
                                      std::string name,
                                      std::size_t index,
                                      Value response) = 0;
  /// Runs every branch concurrently, each in its own block, until all end; returns {branch:
  /// result}. If any failed, throws workflow.join_failed (once all ended).
  virtual Task<Value> join(WorkflowScope scope,
                           std::string name,
                           std::vector<WorkflowBranch> branches) = 0;
  /// Runs the branches concurrently; the first to return wins ({winner, value}) and the others
  /// are cancelled (their context's aborted() turns true, their waits end). If all fail, throws
  /// workflow.race_failed.
  virtual Task<Value> race(WorkflowScope scope,
                           std::string name,
                           std::vector<WorkflowBranch> branches) = 0;
  /// Where code that ran entry `name` (of RivetKit kind `original_kind`: "step", "loop", ...)
  /// was removed: a history that has that entry replays past it; a new run records a
  /// placeholder, so later entries keep their places.
  virtual Task<void> removed(WorkflowScope scope, std::string name, std::string original_kind) = 0;
  /// Version gate `name`: the version recorded there on replay; for a run reaching it the first
  /// time, `latest`, or 1 when the run went past this point under code without the gate (history
  /// of its block not yet reached in this run).
  virtual Task<std::uint32_t> get_version(WorkflowScope scope,
                                          std::string name,
                                          std::int64_t latest) = 0;
  /// Rollback checkpoint `name`: steps with a rollback handler may follow it (in its block or
  /// blocks inside it); when the workflow fails, their handlers run, latest first.
  virtual Task<void> rollback_checkpoint(WorkflowScope scope, std::string name) = 0;
  /// The scope of block `name` under `scope` (a try block): reached like an entry (names are
  /// unique within their block), recorded nowhere.
  virtual WorkflowScope block(const WorkflowScope& scope, const std::string& name) = 0;
  /// Whether the block of `scope` was cancelled (a race branch that lost).
  virtual bool cancelled(const WorkflowScope& scope) const = 0;
  /// Resumes once cancelled(scope) is true.
  virtual Task<void> wait_cancelled(WorkflowScope scope) = 0;
  /// A step's context was used after its step ended (RivetKit records a flag in the actor's KV).
  virtual void guard_triggered() = 0;
};

/// Which actor a client handle names (client.hpp).
struct ActorQuery {
  enum class Kind { kGet, kGetOrCreate, kGetForId, kCreate };
  Kind kind = Kind::kGet;
  std::string name;
  std::vector<std::string> key;
  std::string actor_id;      // kGetForId
  Value input{Undefined{}};  // kGetOrCreate, kCreate
};

class ActorApi;

/// A connection one actor holds to another (actor_connection.hpp). Used from the holding actor's
/// code (its strand); errors are thrown as ActorError.
class ActorConnApi {
 public:
  virtual ~ActorConnApi() = default;
  virtual const std::string& actor_id() const = 0;
  virtual const std::string& connection_id() const = 0;
  /// Runs action `action` with `args` over the connection.
  virtual Task<Value> call(std::string action, Array args) = 0;
  /// Adds a listener of event `event` (subscribing on the first); returns its id for off().
  virtual std::uint64_t on(std::string event, std::function<void(const Array&)> listener) = 0;
  /// Removes a listener (unsubscribing with the last of its event).
  virtual void off(std::uint64_t listener) = 0;
  /// The connection ended (disposed, closed by the other actor, or its holder stopped).
  virtual bool closed() const = 0;
  /// Closes the connection and resumes once it has ended.
  virtual Task<void> dispose() = 0;
};

/// The registry's actors as one actor reaches them (client.hpp). Errors are thrown as ActorError.
/// The tasks hold copies of their arguments; they may be awaited on any actor's strand.
class ClientApi {
 public:
  virtual ~ClientApi() = default;
  /// The id of the actor `query` names (creating it for kGetOrCreate and kCreate).
  virtual Task<std::string> resolve(ActorQuery query) = 0;
  /// Runs action `action` with `args` on the actor `query` names, as a connection with `params`.
  virtual Task<Value> call(ActorQuery query, std::string action, Array args, Value params) = 0;
  /// Sends `body` to queue `queue` of the actor `query` names, as a connection with `params`;
  /// with `wait`, resumes once a consumer completed it (or `timeout` passed).
  virtual Task<QueueSendResult> send(ActorQuery query,
                                     std::string queue,
                                     Value body,
                                     bool wait,
                                     std::optional<std::chrono::milliseconds> timeout,
                                     Value params) = 0;
  /// Opens a connection to the actor `query` names, as `params`, held by actor `holder`: its
  /// event listeners run on the holder's strand, and it closes when the holder stops. Resumes
  /// once the actor accepted it (its connection hooks ran).
  virtual Task<std::shared_ptr<ActorConnApi>> connect(ActorQuery query,
                                                      Value params,
                                                      ActorApi* holder) = 0;
  /// Destroys the actor `query` names.
  virtual Task<void> destroy(ActorQuery query) = 0;
};

/// One actor instance as user code sees it. Each storage feature is a part the instance hands
/// out (schedule(), kv(), ...), so a new feature adds one accessor here, not a virtual per call.
class ActorApi {
 public:
  virtual ~ActorApi() = default;
  virtual const std::string& actor_id() const = 0;
  virtual const std::string& name() const = 0;
  virtual const std::vector<std::string>& key() const = 0;
  virtual std::uint32_t generation() const = 0;
  virtual UserActorData* user_data() = 0;
  /// Marks the state as possibly changed; the runtime saves it (and holds replies) if it did.
  virtual void mark_state_dirty() = 0;
  /// Sends an event to every connection subscribed to `event`.
  virtual void broadcast(std::string event, Array args) = 0;
  virtual std::vector<ConnApi*> conns() = 0;
  /// The actor's strand: anything posted here runs alone with the actor's other code.
  virtual boost::asio::any_io_executor executor() = 0;
  /// Saves the state now and resumes once it is durable.
  virtual Task<void> save_state() = 0;
  /// Resumes after `duration` on the actor's clock.
  virtual Task<void> wait_for(std::chrono::milliseconds duration) = 0;
  /// Asks the runtime to put the actor to sleep once current work is done.
  virtual void sleep() = 0;
  /// Asks the runtime to destroy the actor (its data is wiped).
  virtual void destroy() = 0;
  /// True once the actor has begun stopping (sleep or destroy): the abort signal.
  virtual bool aborted() const = 0;
  /// Calls `listener` when the abort signal fires (at once, posted, if it has already).
  virtual void on_abort(std::function<void()> listener) = 0;
  /// on_abort for a listener that belongs to `owner`: it never runs once the owner is gone, and
  /// is then dropped.
  virtual void on_abort_owned(std::weak_ptr<void> owner, std::function<void()> listener) = 0;
  /// Resumes once the abort signal has fired.
  virtual Task<void> wait_aborted() = 0;
  /// Waits up to `timeout`; true when the abort signal fired first.
  virtual Task<bool> wait_aborted_for(std::chrono::milliseconds timeout) = 0;
  virtual std::shared_ptr<Latch> make_latch() = 0;
  /// What create_vars may learn about the driver.
  virtual const DriverContext& driver_context() const = 0;
  /// Runs `task` on the actor's strand; the actor stays awake (and stopping waits) until it ends.
  virtual void keep_awake(Task<void> task) = 0;
  /// Runs `task` on the actor's strand; it does not keep the actor awake, but stopping waits for
  /// it (within the grace period).
  virtual void wait_until(Task<void> task) = 0;
  /// Wall-clock ms since the epoch, from the runtime's clock.
  virtual std::int64_t now_ms() const = 0;
  /// The actor's schedule.
  virtual ScheduleApi& schedule() = 0;
  /// The actor's KV.
  virtual KvApi& kv() = 0;
  /// The registry's other actors (and this one) as this actor calls them.
  virtual ClientApi& client() = 0;
  /// The actor's SQLite database (its calls fail with database.not_enabled when it declares none).
  virtual DbApi& db() = 0;
  /// The actor's queue.
  virtual QueueApi& queue() = 0;
  /// The actor's workflow (its run handler, when declared with ActorBuilder::workflow).
  virtual WorkflowApi& workflow() = 0;
};

using ActionFn = std::function<Task<Value>(ActorApi*, ConnApi*, Array)>;

/// Type-erased actor definition. Every hook is optional.
struct ActorHooks {
  std::function<std::unique_ptr<UserActorData>()> make_data;
  std::function<Task<void>(ActorApi*, Value input)> create_state;
  std::function<Task<void>(ActorApi*, Value input)> on_create;
  std::function<Task<void>(ActorApi*)> create_vars;
  std::function<Task<void>(ActorApi*)> on_wake;
  std::function<Task<void>(ActorApi*)> on_sleep;
  std::function<Task<void>(ActorApi*)> on_destroy;
  std::function<void(ActorApi*)> on_state_change;
  std::function<Task<void>(ActorApi*, Value params, const Request*)> on_before_connect;
  std::function<Task<std::unique_ptr<UserConnData>>(ActorApi*, Value params, const Request*)>
      create_conn_data;
  std::function<Task<void>(ActorApi*, ConnApi*)> on_connect;
  std::function<Task<void>(ActorApi*, ConnApi*)> on_disconnect;
  /// nullopt: the handler returned nothing (answered 500, as RivetKit does).
  std::function<Task<std::optional<Response>>(ActorApi*, ConnApi*, Request)> on_request;
  std::function<Task<void>(ActorApi*, ConnApi*, WebSocket)> on_websocket;
  /// Background handler started after on_wake; cancelled when the actor stops.
  std::function<Task<void>(ActorApi*)> run;
  /// Rebuilds a hibernated connection's typed data from its params and saved state (no hooks run).
  std::function<std::unique_ptr<UserConnData>(const Value& params, const Value& state)>
      restore_conn_data;
  std::map<std::string, ActionFn, std::less<>> actions;
  /// Checks of the raw arguments of some actions (`actor.validation_error` when they fail).
  std::map<std::string, InputSchema, std::less<>> input_schemas;
};

/// A declared event (RivetKit's `events: {name: event({canSubscribe})}`).
struct EventDefinition {
  /// Whether the connection may subscribe; empty: anyone may.
  std::function<Task<bool>(ActorApi*, ConnApi*)> can_subscribe;
};

/// A declared queue (RivetKit's `queues: {name: queue()}`, ActorBuilder::queue).
struct QueueDefinition {
  /// Whether a client's connection may send to it; empty: anyone may.
  std::function<Task<bool>(ActorApi*, ConnApi*)> can_publish;
  /// Redelivery of uncompleted messages (queue_types.hpp).
  QueueDelivery delivery;
};

/// A declared database (ActorBuilder::database): its migrations, in version order.
struct DatabaseDefinition {
  std::vector<Migration> migrations;
  DatabaseOptions options;
};

/// What an actor's C++ types say about its client-facing values, for the registry's TypeScript
/// declarations (typescript.hpp). Function pointers, called only when types are asked for.
struct ActorTypeInfo {
  using Describe = std::string (*)(TsDeclarations&);
  struct QueueTypes {
    Describe message = nullptr;
    Describe complete = nullptr;
  };
  std::map<std::string, TsSignature (*)(TsDeclarations&), std::less<>> actions;
  /// Typed events (`.event<T>(name)`); a declared event not here carries `unknown`.
  std::map<std::string, Describe, std::less<>> events;
  /// Typed queues (`.queue<Message, Complete>(name)`).
  std::map<std::string, QueueTypes, std::less<>> queues;
  Describe state = nullptr;        ///< nullptr: the actor has no state
  Describe conn_params = nullptr;  ///< nullptr: untyped (rivetkit::Value)
  Describe input = nullptr;        ///< nullptr: untyped (rivetkit::Value)
};

struct ActorDefinitionData {
  std::string name;
  /// Whether the actor has a SQLite database (`c.db()`), and its schema.
  std::optional<DatabaseDefinition> database;
  ActorHooks hooks;
  ActorOptions options;
  /// Declared events. Broadcasting an undeclared name still reaches its subscribers.
  std::map<std::string, EventDefinition, std::less<>> events;
  /// Declared queues. A send to any other name completes and keeps nothing.
  std::map<std::string, QueueDefinition, std::less<>> queues;
  /// The C++ types of actions, events, queues, state, parameters and input.
  ActorTypeInfo types;
  /// Whether the run handler is a durable workflow (ActorBuilder::workflow).
  bool workflow = false;
};

}  // namespace rivetkit::detail
