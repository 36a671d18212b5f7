// The site map (client/sites.h): where each world rank runs, for 1, 2, 3
// and 5 sites, and the tables it refuses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/config.h"
#include "client/sites.h"

namespace {

using zipper::client::SiteMap;

// Checks every world rank of `m` against the table it was made from.
void expect_layout(const SiteMap& m, const std::vector<std::uint64_t>& table, int local) {
  ASSERT_EQ(m.sites(), static_cast<int>(table.size()));
  EXPECT_EQ(m.local_site(), local);
  int w = 0;
  for (int s = 0; s < m.sites(); ++s) {
    const auto r = m.ranks_in(s);
    EXPECT_EQ(r.first, w) << "site " << s;
    EXPECT_EQ(r.size(), static_cast<int>(table[static_cast<std::size_t>(s)])) << "site " << s;
    for (int i = 0; i < r.size(); ++i, ++w) {
      EXPECT_EQ(m.site_of(w), s) << "world rank " << w;
      EXPECT_EQ(m.is_local(w), s == local) << "world rank " << w;
      EXPECT_TRUE(r.contains(w));
    }
  }
  EXPECT_EQ(m.world_size(), w);
  EXPECT_EQ(m.site_of(-1), -1);
  EXPECT_EQ(m.site_of(w), -1);
  EXPECT_FALSE(m.is_local(-1));
  EXPECT_FALSE(m.is_local(w));
  EXPECT_EQ(m.local_ranks().first, m.ranks_in(local).first);
}

TEST(SiteMap, OneSite) {
  const SiteMap m = SiteMap::single(4);
  expect_layout(m, {4}, 0);
}

TEST(SiteMap, TwoSitesFromEitherSide) {
  std::string why;
  for (int local : {0, 1}) {
    const auto m = SiteMap::make({3, 5}, local, &why);
    ASSERT_TRUE(m) << why;
    expect_layout(*m, {3, 5}, local);
  }
}

TEST(SiteMap, ThreeAndFiveSites) {
  std::string why;
  const std::vector<std::vector<std::uint64_t>> tables = {{4, 4, 2}, {1, 2, 3, 1, 7}};
  for (const auto& t : tables)
    for (int local = 0; local < static_cast<int>(t.size()); ++local) {
      const auto m = SiteMap::make(t, local, &why);
      ASSERT_TRUE(m) << why;
      expect_layout(*m, t, local);
    }
}

TEST(SiteMap, SingleRankSites) {
  std::string why;
  const auto m = SiteMap::make({1, 1, 1}, 2, &why);
  ASSERT_TRUE(m) << why;
  expect_layout(*m, {1, 1, 1}, 2);
}

// Each bad table is refused with a message naming what is wrong.
TEST(SiteMap, BadTablesAreRefused) {
  struct Case {
    std::vector<std::uint64_t> table;
    int local;
    const char* says;
  };
  const std::uint64_t big = SiteMap::kMaxWorldSize;
  const std::vector<Case> cases = {
      {{}, 0, "empty"},
      {{2, 0, 3}, 0, "site 1"},
      {{0}, 0, "site 0"},
      {{big, 1}, 0, "exceed"},
      {{big + 1}, 0, "exceed"},
      {{UINT64_MAX, UINT64_MAX}, 0, "exceed"},
      {{big / 2, big / 2, 1}, 0, "exceed"},
      {std::vector<std::uint64_t>(SiteMap::kMaxSites + 1, 1), 0, "at most 64"},
      {{2, 2}, 2, "not in the table"},
      {{2, 2}, -1, "not in the table"},
  };
  for (const Case& c : cases) {
    std::string why;
    EXPECT_FALSE(SiteMap::make(c.table, c.local, &why)) << c.says;
    EXPECT_NE(why.find(c.says), std::string::npos) << "got: " << why;
  }
  // The cap itself is accepted.
  std::string why;
  EXPECT_TRUE(SiteMap::make(std::vector<std::uint64_t>(SiteMap::kMaxSites, 1), 63, &why)) << why;
  EXPECT_TRUE(SiteMap::make({big - 1, 1}, 1, &why)) << why;
}

// The launcher's two-site shorthand becomes sites {x, y}.
TEST(SiteMap, FromTheClientConfiguration) {
  zipper::client::ClientConfig c;
  std::string why;
  auto m = zipper::client::sites_from(c, 3, &why);  // standalone
  ASSERT_TRUE(m) << why;
  expect_layout(*m, {3}, 0);

  c.forwarder = "tcp:127.0.0.1:7470";
  c.site_ranks = {2, 6};
  c.site = 1;
  m = zipper::client::sites_from(c, 6, &why);
  ASSERT_TRUE(m) << why;
  expect_layout(*m, {2, 6}, 1);

  c.site = 0;
  m = zipper::client::sites_from(c, 2, &why);
  ASSERT_TRUE(m) << why;
  expect_layout(*m, {2, 6}, 0);

  // mpirun started 4 ranks here but the launcher said 2.
  EXPECT_FALSE(zipper::client::sites_from(c, 4, &why));
  EXPECT_NE(why.find("runs 4 ranks but MMPI_NP_LOW says 2"), std::string::npos) << why;
}

}  // namespace
