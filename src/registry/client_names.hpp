#pragma once
// Action names the official client cannot call by name. Its actor handles and connections are
// proxies: `handle.increment(1)` calls action "increment" only because the handle has no member
// of that name. An action named like one of their members (`send`, `connect`, `on`, `dispose`,
// ... or anything of Object.prototype) is hidden behind it: `handle.send("hi")` sends a queue
// message instead. Such actions still work through `handle.action({ name, args })` and other
// clients, so the registry warns at start instead of refusing them.

#include <rivetkit/actor.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::registry {

/// True when rivetkit 2.3.19's handles or connections have a member named `action`.
bool hidden_by_client(std::string_view action);

/// One warning per hidden action of `definitions` ("actor `chat`: action `send` ...").
std::vector<std::string> hidden_action_warnings(const std::vector<ActorDefinition>& definitions);

}  // namespace rivetkit::registry
