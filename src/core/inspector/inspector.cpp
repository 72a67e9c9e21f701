#include "core/inspector/inspector.hpp"

#include "core/errors.hpp"
#include "core/inspector/inspector_token.hpp"
#include "core/workflow/workflow_view.hpp"
#include "protocol/cbor/cbor.hpp"
#include "protocol/compat.hpp"
#include "util/log.hpp"
#include <rivetkit/convert.hpp>

#include <algorithm>
#include <exception>
#include <utility>

namespace rivetkit::core::inspector {

namespace {

// Features the actor does not have, as RivetKit names them.
Error state_not_enabled() {
  return Error{"actor", "state_not_enabled", "This actor has no state (declare one to patch it)",
               std::nullopt, true};
}

bool has_state(const ActorInstance& instance) {
  return instance.definition().types.state != nullptr;
}

Value state_of(ActorInstance& instance) {
  if (!has_state(instance)) {
    return Value(Undefined{});  // left out of the JSON, as RivetKit's `undefined`
  }
  return instance.user_data()->state_to_value();
}

Value details_of(Connection& conn) {
  auto* data = conn.user_data();
  return Value::object({
      {"type", nullptr},
      {"params", conn.params()},
      {"stateEnabled", true},
      {"state", data != nullptr ? data->state_to_value() : Value(nullptr)},
      {"subscriptions", static_cast<std::int64_t>(conn.subscriptions().size())},
      {"isHibernatable", conn.is_hibernatable()},
  });
}

Value connections_of(ActorInstance& instance) {
  Array out;
  for (const auto& [id, conn] : instance.connections().live()) {
    out.push_back(Value::object({{"type", nullptr}, {"id", id}, {"details", details_of(*conn)}}));
  }
  return Value(std::move(out));
}

// A value as the inspector WebSocket's `data` fields carry it: CBOR, as RivetKit's cbor-x writes
// (bigints and bytes natively).
std::string cbor_of(const Value& v) {
  return protocol::cbor_encode(protocol::compat_encode(v, protocol::CompatMode::kCbor));
}

Value schedules_of(ActorInstance& instance) {
  Array out;
  for (auto& e : instance.schedule().list()) {
    out.push_back(Value::object({{"id", std::move(e.id)},
                                 {"action", std::move(e.action)},
                                 {"args", Value(std::move(e.args))},
                                 {"atMs", e.at_ms},
                                 {"attempts", static_cast<std::int64_t>(e.attempts)}}));
  }
  return Value(std::move(out));
}

std::vector<protocol::inspector::Schedule> wire_schedules(ActorInstance& instance) {
  std::vector<protocol::inspector::Schedule> out;
  for (auto& e : instance.schedule().list()) {
    protocol::inspector::Schedule s;
    s.id = std::move(e.id);
    s.kind = "at";
    s.action = std::move(e.action);
    s.args = cbor_of(Value(std::move(e.args)));
    s.next_run_at = static_cast<std::uint64_t>(std::max<std::int64_t>(e.at_ms, 0));
    out.push_back(std::move(s));
  }
  return out;
}

Value rpcs_of(const ActorInstance& instance) {
  Array out;
  for (const auto& [name, fn] : instance.definition().hooks.actions) {
    out.emplace_back(name);  // a std::map: sorted, as RivetKit sorts them
  }
  return Value(std::move(out));
}

Value disabled_workflow() {
  return Value::object(
      {{"history", nullptr}, {"workflowState", nullptr}, {"isWorkflowEnabled", false}});
}

Task<Result<void>> durable(ActorInstance& instance);

Value workflow_of(ActorInstance& instance, bool transport) {
  const auto& wf = instance.workflow_part();
  if (transport && instance.definition().workflow && wf.loaded()) {
    const auto bytes = workflow::history_transport(wf.history());
    return Value::object({{"historyTransport", Value(Bytes(bytes.begin(), bytes.end()))},
                          {"isWorkflowEnabled", true}});
  }
  if (!instance.definition().workflow || !wf.loaded()) {
    return instance.definition().workflow ? Value::object(
               {{"history", nullptr}, {"workflowState", nullptr}, {"isWorkflowEnabled", true}})
                                          : disabled_workflow();
  }
  return Value::object(
      {{"history", workflow::history_json(wf.history())},
       {"workflowState", Value(std::string(workflow::to_string(wf.history().record().state)))},
       {"isWorkflowEnabled", true}});
}

Task<Result<Value>> workflow_history(ActorInstance& instance, bool transport) {
  if (instance.definition().workflow) {
    auto op = instance.workflow_part().ensure_loaded();
    auto loaded = co_await std::move(op);
    if (!loaded) {
      co_return fail(loaded.error());
    }
  }
  co_return workflow_of(instance, transport);
}

Task<Result<Value>> workflow_replay(ActorInstance& instance,
                                    std::optional<std::string> entry_id,
                                    bool transport) {
  if (!instance.definition().workflow) {
    co_return disabled_workflow();
  }
  {
    auto op = instance.workflow_part().ensure_loaded();
    auto loaded = co_await std::move(op);
    if (!loaded) {
      co_return fail(loaded.error());
    }
  }
  auto replayed = instance.workflow_part().replay_from(entry_id);
  if (!replayed) {
    co_return fail(replayed.error());
  }
  // The shortened history is durable before the run starts over and before the answer.
  auto save_op = durable(instance);
  auto saved = co_await std::move(save_op);
  if (!saved) {
    co_return fail(saved.error());
  }
  auto answer = workflow_of(instance, transport);
  instance.inspector_watchers().workflow_changed();
  instance.restart_run();
  co_return answer;
}

// Saves what the request changed; resumes once durable.
Task<Result<void>> durable(ActorInstance& instance) {
  const std::uint64_t seq = instance.checkpoint();
  auto op = instance.wait_durable(seq);
  co_return co_await std::move(op);
}

Task<Result<Value>> patch_state(ActorInstance& instance, Value state) {
  if (!has_state(instance)) {
    co_return fail(state_not_enabled());
  }
  auto* data = instance.user_data();
  // All of it or nothing: a value that does not fit leaves the state as it was.
  Value before = data->state_to_value();
  try {
    data->state_from_value(state);
  } catch (const ConversionError& e) {
    data->state_from_value(before);
    co_return fail(
        invalid_request(std::string("The state does not fit the actor's state type: ") + e.what()));
  }
  try {
    instance.mark_state_dirty();
  } catch (const ActorError& e) {
    data->state_from_value(before);
    co_return fail(e.error());
  }
  auto op = durable(instance);
  auto saved = co_await std::move(op);
  if (!saved) {
    co_return fail(saved.error());
  }
  co_return Value::object({{"ok", true}});
}

Task<Result<Value>> queue_send(ActorInstance& instance, SendQueue request) {
  if (request.name.empty()) {
    co_return fail(invalid_request("Queue message name must not be empty"));
  }
  auto& queue = instance.queue_part();
  std::uint64_t id = 0;
  try {
    id = queue.enqueue(std::move(request.name), std::move(request.body));
  } catch (const ActorError& e) {
    co_return fail(e.error());
  }
  auto listed = queue.find(id);
  auto op = durable(instance);
  auto saved = co_await std::move(op);
  if (!saved) {
    co_return fail(saved.error());
  }
  // The id as a string: a u64 does not survive a JSON number.
  co_return Value::object({{"id", std::to_string(id)},
                           {"name", listed ? listed->name : std::string()},
                           {"createdAtMs", listed ? listed->created_at_ms : std::int64_t{0}}});
}

Value queue_status(ActorInstance& instance, std::size_t limit) {
  auto& queue = instance.queue_part();
  Array messages;
  for (auto& m : queue.list(limit)) {
    messages.push_back(Value::object({{"id", std::to_string(m.id)},
                                      {"name", std::move(m.name)},
                                      {"createdAtMs", m.created_at_ms}}));
  }
  return Value::object({{"size", static_cast<std::int64_t>(queue.size())},
                        {"maxSize", static_cast<std::int64_t>(queue.max_size())},
                        {"truncated", queue.size() > limit},
                        {"messages", Value(std::move(messages))}});
}

Task<Result<Value>> queue_reset(ActorInstance& instance) {
  try {
    instance.queue_part().reset();
  } catch (const ActorError& e) {
    co_return fail(e.error());
  }
  auto op = durable(instance);
  auto saved = co_await std::move(op);
  if (!saved) {
    co_return fail(saved.error());
  }
  co_return Value(Object{});
}

// One statement on the actor's database, through the same queue as the actor's own statements.
Task<Result<SqlResult>> run_sql(ActorInstance& instance, std::string sql, SqlParams params) {
  std::exception_ptr failure;
  try {
    auto op = instance.db().execute(std::move(sql), std::move(params));
    co_return co_await std::move(op);
  } catch (...) {
    failure = std::current_exception();
  }
  co_return fail(error_from_exception(failure));
}

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    out += c;
    if (c == '"') {
      out += '"';
    }
  }
  out += '"';
  return out;
}

Task<Result<Value>> database_schema(ActorInstance& instance) {
  auto tables_op = run_sql(instance,
                           "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
                           "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                           "AND name NOT LIKE '\\_\\_drizzle\\_%' ESCAPE '\\' ORDER BY name",
                           {});
  auto tables = co_await std::move(tables_op);
  if (!tables) {
    co_return fail(tables.error());
  }
  Array out;
  for (const auto& row : tables->rows) {
    const std::string name = row.at(0).is_string() ? row.at(0).as_string() : std::string();
    const std::string type = row.at(1).is_string() ? row.at(1).as_string() : std::string();
    const std::string quoted = quote_identifier(name);
    auto columns_op = run_sql(instance, "PRAGMA table_info(" + quoted + ")", {});
    auto columns = co_await std::move(columns_op);
    if (!columns) {
      co_return fail(columns.error());
    }
    auto keys_op = run_sql(instance, "PRAGMA foreign_key_list(" + quoted + ")", {});
    auto keys = co_await std::move(keys_op);
    if (!keys) {
      co_return fail(keys.error());
    }
    auto count_op = run_sql(instance, "SELECT COUNT(*) AS count FROM " + quoted, {});
    auto count = co_await std::move(count_op);
    if (!count) {
      co_return fail(count.error());
    }
    Value records = !count->rows.empty() && !count->rows[0].empty() ? count->rows[0][0]
                                                                    : Value(std::int64_t{0});
    out.push_back(Value::object({
        {"table", Value::object({{"schema", "main"}, {"name", name}, {"type", type}})},
        {"columns", Value(columns->objects())},
        {"foreignKeys", Value(keys->objects())},
        {"records", std::move(records)},
    }));
  }
  co_return Value::object({{"schema", Value::object({{"tables", Value(std::move(out))}})}});
}

Task<Result<Value>> database_rows(ActorInstance& instance, GetDatabaseRows request) {
  SqlParams params;
  params.positional.emplace_back(std::clamp<std::int64_t>(request.limit, 0, 500));
  params.positional.emplace_back(std::max<std::int64_t>(request.offset, 0));
  auto op =
      run_sql(instance, "SELECT * FROM " + quote_identifier(request.table) + " LIMIT ? OFFSET ?",
              std::move(params));
  auto rows = co_await std::move(op);
  if (!rows) {
    co_return fail(rows.error());
  }
  co_return Value::object({{"rows", Value(rows->objects())}});
}

Task<Result<Value>> execute_sql(ActorInstance& instance, ExecuteSql request) {
  auto op = run_sql(instance, std::move(request.sql), std::move(request.params));
  auto rows = co_await std::move(op);
  if (!rows) {
    co_return fail(rows.error());
  }
  // A statement that wrote answers once its rows are durable.
  auto save_op = durable(instance);
  auto saved = co_await std::move(save_op);
  if (!saved) {
    co_return fail(saved.error());
  }
  co_return Value::object({{"rows", Value(rows->objects())}});
}

Value workflow_state_of(ActorInstance& instance) {
  const auto& wf = instance.workflow_part();
  return instance.definition().workflow && wf.loaded()
             ? Value(std::string(workflow::to_string(wf.history().record().state)))
             : Value(nullptr);
}

Value workflow_history_of(ActorInstance& instance) {
  const auto& wf = instance.workflow_part();
  return instance.definition().workflow && wf.loaded() ? workflow::history_json(wf.history())
                                                       : Value(nullptr);
}

Value summary_of(ActorInstance& instance) {
  return Value::object({
      {"state", state_of(instance)},
      {"connections", connections_of(instance)},
      {"rpcs", rpcs_of(instance)},
      {"queueSize", static_cast<std::int64_t>(instance.queue_part().size())},
      {"isStateEnabled", has_state(instance)},
      {"isDatabaseEnabled", instance.database_part().enabled()},
      {"isWorkflowEnabled", instance.definition().workflow},
      {"workflowState", workflow_state_of(instance)},
      {"workflowHistory", workflow_history_of(instance)},
  });
}

Task<Result<Value>> attach_socket(ActorInstance& instance, AttachSocket request) {
  // Init first, then every push: both leave from this strand, in this order.
  const auto init = init_message(instance);
  request.socket->send(net::WsMessage{
      true, InspectorWatchers::encode(protocol::inspector::ToClient(init), request.wire)});
  instance.inspector_watchers().attach(std::move(request.socket), request.wire);
  co_return Value(true);
}

}  // namespace

std::optional<std::string> wire_state(ActorInstance& instance) {
  if (!has_state(instance)) {
    return std::nullopt;
  }
  return cbor_of(instance.user_data()->state_to_value());
}

std::vector<protocol::inspector::Connection> wire_connections(ActorInstance& instance) {
  std::vector<protocol::inspector::Connection> out;
  for (const auto& [id, conn] : instance.connections().live()) {
    out.push_back(protocol::inspector::Connection{id, cbor_of(details_of(*conn))});
  }
  return out;
}

std::optional<std::string> wire_workflow_history(ActorInstance& instance) {
  const auto& wf = instance.workflow_part();
  if (!instance.definition().workflow || !wf.loaded()) {
    return std::nullopt;
  }
  return workflow::history_transport(wf.history());
}

protocol::inspector::Init init_message(ActorInstance& instance) {
  protocol::inspector::Init init;
  init.connections = wire_connections(instance);
  init.state = wire_state(instance);
  init.is_state_enabled = has_state(instance);
  for (const auto& [name, fn] : instance.definition().hooks.actions) {
    init.rpcs.push_back(name);
  }
  init.is_database_enabled = instance.database_part().enabled();
  init.queue_size = instance.queue_part().size();
  init.schedules = wire_schedules(instance);
  init.is_workflow_enabled = instance.definition().workflow;
  init.workflow_history = wire_workflow_history(instance);
  return init;
}

Task<void> detach(std::shared_ptr<ActorInstance> instance, const net::WebSocket* socket) {
  instance->inspector_watchers().detach(socket);
  co_return;
}

Error unauthorized() {
  return Error{"inspector", "unauthorized", "Inspector request requires a valid bearer token",
               std::nullopt, true};
}

Error disabled() {
  return Error{"inspector", "disabled",
               "The inspector is turned off on this server (RIVET_INSPECTOR_DISABLE=1)",
               std::nullopt, true};
}

unsigned status_of(const Error& error) {
  if (error.group == "actor" && error.code == "workflow_in_flight") {
    return 409;
  }
  if (error.group == "inspector") {
    return error.code == "unauthorized" ? 401 : error.code == "disabled" ? 404 : 400;
  }
  if (error.code == "not_enabled" || error.code == "state_not_enabled") {
    return 400;
  }
  const unsigned status = public_status_code(error.group, error.code);
  return status == 500 && error.is_public ? 400 : status;
}

std::optional<std::string> token_for_new_actor(const RuntimeConfig& config) {
  if (!config.inspector_enabled || config.inspector_test_token) {
    return std::nullopt;
  }
  return generate_token();
}

Task<Result<void>> authorize(ActorInstance& instance, std::optional<std::string> presented) {
  const auto& config = instance.config();
  if (!config.inspector_enabled) {
    co_return fail(disabled());
  }
  if (!presented || presented->empty()) {
    co_return fail(unauthorized());
  }
  if (config.inspector_test_token) {
    co_return token_matches(*presented, *config.inspector_test_token) ? Result<void>{}
                                                                      : fail(unauthorized());
  }
  auto& kv = instance.kv_part();
  auto read_op = kv.runtime_get(token_key());
  auto stored = co_await std::move(read_op);
  if (!stored) {
    co_return fail(stored.error());
  }
  if (!*stored) {
    // Stored before tokens existed: it gets one now. Nobody can hold it yet, so this request is
    // refused all the same.
    auto write_op = kv.runtime_put(token_key(), generate_token());
    auto written = co_await std::move(write_op);
    if (!written) {
      co_return fail(written.error());
    }
    log::info("inspector token created actor_id={}", instance.actor_id());
    co_return fail(unauthorized());
  }
  co_return token_matches(*presented, **stored) ? Result<void>{} : fail(unauthorized());
}

Task<Result<Value>> answer(ActorInstance& instance, InspectorRequest request) {
  if (std::holds_alternative<GetState>(request)) {
    co_return Value::object(
        {{"state", state_of(instance)}, {"isStateEnabled", has_state(instance)}});
  }
  if (auto* patch = std::get_if<PatchState>(&request)) {
    auto op = patch_state(instance, std::move(patch->state));
    co_return co_await std::move(op);
  }
  if (std::holds_alternative<GetConnections>(request)) {
    co_return Value::object({{"connections", connections_of(instance)}});
  }
  if (std::holds_alternative<GetRpcs>(request)) {
    co_return Value::object({{"rpcs", rpcs_of(instance)}});
  }
  if (auto* queue = std::get_if<GetQueue>(&request)) {
    co_return queue_status(instance, queue->limit);
  }
  if (auto* send = std::get_if<SendQueue>(&request)) {
    auto op = queue_send(instance, std::move(*send));
    co_return co_await std::move(op);
  }
  if (std::holds_alternative<ResetQueue>(request)) {
    auto op = queue_reset(instance);
    co_return co_await std::move(op);
  }
  if (std::holds_alternative<GetTraces>(request)) {
    co_return Value::object({{"otlp", Value(Array{})}, {"clamped", false}});
  }
  if (auto* history = std::get_if<GetWorkflowHistory>(&request)) {
    auto op = workflow_history(instance, history->transport);
    co_return co_await std::move(op);
  }
  if (auto* replay = std::get_if<ReplayWorkflow>(&request)) {
    auto op = workflow_replay(instance, std::move(replay->entry_id), replay->transport);
    co_return co_await std::move(op);
  }
  if (std::holds_alternative<GetDatabaseSchema>(request)) {
    auto op = database_schema(instance);
    co_return co_await std::move(op);
  }
  if (auto* rows = std::get_if<GetDatabaseRows>(&request)) {
    auto op = database_rows(instance, std::move(*rows));
    co_return co_await std::move(op);
  }
  if (auto* sql = std::get_if<ExecuteSql>(&request)) {
    auto op = execute_sql(instance, std::move(*sql));
    co_return co_await std::move(op);
  }
  if (std::holds_alternative<GetSummary>(request)) {
    co_return summary_of(instance);
  }
  if (std::holds_alternative<GetSchedules>(request)) {
    co_return schedules_of(instance);
  }
  if (auto* cancel = std::get_if<DeleteSchedule>(&request)) {
    const bool deleted = instance.schedule().cancel(cancel->id);
    auto op = durable(instance);
    auto saved = co_await std::move(op);
    if (!saved) {
      co_return fail(saved.error());
    }
    co_return Value::object({{"deleted", deleted}});
  }
  if (auto* attach = std::get_if<AttachSocket>(&request)) {
    auto op = attach_socket(instance, std::move(*attach));
    co_return co_await std::move(op);
  }
  co_return fail(internal_error());  // RunAction: the command runner's
}

}  // namespace rivetkit::core::inspector
