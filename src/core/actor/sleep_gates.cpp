#include "core/actor/sleep_gates.hpp"

#include <algorithm>
#include <utility>

namespace rivetkit::core {

std::string_view to_string(AwakeReason reason) {
  switch (reason) {
    case AwakeReason::kNotStarted:
      return "not_started";
    case AwakeReason::kStopRequested:
      return "stop_requested";
    case AwakeReason::kNoSleep:
      return "no_sleep";
    case AwakeReason::kAction:
      return "action";
    case AwakeReason::kKeepAwake:
      return "keep_awake";
    case AwakeReason::kWsCallback:
      return "websocket_callback";
    case AwakeReason::kDisconnect:
      return "disconnect";
    case AwakeReason::kRunHandler:
      return "run_handler";
    case AwakeReason::kConnection:
      return "connection";
    case AwakeReason::kInspector:
      return "inspector";
  }
  return "unknown";
}

SleepGates::SleepGates(boost::asio::any_io_executor strand,
                       const util::Clock& clock,
                       std::chrono::milliseconds sleep_timeout,
                       std::chrono::milliseconds first_request_grace)
    : clock_(clock),
      sleep_timeout_(sleep_timeout),
      first_request_grace_(first_request_grace),
      changed_(std::move(strand)) {}

void SleepGates::enter(WorkKind kind) {
  ++counts_[static_cast<std::size_t>(kind)];
  touch();
}

void SleepGates::leave(WorkKind kind) {
  auto& n = counts_[static_cast<std::size_t>(kind)];
  if (n > 0) {
    --n;
  }
  touch();
}

void SleepGates::touch() {
  idle_since_ = clock_.steady_now();
  changed_.notify_all();
}

void SleepGates::started() {
  idle_since_ = clock_.steady_now();
  started_at_ = idle_since_;
}

std::optional<AwakeReason> SleepGates::keeps_awake() const {
  struct Gate {
    WorkKind kind;
    AwakeReason reason;
  };
  static constexpr Gate kGates[] = {
      {WorkKind::kAction, AwakeReason::kAction},
      {WorkKind::kKeepAwake, AwakeReason::kKeepAwake},
      {WorkKind::kWsCallback, AwakeReason::kWsCallback},
      {WorkKind::kDisconnect, AwakeReason::kDisconnect},
      {WorkKind::kRun, AwakeReason::kRunHandler},
  };
  for (const auto& gate : kGates) {
    std::size_t open = count(gate.kind);
    if (gate.kind == WorkKind::kRun) {
      // A run handler waiting in a queue receive lets the actor sleep.
      open = open > count(WorkKind::kQueueWait) ? open : 0;
    }
    if (open != 0) {
      return gate.reason;
    }
  }
  return std::nullopt;
}

bool SleepGates::drained(bool include_wait_until, bool include_run) const {
  for (auto kind :
       {WorkKind::kAction, WorkKind::kKeepAwake, WorkKind::kWsCallback, WorkKind::kDisconnect}) {
    if (count(kind) != 0) {
      return false;
    }
  }
  if (include_run && count(WorkKind::kRun) != 0) {
    return false;
  }
  return !include_wait_until || count(WorkKind::kWaitUntil) == 0;
}

util::SteadyTime SleepGates::sleep_deadline() const {
  auto deadline = idle_since_ + sleep_timeout_;
  if (!first_request_seen_ && first_request_grace_ > sleep_timeout_) {
    deadline = std::max(deadline, started_at_ + first_request_grace_);
  }
  return deadline;
}

SleepGates::Work::Work(SleepGates& gates, WorkKind kind, std::shared_ptr<void> owner)
    : gates_(&gates), kind_(kind), owner_(std::move(owner)) {
  if (kind_ == WorkKind::kAction || kind_ == WorkKind::kWsCallback
      || kind_ == WorkKind::kDisconnect) {
    gates_->note_request();
  }
  gates_->enter(kind_);
}

SleepGates::Work::Work(Work&& other) noexcept
    : gates_(std::exchange(other.gates_, nullptr)),
      kind_(other.kind_),
      owner_(std::move(other.owner_)) {}

SleepGates::Work::~Work() {
  if (gates_ != nullptr) {
    gates_->leave(kind_);
  }
}

}  // namespace rivetkit::core
