#pragma once
/// rivetkit-cpp: stateful actors in C++20, served to the official RivetKit clients.
/// This umbrella header is all an application needs.

#include <rivetkit/abort_signal.hpp>
#include <rivetkit/actor.hpp>
#include <rivetkit/actor_connection.hpp>
#include <rivetkit/actor_log.hpp>
#include <rivetkit/client.hpp>
#include <rivetkit/config.hpp>
#include <rivetkit/convert.hpp>
#include <rivetkit/database.hpp>
#include <rivetkit/driver_context.hpp>
#include <rivetkit/error.hpp>
#include <rivetkit/http.hpp>
#include <rivetkit/input_schema.hpp>
#include <rivetkit/json.hpp>
#include <rivetkit/kv.hpp>
#include <rivetkit/options.hpp>
#include <rivetkit/registry.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/schedule.hpp>
#include <rivetkit/sql_types.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>
#include <rivetkit/websocket.hpp>
#include <rivetkit/workflow.hpp>
