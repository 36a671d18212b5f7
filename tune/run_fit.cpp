// Step 2 of a zipper-tune run: the model's predictions (run_fit.h).
#include "run_fit.h"

#include <string>
#include <vector>

#include "library_table.h"
#include "plan.h"

namespace zipper::tune {

using nlohmann::json;

json predictions_json(const Network& net, const Options& o, int x, int y, int smax) {
  json pred = json::array();
  for (const auto& cname : o.collectives) {
    const coll::Collective c = *coll::collective_named(cname);
    const bool blocks = c == coll::Collective::kAlltoall || c == coll::Collective::kAlltoallv;
    const auto sizes = c == coll::Collective::kBarrier
                           ? std::vector<std::uint64_t>{0}
                           : geometric(4, blocks ? o.max_block : o.max_bytes, 2);
    for (const auto& a : library_algorithms(cname))
      for (int n = a.takes_senders ? 1 : 0; n <= (a.takes_senders ? smax : 0); ++n)
        for (std::uint64_t b : sizes)
          pred.push_back({{"collective", cname},
                          {"algorithm", std::string(a.name)},
                          {"n", n},
                          {"bytes", b},
                          {"predicted_us", predict(net, c, a.algorithm, b, x, y, n, 0)}});
  }
  return pred;
}

}  // namespace zipper::tune
