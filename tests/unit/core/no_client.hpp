#pragma once
// For test drivers whose actors call no other actor: c.client() throws (the client itself is
// covered by tests/unit/local/actor_client_test.cpp).

#include <rivetkit/rivetkit.hpp>

namespace rivetkit::core::testing {

class NoClient final : public detail::ClientApi {
 public:
  Task<std::string> resolve(detail::ActorQuery) override { throw unavailable(); }
  Task<Value> call(detail::ActorQuery, std::string, Array, Value) override { throw unavailable(); }
  Task<QueueSendResult> send(detail::ActorQuery,
                             std::string,
                             Value,
                             bool,
                             std::optional<std::chrono::milliseconds>,
                             Value) override {
    throw unavailable();
  }
  Task<std::shared_ptr<detail::ActorConnApi>> connect(detail::ActorQuery,
                                                      Value,
                                                      detail::ActorApi*) override {
    throw unavailable();
  }
  Task<void> destroy(detail::ActorQuery) override { throw unavailable(); }

 private:
  static ActorError unavailable() {
    return ActorError(Error{"test", "no_client", "No actor client in this test", {}, false});
  }
};

}  // namespace rivetkit::core::testing
