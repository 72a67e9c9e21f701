#include "core/actor/output_gate.hpp"

#include "util/spawn.hpp"

#include <algorithm>

namespace rivetkit::core {

OutputGate::OutputGate(boost::asio::any_io_executor strand, Source& source, bool gate_outputs)
    : strand_(std::move(strand)),
      source_(source),
      gate_outputs_(gate_outputs),
      progress_(strand_) {}

Error OutputGate::save_failed_error() {
  return Error{"actor", "state_save_failed", "The actor state could not be saved", std::nullopt,
               false};
}

std::uint64_t OutputGate::checkpoint() {
  const bool take = changed_ && source_.can_write();
  if (broken_) {
    // Nothing more is written; whatever depends on these changes fails with them.
    if (take) {
      changed_ = false;
      failed_ = ++requested_;
    }
    return outputs_wait_for(failed_);
  }
  if (in_flight_) {
    // One write at a time: the changes wait for the next one, whose number is reserved now.
    if (take) {
      if (reserved_ == 0) {
        reserved_ = requested_ + 1;
      }
      gated_ = reserved_;
    }
    return outputs_wait_for(gated_);
  }
  if (take) {
    changed_ = false;
    auto write = source_.take_write();
    if (!write) {
      if (reserved_ != 0) {
        // What waited for the write under way changed nothing after all: it is durable too.
        requested_ = reserved_;
        durable_ = std::max(durable_, reserved_);
        reserved_ = 0;
        progressed();
      }
    } else {
      const std::uint64_t seq = ++requested_;
      reserved_ = 0;
      if (write->gating) {
        gated_ = seq;
      }
      in_flight_ = true;
      auto started = std::move(write->started);
      util::spawn(strand_, run(seq, std::move(*write)), "commit actor write");
      if (started) {
        started();
      }
    }
  }
  return outputs_wait_for(gated_);
}

Task<void> OutputGate::run(std::uint64_t seq, Write write) {
  auto hold = std::move(write.hold);
  auto r = co_await std::move(write.commit);
  in_flight_ = false;
  if (r) {
    durable_ = std::max(durable_, seq);
    source_.write_durable();
    progressed();
    if (reserved_ != 0) {
      changed_ = true;
      checkpoint();  // what waited for this write
      if (reserved_ != 0 && !in_flight_) {
        // It could not be written (the owner stopped meanwhile): it never will be.
        failed_ = std::max(failed_, reserved_);
        requested_ = std::max(requested_, reserved_);
        reserved_ = 0;
        progressed();
      }
    }
    co_return;
  }
  broken_ = true;
  failed_ = std::max({failed_, seq, reserved_});
  requested_ = std::max(requested_, reserved_);
  reserved_ = 0;
  progressed();
  source_.write_failed(seq, r.error());
}

void OutputGate::progressed() {
  source_.outputs_progressed();
  progress_.notify_all();
}

Task<Result<void>> OutputGate::wait(std::uint64_t seq) {
  while (true) {
    if (seq == 0 || durable_ >= seq) {
      co_return Result<void>{};
    }
    if (failed_ >= seq && !in_flight_) {
      co_return fail(save_failed_error());
    }
    co_await progress_.wait();
  }
}

}  // namespace rivetkit::core
