// Collective algorithm selection: built-in rules, environment, tuning file
// (TOML) and MMPIX_Coll_set precedence, and the errors for bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "collectives/selection.h"
#include "test_util.h"

namespace {

using zipper::coll::Algorithm;
using zipper::coll::Choice;
using zipper::coll::Collective;
using zipper::coll::Selection;

// Every test starts with no MMPI_* selection variable set; restored after.
class CollSelection : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!file_.empty()) std::remove(file_.c_str());
  }
  // Writes `text` to a temporary tuning file and points MMPI_TUNING_FILE at it.
  void tuning_file(const std::string& text) {
    char path[] = "/tmp/zipper_tuning_XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    ::close(fd);
    file_ = path;
    std::ofstream(file_) << text;
    ::setenv("MMPI_TUNING_FILE", file_.c_str(), 1);
  }
  zipper::test::EnvGuard env_{
      "MMPI_TUNING_FILE",        "MMPI_INTER_SENDERS",       "MMPI_BARRIER_ALGORITHM",
      "MMPI_BCAST_ALGORITHM",    "MMPI_REDUCE_ALGORITHM",    "MMPI_ALLREDUCE_ALGORITHM",
      "MMPI_ALLTOALL_ALGORITHM", "MMPI_ALLTOALLV_ALGORITHM", "MMPI_SEGMENT_BYTES"};
  std::string file_;
};

void expect(Choice c, Algorithm a, int n) {
  EXPECT_EQ(c.algorithm, a);
  EXPECT_EQ(c.inter_senders, n);
}

TEST_F(CollSelection, BuiltinRulesBySize) {
  Selection s;
  std::string why;
  ASSERT_TRUE(s.load(&why)) << why;
  expect(s.choose(Collective::kBcast, 16383, {4, 4}), Algorithm::kFarfirst, 0);
  expect(s.choose(Collective::kBcast, 16384, {4, 4}), Algorithm::kVanDeGeijn, 0);
  expect(s.choose(Collective::kAllreduce, 8, {4, 4}), Algorithm::kTwoTier, 0);
  expect(s.choose(Collective::kAllreduce, 1 << 20, {4, 4}), Algorithm::kRabenseifner, 0);
  expect(s.choose(Collective::kAlltoall, 4, {4, 4}), Algorithm::kAggregated, 1);
  expect(s.choose(Collective::kAlltoall, 2048, {4, 4}), Algorithm::kAggregated, 1);
  expect(s.choose(Collective::kAlltoall, 2049, {4, 4}), Algorithm::kDirect, 0);
  expect(s.choose(Collective::kAlltoallv, 0, {1, 4}), Algorithm::kAggregated, 1);
  expect(s.choose(Collective::kAlltoallv, 2048, {2, 2}), Algorithm::kAggregated, 1);
  expect(s.choose(Collective::kAlltoallv, 1 << 20, {2, 2}), Algorithm::kDirect, 0);
  expect(s.choose(Collective::kReduce, 0, {1, 1}), Algorithm::kLeaders, 0);
  expect(s.choose(Collective::kBarrier, 0, {3, 5}), Algorithm::kTwoLevel, 0);
  expect(s.choose(Collective::kReduceScatterBlock, 9, {3, 5}), Algorithm::kViaAllreduce, 0);
}

TEST_F(CollSelection, DependsOnSizeOnlyWhereARuleSplitsTheSizes) {
  Selection s;
  std::string why;
  ASSERT_TRUE(s.load(&why)) << why;
  EXPECT_TRUE(s.depends_on_size(Collective::kAlltoallv, {2, 2}));
  EXPECT_TRUE(s.depends_on_size(Collective::kAllreduce, {4, 4}));
  EXPECT_FALSE(s.depends_on_size(Collective::kReduce, {4, 4}));
  EXPECT_FALSE(s.depends_on_size(Collective::kBarrier, {4, 4}));
  // A fixed choice (MMPIX_Coll_set here) makes the size irrelevant.
  s.set_override(Collective::kAlltoallv, Algorithm::kDirect, 0);
  EXPECT_FALSE(s.depends_on_size(Collective::kAlltoallv, {2, 2}));
  s.set_override(Collective::kAlltoallv, std::nullopt, 0);
  EXPECT_TRUE(s.depends_on_size(Collective::kAlltoallv, {2, 2}));
  // A tuning-file rule for all sizes of this layout ends the walk; other
  // layouts still see the built-in split.
  ASSERT_TRUE(s.load_tuning(R"([[alltoallv.rule]]
np_low = 2
np_high = 2
algorithm = "direct"
)",
                            "test.toml", &why))
      << why;
  EXPECT_FALSE(s.depends_on_size(Collective::kAlltoallv, {2, 2}));
  EXPECT_TRUE(s.depends_on_size(Collective::kAlltoallv, {4, 4}));
}

TEST_F(CollSelection, EnvironmentFixesAlgorithmAndSenders) {
  ::setenv("MMPI_BCAST_ALGORITHM", "farfirst", 1);
  ::setenv("MMPI_INTER_SENDERS", "3", 1);
  Selection s;
  std::string why;
  ASSERT_TRUE(s.load(&why)) << why;
  expect(s.choose(Collective::kBcast, 1 << 30, {4, 4}), Algorithm::kFarfirst, 3);
  // MMPI_INTER_SENDERS also applies to the rule-chosen collectives.
  expect(s.choose(Collective::kAllreduce, 1 << 20, {4, 4}), Algorithm::kRabenseifner, 3);
  expect(s.choose(Collective::kAlltoall, 4, {4, 4}), Algorithm::kAggregated, 3);
}

TEST_F(CollSelection, EnvironmentErrorsNameTheVariable) {
  std::string why;
  ::setenv("MMPI_ALLREDUCE_ALGORITHM", "farfirst", 1);  // a bcast algorithm
  EXPECT_FALSE(Selection().load(&why));
  EXPECT_NE(why.find("MMPI_ALLREDUCE_ALGORITHM"), std::string::npos) << why;
  EXPECT_NE(why.find("rabenseifner"), std::string::npos) << why;  // lists the valid names
  ::unsetenv("MMPI_ALLREDUCE_ALGORITHM");
  for (const char* bad : {"0", "-2", "two", "3x", "99999999999"}) {
    ::setenv("MMPI_INTER_SENDERS", bad, 1);
    why.clear();
    EXPECT_FALSE(Selection().load(&why)) << bad;
    EXPECT_NE(why.find("MMPI_INTER_SENDERS"), std::string::npos) << why;
  }
}

TEST_F(CollSelection, TuningFileRulesAndFixedChoices) {
  tuning_file(R"(
inter_senders = 2

[bcast]
algorithm = "vandegeijn"
inter_senders = 4

[[allreduce.rule]]
max_bytes = 65535
algorithm = "two_tier"

[[allreduce.rule]]
min_bytes = 65536
np_low = 4
np_high = 4
algorithm = "rabenseifner"
inter_senders = 3

[[alltoall.rule]]
algorithm = "direct"
)");
  Selection s;
  std::string why;
  ASSERT_TRUE(s.load(&why)) << why;
  expect(s.choose(Collective::kBcast, 1, {4, 4}), Algorithm::kVanDeGeijn, 4);
  expect(s.choose(Collective::kAllreduce, 65535, {4, 4}), Algorithm::kTwoTier, 2);
  expect(s.choose(Collective::kAllreduce, 65536, {4, 4}), Algorithm::kRabenseifner, 3);
  // No file rule for 3+5 at this size: the built-in rule, with the file's default n.
  expect(s.choose(Collective::kAllreduce, 65536, {3, 5}), Algorithm::kRabenseifner, 2);
  expect(s.choose(Collective::kAlltoall, 4, {4, 4}), Algorithm::kDirect, 2);
  // One site (standalone): the shape is {4}, as 4+0 was.
  expect(s.choose(Collective::kAllreduce, 65536, {4}), Algorithm::kRabenseifner, 2);
  // np_low/np_high describe two sites: the 4+4 rule never applies to 4+4+4;
  // rules without a shape do.
  expect(s.choose(Collective::kAllreduce, 65536, {4, 4, 4}), Algorithm::kRabenseifner, 2);
  expect(s.choose(Collective::kAllreduce, 65535, {4, 4, 4}), Algorithm::kTwoTier, 2);
}

TEST(CollRule, ShapeFitsTwoSitesOnly) {
  zipper::coll::Rule r;
  EXPECT_TRUE(r.fits({}));
  EXPECT_TRUE(r.fits({1, 2, 3}));
  r.np_low = 4;
  EXPECT_TRUE(r.fits({4, 7}));
  EXPECT_TRUE(r.fits({4}));
  EXPECT_FALSE(r.fits({3, 7}));
  EXPECT_FALSE(r.fits({4, 7, 1}));
  r.np_high = 7;
  EXPECT_TRUE(r.fits({4, 7}));
  EXPECT_FALSE(r.fits({4}));
  EXPECT_FALSE(r.fits({4, 6}));
}

TEST_F(CollSelection, EnvironmentOverridesFile) {
  tuning_file("[bcast]\nalgorithm = \"vandegeijn\"\ninter_senders = 4\n");
  ::setenv("MMPI_BCAST_ALGORITHM", "farfirst", 1);
  ::setenv("MMPI_INTER_SENDERS", "1", 1);
  Selection s;
  std::string why;
  ASSERT_TRUE(s.load(&why)) << why;
  expect(s.choose(Collective::kBcast, 1 << 20, {4, 4}), Algorithm::kFarfirst, 1);
}

TEST_F(CollSelection, RuntimeOverrideIsStrongestAndReversible) {
  ::setenv("MMPI_INTER_SENDERS", "1", 1);
  Selection s;
  std::string why;
  ASSERT_TRUE(s.load(&why)) << why;
  s.set_override(Collective::kAllreduce, Algorithm::kRabenseifner, 2);
  expect(s.choose(Collective::kAllreduce, 8, {4, 4}), Algorithm::kRabenseifner, 2);
  // n = 0 in the override: the environment's n applies.
  s.set_override(Collective::kAllreduce, Algorithm::kTwoTier, 0);
  expect(s.choose(Collective::kAllreduce, 1 << 20, {4, 4}), Algorithm::kTwoTier, 1);
  s.set_override(Collective::kAllreduce, std::nullopt, 0);
  expect(s.choose(Collective::kAllreduce, 1 << 20, {4, 4}), Algorithm::kRabenseifner, 1);
}

// Each malformed file is refused with the file's name, the line and the key.
TEST_F(CollSelection, TuningFileErrors) {
  struct Case {
    const char* text;
    const char* expect;  // substring of the error
  } cases[] = {
      {"[bcast\nalgorithm = 1\n", ":1"},                             // TOML syntax
      {"[bcst]\nalgorithm = \"farfirst\"\n", "unknown key 'bcst'"},  // collective
      {"[bcast]\nalgorithm = \"two_tier\"\n", "bcast.algorithm must be one of"},
      {"[bcast]\nalgo = \"farfirst\"\n", "unknown key 'bcast.algo'"},
      {"[bcast]\ninter_senders = 2\n", "needs bcast.algorithm"},
      {"inter_senders = 0\n", "inter_senders must be an integer >= 1"},
      {"[[allreduce.rule]]\nmax_bytes = 10\n", "has no algorithm"},
      {"[[allreduce.rule]]\nalgorithm = \"two_tier\"\nmax_bytes = -1\n", "max_bytes"},
      {"[[allreduce.rule]]\nalgorithm = \"two_tier\"\nsize = 3\n", "unknown key 'size'"},
      {"[allreduce]\nrule = 3\n", "must be an array of tables"},
  };
  for (const Case& c : cases) {
    Selection s;
    std::string why;
    EXPECT_FALSE(s.load_tuning(c.text, "tune.toml", &why)) << c.text;
    EXPECT_NE(why.find("tune.toml"), std::string::npos) << why;
    EXPECT_NE(why.find(c.expect), std::string::npos) << "error: " << why << "\nfile:\n" << c.text;
  }
}

TEST_F(CollSelection, MissingTuningFileIsAnError) {
  ::setenv("MMPI_TUNING_FILE", "/nonexistent/zipper.toml", 1);
  std::string why;
  EXPECT_FALSE(Selection().load(&why));
  EXPECT_NE(why.find("/nonexistent/zipper.toml"), std::string::npos) << why;
}

TEST_F(CollSelection, Names) {
  using zipper::coll::algorithm_named;
  using zipper::coll::collective_named;
  EXPECT_EQ(collective_named("reduce_scatter_block"), Collective::kReduceScatterBlock);
  EXPECT_FALSE(collective_named("allreduce2"));
  EXPECT_EQ(algorithm_named(Collective::kAlltoallv, "aggregated"), Algorithm::kAggregated);
  EXPECT_FALSE(algorithm_named(Collective::kBcast, "rabenseifner"));
}

TEST_F(CollSelection, SegmentSizePrecedence) {
  Selection s;
  std::string why;
  ASSERT_TRUE(s.load_tuning(R"(segment_bytes = 8192
[bcast]
algorithm = "farfirst"
segment_bytes = 65536

[[allreduce.rule]]
max_bytes = 1023
algorithm = "two_tier"

[[allreduce.rule]]
min_bytes = 1024
algorithm = "rabenseifner"
segment_bytes = 32768
)",
                            "seg.toml", &why))
      << why;
  EXPECT_EQ(s.choose(Collective::kBcast, 1 << 20, {2, 2}).segment, 65536u);   // the fixed choice's
  EXPECT_EQ(s.choose(Collective::kAllreduce, 100, {2, 2}).segment, 8192u);    // the file's default
  EXPECT_EQ(s.choose(Collective::kAllreduce, 4096, {2, 2}).segment, 32768u);  // the rule's
  EXPECT_EQ(s.choose(Collective::kReduce, 4096, {2, 2}).segment, 8192u);
  // MMPIX_Coll_set_segment beats all, also 0; nullopt returns to the rules.
  s.set_segment_override(Collective::kAllreduce, 0);
  EXPECT_EQ(s.choose(Collective::kAllreduce, 4096, {2, 2}).segment, 0u);
  s.set_segment_override(Collective::kAllreduce, std::nullopt);
  EXPECT_EQ(s.choose(Collective::kAllreduce, 4096, {2, 2}).segment, 32768u);
  // MMPIX_Coll_set replaces the rule, so the rule's segment (tuned for its
  // algorithm) goes too: the file's default applies, or set_segment's.
  s.set_override(Collective::kBcast, Algorithm::kVanDeGeijn, 2);
  EXPECT_EQ(s.choose(Collective::kBcast, 1 << 20, {2, 2}).segment, 8192u);
  s.set_segment_override(Collective::kBcast, 16384);
  EXPECT_EQ(s.choose(Collective::kBcast, 1 << 20, {2, 2}).segment, 16384u);
  // The built-in rules are unsegmented.
  Selection plain;
  EXPECT_EQ(plain.choose(Collective::kBcast, 1 << 20, {2, 2}).segment, 0u);
}

TEST_F(CollSelection, SegmentFromEnvironmentAndErrors) {
  ::setenv("MMPI_SEGMENT_BYTES", "4096", 1);
  Selection s;
  std::string why;
  ASSERT_TRUE(s.load(&why)) << why;
  EXPECT_EQ(s.choose(Collective::kAllreduce, 1 << 20, {4, 4}).segment, 4096u);
  for (const char* bad : {"100", "-1", "12x", "2000000000000000"}) {
    ::setenv("MMPI_SEGMENT_BYTES", bad, 1);
    Selection e;
    EXPECT_FALSE(e.load(&why)) << bad;
    EXPECT_NE(why.find("MMPI_SEGMENT_BYTES"), std::string::npos) << why;
  }
  ::unsetenv("MMPI_SEGMENT_BYTES");
  for (const char* text : {"segment_bytes = 100\n", "[bcast]\nsegment_bytes = 4096\n",
                           "[[bcast.rule]]\nalgorithm = \"farfirst\"\nsegment_bytes = \"big\"\n"}) {
    Selection e;
    EXPECT_FALSE(e.load_tuning(text, "bad.toml", &why)) << text;
    EXPECT_NE(why.find("segment_bytes"), std::string::npos) << why;
  }
}

TEST_F(CollSelection, AlgorithmTraitsAreTheTable) {
  using zipper::coll::algorithms_for;
  const auto bcast = algorithms_for(Collective::kBcast);
  ASSERT_EQ(bcast.size(), 2u);
  EXPECT_EQ(bcast[0].name, "farfirst");
  EXPECT_FALSE(bcast[0].takes_senders);
  EXPECT_TRUE(bcast[0].takes_segment);
  EXPECT_TRUE(bcast[1].takes_senders);
  EXPECT_EQ(zipper::coll::algorithms_of(Collective::kAlltoall), "direct, aggregated");
  EXPECT_FALSE(algorithms_for(Collective::kBarrier)[0].takes_segment);
}

}  // namespace
