#include "core/runtime/command_runner.hpp"

#include "core/errors.hpp"
#include "core/inspector/inspector.hpp"
#include "util/log.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <algorithm>
#include <cstdint>

namespace rivetkit::core {

namespace client = protocol::client;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

Error connection_lost() {
  return Error{"actor", "connection_lost", "The connection no longer exists", std::nullopt, true};
}

// Ends the short-lived connection of an HTTP call, then applies the output gate: the response
// leaves only once the state it depends on is durable.
Task<Result<void>> finish_transient(ActorInstance& instance, std::shared_ptr<Connection> conn) {
  auto close_op = instance.connection_lifecycle().close(std::move(conn));
  co_await std::move(close_op);
  std::uint64_t seq = instance.checkpoint();
  auto durable_op = instance.wait_durable(seq);
  co_return co_await std::move(durable_op);
}

// Ends the transient connection, then answers the work's result (or the failed write's error).
template <class T>
Task<Attempt> finished_reply(ActorInstance& instance,
                             std::shared_ptr<Connection> conn,
                             Result<T> result) {
  auto finish_op = finish_transient(instance, std::move(conn));
  auto finished = co_await std::move(finish_op);
  if (!finished) {
    co_return Result<Reply>(fail(finished.error()));
  }
  if (!result) {
    co_return Result<Reply>(fail(result.error()));
  }
  co_return Result<Reply>(Reply(std::move(*result)));
}

// Opens the short-lived connection an HTTP call runs on (its hooks run); the command is decided
// then. An Attempt when the call ends there: the hooks failed, or the instance refused it.
Task<std::variant<std::shared_ptr<Connection>, Attempt>> open_transient(
    ActorInstance& instance,
    ConnKind kind,
    const Value& params,
    const Request& request,
    client::Encoding encoding,
    const std::function<void()>& decided) {
  using Opened = std::variant<std::shared_ptr<Connection>, Attempt>;
  auto open_op = instance.connection_lifecycle().open(kind, params, request, encoding, nullptr);
  auto conn = co_await std::move(open_op);
  decided();
  if (!conn) {
    co_return Opened(Attempt(Result<Reply>(fail(conn.error()))));
  }
  if (!*conn) {
    co_return Opened(Attempt(Refused{}));
  }
  co_return Opened(std::move(*conn));
}

// An action on a connection that lives for the call (an HTTP action, an inspector action): its
// output through `shape`, once the state it depends on is durable.
Task<Attempt> transient_action(std::shared_ptr<ActorInstance> instance,
                               const Value& params,
                               const Request& request,
                               client::Encoding encoding,
                               std::string& name,
                               Array& args,
                               const std::function<void()>& decided,
                               Value (*shape)(Value)) {
  auto open_op = open_transient(*instance, ConnKind::kHttp, params, request, encoding, decided);
  auto opened = co_await std::move(open_op);
  if (auto* ended = std::get_if<Attempt>(&opened)) {
    // Refused while the connection opened (the instance began to stop): the name and arguments
    // stay in the command, which the slot runs on the next instance.
    co_return std::move(*ended);
  }
  auto conn = std::get<std::shared_ptr<Connection>>(std::move(opened));
  // Taken: from here on the command is this instance's.
  auto action_op = instance->run_action(conn.get(), std::move(name), std::move(args));
  auto result = co_await std::move(action_op);
  if (result && shape != nullptr) {
    result = shape(std::move(*result));
  }
  auto reply_op = finished_reply(*instance, std::move(conn), std::move(result));
  co_return co_await std::move(reply_op);
}

Task<Attempt> http_action(std::shared_ptr<ActorInstance> instance,
                          HttpActionCommand& command,
                          std::function<void()> decided) {
  auto op = transient_action(std::move(instance), command.params, command.request, command.encoding,
                             command.name, command.args, decided, nullptr);
  co_return co_await std::move(op);
}

// Runs a declared queue's can_publish rule for the send's connection: the error to answer, or
// nullopt when the send may go on.
Task<std::optional<Error>> publish_refusal(ActorInstance& instance,
                                           const detail::QueueDefinition& queue,
                                           Connection* conn) {
  if (!queue.can_publish) {
    co_return std::nullopt;
  }
  std::exception_ptr failure;
  try {
    auto rule_op = queue.can_publish(&instance, conn);
    const bool allowed = co_await std::move(rule_op);
    co_return allowed ? std::nullopt : std::optional<Error>(forbidden());
  } catch (...) {
    failure = std::current_exception();
  }
  co_return error_from_exception(failure);
}

// Adds the message and, for a send that waits, waits for its completion: at most the send's
// timeout ("timedOut") and the action timeout (actor.action_timed_out).
Task<Result<QueueSent>> enqueue_message(ActorInstance& instance, QueueSendCommand& command) {
  auto& queue = instance.queue_part();
  std::uint64_t id = 0;
  try {
    id = queue.enqueue(command.name, std::move(command.body));
  } catch (const ActorError& e) {
    co_return fail(e.error());
  }
  if (!command.wait) {
    co_return QueueSent{};
  }
  // Registered before anything can take the message (nothing ran since the enqueue).
  queue.expect_completion(id);
  const auto now = std::chrono::steady_clock::now();
  const auto action_limit = instance.definition().options.action_timeout;
  // Compared as the u64 it was sent as: CBOR and BARE carry timeouts up to 2^64-1 ms, which as
  // a signed duration would wrap negative (an instant "timedOut").
  const bool own_limit_first = command.timeout_ms
                               && *command.timeout_ms < static_cast<std::uint64_t>(
                                      std::max<std::int64_t>(0, action_limit.count()));
  const auto deadline =
      now + (own_limit_first ? std::chrono::milliseconds(*command.timeout_ms) : action_limit);
  auto wait_op = queue.wait_completion(id, deadline);
  auto response = co_await std::move(wait_op);
  if (response) {
    QueueSent sent;
    sent.response = std::move(*response);
    co_return sent;
  }
  if (!own_limit_first) {
    co_return fail(action_timed_out());
  }
  QueueSent sent;
  sent.timed_out = true;
  co_return sent;
}

Task<Attempt> queue_send(std::shared_ptr<ActorInstance> instance,
                         QueueSendCommand& command,
                         std::function<void()> decided) {
  auto open_op = open_transient(*instance, ConnKind::kHttp, command.params, command.request,
                                command.encoding, decided);
  auto opened = co_await std::move(open_op);
  if (auto* ended = std::get_if<Attempt>(&opened)) {
    co_return std::move(*ended);
  }
  auto conn = std::get<std::shared_ptr<Connection>>(std::move(opened));
  const auto& queues = instance->definition().queues;
  auto declared = queues.find(command.name);
  if (declared == queues.end()) {
    // A queue the actor does not declare: the send completes and keeps nothing, as in RivetKit
    // (core-semantics.md §7, "ignores undefined queues").
    log::debug("queue send to undeclared queue actor_id={} queue={}", instance->actor_id(),
               command.name);
    auto reply_op = finished_reply(*instance, std::move(conn), Result<QueueSent>(QueueSent{}));
    co_return co_await std::move(reply_op);
  }
  auto rule_op = publish_refusal(*instance, declared->second, conn.get());
  if (auto refused = co_await std::move(rule_op)) {
    auto reply_op = finished_reply(*instance, std::move(conn), Result<QueueSent>(fail(*refused)));
    co_return co_await std::move(reply_op);
  }
  auto send_op = enqueue_message(*instance, command);
  auto sent = co_await std::move(send_op);
  auto reply_op = finished_reply(*instance, std::move(conn), std::move(sent));
  co_return co_await std::move(reply_op);
}

// See ActorInstance::run_action: never let the raced operand throw.
Task<Result<Response>> catching_request(Task<std::optional<Response>> handler) {
  std::exception_ptr failure;
  try {
    std::optional<Response> r = co_await std::move(handler);
    if (!r) {
      // RivetKit answers an onRequest that returns nothing with a 500 that says so.
      co_return fail(Error{"core", "internal_error", "onRequest handler must return a Response",
                           std::nullopt, true});
    }
    co_return std::move(*r);
  } catch (...) {
    failure = std::current_exception();
  }
  co_return fail(error_from_exception(failure));
}

Task<Attempt> raw_request(std::shared_ptr<ActorInstance> instance,
                          RawRequestCommand& command,
                          std::function<void()> decided) {
  const auto& hooks = instance->definition().hooks;
  auto open_op = open_transient(*instance, ConnKind::kRawRequest, command.params, command.request,
                                client::Encoding::kJson, decided);
  auto opened = co_await std::move(open_op);
  if (auto* ended = std::get_if<Attempt>(&opened)) {
    co_return std::move(*ended);
  }
  auto conn = std::get<std::shared_ptr<Connection>>(std::move(opened));
  Result<Response> result = fail(route_not_found("/request" + command.request.path));
  if (hooks.on_request) {
    auto handler =
        catching_request(hooks.on_request(instance.get(), conn.get(), std::move(command.request)));
    auto timeout =
        instance->config().clock->wait_for(instance->definition().options.action_timeout);
    auto raced = co_await (std::move(handler) || std::move(timeout));
    if (raced.index() == 0) {
      result = std::move(std::get<0>(raced));
    } else {
      result = fail(action_timed_out());
    }
  }
  auto reply_op = finished_reply(*instance, std::move(conn), std::move(result));
  co_return co_await std::move(reply_op);
}

Task<Attempt> open_connection(std::shared_ptr<ActorInstance> instance,
                              OpenConnectionCommand& command,
                              std::function<void()> decided) {
  auto& life = instance->connection_lifecycle();
  auto open_op =
      life.open(command.kind, command.params, command.request, command.encoding, command.socket);
  auto conn = co_await std::move(open_op);
  decided();
  if (!conn) {
    co_return Result<Reply>(fail(conn.error()));
  }
  if (!*conn) {
    co_return Refused{};
  }
  if (command.kind == ConnKind::kRawWebSocket) {
    auto attach_op = life.attach_raw(*conn, false);
    auto attached = co_await std::move(attach_op);
    if (!attached) {
      auto close_op = life.close(*conn);
      co_await std::move(close_op);
      co_return Result<Reply>(fail(attached.error()));
    }
  } else {
    instance->connections().send_message(
        **conn, client::ToClient{client::Init{instance->actor_id(), (*conn)->id()}});
  }
  co_return Result<Reply>(Reply(OpenedConnection{(*conn)->id(), (*conn)->is_hibernatable()}));
}

Attempt delivery(ActorInstance::Delivery delivery) {
  switch (delivery) {
    case ActorInstance::Delivery::kAccepted:
      return Result<Reply>(Reply(Delivered{}));
    case ActorInstance::Delivery::kGone:
      return Result<Reply>(fail(connection_lost()));
    case ActorInstance::Delivery::kRetry:
      break;
  }
  return Refused{};
}

Task<Attempt> subscription(std::shared_ptr<ActorInstance> instance,
                           std::string conn_id,
                           client::SubscriptionRequest request) {
  // Taken before the first suspension (run_command checked that the instance takes work); the
  // socket's next message waits until an event's rule has decided.
  auto op = instance->subscription(std::move(conn_id), std::move(request));
  auto delivered = co_await std::move(op);
  co_return delivery(delivered);
}

Task<Attempt> raw_message(std::shared_ptr<ActorInstance> instance,
                          RawMessageCommand& command,
                          std::function<void()> decided) {
  // Taken for sure (run_command checked that the instance takes work, and deliver_raw decides
  // before its first suspension), so the message can move, and nothing can stop the instance
  // before that decision.
  auto op = instance->connection_lifecycle().deliver_raw(std::move(command.conn_id),
                                                         std::move(command.message));
  decided();
  auto delivered = co_await std::move(op);
  co_return delivery(delivered);
}

Task<Attempt> connection_closed(std::shared_ptr<ActorInstance> instance,
                                ConnectionClosedCommand& command) {
  if (instance->lifecycle().is(LifecycleState::kTerminated)) {
    co_return Refused{};
  }
  auto op =
      instance->connection_lifecycle().socket_closed(command.conn_id, command.code, command.reason);
  const bool handled = co_await std::move(op);
  // A hibernatable connection the stopping instance no longer holds lives on in its record:
  // the next instance restores it, and ends it.
  if (!handled && command.wake && !instance->lifecycle().accepting()) {
    co_return Refused{};
  }
  co_return Result<Reply>(Reply(handled));
}

// An inspector request: the token first, then the request; an action runs on a short-lived
// connection, as an HTTP action does.
Task<Attempt> inspector_request(std::shared_ptr<ActorInstance> instance,
                                InspectorCommand& command,
                                std::function<void()> decided) {
  auto work = instance->track_request();
  if (!command.preauthorized) {
    auto auth_op = inspector::authorize(*instance, std::move(command.token));
    auto authorized = co_await std::move(auth_op);
    if (!authorized) {
      decided();
      co_return Result<Reply>(fail(authorized.error()));
    }
    // (the token moved: a run on the next instance, after a refusal below, needs none)
    command.preauthorized = true;
  }
  if (auto* action = std::get_if<inspector::RunAction>(&command.request)) {
    // The inspector answers {output}.
    auto op =
        transient_action(std::move(instance), command.params, action->request, command.encoding,
                         action->name, action->args, decided, [](Value output) {
                           return Value::object({{"output", std::move(output)}});
                         });
    co_return co_await std::move(op);
  }
  decided();
  auto answer_op = inspector::answer(*instance, std::move(command.request));
  auto answered = co_await std::move(answer_op);
  if (!answered) {
    co_return Result<Reply>(fail(answered.error()));
  }
  co_return Result<Reply>(Reply(std::move(*answered)));
}

}  // namespace

Task<Attempt> run_command(std::shared_ptr<ActorInstance> instance,
                          Command& command,
                          std::function<void()> decided) {
  // Work of every kind but the end of a connection goes to an instance that takes new work.
  if (!std::holds_alternative<ConnectionClosedCommand>(command)
      && !instance->lifecycle().accepting()) {
    co_return Refused{};
  }
  std::optional<Task<Attempt>> op;
  if (auto* c = std::get_if<HttpActionCommand>(&command)) {
    op.emplace(http_action(std::move(instance), *c, std::move(decided)));
  } else if (auto* q = std::get_if<QueueSendCommand>(&command)) {
    op.emplace(queue_send(std::move(instance), *q, std::move(decided)));
  } else if (auto* r = std::get_if<RawRequestCommand>(&command)) {
    op.emplace(raw_request(std::move(instance), *r, std::move(decided)));
  } else if (auto* o = std::get_if<OpenConnectionCommand>(&command)) {
    op.emplace(open_connection(std::move(instance), *o, std::move(decided)));
  } else if (auto* m = std::get_if<ConnectionMessageCommand>(&command)) {
    if (auto* sub = std::get_if<client::SubscriptionRequest>(&m->message)) {
      op.emplace(subscription(std::move(instance), m->conn_id, std::move(*sub)));
    } else {
      // Decided without suspending: taken (the message moves), or the connection is gone.
      co_return delivery(instance->deliver(m->conn_id, std::move(m->message)));
    }
  } else if (auto* w = std::get_if<RawMessageCommand>(&command)) {
    op.emplace(raw_message(std::move(instance), *w, std::move(decided)));
  } else if (auto* i = std::get_if<InspectorCommand>(&command)) {
    op.emplace(inspector_request(std::move(instance), *i, std::move(decided)));
  } else {
    // The end of a connection decides as it finishes (the dispatcher's turn ends then).
    op.emplace(connection_closed(std::move(instance), std::get<ConnectionClosedCommand>(command)));
  }
  auto attempt = co_await std::move(*op);
  co_return attempt;
}

}  // namespace rivetkit::core
