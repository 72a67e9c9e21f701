#include "registry/client_names.hpp"

#include <algorithm>
#include <iterator>

namespace rivetkit::registry {

namespace {

// Members of rivetkit 2.3.19's ActorHandle and ActorConn (read off the objects themselves, own
// and inherited), plus "then", which the proxies answer as undefined so that they are not
// taken for promises. Sorted.
constexpr std::string_view kClientMembers[] = {
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
    "__proto__",
    "action",
    "actorId",
    "connId",
    "connStatus",
    "connect",
    "connectionId",
    "constructor",
    "dispose",
    "fetch",
    "getGatewayUrl",
    "hasOwnProperty",
    "isConnected",
    "isPrototypeOf",
    "on",
    "onClose",
    "onError",
    "onOpen",
    "onStatusChange",
    "once",
    "propertyIsEnumerable",
    "ready",
    "reload",
    "resolve",
    "send",
    "then",
    "toLocaleString",
    "toString",
    "valueOf",
    "webSocket",
};

}  // namespace

bool hidden_by_client(std::string_view action) {
  return std::find(std::begin(kClientMembers), std::end(kClientMembers), action)
         != std::end(kClientMembers);
}

std::vector<std::string> hidden_action_warnings(const std::vector<ActorDefinition>& definitions) {
  std::vector<std::string> out;
  for (const auto& definition : definitions) {
    for (const auto& [name, handler] : detail::Access::data(definition)->hooks.actions) {
      (void)handler;
      if (hidden_by_client(name)) {
        out.push_back("actor `" + definition.name() + "`: action `" + name
                      + "` cannot be called as handle." + name
                      + "(...) with the official client (its handles and connections have a `"
                      + name + "` of their own); call it with handle.action({ name: \"" + name
                      + "\", args }) or rename it");
      }
    }
  }
  return out;
}

}  // namespace rivetkit::registry
