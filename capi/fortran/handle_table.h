// Fortran INTEGER handles for libmmpi-owned handles (communicators, groups,
// requests, messages): MMPI's handles are not Open MPI's, so MPI_Xxx_c2f
// cannot number them. Values are kBase + slot; freed slots are reused, so the
// table holds at most the number of live handles.
#pragma once

#include <mpi.h>

#include <mutex>
#include <unordered_map>
#include <vector>

namespace zipper::capi {

template <class Handle>
class HandleTable {
 public:
  // First table value: far above Open MPI's Fortran handles (small array
  // indices), so a native handle passed by mistake is never taken for ours.
  static constexpr MPI_Fint kBase = 1000000;
  static constexpr size_t kMaxSlots = 1u << 24;

  // The value for c, inserting it if new; `full` if the table is full.
  MPI_Fint to_f(Handle c, MPI_Fint full) {
    std::lock_guard lock(mu_);
    if (auto it = index_.find(c); it != index_.end()) return it->second;
    size_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
      slots_[slot] = c;
    } else {
      if (slots_.size() >= kMaxSlots) return full;
      slot = slots_.size();
      slots_.push_back(c);
    }
    const auto f = static_cast<MPI_Fint>(kBase + slot);
    index_.emplace(c, f);
    return f;
  }

  // The handle for f, or `unknown` if f is no live table value.
  Handle to_c(MPI_Fint f, Handle unknown) {
    std::lock_guard lock(mu_);
    const size_t slot = slot_of(f);
    return slot < slots_.size() && live(slot) ? slots_[slot] : unknown;
  }

  // Forgets f (its handle was freed); unknown values are ignored.
  void release(MPI_Fint f) {
    std::lock_guard lock(mu_);
    const size_t slot = slot_of(f);
    if (slot >= slots_.size() || !live(slot)) return;
    index_.erase(slots_[slot]);
    free_.push_back(slot);
  }

 private:
  static size_t slot_of(MPI_Fint f) {
    return f >= kBase ? static_cast<size_t>(f - kBase) : static_cast<size_t>(-1);
  }
  bool live(size_t slot) const {
    auto it = index_.find(slots_[slot]);
    return it != index_.end() && it->second == static_cast<MPI_Fint>(kBase + slot);
  }

  std::mutex mu_;
  std::vector<Handle> slots_;
  std::vector<size_t> free_;
  std::unordered_map<Handle, MPI_Fint> index_;
};

}  // namespace zipper::capi
