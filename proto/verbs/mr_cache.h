// Bounded cache of memory registrations (MRs) in front of ibv_reg_mr.
//
// Invalidation rule: an entry is keyed by (address, length) AND remembers the
// owner that keeps the memory alive (Payload::owner, a shared_ptr). A lookup
// hits only while that same owner is still alive; once the owner is gone the
// memory may have been freed and the range reused by another allocation, so
// the entry is stale: it is dropped (its MR deregistered) and the range is
// registered again. Memory without an owner (borrowed user memory, whose
// lifetime the link cannot see) is never cached: callers copy it instead.
//
// Registrations that are still used by posted work requests stay valid after
// eviction: get() hands out a shared handle and the MR is deregistered when
// the last handle goes (LRU eviction only drops the cache's reference).
//
// Independent of libibverbs (the registrar is a pair of functions), so it is
// unit-tested without an RDMA device. Not thread-safe: one per link, used
// under the link's send lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace zipper::proto::verbs {

/// One registration as the data path needs it.
struct Registration {
  std::uint32_t lkey = 0;
  std::uint32_t rkey = 0;
  void* handle = nullptr;  // ibv_mr* in production; anything in tests
};

/// Registers / deregisters memory. register_fn returns nullopt-like failure as
/// handle == nullptr and fills *why.
struct Registrar {
  std::function<Registration(void* addr, std::size_t len, std::string* why)> reg;
  std::function<void(const Registration&)> dereg;
};

class MrCache {
 public:
  struct Limits {
    std::size_t max_entries = 64;                    // registrations kept
    std::size_t max_bytes = std::size_t{256} << 20;  // bytes of memory kept registered
  };
  struct Stats {
    std::uint64_t hits = 0, misses = 0, evictions = 0, invalidations = 0, failures = 0;
  };
  /// A live registration; the MR is deregistered when the last copy goes.
  using Handle = std::shared_ptr<const Registration>;

  MrCache(Registrar r, Limits limits);
  ~MrCache();
  MrCache(const MrCache&) = delete;
  MrCache& operator=(const MrCache&) = delete;

  /// Registration covering [addr, addr+len) whose memory is kept alive by
  /// `owner`. Returns nullptr (and fills *why) when `owner` is empty, len is
  /// 0 or above max_bytes, or registration fails.
  Handle get(void* addr, std::size_t len, const std::shared_ptr<void>& owner, std::string* why);

  std::size_t entries() const { return lru_.size(); }
  std::size_t bytes() const { return bytes_; }
  const Stats& stats() const { return stats_; }

 private:
  struct Entry {
    std::uintptr_t addr;
    std::size_t len;
    std::weak_ptr<void> owner;
    Handle reg;
  };
  using Key = std::pair<std::uintptr_t, std::size_t>;
  void drop(std::list<Entry>::iterator it);
  void sweep_stale();

  std::shared_ptr<Registrar> registrar_;  // shared with outstanding handles
  Limits limits_;
  std::list<Entry> lru_;  // front = most recently used
  std::map<Key, std::list<Entry>::iterator> index_;
  std::size_t bytes_ = 0;
  Stats stats_;
};

}  // namespace zipper::proto::verbs
