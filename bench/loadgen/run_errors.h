// The faults a run found (a payload that fails its check, a frame out of
// sequence, a link that failed, a timeout): the first few verbatim, all of
// them counted. Any fault fails the run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zipper::loadgen {

class RunErrors {
 public:
  static constexpr std::size_t kKept = 20;
  void add(std::string what) {
    if (first_.size() < kKept) first_.push_back(std::move(what));
    ++count_;
  }
  std::uint64_t count() const { return count_; }
  const std::vector<std::string>& first() const { return first_; }

 private:
  std::vector<std::string> first_;
  std::uint64_t count_ = 0;
};

}  // namespace zipper::loadgen
