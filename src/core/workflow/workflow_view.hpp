#pragma once
// What the inspector shows of a workflow (core-semantics.md §9): its history as RivetKit's
// inspector answers it over HTTP: {nameRegistry, entries: [{id, location, kind: {type, data}}],
// entryMetadata: {id: {status, error, attempts, lastAttemptAt, createdAt, completedAt,
// rollbackCompletedAt, rollbackError}}}, entries in the order they were created.

#include "core/workflow/workflow_history.hpp"
#include <rivetkit/value.hpp>

#include <string>

namespace rivetkit::core::workflow {

Value history_json(const WorkflowHistory& history);

/// The same history as the inspector WebSocket carries it (Init, WorkflowHistoryResponse,
/// WorkflowHistoryUpdated): RivetKit's workflow transport encoding (BARE; values as CBOR).
std::string history_transport(const WorkflowHistory& history);

}  // namespace rivetkit::core::workflow
