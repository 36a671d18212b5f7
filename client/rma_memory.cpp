#include "rma_memory.h"

#include "rma_wire.h"

namespace zipper::client::rma {

int Memory::attach(void* base, std::uint64_t size) {
  auto* b = static_cast<std::byte*>(base);
  for (const Region& r : regions_)
    if (b < r.base + r.size && r.base < b + size) return MPI_ERR_RMA_ATTACH;
  regions_.push_back(Region{b, size});
  return MPI_SUCCESS;
}

int Memory::detach(const void* base) {
  for (auto it = regions_.begin(); it != regions_.end(); ++it)
    if (it->base == base) {
      regions_.erase(it);
      return MPI_SUCCESS;
    }
  return MPI_ERR_RMA_ATTACH;
}

std::byte* Memory::resolve(std::int64_t disp, const Block& b) const {
  if (b.len > kMaxData) return nullptr;
  if (dynamic()) {
    // Attached regions that touch end to end are one range of memory: a
    // block may span them (MPICH's win_dynamic_rma_flush_get writes across
    // two adjacent attachments). Regions never overlap (attach refuses it).
    const TypeWide lo = static_cast<TypeWide>(disp) + b.offset;
    const TypeWide hi = lo + static_cast<TypeWide>(b.len);
    auto base_of = [](const Region& r) {
      return static_cast<TypeWide>(reinterpret_cast<std::uintptr_t>(r.base));
    };
    for (const Region& r : regions_) {
      const TypeWide rb = base_of(r);
      if (lo < rb || lo >= rb + static_cast<TypeWide>(r.size) + (b.len == 0 ? 1 : 0)) continue;
      TypeWide end = rb + static_cast<TypeWide>(r.size);
      while (end < hi) {
        const Region* next = nullptr;
        for (const Region& s : regions_)
          if (base_of(s) == end && s.size > 0) next = &s;
        if (next == nullptr) return nullptr;
        end += static_cast<TypeWide>(next->size);
      }
      return r.base + static_cast<std::ptrdiff_t>(lo - rb);
    }
    return nullptr;
  }
  const TypeWide lo = static_cast<TypeWide>(disp) * disp_unit_ + b.offset;
  if (lo < 0 || lo + static_cast<TypeWide>(b.len) > static_cast<TypeWide>(size_)) return nullptr;
  return base_ + static_cast<std::ptrdiff_t>(lo);
}

}  // namespace zipper::client::rma
