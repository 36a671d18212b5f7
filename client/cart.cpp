#include "cart.h"

#include <algorithm>

namespace zipper::client {

bool dims_create(int nnodes, std::vector<int>& dims) {
  if (nnodes <= 0) return false;
  int fixed = 1, free_dims = 0;
  for (int d : dims) {
    if (d < 0) return false;
    if (d == 0)
      ++free_dims;
    else
      fixed *= d;
  }
  if (nnodes % fixed != 0) return false;
  int rest = nnodes / fixed;
  if (free_dims == 0) return rest == 1;
  // Prime factors, largest first, each to the currently smallest free entry:
  // the greedy balance Open MPI and MPICH use.
  std::vector<int> factors;
  for (int p = 2; p * p <= rest; ++p)
    while (rest % p == 0) factors.push_back(p), rest /= p;
  if (rest > 1) factors.push_back(rest);
  std::sort(factors.rbegin(), factors.rend());
  std::vector<int> filled(static_cast<std::size_t>(free_dims), 1);
  for (int f : factors) *std::min_element(filled.begin(), filled.end()) *= f;
  std::sort(filled.rbegin(), filled.rend());
  std::size_t k = 0;
  for (int& d : dims)
    if (d == 0) d = filled[k++];
  return true;
}

int Cart::size() const {
  int n = 1;
  for (int d : dims) n *= d;
  return n;
}

std::vector<int> Cart::coords(int rank) const {
  std::vector<int> c(dims.size());
  for (int i = ndims() - 1; i >= 0; --i) {
    c[static_cast<std::size_t>(i)] = rank % dims[static_cast<std::size_t>(i)];
    rank /= dims[static_cast<std::size_t>(i)];
  }
  return c;
}

std::optional<int> Cart::rank(const std::vector<int>& coords) const {
  if (coords.size() != dims.size()) return std::nullopt;
  int r = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    int c = coords[i];
    if (periods[i])
      c = ((c % dims[i]) + dims[i]) % dims[i];
    else if (c < 0 || c >= dims[i])
      return std::nullopt;
    r = r * dims[i] + c;
  }
  return r;
}

std::pair<int, int> Cart::shift(int rank, int dim, int disp, int proc_null) const {
  const auto at = [&](int delta) {
    auto c = coords(rank);
    c[static_cast<std::size_t>(dim)] += delta;
    return this->rank(c).value_or(proc_null);
  };
  return {at(-disp), at(disp)};
}

std::pair<int, int> Cart::sub_color_key(int rank, const std::vector<bool>& remain) const {
  const auto c = coords(rank);
  int color = 0, key = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (remain[i])
      key = key * dims[i] + c[i];
    else
      color = color * dims[i] + c[i];
  }
  return {color, key};
}

Cart Cart::sub(const std::vector<bool>& remain) const {
  Cart s;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (!remain[i]) continue;
    s.dims.push_back(dims[i]);
    s.periods.push_back(periods[i]);
  }
  return s;
}

}  // namespace zipper::client
