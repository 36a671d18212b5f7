// Long-lived memory regions: memory a process keeps mapped for a long time
// (zipperd's payload pools) and announces once, so that links which must
// register memory with a device (verbs) register each region once per device
// instead of every payload that lies in it. Transport-neutral: the TCP link
// ignores it; a build without verbs keeps the list and registers nothing.
//
// Also counts the process's memory registrations with RDMA devices
// (ibv_reg_mr calls, all of them), so that zipperd can report them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zipper::proto {

/// One announced region.
struct LongLivedRegion {
  std::uint64_t id = 0;  // unique in the process, never reused
  std::byte* addr = nullptr;
  std::size_t bytes = 0;
};

/// Keeps a region announced while it lives (move-only); the region must stay
/// mapped until this handle is gone. Links drop their registrations of a
/// withdrawn region once no work request uses them any more.
class RegionAnnouncement {
 public:
  RegionAnnouncement() = default;
  explicit RegionAnnouncement(std::uint64_t id) : id_(id) {}
  RegionAnnouncement(RegionAnnouncement&& o) noexcept : id_(o.id_) { o.id_ = 0; }
  RegionAnnouncement& operator=(RegionAnnouncement&& o) noexcept;
  RegionAnnouncement(const RegionAnnouncement&) = delete;
  RegionAnnouncement& operator=(const RegionAnnouncement&) = delete;
  ~RegionAnnouncement();
  std::uint64_t id() const { return id_; }

 private:
  std::uint64_t id_ = 0;
};

/// Announces [addr, addr+bytes) as long-lived. Thread-safe. Regions must not
/// overlap. Throws std::invalid_argument on an empty or overlapping region.
RegionAnnouncement register_long_lived_region(void* addr, std::size_t bytes);

/// The region containing all of [addr, addr+bytes), if any. Thread-safe.
bool find_long_lived_region(const void* addr, std::size_t bytes, LongLivedRegion* out);

/// Every region announced now, and a number that changes whenever the set
/// changes (to let a device context notice new or withdrawn regions cheaply).
std::vector<LongLivedRegion> long_lived_regions();
std::uint64_t long_lived_regions_generation();

/// Memory registrations with an RDMA device made by this process so far
/// (every ibv_reg_mr: receive buffers, send slots, SRQ blocks, MR-cache
/// misses, per-frame registrations and long-lived regions).
std::uint64_t memory_registrations();
/// Called by a backend for each registration it makes.
void count_memory_registration();

}  // namespace zipper::proto
