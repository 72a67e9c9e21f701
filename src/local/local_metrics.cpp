// Local mode's GET /metrics: the process metrics, plus the actors asleep, which only local mode
// knows (every live actor is in its store; those without a running instance sleep).

#include "local/local_context.hpp"
#include "net/metrics_endpoint.hpp"
#include "util/metrics.hpp"

#include <fmt/format.h>

namespace rivetkit::local {

Task<net::HttpResponse> local_metrics(std::shared_ptr<LocalContext> ctx) {
  auto counts_op = ctx->store->live_actor_counts();
  auto counts = co_await std::move(counts_op);
  std::string extra;
  if (counts) {
    extra =
        "# HELP rivetkit_actors_asleep Live actors in the local store that are not running\n"
        "# TYPE rivetkit_actors_asleep gauge\n";
    for (const auto& [name, live] : *counts) {
      const std::int64_t awake = metrics::runtime().actors_awake.with({name}).value();
      const std::int64_t asleep =
          std::max<std::int64_t>(0, static_cast<std::int64_t>(live) - awake);
      extra += fmt::format("rivetkit_actors_asleep{{actor=\"{}\"}} {}\n",
                           metrics::escape_label(name), asleep);
    }
  }
  co_return net::metrics_response(extra);
}

}  // namespace rivetkit::local
