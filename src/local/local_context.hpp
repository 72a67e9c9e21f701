#pragma once
// Shared state of the local-mode driver and the helpers its routes use.

#include "core/actor_instance.hpp"
#include "core/driver.hpp"
#include "core/router/router.hpp"
#include "core/runtime.hpp"
#include "core/socket_registry.hpp"
#include "local/gateway_path.hpp"
#include "local/local_directory.hpp"
#include "net/http_types.hpp"
#include "storage/local_store.hpp"
#include "util/clock.hpp"
#include <rivetkit/config.hpp>
#include <rivetkit/error.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <memory>
#include <string>

namespace rivetkit::local {

struct LocalContext {
  LocalContext(RegistryConfig cfg, core::Runtime& rt, std::shared_ptr<storage::LocalStore> st)
      : config(std::move(cfg)),
        runtime(rt),
        store(st),
        directory(
            std::make_unique<LocalDirectory>(std::move(st), rt, [this](const std::string& id) {
              if (driver != nullptr) {
                driver->alarm_changed(id, std::nullopt);  // a destroyed actor has no schedules
              }
            })) {}

  RegistryConfig config;
  core::Runtime& runtime;
  std::shared_ptr<storage::LocalStore> store;
  std::unique_ptr<LocalDirectory> directory;
  core::SocketRegistry sockets;
  /// Set once by the server (it outlives every actor instance).
  core::ActorDriver* driver = nullptr;

  util::Clock& clock() const { return *runtime.config().clock; }
};

/// Engine-style JSON error (always JSON, whatever x-rivet-encoding says), with x-rivet-error.
net::HttpResponse engine_error(const Error& error);
/// Status of an error answered by the engine-facing surface (REST, gateway routing).
unsigned engine_status(const Error& error);

/// The REST actor object (client-protocol.md §4.2).
Value actor_json(const storage::ActorRecord& record);

/// REST API: /actors..., /actors/names, /datacenters. Returns nullopt-like 404 api.not_found for
/// unknown paths.
Task<net::HttpResponse> handle_rest(std::shared_ptr<LocalContext> ctx, net::HttpRequest request);

/// GET /metrics: the process metrics and the actors asleep in the store (local_metrics.cpp).
Task<net::HttpResponse> local_metrics(std::shared_ptr<LocalContext> ctx);

/// Finds or creates the actor a gateway request names and returns its running instance.
Task<Result<std::shared_ptr<core::ActorInstance>>> resolve_gateway(
    std::shared_ptr<LocalContext> ctx, GatewayRequest target);
/// Returns the running instance of an existing actor id (waking it), or actor.not_found.
Task<Result<std::shared_ptr<core::ActorInstance>>> acquire_actor(std::shared_ptr<LocalContext> ctx,
                                                                 storage::ActorRecord record);
Task<Result<std::shared_ptr<core::ActorInstance>>> acquire_actor_id(
    std::shared_ptr<LocalContext> ctx, std::string actor_id);

/// What the actor router needs to hand work to the actor `instance` belongs to.
core::ActorTarget make_target(std::shared_ptr<LocalContext> ctx,
                              std::shared_ptr<core::ActorInstance> instance);

/// Serves a socket another actor opened in process (core/client/dispatch_caller.hpp): wakes the
/// actor, then runs the actor router's session on `socket` in the background, as for a client's
/// socket. Answers once the actor runs (or with why it cannot).
Task<Result<void>> serve_actor_socket(std::shared_ptr<LocalContext> ctx,
                                      std::string actor_id,
                                      net::HttpRequest request,
                                      std::shared_ptr<net::WebSocket> socket);

/// Destroys an actor for good: on_destroy runs, connections close, data is wiped. false when the
/// actor does not exist (or was already destroyed).
Task<Result<bool>> destroy_actor(std::shared_ptr<LocalContext> ctx, std::string actor_id);

}  // namespace rivetkit::local
