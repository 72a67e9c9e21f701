#pragma once
// Engine mode's actor directory (core/directory.hpp) over the engine's actor API
// (client-protocol.md §4): the engine keeps every actor of the namespace, whichever process runs
// it. Each call is one HTTP request; errors the engine answers keep their group and code
// (e.g. actor.duplicate_key), transport failures are engine.api_failed.
//
// Differences from local mode: the engine picks actor ids (get_or_create and create ignore
// `wanted.actor_id`), records carry no generation (0), and list() pages by create_ts as the
// engine does.

#include "core/directory.hpp"
#include "engine/engine_api.hpp"

#include <boost/asio/any_io_executor.hpp>

namespace rivetkit::engine {

class EngineDirectory final : public core::ActorDirectory {
 public:
  /// `options`: endpoint, namespace, token, and the pool new actors run in (their
  /// runner_name_selector).
  EngineDirectory(boost::asio::any_io_executor ex, EngineApiOptions options);

  Task<Result<std::optional<core::ActorRecord>>> get_for_id(std::string actor_id) override;
  Task<Result<std::optional<core::ActorRecord>>> get_with_key(std::string name,
                                                              std::string key) override;
  Task<Result<GetOrCreated>> get_or_create(core::ActorRecord wanted) override;
  Task<Result<core::ActorRecord>> create(core::ActorRecord wanted) override;
  Task<Result<bool>> destroy(std::string actor_id) override;
  Task<Result<std::vector<core::ActorRecord>>> list(core::ActorListQuery query) override;

 private:
  /// One call; the parsed JSON body of a 2xx answer, else the engine's error.
  Task<Result<Value>> call(std::string method, std::string path, std::string body = {});
  /// A GET of actors; the engine's not_found answers as none.
  Task<Result<std::vector<core::ActorRecord>>> lookup(std::string path);
  std::string with_namespace(std::string path) const;

  boost::asio::any_io_executor ex_;
  EngineApiOptions options_;
};

}  // namespace rivetkit::engine
