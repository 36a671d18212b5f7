#include "world_placement.h"

#include <charconv>
#include <numeric>

namespace zipper::client {

namespace {

// A rank at the start of `s` (advanced past it), or nullopt.
std::optional<long long> rank_at(std::string_view* s) {
  if (s->empty() || s->front() < '0' || s->front() > '9') return std::nullopt;
  long long v = 0;
  const auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc{} || end == s->data()) return std::nullopt;
  s->remove_prefix(static_cast<std::size_t>(end - s->data()));
  return v;
}

// Splits `s` at each `sep`.
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    const auto i = s.find(sep);
    out.push_back(s.substr(0, i));
    if (i == std::string_view::npos) return out;
    s.remove_prefix(i + 1);
  }
}

}  // namespace

std::optional<std::vector<int>> world_placement_from(std::string_view text, const SiteMap& sites,
                                                     std::string* why) {
  const int n = sites.world_size();
  std::vector<int> vrank_of(static_cast<std::size_t>(n));
  if (text.empty()) {
    std::iota(vrank_of.begin(), vrank_of.end(), 0);
    return vrank_of;
  }
  auto fail = [&](const std::string& what) -> std::optional<std::vector<int>> {
    *why = "MMPI_RANK_MAP: " + what;
    return std::nullopt;
  };
  const auto site_texts = split(text, ';');
  if (static_cast<int>(site_texts.size()) != sites.sites())
    return fail("names " + std::to_string(site_texts.size()) + " sites; the job has " +
                std::to_string(sites.sites()));
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  for (int s = 0; s < sites.sites(); ++s) {
    const WorldRange range = sites.ranks_in(s);
    int k = 0;  // ranks of site s so far
    long long last = -1;
    for (std::string_view item : split(site_texts[static_cast<std::size_t>(s)], ',')) {
      std::string_view rest = item;
      const auto a = rank_at(&rest);
      std::optional<long long> b = a;
      if (a && !rest.empty() && rest.front() == '-') {
        rest.remove_prefix(1);
        b = rank_at(&rest);
      }
      if (!a || !b || !rest.empty() || *b < *a)
        return fail("site " + std::to_string(s) + ": '" + std::string(item) +
                    "' is not a rank or a range a-b");
      if (*a <= last)
        return fail("site " + std::to_string(s) + ": ranks are not ascending at '" +
                    std::string(item) + "'");
      if (*b >= n)
        return fail("site " + std::to_string(s) + ": rank " + std::to_string(*b) +
                    " is outside the world of " + std::to_string(n));
      if (*b - *a + 1 > range.size() - k)
        return fail("site " + std::to_string(s) + " lists more than its " +
                    std::to_string(range.size()) + " ranks");
      for (long long w = *a; w <= *b; ++w, ++k) {
        auto at = static_cast<std::size_t>(w);
        if (seen[at]) return fail("rank " + std::to_string(w) + " is listed twice");
        seen[at] = true;
        vrank_of[at] = range.first + k;
      }
      last = *b;
    }
    if (k != range.size())
      return fail("site " + std::to_string(s) + " lists " + std::to_string(k) + " ranks; it runs " +
                  std::to_string(range.size()));
  }
  return vrank_of;  // every site full, no rank twice: each of the n ranks once
}

}  // namespace zipper::client
