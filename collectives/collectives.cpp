#include "collectives.h"

namespace zipper::coll {
namespace {
Selection g_selection;
}  // namespace

bool init_collectives(const client::Environment& env, std::string* why) {
  g_selection = Selection();
  return g_selection.load(env, why);
}

Selection& selection() { return g_selection; }

}  // namespace zipper::coll
