#include "core/actor/output_gate.hpp"

#include "util/spawn.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

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
  if (in_flight_ || holds_ > 0) {
    // One write at a time, none while held: the changes wait for the next one, whose number is
    // reserved now.
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
    write_reserved();  // what waited for this write
    co_return;
  }
  broken_ = true;
  failed_ = std::max({failed_, seq, reserved_});
  requested_ = std::max(requested_, reserved_);
  reserved_ = 0;
  progressed();
  source_.write_failed(seq, r.error());
}

class OutputGate::Hold {
 public:
  Hold(OutputGate& gate, std::chrono::steady_clock::time_point until, std::shared_ptr<void> owner)
      : gate_(gate),
        epoch_(gate.hold_epoch_),
        owner_(std::move(owner)),
        timer_(gate.strand_, until) {}
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  ~Hold() { release(); }

  void arm(const std::shared_ptr<Hold>& self) {
    timer_.async_wait([weak = std::weak_ptr<Hold>(self)](const boost::system::error_code& ec) {
      if (ec) {
        return;
      }
      if (auto hold = weak.lock()) {
        hold->release();  // the deadline: a hold delays writes, it never blocks them
      }
    });
  }
  void release() {
    if (released_) {
      return;
    }
    released_ = true;
    timer_.cancel();
    gate_.release_hold(epoch_, owner_);
  }

 private:
  OutputGate& gate_;
  std::uint64_t epoch_;
  std::shared_ptr<void> owner_;
  boost::asio::steady_timer timer_;
  bool released_ = false;
};

std::shared_ptr<void> OutputGate::hold_writes(std::chrono::steady_clock::time_point until,
                                              std::shared_ptr<void> owner) {
  ++holds_;
  auto hold = std::make_shared<Hold>(*this, until, std::move(owner));
  hold->arm(hold);
  return hold;
}

void OutputGate::release_hold(std::uint64_t epoch, std::shared_ptr<void> owner) {
  if (epoch != hold_epoch_ || holds_ == 0) {
    return;  // ended already by end_holds()
  }
  if (--holds_ == 0) {
    // Written from a handler of its own: a hold may end inside whatever drops its token.
    boost::asio::post(strand_, [this, owner = std::move(owner)] {
      if (holds_ == 0 && !in_flight_) {
        if (reserved_ != 0) {
          write_reserved();
        } else if (changed_) {
          checkpoint();
        }
      }
    });
  }
}

void OutputGate::end_holds() {
  if (holds_ == 0) {
    return;
  }
  holds_ = 0;
  ++hold_epoch_;
  write_reserved();
}

void OutputGate::write_reserved() {
  if (reserved_ == 0 || in_flight_ || holds_ > 0) {
    return;
  }
  changed_ = true;
  checkpoint();
  if (reserved_ != 0 && !in_flight_) {
    // It could not be written (the owner stopped meanwhile): it never will be.
    failed_ = std::max(failed_, reserved_);
    requested_ = std::max(requested_, reserved_);
    reserved_ = 0;
    progressed();
  }
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
