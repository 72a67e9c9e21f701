#pragma once
// ActorInstance: one running generation of an actor (rivetkit-core's ActorTask + ActorContext).
//
// Threading: every member function runs on the instance's strand unless noted. Code from other
// executors reaches it with boost::asio::co_spawn(instance->strand(), ...). User handlers run on
// the strand too, so user code between two co_awaits runs alone; handlers may interleave at
// co_await points.
//
// Lifecycle (core-semantics.md §1; the states and transitions in core/actor/lifecycle.hpp):
// Loading -> Started -> SleepGrace -> SleepFinalize -> Terminated (or DestroyGrace -> Destroying
// -> Terminated), or Loading -> Failed.
// - start(): loads the persisted actor; a new actor runs create_state and on_create and is
//   committed as initialized before anything can see it; create_vars and on_wake run on every
//   start; hibernated connections are re-attached (no connection hooks run; one whose socket
//   went away while the actor slept gets its on_disconnect right after the start); then `run`
//   starts, the idle watch and the schedule timer begin, and overdue schedules fire. Every hook
//   is bounded by its ActorOptions timeout (actor.callback_timed_out).
// - Idle (core/actor/sleep_gates.hpp): the actor may sleep when nothing keeps it awake
//   (in-flight actions and raw requests, keep_awake tasks, raw WebSocket callbacks,
//   non-hibernatable connections, pending disconnects, an active `run`); awake_reason() names
//   what does. After `sleep_timeout` of that it asks the driver to stop it.
// - stop(kSleep | kDestroy), the grace (SleepGrace / DestroyGrace): the abort signal fires
// (listeners run; `run` and long loops see it
//   and return), in-flight actions, requests and socket callbacks drain within the grace
//   period, on_sleep / on_destroy runs while every connection is still open, then the
//   connections that do not survive are ended (every one on destroy, non-hibernatable ones on
//   sleep: close handler, on_disconnect; hibernatable ones stay with the driver), keep_awake /
//   wait_until work and (on sleep) the run handler finish, whatever still runs at the end of
//   the grace period is cancelled (SleepFinalize / Destroying), and the final save completes
//   before the instance reports stopped (Terminated).
//
// Durability (the output gate): whenever user code may have changed the state (mark_state_dirty)
// or schedules/connections changed, a save is scheduled for the end of the current strand turn.
// Every output (action reply, event, Init) carries the sequence number of the latest save
// requested before it and is released only once that save is durable. A failed save fails the
// outputs that depend on it instead of sending them. The sequencing lives in the OutputGate
// (core/actor/output_gate.hpp); the instance is its Source: it says what a write contains.

#include "core/actor/abort_signal.hpp"
#include "core/actor/action_watch.hpp"
#include "core/actor/actor_kv.hpp"
#include "core/actor/connection_lifecycle.hpp"
#include "core/actor/connection_set.hpp"
#include "core/actor/lifecycle.hpp"
#include "core/actor/message_acks.hpp"
#include "core/actor/output_gate.hpp"
#include "core/actor/schedules.hpp"
#include "core/actor/sleep_gates.hpp"
#include "core/actor/state_record.hpp"
#include "core/actor/user_storage.hpp"
#include "core/connection.hpp"
#include "core/driver.hpp"
#include "core/inspector/inspector_watchers.hpp"
#include "core/notifier.hpp"
#include "core/runtime_config.hpp"
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
#include <vector>

namespace rivetkit::core {

class ActorInstance final : public detail::ActorApi,
                            private OutputGate::Source,
                            private Schedules::Host,
                            private ActorKv::Host,
                            private ActorDatabase::Host,
                            private ActorQueue::Host,
                            private ActorWorkflow::Host,
                            private MessageAcks::Host,
                            private ConnectionSet::Host,
                            private ConnectionLifecycle::Host,
                            private inspector::InspectorWatchers::Host,
                            public std::enable_shared_from_this<ActorInstance> {
 public:
  using Delivery = ConnectionLifecycle::Delivery;

  struct Spec {
    std::string actor_id;
    std::string name;
    std::vector<std::string> key;
    std::uint32_t generation = 1;
    std::shared_ptr<const detail::ActorDefinitionData> definition;
    std::unique_ptr<storage::ActorStore> store;
    ActorDriver* driver = nullptr;
    /// How long a freshly started actor waits for its first request before the idle rule may
    /// put it to sleep (when longer than sleep_timeout). Engine mode: the engine starts an
    /// actor for a request that the gateway forwards only once the start is reported, which on
    /// a busy engine can take longer than a short sleep_timeout; without this the actor sleeps
    /// first and the gateway's retry wakes it again, in a loop. 0: none (local mode hands the
    /// request over at once).
    std::chrono::milliseconds first_request_grace{0};
  };

  ActorInstance(boost::asio::any_io_executor strand, Spec spec, const RuntimeConfig& config);
  ~ActorInstance() override;

  const boost::asio::any_io_executor& strand() const { return strand_; }
  const Lifecycle& lifecycle() const { return lifecycle_; }
  std::uint64_t durable_seq() const override { return gate_.durable(); }
  /// The connections: membership, records and outgoing frames (core/actor/connection_set.hpp).
  ConnectionSet& connections() { return conns_; }
  /// Opening and ending connections, raw socket messages (core/actor/connection_lifecycle.hpp).
  ConnectionLifecycle& connection_lifecycle() { return conn_life_; }
  const std::string& key_string() const { return key_string_; }
  const detail::ActorDefinitionData& definition() const { return *definition_; }
  const RuntimeConfig& config() const { return config_; }

  /// Loads and runs the start hooks. On failure the instance is kFailed and must be discarded.
  Task<Result<void>> start();
  /// Stops the instance (see the file comment). Idempotent; returns when fully stopped.
  Task<void> stop(StopReason reason);

  // ---- connections ----------------------------------------------------------------------------

  /// Hands one client message of a connect socket to this instance. kRetry: the instance is
  /// stopping and the message was not taken (deliver it to the next instance); kGone: the
  /// connection no longer exists here.
  Delivery deliver(const std::string& conn_id, protocol::client::ToServer message);
  /// A subscription request of connection `conn_id` (ConnectionLifecycle::subscription), taken
  /// before the first suspension; resumes once it was decided (an event's rule may take time).
  Task<Delivery> subscription(std::string conn_id, protocol::client::SubscriptionRequest request);

  // ---- actions and outputs --------------------------------------------------------------------

  /// Runs action `name` with the action timeout. Errors are returned, never thrown.
  Task<Result<Value>> run_action(Connection* conn, std::string name, Array args);
  /// Saves now whatever changed; returns the sequence number outputs must wait for.
  std::uint64_t checkpoint();
  /// Resumes once save `seq` (or a later one) is durable; an error if it failed.
  Task<Result<void>> wait_durable(std::uint64_t seq);
  /// {actorId, generation, key} for error messages.
  protocol::client::ActorSpecifier specifier() const;

  /// Message `conn`'s resume point names was taken: its index must be saved with the connection
  /// before the gateway may drop it (and re-send it no more). `reply_follows`: a reply to it,
  /// message `index`, is about to be queued, and must not leave before the index is durable.
  void note_message_taken(const Connection& conn,
                          std::size_t bytes = 0,
                          bool reply_follows = false,
                          std::optional<std::uint16_t> index = std::nullopt);

  // ---- detail::ActorApi -----------------------------------------------------------------------
  const std::string& actor_id() const override { return actor_id_; }
  const std::string& name() const override { return name_; }
  const std::vector<std::string>& key() const override { return key_; }
  std::uint32_t generation() const override { return generation_; }
  detail::UserActorData* user_data() override { return data_.get(); }
  void mark_state_dirty() override;
  void broadcast(std::string event, Array args) override;
  std::vector<detail::ConnApi*> conns() override;
  boost::asio::any_io_executor executor() override { return strand_; }
  Task<void> save_state() override;
  Task<void> wait_for(std::chrono::milliseconds duration) override;
  void sleep() override;
  void destroy() override;
  bool aborted() const override { return lifecycle_.aborted(); }
  void on_abort(std::function<void()> listener) override;
  void on_abort_owned(std::weak_ptr<void> owner, std::function<void()> listener) override;
  Task<void> wait_aborted() override;
  Task<bool> wait_aborted_for(std::chrono::milliseconds timeout) override;
  std::shared_ptr<detail::Latch> make_latch() override;
  const DriverContext& driver_context() const override { return config_.driver; }
  void keep_awake(Task<void> task) override;
  void wait_until(Task<void> task) override;
  std::int64_t now_ms() const override;
  detail::ScheduleApi& schedule() override { return schedules_; }
  detail::KvApi& kv() override { return storage_.kv; }
  detail::DbApi& db() override { return storage_.db; }
  detail::QueueApi& queue() override { return storage_.queue; }
  detail::WorkflowApi& workflow() override { return storage_.workflow; }
  /// The workflow as the runtime uses it (the inspector).
  ActorWorkflow& workflow_part() { return storage_.workflow; }
  /// Starts the run handler again if it has returned (the inspector's workflow replay).
  void restart_run();
  /// The queue as the runtime uses it (client sends).
  ActorQueue& queue_part() { return storage_.queue; }
  /// The KV and the database as the runtime uses them (the inspector).
  ActorKv& kv_part() { return storage_.kv; }
  ActorDatabase& database_part() { return storage_.db; }
  /// Counts work that arrived from outside without a connection (an inspector request) as an
  /// action: it keeps the actor awake and a stop waits for it, while the returned value lives.
  SleepGates::Work track_request() { return track(WorkKind::kAction); }
  /// The inspector WebSockets watching this instance (core/inspector/inspector_watchers.hpp).
  inspector::InspectorWatchers& inspector_watchers() { return watchers_; }
  detail::ClientApi& client() override { return driver_->actor_client(); }

  /// Why the idle rule would not put this actor to sleep now; nullopt when it may sleep.
  std::optional<AwakeReason> awake_reason() const;

  /// Test hook.
  std::uint64_t requested_seq_for_test() const { return gate_.latest(); }

 private:
  /// Counts one unit of sleep-blocking (or stop-blocking) work while alive.
  SleepGates::Work track(WorkKind kind) { return sleep_.track(kind, shared_from_this()); }

  Task<void> idle_watch();
  Task<void> run_background(Task<void> task, WorkKind kind);
  Task<void> run_handler();
  void request_stop(StopReason reason);
  /// Schedules a save of whatever changed (runtime-internal changes; mark_state_dirty is the
  /// user-facing one and refuses writes inside on_state_change).
  void request_save();
  /// Resumes at the end of the grace period (what is still running then is cancelled).
  Task<void> wait_hard_abort();

  boost::asio::any_io_executor strand_;
  std::string actor_id_;
  std::string name_;
  std::vector<std::string> key_;
  std::string key_string_;
  std::uint32_t generation_;
  std::shared_ptr<const detail::ActorDefinitionData> definition_;
  std::unique_ptr<storage::ActorStore> store_;
  ActorDriver* driver_;
  const RuntimeConfig& config_;
  Lifecycle lifecycle_;
  SleepGates sleep_;
  std::unique_ptr<detail::UserActorData> data_;
  ConnectionSet conns_;
  ConnectionLifecycle conn_life_;
  AbortSignal abort_;

  Schedules schedules_;
  UserStorage storage_;  // c.kv() and c.db()
  StateRecord state_;    // the state as stored; on_state_change

  ActionWatch actions_;  // action timeouts and the hard abort

  // What the output gate writes next (OutputGate::Source, below).
  bool save_posted_ = false;
  MessageAcks acks_;  // when inbound message indexes are saved (engine mode)
  OutputGate gate_;
  inspector::InspectorWatchers watchers_;  // inspector WebSockets (live pushes)

  // ---- OutputGate::Source ---------------------------------------------------------------------
  bool can_write() const override;
  std::optional<OutputGate::Write> take_write() override;
  void write_durable() override;
  void outputs_progressed() override;
  void write_failed(std::uint64_t seq, const Error& error) override;

  // ---- Schedules::Host ------------------------------------------------------------------------
  Task<Result<Value>> run_scheduled_action(std::string action, Array args) override;
  void schedules_changed() override;
  void alarm_changed(std::optional<std::int64_t> at_ms) override;
  void spawn_task(Task<void> task, const char* what) override;

  // ---- ConnectionSet::Host -------------------------------------------------------------------
  void connections_changed() override;
  void members_changed() override { watchers_.connections_changed(); }
  std::uint64_t output_seq() override;

  // ---- ConnectionLifecycle::Host --------------------------------------------------------------
  detail::ActorApi* hooks_target() override { return this; }
  /// Runs a user hook with a time limit: `actor.callback_timed_out` when it is exceeded.
  Task<Result<void>> run_hook(const char* what,
                              Task<void> task,
                              std::chrono::milliseconds limit) override;
  void message_taken(const Connection& conn, std::size_t bytes) override {
    note_message_taken(conn, bytes);
  }

  // ---- MessageAcks::Host ---------------------------------------------------------------------
  void acks_need_save() override;
  bool replies_held() const override;

  // ---- ActorKv::Host --------------------------------------------------------------------------
  bool kv_open() const override;
  bool kv_loading() const override;
  Task<Result<void>> save_now() override;
  std::shared_ptr<void> hold() override;  // also ActorDatabase::Host's and ActorQueue::Host's

  // ---- ActorDatabase::Host --------------------------------------------------------------------
  bool db_open() const override;
  void database_changed() override;

  // ---- inspector::InspectorWatchers::Host ------------------------------------------------------
  std::optional<std::string> inspector_state() override;
  std::vector<protocol::inspector::Connection> inspector_connections() override;
  std::uint64_t inspector_queue_size() override { return storage_.queue.size(); }
  std::optional<std::string> inspector_workflow_history() override;
  void inspector_detached() override { sleep_.touch(); }
  void inspector_spawn(Task<void> task) override { spawn_task(std::move(task), "inspector push"); }

  // ---- ActorQueue::Host -----------------------------------------------------------------------
  bool queue_open() const override;
  void queue_changed() override;
  std::int64_t queue_now_ms() const override;
  std::shared_ptr<void> queue_wait_began() override;
  std::shared_ptr<void> hold_writes(std::chrono::milliseconds limit) override;
  Task<Result<void>> save_after_holds() override;

  // ---- ActorWorkflow::Host --------------------------------------------------------------------
  void workflow_changed() override;
  Task<Result<void>> workflow_save() override;
  std::int64_t workflow_now_ms() const override;
  Task<bool> workflow_wait(std::chrono::milliseconds timeout) override;
  std::shared_ptr<void> workflow_parked() override;
  void set_wake(std::optional<std::int64_t> at_ms) override;
  void write_guard_flag() override;
  detail::QueueApi& workflow_queue() override { return storage_.queue; }
  Task<void> complete_queue_message(std::uint64_t id, std::string name, Value response) override {
    return storage_.queue.complete_id(id, std::move(name), std::move(response));
  }
  static Task<void> write_kv_in_background(std::shared_ptr<ActorInstance> self,
                                           std::vector<detail::KvWrite> writes);
};

}  // namespace rivetkit::core
