#include "mr_cache.h"

namespace zipper::proto::verbs {

namespace {
bool same_owner(const std::weak_ptr<void>& a, const std::shared_ptr<void>& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}
}  // namespace

MrCache::MrCache(Registrar r, Limits limits)
    : registrar_(std::make_shared<Registrar>(std::move(r))), limits_(limits) {}

MrCache::~MrCache() {
  while (!lru_.empty()) drop(lru_.begin());
}

void MrCache::drop(std::list<Entry>::iterator it) {
  bytes_ -= it->len;
  index_.erase(Key{it->addr, it->len});
  lru_.erase(it);  // deregisters now, or when the last in-flight user lets go
}

void MrCache::sweep_stale() {
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto next = std::next(it);
    if (it->owner.expired()) {
      ++stats_.invalidations;
      drop(it);
    }
    it = next;
  }
}

MrCache::Handle MrCache::get(void* addr, std::size_t len, const std::shared_ptr<void>& owner,
                             std::string* why) {
  if (!owner) {
    *why = "memory without an owner is not cached (its lifetime is unknown)";
    return nullptr;
  }
  if (len == 0 || len > limits_.max_bytes) {
    *why = "cannot cache a registration of " + std::to_string(len) + " bytes (limit " +
           std::to_string(limits_.max_bytes) + ")";
    return nullptr;
  }
  const Key key{reinterpret_cast<std::uintptr_t>(addr), len};
  if (auto f = index_.find(key); f != index_.end()) {
    auto it = f->second;
    if (same_owner(it->owner, owner) && !it->owner.expired()) {
      ++stats_.hits;
      lru_.splice(lru_.begin(), lru_, it);
      return it->reg;
    }
    // Same range, different (or dead) owner: the memory was freed and reused.
    ++stats_.invalidations;
    drop(it);
  }
  ++stats_.misses;
  sweep_stale();
  while (!lru_.empty() &&
         (lru_.size() + 1 > limits_.max_entries || bytes_ + len > limits_.max_bytes)) {
    ++stats_.evictions;
    drop(std::prev(lru_.end()));
  }
  Registration r = registrar_->reg(addr, len, why);
  if (r.handle == nullptr) {
    ++stats_.failures;
    return nullptr;
  }
  Handle h(new Registration(r), [reg = registrar_](const Registration* p) {
    reg->dereg(*p);
    delete p;
  });
  lru_.push_front(Entry{key.first, len, owner, h});
  index_[key] = lru_.begin();
  bytes_ += len;
  return h;
}

}  // namespace zipper::proto::verbs
