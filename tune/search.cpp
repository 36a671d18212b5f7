#include "search.h"

#include <algorithm>

namespace zipper::tune {

std::vector<Config> full_grid(const SearchSpace& space) {
  std::vector<Config> out;
  const std::vector<std::uint64_t> unsegmented = {0};
  for (const auto& a : space.algorithms) {
    const auto& segs = a.takes_segment ? space.segments : unsegmented;
    for (int n = a.takes_senders ? 1 : 0; n <= (a.takes_senders ? space.max_senders : 0); ++n)
      for (std::uint64_t s : segs) out.push_back({a.algorithm, n, s});
  }
  return out;
}

SearchResult search_point(const SearchSpace& space,
                          const std::function<double(const Config&)>& predict,
                          const std::function<double(const Config&)>& measure, int confirm,
                          const Config* hint, int max_experiments, double prune) {
  SearchResult r;
  for (const Config& c : full_grid(space)) r.candidates.push_back({c, predict(c), -1});
  if (r.candidates.empty()) return r;
  std::vector<std::size_t> order(r.candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return r.candidates[a].predicted_us < r.candidates[b].predicted_us;
  });
  r.model_pick = r.candidates[order.front()].config;

  auto find = [&](const Config& c) -> Candidate* {
    for (Candidate& k : r.candidates)
      if (k.config == c) return &k;
    return nullptr;
  };
  Candidate* best = nullptr;
  auto try_one = [&](Candidate* k) {
    if (k == nullptr || k->measured_us >= 0 || r.experiments >= max_experiments) return;
    k->measured_us = measure(k->config);
    ++r.experiments;
    if (best == nullptr || k->measured_us < best->measured_us) best = k;
  };

  // 1. The model's best of each algorithm, best algorithms first, then the
  // next best overall, up to `confirm`; the previous size's optimum too.
  std::vector<Candidate*> first;
  const double best_pred = r.candidates[order.front()].predicted_us;
  auto pruned = [&](const Candidate* k) {
    return prune > 0 && k != &r.candidates[order.front()] && k->predicted_us > prune * best_pred;
  };
  for (std::size_t i : order) {
    Candidate* k = &r.candidates[i];
    if (pruned(k)) break;  // `order` is ascending: all later ones are pruned too
    bool seen = false;
    for (Candidate* f : first) seen |= f->config.algorithm == k->config.algorithm;
    if (!seen && static_cast<int>(first.size()) < confirm) first.push_back(k);
  }
  for (std::size_t i : order) {
    if (static_cast<int>(first.size()) >= confirm) break;
    Candidate* k = &r.candidates[i];
    if (pruned(k)) break;
    if (std::find(first.begin(), first.end(), k) == first.end()) first.push_back(k);
  }
  for (Candidate* k : first) try_one(k);
  if (hint) try_one(find(*hint));

  // 2. Hill-descent over n and segment from the best measured: neighbours
  // are n ± 1 and the next smaller / larger segment size.
  while (best != nullptr && r.experiments < max_experiments) {
    Candidate* from = best;
    const Config c = from->config;
    std::vector<Config> next;
    if (c.n > 0) {
      if (c.n > 1) next.push_back({c.algorithm, c.n - 1, c.segment});
      if (c.n < space.max_senders) next.push_back({c.algorithm, c.n + 1, c.segment});
    }
    const auto it = std::find(space.segments.begin(), space.segments.end(), c.segment);
    if (it != space.segments.end()) {
      if (it != space.segments.begin()) next.push_back({c.algorithm, c.n, *(it - 1)});
      if (it + 1 != space.segments.end()) next.push_back({c.algorithm, c.n, *(it + 1)});
    }
    for (const Config& nc : next) try_one(find(nc));
    if (best == from) break;  // no neighbour is better: a (local) optimum
  }
  if (best) {
    r.best = best->config;
    r.best_us = best->measured_us;
  }
  return r;
}

}  // namespace zipper::tune
