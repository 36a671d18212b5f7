#include "tuning_file.h"

#include <algorithm>
#include <sstream>

namespace zipper::tune {

std::string tuning_toml(const std::vector<TunedPoint>& points, int x, int y,
                        const std::vector<std::string>& header) {
  std::ostringstream out;
  for (const auto& h : header) out << "# " << h << "\n";
  for (int ci = 0; ci < coll::kNumCollectives; ++ci) {
    const auto c = static_cast<coll::Collective>(ci);
    std::vector<TunedPoint> mine;
    for (const auto& p : points)
      if (p.collective == c) mine.push_back(p);
    if (mine.empty()) continue;
    std::stable_sort(mine.begin(), mine.end(),
                     [](const TunedPoint& a, const TunedPoint& b) { return a.bytes < b.bytes; });
    const std::string name(coll::name_of(c));
    for (std::size_t i = 0; i < mine.size();) {
      std::size_t j = i;  // merge equal neighbours
      while (j + 1 < mine.size() && mine[j + 1].choice == mine[i].choice) ++j;
      const Config& ch = mine[i].choice;
      out << "\n[[" << name << ".rule]]\n";
      if (i > 0) out << "min_bytes = " << mine[i].bytes << "\n";
      if (j + 1 < mine.size()) out << "max_bytes = " << mine[j + 1].bytes - 1 << "\n";
      out << "np_low = " << x << "\nnp_high = " << y << "\n";
      out << "algorithm = \"" << coll::name_of(ch.algorithm) << "\"\n";
      if (ch.n > 0) out << "inter_senders = " << ch.n << "\n";
      if (ch.segment > 0) out << "segment_bytes = " << ch.segment << "\n";
      i = j + 1;
    }
  }
  return out.str();
}

}  // namespace zipper::tune
