#pragma once
// The `.d.ts` of a registry (Registry::type_declarations, `--emit-types`): one interface per
// actor in the shape the official client's `createClient<Registry>()` reads (its
// `config.actions`, `config.events`, `config.queues`), the interfaces of the RIVETKIT_FIELDS
// structs they use, and `Registry`.

#include <rivetkit/actor.hpp>

#include <string>
#include <vector>

namespace rivetkit::registry {

std::string type_declarations(const std::vector<ActorDefinition>& definitions);

}  // namespace rivetkit::registry
