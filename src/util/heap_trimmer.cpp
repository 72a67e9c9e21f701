#include "util/heap_trimmer.hpp"

#include <malloc.h>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>

namespace rivetkit::util {

namespace asio = boost::asio;

struct HeapTrimmer::State {
  explicit State(asio::any_io_executor ex) : strand(asio::make_strand(ex)), timer(strand) {}
  asio::strand<asio::any_io_executor> strand;
  asio::steady_timer timer;
  bool pending = false;
};

HeapTrimmer::HeapTrimmer(asio::any_io_executor ex) : state_(std::make_shared<State>(std::move(ex))) {}

void HeapTrimmer::released() {
  asio::post(state_->strand, [state = state_] {
    if (state->pending) {
      return;
    }
    state->pending = true;
    state->timer.expires_after(std::chrono::milliseconds(300));
    state->timer.async_wait([state](const boost::system::error_code& ec) {
      state->pending = false;
      if (!ec) {
        malloc_trim(0);
      }
    });
  });
}

}  // namespace rivetkit::util
