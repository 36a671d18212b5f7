// libmmpi's own objects behind MPI handles (requests, matched messages,
// groups). Open MPI's handles are pointers: the handle is the object's
// address, as it always was. MPICH's handles are ints: the handle is a slot
// of a table, 1..kMaxSlots, values MPICH's own handle encoding never gives
// (their top six bits, MPICH's handle kind and object kind, are zero).
// Chosen at compile time from the handle type: no #ifdef on the MPI.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace zipper::capi {

/// Handles of type H for objects of type T.
template <class H, class T>
class ObjectHandles {
 public:
  static constexpr bool kPointers = std::is_pointer_v<H>;
  static constexpr int kMaxSlots = (1 << 26) - 1;

  /// The handle of `p` (not null); the object stays the caller's to free.
  static H encode(T* p) {
    if constexpr (kPointers) {
      // A const object (a group) still has a handle of MPI's non-const type.
      return reinterpret_cast<H>(const_cast<std::remove_const_t<T>*>(p));
    } else {
      Table& t = table();
      std::lock_guard<std::mutex> g(t.mu);
      int slot;
      if (!t.free.empty()) {
        slot = t.free.back();
        t.free.pop_back();
      } else {
        if (t.slots.size() >= static_cast<std::size_t>(kMaxSlots)) {
          std::fprintf(stderr, "mmpi: more than %d live handles of one kind; stopping\n",
                       kMaxSlots);
          std::abort();
        }
        slot = static_cast<int>(t.slots.size());
        t.slots.push_back(nullptr);
      }
      t.slots[static_cast<std::size_t>(slot)] = p;
      return static_cast<H>(slot + 1);
    }
  }

  /// The object behind `h`; null when `h` names none (int handles only:
  /// a pointer handle is taken as it is).
  static T* decode(H h) {
    if constexpr (kPointers) {
      return reinterpret_cast<T*>(h);
    } else {
      Table& t = table();
      std::lock_guard<std::mutex> g(t.mu);
      const long i = static_cast<long>(h) - 1;
      return i >= 0 && static_cast<std::size_t>(i) < t.slots.size()
                 ? t.slots[static_cast<std::size_t>(i)]
                 : nullptr;
    }
  }

  /// decode(), and `h` names nothing afterwards.
  static T* release(H h) {
    if constexpr (kPointers) {
      return reinterpret_cast<T*>(h);
    } else {
      Table& t = table();
      std::lock_guard<std::mutex> g(t.mu);
      const long i = static_cast<long>(h) - 1;
      if (i < 0 || static_cast<std::size_t>(i) >= t.slots.size()) return nullptr;
      T* p = t.slots[static_cast<std::size_t>(i)];
      if (p != nullptr) {
        t.slots[static_cast<std::size_t>(i)] = nullptr;
        t.free.push_back(static_cast<int>(i));
      }
      return p;
    }
  }

 private:
  struct Table {
    std::mutex mu;
    std::vector<T*> slots;
    std::vector<int> free;
  };
  static Table& table() {
    static Table t;
    return t;
  }
};

/// A handle's value for a message ("0x55d0c0a1b2c0" or "0x44000002").
template <class H>
std::string handle_text(H h) {
  char buf[32];
  if constexpr (std::is_pointer_v<H>)
    std::snprintf(buf, sizeof buf, "%p", static_cast<const void*>(h));
  else
    std::snprintf(buf, sizeof buf, "0x%lx", static_cast<unsigned long>(h));
  return buf;
}

}  // namespace zipper::capi
