// What advances when libmmpi progresses: a list of rounds, owned by the
// runtime (runtime.h), that the engine (its link and native bridge) and the
// layers above it (capi: non-blocking collectives' schedules, persistent
// and freed requests) register with. Engine::progress() runs it; the RMA
// progress thread (rma_progress.h) runs it too, but only the rounds added
// as async-safe: theirs is state that only MMPI calls holding the engine's
// lock touch (the engine's own round, the windows' rounds).
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <mutex>

namespace zipper::client {

/// One registered round (ProgressList::add).
struct ProgressEntry {
  std::function<bool()> round;
  bool running = false;
  bool busy = false;
  bool async_safe = false;  // the progress thread may run it
  bool serves = false;      // serves other processes: every wait runs it (windows)
};

/// True on the RMA progress thread (rma_progress.cpp sets it).
inline thread_local bool on_progress_thread = false;

class ProgressList {
 public:
  /// One round of work; returns true while it has work in flight that has
  /// no file descriptor to wake a sleeping wait (so waits keep polling).
  using Round = std::function<bool()>;
  using Handle = std::list<ProgressEntry>::iterator;

  /// Adds `round`, run by every run() from now on after those added
  /// before it. The handle stays valid until remove(). `async_safe`: the
  /// progress thread may run it as well (see above).
  /// `serves`: the round answers other processes (an RMA target), so
  /// waits on anything run the list (Engine::wait_until).
  Handle add(Round round, bool async_safe = false, bool serves = false);
  void remove(Handle h);
  /// The lock that every run() holds (the engine's, engine.h): add and
  /// remove take it too, so that the progress thread never walks the list
  /// while it changes.
  void set_guard(std::recursive_mutex* m) { guard_ = m; }
  /// Runs every round once, in order. A round that progress re-enters (it
  /// waits on a request itself) is not run again inside itself: the others are.
  /// Returns busy().
  bool run();
  /// A round said at its last run that it has work in flight.
  bool busy() const { return busy_ > 0; }
  /// Some round serves other processes (see add).
  bool serving() const { return serving_ > 0; }

 private:
  std::list<ProgressEntry> entries_;
  int busy_ = 0;  // rounds whose last run returned true
  int serving_ = 0;
  std::recursive_mutex* guard_ = nullptr;
};

inline ProgressList::Handle ProgressList::add(Round round, bool async_safe, bool serves) {
  std::unique_lock<std::recursive_mutex> g;
  if (guard_ != nullptr) g = std::unique_lock<std::recursive_mutex>(*guard_);
  entries_.push_back(ProgressEntry{std::move(round)});
  entries_.back().async_safe = async_safe;
  entries_.back().serves = serves;
  if (serves) ++serving_;
  return std::prev(entries_.end());
}

inline void ProgressList::remove(Handle h) {
  std::unique_lock<std::recursive_mutex> g;
  if (guard_ != nullptr) g = std::unique_lock<std::recursive_mutex>(*guard_);
  if (h->busy) --busy_;
  if (h->serves) --serving_;
  entries_.erase(h);
}

inline bool ProgressList::run() {
  for (auto& e : entries_) {
    if (e.running || (on_progress_thread && !e.async_safe)) continue;
    e.running = true;
    const bool b = e.round();
    e.running = false;
    if (b != e.busy) busy_ += b ? 1 : -1;
    e.busy = b;
  }
  return busy();
}

}  // namespace zipper::client
