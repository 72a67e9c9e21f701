#pragma once
// The fixture server's queue actor with redelivery rules (queue_worker.cpp).

#include <rivetkit/rivetkit.hpp>

namespace fixture {

rivetkit::ActorDefinition queue_worker();

}  // namespace fixture
