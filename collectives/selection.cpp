#include "selection.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "../client/environment.h"

namespace zipper::coll {
namespace {

constexpr std::string_view kCollectiveNames[kNumCollectives] = {
    "barrier",   "bcast",  "reduce",  "allreduce", "alltoall",
    "alltoallv", "gather", "scatter", "allgather", "reduce_scatter_block"};

struct AlgorithmInfo {
  AlgorithmTraits traits;
  std::vector<Collective> implements;
};

const std::vector<AlgorithmInfo>& algorithm_table() {
  using C = Collective;
  static const std::vector<AlgorithmInfo> table = {
      // algorithm, name, takes n, takes a segment size; collectives
      {{Algorithm::kTwoLevel, "two_level", false, false},
       {C::kBarrier, C::kGather, C::kScatter, C::kAllgather}},
      {{Algorithm::kFarfirst, "farfirst", false, true}, {C::kBcast}},
      {{Algorithm::kVanDeGeijn, "vandegeijn", true, true}, {C::kBcast}},
      {{Algorithm::kLeaders, "leaders", false, true}, {C::kReduce}},
      {{Algorithm::kTwoTier, "two_tier", false, true}, {C::kAllreduce}},
      {{Algorithm::kRabenseifner, "rabenseifner", true, true}, {C::kAllreduce}},
      {{Algorithm::kDirect, "direct", false, false}, {C::kAlltoall, C::kAlltoallv}},
      {{Algorithm::kAggregated, "aggregated", true, true}, {C::kAlltoall, C::kAlltoallv}},
      {{Algorithm::kViaAllreduce, "via_allreduce", false, false}, {C::kReduceScatterBlock}},
  };
  return table;
}

// The built-in rules. Thresholds are first guesses from the emulation
// (zipper-bench coll); tuning files from zipper-tune replace them per
// installation (docs/tuning.md).
std::vector<Rule> builtin_rules(Collective c) {
  using A = Algorithm;
  constexpr std::uint64_t kSmall = 16 * 1024;  // bytes: below, latency dominates
  switch (c) {
    case Collective::kBcast:
      return {{0, kSmall - 1, 0, 0, {A::kFarfirst, 0}}, {0, UINT64_MAX, 0, 0, {A::kVanDeGeijn, 0}}};
    case Collective::kAllreduce:
      return {{0, kSmall - 1, 0, 0, {A::kTwoTier, 0}},
              {0, UINT64_MAX, 0, 0, {A::kRabenseifner, 0}}};
    case Collective::kAlltoall:
      // Small blocks: few large transfers beat x*y small ones (measured on the
      // emulation, 4+4: aggregated n=1 wins up to 2 KiB, direct from 4 KiB).
      return {{0, 2048, 0, 0, {A::kAggregated, 1}}, {0, UINT64_MAX, 0, 0, {A::kDirect, 0}}};
    case Collective::kAlltoallv:
      // As alltoall, by the largest block of any rank (MMPI_Alltoallv agrees
      // on it first, since each rank knows only its own blocks).
      return {{0, 2048, 0, 0, {A::kAggregated, 1}}, {0, UINT64_MAX, 0, 0, {A::kDirect, 0}}};
    case Collective::kReduce:
      return {{0, UINT64_MAX, 0, 0, {A::kLeaders, 0}}};
    case Collective::kReduceScatterBlock:
      return {{0, UINT64_MAX, 0, 0, {A::kViaAllreduce, 0}}};
    default:
      return {{0, UINT64_MAX, 0, 0, {A::kTwoLevel, 0}}};
  }
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

bool valid_segment(std::int64_t v) {
  return v == 0 || (v >= static_cast<std::int64_t>(kMinSegmentBytes) &&
                    v <= static_cast<std::int64_t>(kMaxSegmentBytes));
}
const char* const kSegmentRange = "an integer: 0 (unsegmented) or 1024 .. 2^40 bytes";

bool parse_senders(const std::string& text, int* out) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 1 || v > 1 << 20) return false;
  *out = static_cast<int>(v);
  return true;
}

std::string where(const toml::node& n, const std::string& origin) {
  const auto& src = n.source();
  return origin + ":" + std::to_string(src.begin.line);
}

// Reads algorithm/inter_senders of one table (a collective's section or a rule).
bool read_choice(Collective c, const toml::table& t, const std::string& origin, Choice* out,
                 bool need_algorithm, std::string* why) {
  if (auto a = t["algorithm"]) {
    auto s = a.value<std::string>();
    std::optional<Algorithm> alg;
    if (s) alg = algorithm_named(c, *s);
    if (!alg) {
      *why = where(*a.node(), origin) + ": " + std::string(name_of(c)) +
             ".algorithm must be one of " + algorithms_of(c);
      return false;
    }
    out->algorithm = *alg;
  } else if (need_algorithm) {
    *why = where(t, origin) + ": rule for " + std::string(name_of(c)) + " has no algorithm";
    return false;
  }
  if (auto n = t["inter_senders"]) {
    auto v = n.value<std::int64_t>();
    if (!v || *v < 1 || *v > (1 << 20)) {
      *why = where(*n.node(), origin) + ": inter_senders must be an integer >= 1";
      return false;
    }
    out->inter_senders = static_cast<int>(*v);
  }
  if (auto n = t["segment_bytes"]) {
    auto v = n.value<std::int64_t>();
    if (!v || !valid_segment(*v)) {
      *why = where(*n.node(), origin) + ": segment_bytes must be " + kSegmentRange;
      return false;
    }
    out->segment = static_cast<std::uint64_t>(*v);
  }
  return true;
}

bool read_u64(const toml::table& t, const char* key, const std::string& origin, std::uint64_t* out,
              std::string* why) {
  if (auto n = t[key]) {
    auto v = n.value<std::int64_t>();
    if (!v || *v < 0) {
      *why = where(*n.node(), origin) + ": " + key + " must be an integer >= 0";
      return false;
    }
    *out = static_cast<std::uint64_t>(*v);
  }
  return true;
}

}  // namespace

std::string_view name_of(Collective c) { return kCollectiveNames[static_cast<int>(c)]; }

std::string_view name_of(Algorithm a) {
  for (const auto& info : algorithm_table())
    if (info.traits.algorithm == a) return info.traits.name;
  return "?";
}

std::vector<AlgorithmTraits> algorithms_for(Collective c) {
  std::vector<AlgorithmTraits> out;
  for (const auto& info : algorithm_table())
    for (Collective i : info.implements)
      if (i == c) out.push_back(info.traits);
  return out;
}

std::optional<Collective> collective_named(std::string_view name) {
  for (int i = 0; i < kNumCollectives; ++i)
    if (kCollectiveNames[i] == name) return static_cast<Collective>(i);
  return std::nullopt;
}

std::optional<Algorithm> algorithm_named(Collective c, std::string_view name) {
  for (const auto& t : algorithms_for(c))
    if (t.name == name) return t.algorithm;
  return std::nullopt;
}

std::string algorithms_of(Collective c) {
  std::string out;
  for (const auto& t : algorithms_for(c)) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

Selection::Selection() {
  for (int i = 0; i < kNumCollectives; ++i)
    per_[i].builtin = builtin_rules(static_cast<Collective>(i));
}

bool Selection::load(std::string* why) { return load(client::Environment::capture(), why); }

bool Selection::load(const client::Environment& env, std::string* why) {
  if (const char* path = env.get("MMPI_TUNING_FILE"); path && *path) {
    std::ifstream in(path);
    if (!in) {
      *why = std::string("MMPI_TUNING_FILE: cannot read '") + path + "'";
      return false;
    }
    std::stringstream text;
    text << in.rdbuf();
    if (!load_tuning(text.str(), path, why)) return false;
  }
  // The environment overrides the file.
  if (const char* s = env.get("MMPI_SEGMENT_BYTES"); s && *s) {
    char* end = nullptr;
    const long long v = std::strtoll(s, &end, 10);
    if (*end != '\0' || !valid_segment(v)) {
      *why = std::string("MMPI_SEGMENT_BYTES must be ") + kSegmentRange + ", got '" + s + "'";
      return false;
    }
    env_segment_ = static_cast<std::uint64_t>(v);
  }
  if (const char* n = env.get("MMPI_INTER_SENDERS"); n && *n) {
    int v = 0;
    if (!parse_senders(n, &v)) {
      *why = std::string("MMPI_INTER_SENDERS must be an integer >= 1, got '") + n + "'";
      return false;
    }
    env_senders_ = v;
  }
  for (int i = 0; i < kNumCollectives; ++i) {
    const auto c = static_cast<Collective>(i);
    const std::string var = "MMPI_" + upper(name_of(c)) + "_ALGORITHM";
    const char* v = env.get(var);
    if (!v || !*v) continue;
    auto a = algorithm_named(c, v);
    if (!a) {
      *why = var + "='" + v + "' is not an algorithm for " + std::string(name_of(c)) +
             " (one of: " + algorithms_of(c) + ")";
      return false;
    }
    per_[i].fixed = Choice{*a, 0};
  }
  return true;
}

bool Selection::load_tuning(std::string_view text, const std::string& origin, std::string* why) {
  toml::parse_result parsed = toml::parse(text, origin);
  if (!parsed) {
    const auto& err = parsed.error();
    *why = origin + ":" + std::to_string(err.source().begin.line) + ": " +
           std::string(err.description());
    return false;
  }
  const toml::table& root = parsed.table();
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    if (k == "inter_senders") {
      auto v = node.value<std::int64_t>();
      if (!v || *v < 1 || *v > (1 << 20)) {
        *why = where(node, origin) + ": inter_senders must be an integer >= 1";
        return false;
      }
      file_senders_ = static_cast<int>(*v);
      continue;
    }
    if (k == "segment_bytes") {
      auto v = node.value<std::int64_t>();
      if (!v || !valid_segment(*v)) {
        *why = where(node, origin) + ": segment_bytes must be " + kSegmentRange;
        return false;
      }
      file_segment_ = static_cast<std::uint64_t>(*v);
      continue;
    }
    const auto c = collective_named(k);
    const toml::table* sect = node.as_table();
    if (!c || !sect) {
      *why = where(node, origin) + ": unknown key '" + k +
             "' (expected inter_senders, segment_bytes or a collective's table such as "
             "[allreduce])";
      return false;
    }
    PerCollective& pc = at(*c);
    for (const auto& [skey, snode] : *sect) {
      const std::string sk(skey.str());
      if (sk != "algorithm" && sk != "inter_senders" && sk != "segment_bytes" && sk != "rule") {
        *why = where(snode, origin) + ": unknown key '" + k + "." + sk +
               "' (expected algorithm, inter_senders, segment_bytes or [[" + k + ".rule]])";
        return false;
      }
    }
    if ((*sect)["algorithm"]) {
      Choice ch;
      if (!read_choice(*c, *sect, origin, &ch, true, why)) return false;
      pc.fixed = ch;
    } else if ((*sect)["inter_senders"] || (*sect)["segment_bytes"]) {
      *why = where(*sect, origin) + ": " + k +
             ((*sect)["inter_senders"] ? ".inter_senders" : ".segment_bytes") + " needs " + k +
             ".algorithm";
      return false;
    }
    if (auto rules = (*sect)["rule"]) {
      const toml::array* arr = rules.as_array();
      if (!arr) {
        *why = where(*rules.node(), origin) + ": " + k + ".rule must be an array of tables ([[" +
               k + ".rule]])";
        return false;
      }
      for (const auto& rn : *arr) {
        const toml::table* rt = rn.as_table();
        if (!rt) {
          *why = where(rn, origin) + ": each " + k + ".rule must be a table";
          return false;
        }
        Rule r;
        for (const auto& [rkey, rnode] : *rt) {
          const std::string rk(rkey.str());
          if (rk != "algorithm" && rk != "inter_senders" && rk != "segment_bytes" &&
              rk != "min_bytes" && rk != "max_bytes" && rk != "np_low" && rk != "np_high") {
            *why = where(rnode, origin) + ": unknown key '" + rk + "' in a " + k +
                   " rule (expected algorithm, inter_senders, segment_bytes, min_bytes, "
                   "max_bytes, np_low, np_high)";
            return false;
          }
        }
        if (!read_choice(*c, *rt, origin, &r.choice, true, why)) return false;
        std::uint64_t lo = 0, hi = UINT64_MAX, nl = 0, nh = 0;
        if (!read_u64(*rt, "min_bytes", origin, &lo, why) ||
            !read_u64(*rt, "max_bytes", origin, &hi, why) ||
            !read_u64(*rt, "np_low", origin, &nl, why) ||
            !read_u64(*rt, "np_high", origin, &nh, why))
          return false;
        r.min_bytes = lo;
        r.max_bytes = hi;
        r.np_low = static_cast<int>(nl);
        r.np_high = static_cast<int>(nh);
        pc.rules.push_back(r);
      }
    }
  }
  return true;
}

void Selection::set_override(Collective c, std::optional<Algorithm> a, int inter_senders) {
  auto& slot = runtime_[static_cast<int>(c)];
  if (a)
    slot = Choice{*a, inter_senders};
  else
    slot.reset();
}

void Selection::set_segment_override(Collective c, std::optional<std::uint64_t> segment_bytes) {
  runtime_segment_[static_cast<int>(c)] = segment_bytes;
}

bool Rule::fits(const std::vector<int>& site_members) const {
  if (np_low == 0 && np_high == 0) return true;
  if (site_members.size() > 2) return false;  // np_low/np_high describe two sites
  const int first = site_members.empty() ? 0 : site_members[0];
  const int second = site_members.size() > 1 ? site_members[1] : 0;
  return (np_low == 0 || np_low == first) && (np_high == 0 || np_high == second);
}

Choice Selection::choose(Collective c, std::uint64_t bytes,
                         const std::vector<int>& site_members) const {
  const PerCollective& pc = at(c);
  auto match = [&](const std::vector<Rule>& rules) -> std::optional<Choice> {
    for (const Rule& r : rules)
      if (bytes >= r.min_bytes && bytes <= r.max_bytes && r.fits(site_members)) return r.choice;
    return std::nullopt;
  };
  std::optional<Choice> ch = runtime_[static_cast<int>(c)];
  const bool from_runtime = ch.has_value();
  if (!ch) ch = pc.fixed;
  if (!ch) ch = match(pc.rules);
  if (!ch) ch = match(pc.builtin);
  if (!ch) ch = Choice{pc.builtin.front().choice};
  // n: MMPIX_Coll_set's, else the environment's, else the rule's, else the
  // file's default; 0 leaves it at Topology::max_senders().
  if (!(from_runtime && ch->inter_senders > 0)) {
    if (env_senders_ > 0)
      ch->inter_senders = env_senders_;
    else if (ch->inter_senders == 0)
      ch->inter_senders = file_senders_;
  }
  // Segment: MMPIX_Coll_set_segment's, else the environment's, else the
  // rule's, else the file's default (0: unsegmented).
  if (const auto& seg = runtime_segment_[static_cast<int>(c)])
    ch->segment = *seg;
  else if (env_segment_)
    ch->segment = *env_segment_;
  else if (ch->segment == 0)
    ch->segment = file_segment_;
  return *ch;
}

bool Selection::depends_on_size(Collective c, const std::vector<int>& site_members) const {
  const PerCollective& pc = at(c);
  if (runtime_[static_cast<int>(c)] || pc.fixed) return false;
  // Walk the rules as choose() does; the first rule for this layout that
  // covers every size ends the walk. Any differing choice before it means
  // the size matters.
  std::optional<Algorithm> first;
  for (const auto* rules : {&pc.rules, &pc.builtin}) {
    for (const Rule& r : *rules) {
      if (!r.fits(site_members)) continue;
      if (!first) first = r.choice.algorithm;
      if (r.choice.algorithm != *first) return true;
      if (r.min_bytes == 0 && r.max_bytes == UINT64_MAX) return false;
    }
  }
  return false;
}

}  // namespace zipper::coll
