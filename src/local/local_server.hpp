#pragma once
// Local mode: this process is the endpoint the official clients expect (client-protocol.md §3-§5):
// metadata, the actor REST API, the gateway (direct id, query path, header/subprotocol routing)
// and CORS, in front of the shared actor router. Actors and their data live in the LocalStore.

#include "core/runtime.hpp"
#include "storage/local_store.hpp"
#include <rivetkit/config.hpp>
#include <rivetkit/result.hpp>

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <memory>

namespace rivetkit::local {

class LocalServer {
 public:
  LocalServer(boost::asio::io_context& io,
              RegistryConfig config,
              core::Runtime& runtime,
              std::shared_ptr<storage::LocalStore> store);
  ~LocalServer();

  /// Binds the listener; returns the bound port.
  Result<std::uint16_t> start();
  /// Stops accepting connections and firing alarms (open sockets stay).
  void stop_accepting();
  /// stop_accepting(), then closes every open connection (sockets get 1001 going away).
  void stop();
  /// The graceful stop's first step: no more alarms, and new requests are answered "going away"
  /// (net::HttpServer::drain) while the listener stays open, so that clients reconnecting in the
  /// meantime get a signal they retry on instead of a refused connection.
  void drain();
  /// The graceful stop's last step: every open connection gets 1001 "ws.going_away".
  void close_all();
  /// Connections still open (see net::HttpServer::open_connections).
  std::size_t open_connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rivetkit::local
