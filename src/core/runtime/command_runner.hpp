#pragma once
// Runs one command on one actor instance, on the instance's strand: the only code that turns a
// command (core/runtime/command.hpp) into calls on the instance's parts. The actor slot decides
// which instance that is; the runner says whether that instance took the command.

#include "core/actor_instance.hpp"
#include "core/runtime/command.hpp"
#include <rivetkit/task.hpp>

#include <functional>
#include <memory>
#include <variant>

namespace rivetkit::core {

/// The instance took no part of the command because it is stopping (or asked to): the command
/// belongs on the actor's next instance.
struct Refused {};

using Attempt = std::variant<Result<Reply>, Refused>;

/// Runs `command` on `instance`; must be called on the instance's strand. The command is moved
/// from only when the instance takes it, so a refused command can be run again elsewhere.
/// `decided` is called once the instance has taken or refused the command (a connection's
/// preamble is over), which may be well before the command finishes.
Task<Attempt> run_command(std::shared_ptr<ActorInstance> instance,
                          Command& command,
                          std::function<void()> decided);

}  // namespace rivetkit::core
