#include "placement.h"

#include <metis.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

namespace zipper::place {

namespace {

using std::size_t;

void check_cost(const LinkCost& c) {
  if (!std::isfinite(c.L_us) || !std::isfinite(c.G_us_per_byte) || c.L_us < 0 ||
      c.G_us_per_byte < 0)
    throw std::invalid_argument("link cost: latency and gap per byte must be finite and >= 0");
}

// The traffic of each unordered pair of ranks, both directions summed.
struct Pair {
  int v = 0;  // the other rank
  std::uint64_t bytes = 0, messages = 0;
};
using Adjacency = std::vector<std::vector<Pair>>;

Adjacency undirected(int n, const std::vector<Traffic>& traffic) {
  std::map<std::pair<int, int>, std::pair<std::uint64_t, std::uint64_t>> sum;
  for (const Traffic& t : traffic) {
    if (t.src < 0 || t.dst < 0 || t.src >= n || t.dst >= n)
      throw std::invalid_argument("traffic names rank " +
                                  std::to_string(t.src < 0 || t.src >= n ? t.src : t.dst) +
                                  " outside 0.." + std::to_string(n - 1));
    if (t.src == t.dst || (t.bytes == 0 && t.messages == 0)) continue;
    auto& s = sum[{std::min(t.src, t.dst), std::max(t.src, t.dst)}];
    s.first += t.bytes;
    s.second += t.messages;
  }
  Adjacency adj(static_cast<size_t>(n));
  for (const auto& [uv, bm] : sum) {
    adj[static_cast<size_t>(uv.first)].push_back({uv.second, bm.first, bm.second});
    adj[static_cast<size_t>(uv.second)].push_back({uv.first, bm.first, bm.second});
  }
  return adj;
}

double total_time(const Machine& m, const Adjacency& adj, const std::vector<int>& site_of) {
  double t = 0;
  for (size_t u = 0; u < adj.size(); ++u)
    for (const Pair& p : adj[u])
      if (static_cast<int>(u) < p.v)
        t += m.cost(site_of[u], site_of[static_cast<size_t>(p.v)], p.bytes, p.messages);
  return t;
}

// ranks! / Π site_ranks!, saturating above `cap`.
std::int64_t assignments(const Machine& m, std::int64_t cap) {
  // Π over sites of C(remaining, n_s), each factor computed exactly.
  double count = 1;
  int remaining = m.ranks();
  for (int s = 0; s < m.sites(); ++s) {
    const int k = m.site_ranks(s);
    double c = 1;
    for (int i = 1; i <= k; ++i) c = c * (remaining - k + i) / i;
    count *= c;
    remaining -= k;
    if (count > static_cast<double>(cap)) return cap + 1;
  }
  return static_cast<std::int64_t>(std::llround(count));
}

// Branch and bound over every assignment with the sites' sizes; rank r's
// cost against ranks < r is added when r is placed, so a partial cost is a
// lower bound of every completion (costs are >= 0).
class Exhaustive {
 public:
  Exhaustive(const Machine& m, const Adjacency& adj) : m_(m), adj_(adj) {
    left_.resize(static_cast<size_t>(m.sites()));
    for (int s = 0; s < m.sites(); ++s) left_[static_cast<size_t>(s)] = m.site_ranks(s);
    cur_.assign(static_cast<size_t>(m.ranks()), -1);
  }
  std::vector<int> run(std::vector<int> start, double start_time) {
    best_ = std::move(start);
    best_time_ = start_time;
    step(0, 0.0);
    return best_;
  }

 private:
  void step(int r, double partial) {
    if (r == m_.ranks()) {
      if (partial < best_time_) best_time_ = partial, best_ = cur_;
      return;
    }
    for (int s = 0; s < m_.sites(); ++s) {
      if (left_[static_cast<size_t>(s)] == 0) continue;
      double add = 0;
      for (const Pair& p : adj_[static_cast<size_t>(r)])
        if (p.v < r) add += m_.cost(s, cur_[static_cast<size_t>(p.v)], p.bytes, p.messages);
      if (partial + add >= best_time_) continue;
      --left_[static_cast<size_t>(s)];
      cur_[static_cast<size_t>(r)] = s;
      step(r + 1, partial + add);
      cur_[static_cast<size_t>(r)] = -1;
      ++left_[static_cast<size_t>(s)];
    }
  }
  const Machine& m_;
  const Adjacency& adj_;
  std::vector<int> left_, cur_, best_;
  double best_time_ = 0;
};

// METIS's recursive bisection into parts of weight site_ranks/ranks; edge
// weights are each pair's time over the mean link, scaled to integers.
// Returns an empty vector where METIS declines (no edges, an error).
std::vector<int> metis_parts(const Machine& m, const Adjacency& adj) {
  LinkCost mean{};
  int links = 0;
  for (int a = 0; a < m.sites(); ++a)
    for (int b = a + 1; b < m.sites(); ++b, ++links) {
      mean.L_us += m.link(a, b).L_us;
      mean.G_us_per_byte += m.link(a, b).G_us_per_byte;
    }
  if (links == 0) return {};
  mean.L_us /= links;
  mean.G_us_per_byte /= links;
  double wmax = 0;
  for (const auto& row : adj)
    for (const Pair& p : row)
      wmax = std::max(wmax, p.messages * mean.L_us + p.bytes * mean.G_us_per_byte);
  if (wmax <= 0) return {};
  std::vector<idx_t> xadj{0}, adjncy, adjwgt;
  for (const auto& row : adj) {
    for (const Pair& p : row) {
      const double w = (p.messages * mean.L_us + p.bytes * mean.G_us_per_byte) / wmax * 1e6;
      adjncy.push_back(p.v);
      adjwgt.push_back(std::max<idx_t>(1, static_cast<idx_t>(std::llround(w))));
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
  }
  if (adjncy.empty()) return {};
  idx_t nv = m.ranks(), ncon = 1, nparts = m.sites(), edgecut = 0;
  std::vector<real_t> tpwgts(static_cast<size_t>(m.sites()));
  for (int s = 0; s < m.sites(); ++s)
    tpwgts[static_cast<size_t>(s)] = static_cast<real_t>(m.site_ranks(s)) / m.ranks();
  real_t ubvec[1] = {1.001f};
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> part(static_cast<size_t>(m.ranks()));
  if (METIS_PartGraphRecursive(&nv, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr,
                               adjwgt.data(), &nparts, tpwgts.data(), ubvec, options, &edgecut,
                               part.data()) != METIS_OK)
    return {};
  return std::vector<int>(part.begin(), part.end());
}

// cts[v][t]: the time of v's traffic if v were at site t, its neighbours
// where they are. Moving or swapping changes it locally (update_after_move).
class SiteCosts {
 public:
  SiteCosts(const Machine& m, const Adjacency& adj, const std::vector<int>& site_of)
      : m_(m), adj_(adj), s_(static_cast<size_t>(m.sites())), cts_(adj.size() * s_, 0.0) {
    for (size_t v = 0; v < adj.size(); ++v)
      for (const Pair& p : adj[v])
        for (size_t t = 0; t < s_; ++t)
          cts_[v * s_ + t] +=
              m.cost(static_cast<int>(t), site_of[static_cast<size_t>(p.v)], p.bytes, p.messages);
  }
  double at(int v, int t) const {
    return cts_[static_cast<size_t>(v) * s_ + static_cast<size_t>(t)];
  }
  // v moved from site `from` to site `to`: its neighbours' costs change.
  void moved(int v, int from, int to) {
    for (const Pair& p : adj_[static_cast<size_t>(v)])
      for (size_t t = 0; t < s_; ++t)
        cts_[static_cast<size_t>(p.v) * s_ + t] +=
            m_.cost(static_cast<int>(t), to, p.bytes, p.messages) -
            m_.cost(static_cast<int>(t), from, p.bytes, p.messages);
  }

 private:
  const Machine& m_;
  const Adjacency& adj_;
  size_t s_;
  std::vector<double> cts_;
};

double pair_cost(const Machine& m, const Adjacency& adj, int u, int v, int a, int b) {
  for (const Pair& p : adj[static_cast<size_t>(u)])
    if (p.v == v) return m.cost(a, b, p.bytes, p.messages);
  return 0;
}

// Moves the cheapest ranks out of over-full sites into under-full ones until
// every site holds exactly its size (METIS balances within a tolerance).
void fix_sizes(const Machine& m, const Adjacency& adj, std::vector<int>& site_of) {
  std::vector<int> have(static_cast<size_t>(m.sites()), 0);
  for (int s : site_of) ++have[static_cast<size_t>(s)];
  SiteCosts cts(m, adj, site_of);
  for (;;) {
    int best_v = -1, best_to = -1;
    double best = std::numeric_limits<double>::infinity();
    for (int v = 0; v < m.ranks(); ++v) {
      const int a = site_of[static_cast<size_t>(v)];
      if (have[static_cast<size_t>(a)] <= m.site_ranks(a)) continue;
      for (int t = 0; t < m.sites(); ++t) {
        if (have[static_cast<size_t>(t)] >= m.site_ranks(t)) continue;
        const double d = cts.at(v, t) - cts.at(v, a);
        if (d < best) best = d, best_v = v, best_to = t;
      }
    }
    if (best_v < 0) return;
    const int from = site_of[static_cast<size_t>(best_v)];
    --have[static_cast<size_t>(from)];
    ++have[static_cast<size_t>(best_to)];
    site_of[static_cast<size_t>(best_v)] = best_to;
    cts.moved(best_v, from, best_to);
  }
}

// Kernighan–Lin pair swaps under the exact model: in each pass every rank
// is swapped with the partner that saves most, while any swap saves time.
void refine_swaps(const Machine& m, const Adjacency& adj, std::vector<int>& site_of) {
  const int n = m.ranks();
  SiteCosts cts(m, adj, site_of);
  for (int pass = 0; pass < 64; ++pass) {
    bool improved = false;
    for (int v = 0; v < n; ++v) {
      const int a = site_of[static_cast<size_t>(v)];
      double best = -1e-9;  // only strict savings: no cycling on ties
      int best_u = -1;
      for (int u = 0; u < n; ++u) {
        const int b = site_of[static_cast<size_t>(u)];
        if (b == a) continue;
        double d = cts.at(v, b) - cts.at(v, a) + cts.at(u, a) - cts.at(u, b);
        if (d < best) {
          // The v–u pair itself is counted as crossing twice above; it keeps its cost.
          d += 2 * pair_cost(m, adj, v, u, a, b);
          if (d < best) best = d, best_u = u;
        }
      }
      if (best_u < 0) continue;
      const int b = site_of[static_cast<size_t>(best_u)];
      site_of[static_cast<size_t>(v)] = b;
      cts.moved(v, a, b);
      site_of[static_cast<size_t>(best_u)] = a;
      cts.moved(best_u, b, a);
      improved = true;
    }
    if (!improved) return;
  }
}

}  // namespace

Machine::Machine(std::vector<int> site_ranks, LinkCost every_pair)
    : site_ranks_(std::move(site_ranks)) {
  if (site_ranks_.empty()) throw std::invalid_argument("machine: no site");
  for (int n : site_ranks_) {
    if (n < 1) throw std::invalid_argument("machine: a site of fewer than 1 rank");
    if (ranks_ > std::numeric_limits<int>::max() - n)
      throw std::invalid_argument("machine: more ranks than an int holds");
    ranks_ += n;
  }
  check_cost(every_pair);
  links_.assign(site_ranks_.size() * site_ranks_.size(), every_pair);
}

void Machine::set_link(int a, int b, LinkCost cost) {
  if (a < 0 || b < 0 || a >= sites() || b >= sites() || a == b)
    throw std::invalid_argument("link: sites " + std::to_string(a) + " and " + std::to_string(b) +
                                " are not two distinct sites of 0.." + std::to_string(sites() - 1));
  check_cost(cost);
  links_[static_cast<size_t>(a * sites() + b)] = cost;
  links_[static_cast<size_t>(b * sites() + a)] = cost;
}

double Machine::cost(int a, int b, std::uint64_t bytes, std::uint64_t messages) const {
  if (a == b) return 0;
  const LinkCost& c = link(a, b);
  return static_cast<double>(messages) * c.L_us + static_cast<double>(bytes) * c.G_us_per_byte;
}

std::vector<int> Machine::block_order() const {
  std::vector<int> site_of;
  site_of.reserve(static_cast<size_t>(ranks_));
  for (int s = 0; s < sites(); ++s)
    site_of.insert(site_of.end(), static_cast<size_t>(site_ranks(s)), s);
  return site_of;
}

Figures evaluate(const Machine& machine, const std::vector<Traffic>& traffic,
                 const std::vector<int>& site_of) {
  if (static_cast<int>(site_of.size()) != machine.ranks())
    throw std::invalid_argument("placement: " + std::to_string(site_of.size()) +
                                " ranks placed, the machine has " +
                                std::to_string(machine.ranks()));
  for (int s : site_of)
    if (s < 0 || s >= machine.sites())
      throw std::invalid_argument("placement: site " + std::to_string(s) + " outside 0.." +
                                  std::to_string(machine.sites() - 1));
  Figures f;
  for (const Traffic& t : traffic) {
    if (t.src < 0 || t.dst < 0 || t.src >= machine.ranks() || t.dst >= machine.ranks())
      throw std::invalid_argument("traffic names a rank outside 0.." +
                                  std::to_string(machine.ranks() - 1));
    const int a = site_of[static_cast<size_t>(t.src)], b = site_of[static_cast<size_t>(t.dst)];
    if (a == b) continue;
    f.crossing_bytes += t.bytes;
    f.crossing_messages += t.messages;
    f.time_us += machine.cost(a, b, t.bytes, t.messages);
  }
  return f;
}

Placement place(const Machine& machine, const std::vector<Traffic>& traffic,
                const PlaceOptions& options) {
  const Adjacency adj = undirected(machine.ranks(), traffic);
  Placement out;
  out.block = evaluate(machine, traffic, machine.block_order());
  out.site_of = options.start.empty() ? machine.block_order() : options.start;
  std::vector<int> count(static_cast<size_t>(machine.sites()), 0);
  for (int s : out.site_of) {
    if (s < 0 || s >= machine.sites() || static_cast<int>(out.site_of.size()) != machine.ranks())
      throw std::invalid_argument("placement: the start layout does not fit the machine");
    ++count[static_cast<size_t>(s)];
  }
  for (int s = 0; s < machine.sites(); ++s)
    if (count[static_cast<size_t>(s)] != machine.site_ranks(s))
      throw std::invalid_argument("placement: the start layout gives site " + std::to_string(s) +
                                  " " + std::to_string(count[static_cast<size_t>(s)]) +
                                  " ranks, not " + std::to_string(machine.site_ranks(s)));
  out.method = "start";
  double best = total_time(machine, adj, out.site_of);
  auto consider = [&](std::vector<int> cand, const char* method) {
    const double t = total_time(machine, adj, cand);
    if (t < best) best = t, out.site_of = std::move(cand), out.method = method;
  };
  if (machine.sites() > 1 && best > 0) {
    if (machine.ranks() <= 64 &&
        assignments(machine, options.exhaustive_limit) <= options.exhaustive_limit) {
      consider(Exhaustive(machine, adj).run(out.site_of, best), "exhaustive");
    } else {
      const bool refine = machine.ranks() <= options.refine_limit;
      std::vector<int> cut = metis_parts(machine, adj);
      if (!cut.empty()) {
        fix_sizes(machine, adj, cut);
        if (refine) refine_swaps(machine, adj, cut);
        consider(std::move(cut), "metis+swaps");
      }
      if (refine) {
        std::vector<int> swapped = out.site_of;
        refine_swaps(machine, adj, swapped);
        consider(std::move(swapped), "metis+swaps");
      }
    }
  }
  out.placed = evaluate(machine, traffic, out.site_of);
  return out;
}

}  // namespace zipper::place
