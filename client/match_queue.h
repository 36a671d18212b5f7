// MPI message matching: posted receives in post order, unexpected messages in
// arrival order, matched on (source, tag, communicator context) with
// MPI_ANY_SOURCE / MPI_ANY_TAG wildcards. Per-pair non-overtaking follows from
// keeping both lists in order and always taking the first match.
//
// Header-only and independent of MPI so that it is unit-tested on its own.
#pragma once

#include <cstdint>
#include <list>
#include <optional>

namespace zipper::client {

// The queue's own wildcard source: the engine translates MPI_ANY_SOURCE (-1 in
// Open MPI, -2 in MPICH) to it. Never a world rank.
inline constexpr int kAnySource = -1;
inline constexpr int kAnyTag = -1;  // == MPI_ANY_TAG

/// Who sent a message: virtual rank, tag, communicator context.
struct Envelope {
  int src = 0;
  int tag = 0;
  std::uint32_t context = 0;
};

/// What a receive (or probe) asks for; src/tag may be wildcards.
struct Selector {
  int src = kAnySource;
  int tag = kAnyTag;
  std::uint32_t context = 0;
  bool matches(const Envelope& e) const {
    return (src == kAnySource || src == e.src) && (tag == kAnyTag || tag == e.tag) &&
           context == e.context;
  }
};

/// `Posted` is the receive handle type, `Unexpected` the stored message type.
template <typename Posted, typename Unexpected>
class MatchQueue {
 public:
  struct PostedEntry {
    Selector sel;
    Posted recv;
  };
  struct UnexpectedEntry {
    Envelope env;
    Unexpected msg;
  };

  /// Appends a receive that found no unexpected message.
  void post(const Selector& sel, Posted r) { posted_.push_back({sel, std::move(r)}); }

  /// An incoming message: removes and returns the earliest-posted receive
  /// that matches it, if any.
  std::optional<Posted> match_posted(const Envelope& env) {
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
      if (it->sel.matches(env)) {
        Posted r = std::move(it->recv);
        posted_.erase(it);
        return r;
      }
    }
    return std::nullopt;
  }

  /// Earliest-posted matching receive without removing it.
  const Posted* peek_posted(const Envelope& env) const {
    for (const auto& p : posted_)
      if (p.sel.matches(env)) return &p.recv;
    return nullptr;
  }

  /// Stores a message that matched no posted receive.
  void add_unexpected(const Envelope& env, Unexpected m) {
    unexpected_.push_back({env, std::move(m)});
  }

  /// A new receive: removes and returns the earliest-arrived matching message.
  std::optional<UnexpectedEntry> match_unexpected(const Selector& sel) {
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
      if (sel.matches(it->env)) {
        UnexpectedEntry e = std::move(*it);
        unexpected_.erase(it);
        return e;
      }
    }
    return std::nullopt;
  }

  /// Probe: earliest-arrived matching message, left in place.
  const UnexpectedEntry* peek_unexpected(const Selector& sel) const {
    for (const auto& e : unexpected_)
      if (sel.matches(e.env)) return &e;
    return nullptr;
  }

  /// Removes a posted receive (e.g. failed or cancelled). True if found.
  bool remove_posted(const Posted& r) {
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
      if (it->recv == r) {
        posted_.erase(it);
        return true;
      }
    }
    return false;
  }

  template <typename Pred>
  bool any_posted(Pred pred) const {
    for (const auto& p : posted_)
      if (pred(p.sel)) return true;
    return false;
  }

  std::list<PostedEntry>& posted() { return posted_; }
  std::size_t posted_count() const { return posted_.size(); }
  std::size_t unexpected_count() const { return unexpected_.size(); }

 private:
  std::list<PostedEntry> posted_;
  std::list<UnexpectedEntry> unexpected_;
};

}  // namespace zipper::client
