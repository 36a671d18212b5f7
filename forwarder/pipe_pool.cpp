#include "pipe_pool.h"

#include <mutex>
#include <vector>

namespace zipper::forwarder {

struct PipePool::State {
  std::size_t max_pipes = 0;
  std::size_t capacity = 0;
  mutable std::mutex mu;
  std::vector<std::unique_ptr<proto::PayloadPipe>> free;
  std::size_t open = 0, in_use = 0;
  std::uint64_t spliced_frames = 0, spliced_bytes = 0, no_pipe = 0;
  std::size_t max_payload = 0;  // bytes (PayloadPipe::max_payload of `capacity`)
};

PipePool::PipePool(std::size_t max_pipes, std::size_t capacity) : st_(std::make_shared<State>()) {
  st_->max_pipes = max_pipes;
  st_->capacity = capacity;
  st_->max_payload = capacity / 4;
}

std::shared_ptr<proto::PayloadPipe> PipePool::acquire(std::size_t bytes) {
  if (bytes < kMinPayload) return nullptr;
  std::unique_ptr<proto::PayloadPipe> p;
  {
    std::lock_guard lk(st_->mu);
    if (bytes > st_->max_payload) return nullptr;
    if (!st_->free.empty()) {
      p = std::move(st_->free.back());
      st_->free.pop_back();
    } else if (st_->open < st_->max_pipes) {
      ++st_->open;  // reserved; created outside the lock
    } else {
      ++st_->no_pipe;
      return nullptr;
    }
  }
  if (!p) {
    p = proto::PayloadPipe::create(st_->capacity);
    std::lock_guard lk(st_->mu);
    if (!p) {
      --st_->open;
      ++st_->no_pipe;
      return nullptr;
    }
  }
  std::lock_guard lk(st_->mu);
  ++st_->in_use;
  ++st_->spliced_frames;
  st_->spliced_bytes += bytes;
  return std::shared_ptr<proto::PayloadPipe>(p.release(), [st = st_](proto::PayloadPipe* raw) {
    std::unique_ptr<proto::PayloadPipe> q(raw);
    std::lock_guard relk(st->mu);
    --st->in_use;
    if (q->held() == 0)
      st->free.push_back(std::move(q));
    else
      --st->open;  // closed with its bytes
  });
}

PipePool::Stats PipePool::stats() const {
  std::lock_guard lk(st_->mu);
  Stats s;
  s.spliced_frames = st_->spliced_frames;
  s.spliced_bytes = st_->spliced_bytes;
  s.no_pipe = st_->no_pipe;
  s.pipes = static_cast<std::uint32_t>(st_->open);
  s.in_use = static_cast<std::uint32_t>(st_->in_use);
  return s;
}

}  // namespace zipper::forwarder
