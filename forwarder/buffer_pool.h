// zipperd's payload buffers: preallocated pools by size class, as Lustre LNet
// routers keep tiny/small/large router buffers. Every relayed payload lives in
// one pool buffer from the moment its header is read until the destination's
// link has sent it; nothing is allocated or mapped per frame.
//
// Why: a fresh allocation per frame (malloc above the mmap threshold) cost an
// mmap, a page fault per 4 KiB on first touch and an munmap with a TLB
// shootdown for every chunk: about 1 ms per 128 KiB frame on the emulation,
// which capped forwarded bandwidth near 200 MB/s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace zipper::forwarder {

/// One size class: `buffers` buffers of `buffer_bytes` bytes each.
struct PoolClassConfig {
  std::uint32_t buffer_bytes = 0;
  std::uint32_t buffers = 0;
};

/// Default classes for a zipperd with `max_memory` bytes of payload memory and
/// frames up to `max_frame` bytes: tiny 1 KiB (small eager frames), small
/// 16 KiB (eager up to the default eager limit), medium 128 KiB (rendezvous
/// chunks up to the default MMPI_CHUNK_SIZE) and large `max_frame` (larger
/// chunks), with about 1 %, 6 %, 40 % and the rest of `max_memory`. Every class gets at
/// least 2 buffers, so the total may exceed a tiny `max_memory`; validate().
std::vector<PoolClassConfig> default_pool_classes(std::uint64_t max_memory,
                                                  std::uint32_t max_frame);

/// Parses "SIZE:COUNT[,SIZE:COUNT...]" with SIZE in bytes or with a KiB/MiB
/// suffix (e.g. "1KiB:1024,64KiB:1536,1MiB:143"). Returns nullopt and sets
/// *why on bad input.
std::optional<std::vector<PoolClassConfig>> parse_pool_classes(const std::string& text,
                                                               std::string* why);

/// Checks classes against the limits: sizes strictly increasing and at least
/// 64 bytes, at least 2 buffers each, the largest class holds `max_frame`
/// bytes, and the total is at most `max_memory` bytes. Returns "" when valid,
/// else the reason.
std::string validate_pool_classes(const std::vector<PoolClassConfig>& classes,
                                  std::uint64_t max_memory, std::uint32_t max_frame);

/// Counters of one class (a snapshot).
struct PoolClassStats {
  std::string name;  // "tiny", "small", "medium", "large", or "class<i>"
  std::uint32_t buffer_bytes = 0;
  std::uint32_t buffers = 0;
  std::uint32_t in_use = 0;
  std::uint32_t peak = 0;       // most buffers in use at once
  std::uint64_t taken = 0;      // buffers handed out since start
  std::uint64_t borrowed = 0;   // of those, taken from this class for a smaller payload
  std::uint64_t exhausted = 0;  // requests refused while a class that fits was empty
};

/// One tenant's (a job's) buffers by class, for the per-class shares.
/// Read and written under the pool's lock only.
struct PoolTenant {
  std::vector<std::uint32_t> held;  // buffers held, by class
};

/// A fixed set of buffers, mapped and faulted in at construction.
/// Thread-safe: any thread may acquire and release.
///
/// Shares per class (as LNet sizes router buffer pools per network): with n
/// tenants registered, one tenant may hold at most max(1, buffers / n)
/// buffers of a class, and never the class's reserve (an eighth, at least
/// one buffer), which stays free for the others. So a job that pins buffers
/// (payloads that never come, a destination that never reads) cannot take a
/// whole class, and a job that arrives later always finds buffers.
class BufferPool {
 public:
  /// A buffer handed out by acquire(); give it back with release().
  struct Buffer {
    std::byte* data = nullptr;
    std::uint32_t capacity = 0;  // bytes
    std::uint16_t cls = 0;
    std::uint32_t index = 0;
  };

  /// Maps one anonymous, pre-faulted region per class. Throws
  /// std::invalid_argument on classes validate_pool_classes() would refuse
  /// (max_memory and max_frame unchecked) and std::runtime_error when the
  /// memory cannot be mapped.
  explicit BufferPool(std::vector<PoolClassConfig> classes);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  /// A buffer of at least `bytes` bytes from the smallest class that fits and
  /// has one free; a larger class lends one when the fitting class is empty.
  /// nullopt when every class that fits is empty (the caller pauses).
  std::optional<Buffer> acquire(std::uint32_t bytes) { return acquire(bytes, nullptr, 1, nullptr); }
  /// As above, for `tenant` while `tenants` tenants share the pool: classes
  /// where the tenant holds its share are skipped. nullopt sets *at_share
  /// (when given) to true if only the tenant's shares stood in the way (its
  /// own releases will let it go on), false if a class was empty.
  std::optional<Buffer> acquire(std::uint32_t bytes, PoolTenant* tenant, std::uint32_t tenants,
                                bool* at_share);
  void release(const Buffer& b, PoolTenant* tenant = nullptr);
  /// Buffers of class `cls` one of `tenants` tenants may hold.
  std::uint32_t share(std::size_t cls, std::uint32_t tenants) const;

  /// Largest buffer (bytes).
  std::uint32_t max_buffer() const;
  /// Bytes mapped by all classes.
  std::uint64_t total_bytes() const { return total_bytes_; }
  /// Bytes of the buffers in use now and at most at once (capacities).
  std::uint64_t bytes_in_use() const;
  std::uint64_t peak_bytes() const;
  std::vector<PoolClassStats> stats() const;
  /// Memory regions holding the buffers (one per class), e.g. to register
  /// each once with an RDMA device.
  struct Region {
    void* addr;
    std::size_t bytes;
  };
  std::vector<Region> regions() const;
  /// "tiny 1024 x 1 KiB, small ..." for the start-up log.
  std::string describe() const;

 private:
  struct Class {
    PoolClassConfig cfg;
    std::string name;
    std::byte* base = nullptr;
    std::size_t mapped = 0;
    std::vector<std::uint32_t> free;  // indices of free buffers (a stack: warm buffers first)
    std::uint32_t peak = 0;
    std::uint64_t taken = 0, borrowed = 0, exhausted = 0;
  };
  mutable std::mutex mu_;
  std::vector<Class> classes_;
  std::uint64_t total_bytes_ = 0;
  std::uint64_t in_use_bytes_ = 0, peak_bytes_ = 0;
};

}  // namespace zipper::forwarder
