// MMPI_RANK_MAP (client/world_placement.h): the virtual rank of every
// MPI_COMM_WORLD rank under zipper-run's rank map, and the maps refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/world_placement.h"

namespace {

using zipper::client::SiteMap;
using zipper::client::world_placement_from;

SiteMap sites(const std::vector<std::uint64_t>& table) {
  std::string why;
  return *SiteMap::make(table, 0, &why);
}

TEST(WorldPlacement, EmptyIsBlockOrder) {
  std::string why;
  const auto v = world_placement_from("", sites({3, 2}), &why);
  ASSERT_TRUE(v) << why;
  EXPECT_EQ(*v, (std::vector<int>{0, 1, 2, 3, 4}));
}

// Site s's k-th listed rank runs as the k-th virtual rank of site s: the
// order inside a site is kept, so native ranks and world ranks agree.
TEST(WorldPlacement, EachSitesRanksInOrder) {
  std::string why;
  auto v = world_placement_from("0,3;1-2", sites({2, 2}), &why);
  ASSERT_TRUE(v) << why;
  EXPECT_EQ(*v, (std::vector<int>{0, 2, 3, 1}));
  v = world_placement_from("0-3,8-11;4-7,12-15", sites({8, 8}), &why);
  ASSERT_TRUE(v) << why;
  EXPECT_EQ(*v, (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15}));
  v = world_placement_from("4;0-1;2-3", sites({1, 2, 2}), &why);
  ASSERT_TRUE(v) << why;
  EXPECT_EQ(*v, (std::vector<int>{1, 2, 3, 4, 0}));
  // Every virtual rank exactly once, in its site's range.
  const SiteMap s = sites({2, 2});
  v = world_placement_from("1,2;0,3", s, &why);
  ASSERT_TRUE(v) << why;
  EXPECT_EQ(s.site_of((*v)[1]), 0);
  EXPECT_EQ(s.site_of((*v)[2]), 0);
  EXPECT_EQ(s.site_of((*v)[0]), 1);
  EXPECT_EQ(s.site_of((*v)[3]), 1);
}

TEST(WorldPlacement, BadMapsAreRefused) {
  struct Case {
    const char* text;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"0-3", "names 1 sites; the job has 2"},
      {"0;1;2-3", "names 3 sites"},
      {"0,1,2;3", "lists more than its 2 ranks"},
      {"0;1-3", "site 0 lists 1 ranks; it runs 2"},
      {"1,0;2-3", "not ascending"},
      {"0,0;1,2", "not ascending"},
      {"0,1;1,2", "listed twice"},
      {"0,4;1-2", "outside the world of 4"},
      {"0,x;1-2", "'x' is not a rank"},
      {"0,-1;1-2", "'-1' is not a rank"},
      {"0,3-1;1-2", "'3-1' is not a rank"},
      {"0,3-;1-2", "'3-' is not a rank"},
      {"0,,3;1-2", "'' is not a rank"},
      {";0-3", "'' is not a rank"},
      {"0 ,3;1-2", "'0 ' is not a rank"},
      {"0,99999999999999999999;1-2", "is not a rank"},
  };
  for (const Case& c : cases) {
    std::string why;
    EXPECT_FALSE(world_placement_from(c.text, sites({2, 2}), &why)) << c.text;
    EXPECT_EQ(why.rfind("MMPI_RANK_MAP: ", 0), 0u) << why;
    EXPECT_NE(why.find(c.says), std::string::npos) << c.text << " -> " << why;
  }
}

}  // namespace
