#pragma once
// Local mode's actor driver (core/driver.hpp): every actor runs in this process. A sleep or
// destroy an actor asks for is carried out here; alarms wake sleeping actors on time (loaded from
// the store at start-up); the sockets of hibernatable connections wait in the socket registry;
// work for a sleeping actor wakes it. The HTTP front door (local_server.*) is separate.

#include "core/client/actor_client.hpp"
#include "core/client/dispatch_caller.hpp"
#include "core/driver.hpp"
#include "local/alarm_scheduler.hpp"
#include "util/heap_trimmer.hpp"

#include <boost/asio/io_context.hpp>

#include <memory>
#include <optional>
#include <string>

namespace rivetkit::local {

struct LocalContext;

class LocalDriver final : public core::ActorDriver,
                          public std::enable_shared_from_this<LocalDriver> {
 public:
  LocalDriver(boost::asio::io_context& io, std::shared_ptr<LocalContext> ctx);

  /// Registers as the context's driver and the runtime's waker, starts the alarms and loads the
  /// pending ones.
  void start();
  /// No more alarms (a graceful stop's first step).
  void stop_alarms();

  // core::ActorDriver
  void request_sleep(const std::string& actor_id) override;
  void request_destroy(const std::string& actor_id) override;
  void alarm_changed(const std::string& actor_id, std::optional<std::int64_t> at_ms) override;
  std::shared_ptr<net::WebSocket> hibernated_socket(const storage::PersistedConn& record) override;
  Task<Result<void>> wake(std::string actor_id) override;
  Task<Result<std::unique_ptr<storage::ActorStore>>> storage_for(std::string actor_id,
                                                                 std::uint32_t generation) override;
  detail::ClientApi& actor_client() override { return client_; }

 private:
  static Task<void> sleep_actor(std::shared_ptr<LocalDriver> self, std::string actor_id);
  static Task<void> destroy_actor(std::shared_ptr<LocalDriver> self, std::string actor_id);
  static Task<void> wake_for_alarm(std::shared_ptr<LocalDriver> self, std::string actor_id);
  static Task<void> load_alarms(std::shared_ptr<LocalDriver> self);
  static Task<Result<void>> wake_weak(std::weak_ptr<LocalDriver> weak, std::string actor_id);

  boost::asio::io_context& io_;
  std::shared_ptr<LocalContext> ctx_;
  std::shared_ptr<AlarmScheduler> alarms_;
  util::HeapTrimmer trimmer_;    // also trims after other frees (closed connections)
  core::DispatchCaller caller_;  // actor-to-actor calls run in process
  core::ActorClient client_;
};

}  // namespace rivetkit::local
