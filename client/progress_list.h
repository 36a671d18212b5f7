// What advances when libmmpi progresses: a list of rounds, owned by the
// runtime (runtime.h), that the engine (its link and native bridge) and the
// layers above it (capi: non-blocking collectives' schedules, persistent
// and freed requests) register with. Engine::progress() runs it; a
// progress thread could run the same list.
#pragma once

#include <cstddef>
#include <functional>
#include <list>

namespace zipper::client {

/// One registered round (ProgressList::add).
struct ProgressEntry {
  std::function<bool()> round;
  bool running = false;
  bool busy = false;
};

class ProgressList {
 public:
  /// One round of work; returns true while it has work in flight that has
  /// no file descriptor to wake a sleeping wait (so waits keep polling).
  using Round = std::function<bool()>;
  using Handle = std::list<ProgressEntry>::iterator;

  /// Adds `round`, run by every run() from now on after those added
  /// before it. The handle stays valid until remove().
  Handle add(Round round);
  void remove(Handle h);
  /// Runs every round once, in order. A round that progress re-enters (it
  /// waits on a request itself) is not run again inside itself: the others are.
  /// Returns busy().
  bool run();
  /// A round said at its last run that it has work in flight.
  bool busy() const { return busy_ > 0; }

 private:
  std::list<ProgressEntry> entries_;
  int busy_ = 0;  // rounds whose last run returned true
};

inline ProgressList::Handle ProgressList::add(Round round) {
  entries_.push_back(ProgressEntry{std::move(round)});
  return std::prev(entries_.end());
}

inline void ProgressList::remove(Handle h) {
  if (h->busy) --busy_;
  entries_.erase(h);
}

inline bool ProgressList::run() {
  for (auto& e : entries_) {
    if (e.running) continue;
    e.running = true;
    const bool b = e.round();
    e.running = false;
    if (b != e.busy) busy_ += b ? 1 : -1;
    e.busy = b;
  }
  return busy();
}

}  // namespace zipper::client
