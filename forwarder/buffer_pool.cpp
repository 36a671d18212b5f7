#include "buffer_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace zipper::forwarder {
namespace {

constexpr std::uint32_t kMinBufferBytes = 64;

std::string size_text(std::uint64_t b) {
  if (b >= (1u << 20) && b % (1u << 20) == 0) return std::to_string(b >> 20) + " MiB";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

std::optional<std::uint64_t> parse_size(const std::string& s) {
  std::size_t pos = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(s, &pos);
  } catch (...) {
    return std::nullopt;
  }
  const std::string unit = s.substr(pos);
  if (unit.empty() || unit == "B") return v;
  if (unit == "KiB" || unit == "K" || unit == "k") return v << 10;
  if (unit == "MiB" || unit == "M") return v << 20;
  return std::nullopt;
}

std::string class_name(std::size_t i, std::size_t n) {
  static const char* const kFour[] = {"tiny", "small", "medium", "large"};
  if (n == 4) return kFour[i];
  if (n == 3) return kFour[i == 0 ? 0 : i + 1];
  return "class" + std::to_string(i);
}

}  // namespace

std::vector<PoolClassConfig> default_pool_classes(std::uint64_t max_memory,
                                                  std::uint32_t max_frame) {
  struct Share {
    std::uint32_t bytes;
    std::uint64_t per_mille;
  };
  std::vector<Share> shares = {{1024, 10}, {16 * 1024, 60}, {128 * 1024, 400}};
  // Classes at or above the largest frame are folded into the large class.
  while (!shares.empty() && shares.back().bytes >= max_frame) shares.pop_back();
  std::vector<PoolClassConfig> out;
  std::uint64_t used = 0;
  for (const auto& s : shares) {
    const auto n = static_cast<std::uint32_t>(
        std::max<std::uint64_t>(2, max_memory * s.per_mille / 1000 / s.bytes));
    out.push_back({s.bytes, n});
    used += std::uint64_t{n} * s.bytes;
  }
  const std::uint64_t rest = max_memory > used ? max_memory - used : 0;
  if (rest < 2 * std::uint64_t{max_frame})  // too small to split: one class of largest frames
    return {{max_frame,
             static_cast<std::uint32_t>(std::max<std::uint64_t>(2, max_memory / max_frame))}};
  out.push_back(
      {max_frame, static_cast<std::uint32_t>(std::max<std::uint64_t>(2, rest / max_frame))});
  return out;
}

std::optional<std::vector<PoolClassConfig>> parse_pool_classes(const std::string& text,
                                                               std::string* why) {
  std::vector<PoolClassConfig> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const std::size_t colon = item.find(':');
    const auto size = colon == std::string::npos ? std::nullopt : parse_size(item.substr(0, colon));
    std::optional<std::uint64_t> count;
    if (colon != std::string::npos) {
      const std::string c = item.substr(colon + 1);
      if (!c.empty() && c.find_first_not_of("0123456789") == std::string::npos && c.size() < 10)
        count = std::stoull(c);
    }
    if (!size || !count || *size > 0xffffffffu) {
      *why = "pool class '" + item + "': expected SIZE:COUNT, e.g. 64KiB:1536";
      return std::nullopt;
    }
    out.push_back({static_cast<std::uint32_t>(*size), static_cast<std::uint32_t>(*count)});
    start = comma + 1;
  }
  return out;
}

std::string validate_pool_classes(const std::vector<PoolClassConfig>& classes,
                                  std::uint64_t max_memory, std::uint32_t max_frame) {
  if (classes.empty()) return "at least one pool class is required";
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto& c = classes[i];
    if (c.buffer_bytes < kMinBufferBytes)
      return "pool buffers must be at least " + std::to_string(kMinBufferBytes) + " bytes";
    if (i > 0 && c.buffer_bytes <= classes[i - 1].buffer_bytes)
      return "pool class sizes must increase";
    if (c.buffers < 2) return "every pool class needs at least 2 buffers";
    total += std::uint64_t{c.buffer_bytes} * c.buffers;
  }
  if (classes.back().buffer_bytes < max_frame)
    return "the largest pool buffer (" + size_text(classes.back().buffer_bytes) +
           ") must hold the largest frame (" + size_text(max_frame) + ")";
  if (total > max_memory)
    return "pools need " + size_text(total) + ", more than the memory limit of " +
           size_text(max_memory);
  return "";
}

BufferPool::BufferPool(std::vector<PoolClassConfig> classes) {
  if (classes.empty() || classes.size() > 0xffff)
    throw std::invalid_argument("between 1 and 65535 pool classes are required");
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto& c = classes[i];
    if (c.buffer_bytes < kMinBufferBytes || c.buffers == 0 ||
        (i > 0 && c.buffer_bytes <= classes[i - 1].buffer_bytes))
      throw std::invalid_argument("pool classes: sizes must increase and counts be positive");
  }
  classes_.reserve(classes.size());
  for (std::size_t i = 0; i < classes.size(); ++i) {
    Class k;
    k.cfg = classes[i];
    k.name = class_name(i, classes.size());
    k.mapped = std::size_t{k.cfg.buffer_bytes} * k.cfg.buffers;
    // MAP_POPULATE faults every page in now: the data path never takes a
    // page fault or a system call for memory.
    void* p = ::mmap(nullptr, k.mapped, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) {
      const std::string why = std::strerror(errno);
      for (auto& done : classes_) ::munmap(done.base, done.mapped);
      throw std::runtime_error("cannot map " + size_text(k.mapped) + " for the " + k.name +
                               " buffer pool: " + why);
    }
    k.base = static_cast<std::byte*>(p);
    k.free.resize(k.cfg.buffers);
    // Highest index at the bottom of the stack: buffer 0 is handed out first.
    for (std::uint32_t j = 0; j < k.cfg.buffers; ++j) k.free[j] = k.cfg.buffers - 1 - j;
    total_bytes_ += k.mapped;
    classes_.push_back(std::move(k));
  }
}

BufferPool::~BufferPool() {
  for (auto& k : classes_) ::munmap(k.base, k.mapped);
}

std::uint32_t BufferPool::share(std::size_t cls, std::uint32_t tenants) const {
  const std::uint32_t buffers = classes_.at(cls).cfg.buffers;
  const std::uint32_t most = buffers - std::max<std::uint32_t>(1, buffers / 8);
  if (tenants <= 1) return most;
  return std::min(most, std::max<std::uint32_t>(1, buffers / tenants));
}

std::optional<BufferPool::Buffer> BufferPool::acquire(std::uint32_t bytes, PoolTenant* tenant,
                                                      std::uint32_t tenants, bool* at_share) {
  std::lock_guard lk(mu_);
  std::size_t fit = 0;
  while (fit < classes_.size() && classes_[fit].cfg.buffer_bytes < bytes) ++fit;
  if (tenant && tenant->held.size() < classes_.size()) tenant->held.resize(classes_.size(), 0);
  bool any_empty = false;
  for (std::size_t i = fit; i < classes_.size(); ++i) {
    Class& k = classes_[i];
    if (k.free.empty()) {
      any_empty = true;
      continue;
    }
    if (tenant && tenant->held[i] >= share(i, tenants)) continue;
    if (tenant) ++tenant->held[i];
    const std::uint32_t idx = k.free.back();
    k.free.pop_back();
    ++k.taken;
    if (i != fit) ++k.borrowed;
    k.peak = std::max(k.peak, k.cfg.buffers - static_cast<std::uint32_t>(k.free.size()));
    in_use_bytes_ += k.cfg.buffer_bytes;
    peak_bytes_ = std::max(peak_bytes_, in_use_bytes_);
    return Buffer{k.base + std::size_t{idx} * k.cfg.buffer_bytes, k.cfg.buffer_bytes,
                  static_cast<std::uint16_t>(i), idx};
  }
  if (fit < classes_.size() && any_empty) ++classes_[fit].exhausted;
  if (at_share) *at_share = !any_empty && fit < classes_.size();
  return std::nullopt;
}

void BufferPool::release(const Buffer& b, PoolTenant* tenant) {
  std::lock_guard lk(mu_);
  Class& k = classes_.at(b.cls);
  if (tenant && b.cls < tenant->held.size() && tenant->held[b.cls] > 0) --tenant->held[b.cls];
  k.free.push_back(b.index);
  in_use_bytes_ -= k.cfg.buffer_bytes;
}

std::uint32_t BufferPool::max_buffer() const { return classes_.back().cfg.buffer_bytes; }

std::uint64_t BufferPool::bytes_in_use() const {
  std::lock_guard lk(mu_);
  return in_use_bytes_;
}

std::uint64_t BufferPool::peak_bytes() const {
  std::lock_guard lk(mu_);
  return peak_bytes_;
}

std::vector<PoolClassStats> BufferPool::stats() const {
  std::lock_guard lk(mu_);
  std::vector<PoolClassStats> out;
  for (const auto& k : classes_)
    out.push_back({k.name, k.cfg.buffer_bytes, k.cfg.buffers,
                   k.cfg.buffers - static_cast<std::uint32_t>(k.free.size()), k.peak, k.taken,
                   k.borrowed, k.exhausted});
  return out;
}

std::vector<BufferPool::Region> BufferPool::regions() const {
  std::vector<Region> out;
  for (const auto& k : classes_) out.push_back({k.base, k.mapped});
  return out;
}

std::string BufferPool::describe() const {
  std::string s;
  for (const auto& k : classes_) {
    if (!s.empty()) s += ", ";
    s += k.name + " " + std::to_string(k.cfg.buffers) + " x " + size_text(k.cfg.buffer_bytes);
  }
  return s + " (" + size_text(total_bytes_) + " mapped and faulted in)";
}

}  // namespace zipper::forwarder
