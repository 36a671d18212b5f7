#include "memory_regions.h"

#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace zipper::proto {
namespace {

std::mutex g_mu;
std::map<std::uintptr_t, LongLivedRegion> g_regions;  // by start address
std::uint64_t g_next_id = 1;
std::atomic<std::uint64_t> g_generation{0};
std::atomic<std::uint64_t> g_registrations{0};

}  // namespace

RegionAnnouncement& RegionAnnouncement::operator=(RegionAnnouncement&& o) noexcept {
  if (this != &o) {
    RegionAnnouncement old(id_);  // withdrawn at the end of this scope
    id_ = o.id_;
    o.id_ = 0;
  }
  return *this;
}

RegionAnnouncement::~RegionAnnouncement() {
  if (id_ == 0) return;
  std::lock_guard lk(g_mu);
  for (auto it = g_regions.begin(); it != g_regions.end(); ++it)
    if (it->second.id == id_) {
      g_regions.erase(it);
      ++g_generation;
      break;
    }
}

RegionAnnouncement register_long_lived_region(void* addr, std::size_t bytes) {
  if (addr == nullptr || bytes == 0) throw std::invalid_argument("long-lived region: empty region");
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  std::lock_guard lk(g_mu);
  auto next = g_regions.lower_bound(a);
  const bool overlaps_next = next != g_regions.end() && next->first < a + bytes;
  const bool overlaps_prev =
      next != g_regions.begin() && reinterpret_cast<std::uintptr_t>(std::prev(next)->second.addr) +
                                           std::prev(next)->second.bytes >
                                       a;
  if (overlaps_next || overlaps_prev)
    throw std::invalid_argument("long-lived region of " + std::to_string(bytes) +
                                " bytes overlaps one announced before");
  const LongLivedRegion r{g_next_id++, static_cast<std::byte*>(addr), bytes};
  g_regions.emplace(a, r);
  ++g_generation;
  return RegionAnnouncement(r.id);
}

bool find_long_lived_region(const void* addr, std::size_t bytes, LongLivedRegion* out) {
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  std::lock_guard lk(g_mu);
  auto it = g_regions.upper_bound(a);
  if (it == g_regions.begin()) return false;
  --it;
  const LongLivedRegion& r = it->second;
  if (a + bytes > it->first + r.bytes) return false;
  *out = r;
  return true;
}

std::vector<LongLivedRegion> long_lived_regions() {
  std::lock_guard lk(g_mu);
  std::vector<LongLivedRegion> out;
  for (const auto& [a, r] : g_regions) out.push_back(r);
  return out;
}

std::uint64_t long_lived_regions_generation() { return g_generation.load(); }

std::uint64_t memory_registrations() { return g_registrations.load(); }

void count_memory_registration() { g_registrations.fetch_add(1, std::memory_order_relaxed); }

}  // namespace zipper::proto
