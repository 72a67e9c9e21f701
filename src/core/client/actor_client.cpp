#include "core/client/actor_client.hpp"

#include "core/actor/stored_value.hpp"
#include "core/client/outgoing_connection.hpp"
#include "core/errors.hpp"
#include "core/ids.hpp"
#include "core/keys.hpp"
#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"
#include "util/url.hpp"

#include <algorithm>

namespace rivetkit::core {

namespace {

[[noreturn]] void throw_for_client(const Error& error) {
  throw ActorError(sanitize_for_client(error));
}

bool is_not_found(const Error& error) {
  return error.group == "actor" && error.code == "not_found";
}

}  // namespace

ActorClient::ActorClient(ActorDirectory& directory,
                         ActionCaller& caller,
                         KnownName known_name,
                         std::shared_ptr<util::Clock> clock)
    : directory_(directory),
      caller_(caller),
      known_name_(std::move(known_name)),
      clock_(std::move(clock)) {}

Task<Result<std::string>> ActorClient::find(const detail::ActorQuery& query) {
  using Kind = detail::ActorQuery::Kind;
  if (query.kind == Kind::kGetForId) {
    co_return query.actor_id;  // the call finds out whether it exists (and wakes it)
  }
  if (!known_name_(query.name)) {
    co_return fail(unknown_actor_name(query.name));
  }
  std::string key = serialize_key(query.key);
  if (query.kind == Kind::kGet) {
    auto op = directory_.get_with_key(query.name, key);
    auto found = co_await std::move(op);
    if (!found) {
      co_return fail(found.error());
    }
    if (!*found) {
      co_return fail(Error{"actor", "not_found", "The actor does not exist or was destroyed.",
                           Value::object({{"name", query.name}, {"key", key}}), true});
    }
    co_return std::move((*found)->actor_id);
  }
  ActorRecord wanted;
  wanted.actor_id = new_actor_id();
  wanted.name = query.name;
  wanted.key = std::move(key);
  if (!query.input.is_undefined()) {
    wanted.input = encode_stored(query.input);
  }
  wanted.create_ts = clock_->now_ms();
  wanted.generation = 0;
  if (query.kind == Kind::kCreate) {
    auto op = directory_.create(std::move(wanted));
    auto created = co_await std::move(op);
    if (!created) {
      co_return fail(created.error());
    }
    co_return std::move(created->actor_id);
  }
  auto op = directory_.get_or_create(std::move(wanted));
  auto found = co_await std::move(op);
  if (!found) {
    co_return fail(found.error());
  }
  co_return std::move(found->actor.actor_id);
}

Task<std::string> ActorClient::resolve(detail::ActorQuery query) {
  auto op = find(query);
  auto id = co_await std::move(op);
  if (!id) {
    throw_for_client(id.error());
  }
  co_return std::move(*id);
}

Task<Value> ActorClient::call(detail::ActorQuery query,
                              std::string action,
                              Array args,
                              Value params) {
  auto op =
      run(std::move(query), ActionWork{std::move(action), std::move(args)}, std::move(params));
  co_return co_await std::move(op);
}

Task<QueueSendResult> ActorClient::send(detail::ActorQuery query,
                                        std::string queue,
                                        Value body,
                                        bool wait,
                                        std::optional<std::chrono::milliseconds> timeout,
                                        Value params) {
  QueueWork work{std::move(queue), std::move(body), wait, std::nullopt};
  if (timeout) {
    work.timeout_ms = static_cast<std::uint64_t>(std::max<std::int64_t>(0, timeout->count()));
  }
  auto op = run(std::move(query), std::move(work), std::move(params));
  Value reply = co_await std::move(op);
  QueueSendResult result;
  const Value* status = reply.find("status");
  result.status = status != nullptr && status->is_string() ? status->as_string() : "completed";
  if (const Value* response = reply.find("response"); response != nullptr) {
    result.response = *response;
  }
  co_return result;
}

Task<Value> ActorClient::run(detail::ActorQuery query, ClientWork work, Value params) {
  if (caller_.routes_query(query)) {
    if (!known_name_(query.name)) {
      throw_for_client(unknown_actor_name(query.name));
    }
    auto op = caller_.call_query(std::move(query), std::move(work), std::move(params));
    auto result = co_await std::move(op);
    if (!result) {
      throw_for_client(result.error());
    }
    co_return std::move(*result);
  }
  // A get-or-create handle whose actor was destroyed between finding it and calling it creates
  // it anew, once (the directory no longer answers a destroyed actor for its key).
  const int attempts = query.kind == detail::ActorQuery::Kind::kGetOrCreate ? 2 : 1;
  for (int attempt = 1;; ++attempt) {
    auto find_op = find(query);
    auto id = co_await std::move(find_op);
    if (!id) {
      throw_for_client(id.error());
    }
    const bool last = attempt >= attempts;
    auto call_op = caller_.call(std::move(*id), last ? std::move(work) : work,
                                last ? std::move(params) : params);
    auto result = co_await std::move(call_op);
    if (result) {
      co_return std::move(*result);
    }
    if (last || !is_not_found(result.error())) {
      throw_for_client(result.error());
    }
  }
}

Task<std::shared_ptr<detail::ActorConnApi>> ActorClient::connect(detail::ActorQuery query,
                                                                 Value params,
                                                                 detail::ActorApi* holder) {
  // How long the actor may take to accept: its start and its connection hooks (bounded by its
  // own timeouts, which answer first).
  constexpr std::chrono::milliseconds kAcceptLimit{60'000};
  constexpr auto kEncoding = protocol::client::Encoding::kCbor;
  std::vector<std::string> protocols{"rivet", "rivet_encoding.cbor"};
  if (!params.is_null() && !params.is_undefined()) {
    protocols.push_back("rivet_conn_params."
                        + util::percent_encode(protocol::json_stringify(
                            protocol::compat_encode(params, protocol::CompatMode::kJson))));
  }
  // As for calls: a get-or-create handle whose actor was destroyed meanwhile creates it anew.
  const int attempts = query.kind == detail::ActorQuery::Kind::kGetOrCreate ? 2 : 1;
  for (int attempt = 1;; ++attempt) {
    auto find_op = find(query);
    auto id = co_await std::move(find_op);
    if (!id) {
      throw_for_client(id.error());
    }
    auto socket_op = caller_.open_socket(std::move(*id), "/connect", protocols);
    auto socket = co_await std::move(socket_op);
    Result<std::shared_ptr<OutgoingConnection>> opened = fail(Error{});
    if (socket) {
      auto open_op = OutgoingConnection::open(std::move(*socket), kEncoding, holder->executor(),
                                              clock_, kAcceptLimit);
      opened = co_await std::move(open_op);
    } else {
      opened = fail(socket.error());
    }
    if (opened) {
      std::weak_ptr<OutgoingConnection> weak = *opened;
      holder->on_abort_owned(weak, [weak] {
        if (auto conn = weak.lock()) {
          conn->close();  // the holder stops: its listeners have no instance to run on
        }
      });
      co_return std::move(*opened);
    }
    if (attempt >= attempts || !is_not_found(opened.error())) {
      throw_for_client(opened.error());
    }
  }
}

Task<void> ActorClient::destroy(detail::ActorQuery query) {
  auto find_op = find(query);
  auto id = co_await std::move(find_op);
  if (!id) {
    throw_for_client(id.error());
  }
  auto op = directory_.destroy(*id);
  auto destroyed = co_await std::move(op);
  if (!destroyed) {
    throw_for_client(destroyed.error());
  }
  if (!*destroyed) {
    throw_for_client(actor_not_found(*id));
  }
}

}  // namespace rivetkit::core
