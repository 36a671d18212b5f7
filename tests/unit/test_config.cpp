// libmmpi configuration from MMPI_* environment variables.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/chunking.h"
#include "client/config.h"
#include "client/settings.h"
#include "test_util.h"

namespace {

using Cfg = zipper::client::ClientConfig;
using zipper::client::config_from_env;

// Starts each test with no MMPI_* variable set; restores them after.
class ClientConfig : public ::testing::Test {
 protected:
  zipper::test::EnvGuard env_{"MMPI_FORWARDER",
                              "MMPI_JOB_ID",
                              "MMPI_GROUP",
                              "MMPI_NP_LOW",
                              "MMPI_NP_HIGH",
                              "MMPI_EAGER_LIMIT",
                              "MMPI_CHUNK_SIZE",
                              "MMPI_CONNECT_TIMEOUT",
                              "MMPI_SPIN_ROUNDS",
                              "MMPI_JOB_SECRET",
                              "MMPI_JOB_SECRET_FILE",
                              "MMPI_JOB_SECRET_FD",
                              "MMPI_FORWARDER_KEYS",
                              "MMPI_KNOWN_FORWARDERS",
                              "MMPI_FORWARDER_KEY_CHECK",
                              "MMPI_SITES",
                              "MMPI_SITE"};
  static void set(const char* name, const std::string& value) {
    ASSERT_EQ(::setenv(name, value.c_str(), 1), 0);
  }
  // A valid two-cluster configuration.
  static void set_forwarded() {
    set("MMPI_FORWARDER", "tcp:10.0.0.1:7470");
    set("MMPI_JOB_ID", "42");
    set("MMPI_JOB_SECRET", std::string(64, 'a'));
    set("MMPI_GROUP", "low");
    set("MMPI_NP_LOW", "2");
    set("MMPI_NP_HIGH", "3");
  }
  static std::optional<Cfg> load(std::string* why) {
    why->clear();
    return config_from_env(why);
  }
  // Expects rejection with a reason, and returns the reason.
  static std::string rejected() {
    std::string why;
    auto c = load(&why);
    EXPECT_FALSE(c.has_value());
    EXPECT_FALSE(why.empty());
    return why;
  }
  static Cfg accepted() {
    std::string why;
    auto c = load(&why);
    EXPECT_TRUE(c.has_value()) << why;
    return c.value_or(Cfg{});
  }
};

TEST_F(ClientConfig, DefaultsWhenNothingIsSet) {
  const auto c = accepted();
  EXPECT_FALSE(c.forwarder.has_value());  // standalone
  EXPECT_EQ(c.job_id, 0u);
  EXPECT_EQ(c.site, 0u);
  EXPECT_TRUE(c.site_ranks.empty());
  EXPECT_EQ(c.eager_limit, 16384u);
  EXPECT_EQ(c.chunk_size, 131072u);
  EXPECT_EQ(c.connect_timeout_s, 60);
  EXPECT_EQ(c.spin_rounds, 1000);
}

TEST_F(ClientConfig, EmptyValuesKeepDefaults) {
  for (const char* v : {"MMPI_FORWARDER", "MMPI_EAGER_LIMIT", "MMPI_CHUNK_SIZE",
                        "MMPI_CONNECT_TIMEOUT", "MMPI_SPIN_ROUNDS"})
    set(v, "");
  const auto c = accepted();
  EXPECT_FALSE(c.forwarder.has_value());
  EXPECT_EQ(c.eager_limit, 16384u);
  EXPECT_EQ(c.chunk_size, 131072u);
  EXPECT_EQ(c.connect_timeout_s, 60);
  EXPECT_EQ(c.spin_rounds, 1000);
}

TEST_F(ClientConfig, StandaloneIgnoresJobVariables) {
  // Without MMPI_FORWARDER the job layout is not needed (or checked).
  set("MMPI_GROUP", "sideways");
  set("MMPI_NP_LOW", "0");
  const auto c = accepted();
  EXPECT_FALSE(c.forwarder.has_value());
  EXPECT_TRUE(c.site_ranks.empty());
}

TEST_F(ClientConfig, ForwardedLowGroup) {
  set_forwarded();
  const auto c = accepted();
  ASSERT_TRUE(c.forwarder.has_value());
  EXPECT_EQ(*c.forwarder, "tcp:10.0.0.1:7470");
  EXPECT_EQ(c.job_id, 42u);
  EXPECT_EQ(c.site, 0u);
  EXPECT_EQ(c.site_ranks, (std::vector<std::uint32_t>{2, 3}));
}

TEST_F(ClientConfig, ForwardedHighGroup) {
  set_forwarded();
  set("MMPI_GROUP", "high");
  set("MMPI_JOB_ID", "18446744073709551615");  // u64 max
  const auto c = accepted();
  EXPECT_EQ(c.site, 1u);
  EXPECT_EQ(c.job_id, 18446744073709551615ull);
}

TEST_F(ClientConfig, EachTunableIsParsed) {
  set("MMPI_EAGER_LIMIT", "0");  // everything through the rendezvous
  set("MMPI_CHUNK_SIZE", "1024");
  set("MMPI_CONNECT_TIMEOUT", "5");
  set("MMPI_SPIN_ROUNDS", "0");
  auto c = accepted();
  EXPECT_EQ(c.eager_limit, 0u);
  EXPECT_EQ(c.chunk_size, 1024u);
  EXPECT_EQ(c.connect_timeout_s, 5);
  EXPECT_EQ(c.spin_rounds, 0);

  set("MMPI_EAGER_LIMIT", "1048576");
  set("MMPI_CHUNK_SIZE", "4194304");
  set("MMPI_CONNECT_TIMEOUT", "600");
  set("MMPI_SPIN_ROUNDS", "77");
  c = accepted();
  EXPECT_EQ(c.eager_limit, 1048576u);
  EXPECT_EQ(c.chunk_size, 4194304u);
  EXPECT_EQ(c.connect_timeout_s, 600);
  EXPECT_EQ(c.spin_rounds, 77);
}

TEST_F(ClientConfig, SpinRoundsAreClamped) {
  set("MMPI_SPIN_ROUNDS", "99999999999");
  EXPECT_EQ(accepted().spin_rounds, 1 << 30);
}

TEST_F(ClientConfig, NonNumericValuesAreRejected) {
  for (const char* var :
       {"MMPI_EAGER_LIMIT", "MMPI_CHUNK_SIZE", "MMPI_CONNECT_TIMEOUT", "MMPI_SPIN_ROUNDS"}) {
    for (const char* bad : {"abc", "12k", "1.5", " 7", "0x10", "-1", "+5"}) {
      SCOPED_TRACE(std::string(var) + "=" + bad);
      set(var, bad);
      const std::string why = rejected();
      EXPECT_NE(why.find(var), std::string::npos) << why;
      ::unsetenv(var);
    }
  }
}

TEST_F(ClientConfig, NumberTooLargeIsRejected) {
  set("MMPI_EAGER_LIMIT", "18446744073709551616");  // 2^64
  const std::string why = rejected();
  EXPECT_NE(why.find("MMPI_EAGER_LIMIT"), std::string::npos) << why;
}

TEST_F(ClientConfig, ChunkSizeTooSmall) {
  for (const char* bad : {"0", "1", "1023"}) {
    SCOPED_TRACE(bad);
    set("MMPI_CHUNK_SIZE", bad);
    EXPECT_NE(rejected().find("MMPI_CHUNK_SIZE"), std::string::npos);
  }
}

TEST_F(ClientConfig, BadJobVariables) {
  for (const char* var : {"MMPI_JOB_ID", "MMPI_NP_LOW", "MMPI_NP_HIGH"}) {
    for (const char* bad : {"x", "-2", "3 "}) {
      SCOPED_TRACE(std::string(var) + "=" + bad);
      set_forwarded();
      set(var, bad);
      EXPECT_NE(rejected().find(var), std::string::npos);
    }
  }
}

TEST_F(ClientConfig, ZeroOrMissingRankCounts) {
  for (const char* var : {"MMPI_NP_LOW", "MMPI_NP_HIGH"}) {
    SCOPED_TRACE(var);
    set_forwarded();
    set(var, "0");
    rejected();
    set_forwarded();
    ::unsetenv(var);
    rejected();
  }
}

// More than two sites: MMPI_SITES (ranks per site) and MMPI_SITE (this
// process's), which win over the two-site shorthand.
TEST_F(ClientConfig, SiteTable) {
  // Each load reads (and removes) the secret: set everything again first.
  const auto with_sites = [](const std::string& sites, const char* site) {
    set_forwarded();
    set("MMPI_SITES", sites);
    if (site != nullptr)
      set("MMPI_SITE", site);
    else
      ::unsetenv("MMPI_SITE");
  };
  with_sites("4,4,2", "2");
  const auto c = accepted();
  EXPECT_EQ(c.site_ranks, (std::vector<std::uint32_t>{4, 4, 2}));
  EXPECT_EQ(c.site, 2u);
  EXPECT_TRUE(c.site_list);
  std::string why;
  auto m = zipper::client::sites_from(c, 2, &why);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(m->sites(), 3);
  EXPECT_EQ(m->local_ranks().first, 8);
  EXPECT_FALSE(zipper::client::sites_from(c, 3, &why));
  EXPECT_EQ(why, "this cluster runs 3 ranks but MMPI_SITES says 2 for site 2");
  // 64 sites of one rank pass; the bounds and malformed lists are refused by name.
  std::string ones = "1";
  for (int i = 1; i < 64; ++i) ones += ",1";
  with_sites(ones, "63");
  EXPECT_EQ(accepted().site_ranks.size(), 64u);
  for (const std::string bad : {ones + ",1", std::string("4,0,2"), std::string("4,,2"),
                                std::string("4,4,"), std::string("4;4"), std::string("x"),
                                std::string("-1,2"), std::string("8388608,8388609")}) {
    SCOPED_TRACE(bad);
    with_sites(bad, "0");
    EXPECT_NE(rejected().find("MMPI_SITES='" + bad + "' must be 2 to 64"), std::string::npos);
  }
  with_sites("7", "0");
  EXPECT_NE(rejected().find("names one site"), std::string::npos);
  for (const char* bad : {"3", "x"}) {
    with_sites("4,4,2", bad);
    EXPECT_NE(rejected().find("MMPI_SITE"), std::string::npos) << bad;
  }
  with_sites("4,4,2", nullptr);
  EXPECT_NE(rejected().find("MMPI_SITE must be this process's site, 0 to 2"), std::string::npos);
}

TEST_F(ClientConfig, TooManyRanks) {
  set_forwarded();
  set("MMPI_NP_LOW", std::to_string(1u << 23));
  set("MMPI_NP_HIGH", std::to_string(1u << 23));
  accepted();  // exactly 2^24 ranks in total
  set("MMPI_NP_HIGH", std::to_string((1u << 23) + 1));
  rejected();
  set("MMPI_NP_HIGH", "4294967296");  // would wrap a 32-bit count
  rejected();
}

TEST_F(ClientConfig, BadGroup) {
  for (const char* bad : {"", "LOW", "High", "middle", "low ", "0"}) {
    SCOPED_TRACE(std::string("MMPI_GROUP='") + bad + "'");
    set_forwarded();
    set("MMPI_GROUP", bad);
    EXPECT_NE(rejected().find("MMPI_GROUP"), std::string::npos);
  }
  set_forwarded();
  ::unsetenv("MMPI_GROUP");
  EXPECT_NE(rejected().find("MMPI_GROUP"), std::string::npos);
}

}  // namespace

namespace {

using zipper::client::kMinChunk;
using zipper::client::rendezvous_chunk;

TEST(RendezvousChunk, AboutAnEighthOfTheMessageWithinBounds) {
  constexpr std::uint64_t kMax = 128 * 1024;
  EXPECT_EQ(rendezvous_chunk(16 * 1024 + 1, kMax), kMinChunk);
  EXPECT_EQ(rendezvous_chunk(128 * 1024, kMax), 16u * 1024);
  EXPECT_EQ(rendezvous_chunk(128 * 1024 + 1, kMax), 32u * 1024);
  EXPECT_EQ(rendezvous_chunk(512 * 1024, kMax), 64u * 1024);
  EXPECT_EQ(rendezvous_chunk(1 << 20, kMax), kMax);
  EXPECT_EQ(rendezvous_chunk(64u << 20, kMax), kMax);
  // MMPI_CHUNK_SIZE below the minimum wins; chunks never exceed it.
  EXPECT_EQ(rendezvous_chunk(1 << 20, 1024), 1024u);
  for (std::uint64_t m = 1; m < (8u << 20); m = m * 3 + 7) {
    const auto c = rendezvous_chunk(m, kMax);
    EXPECT_LE(c, kMax);
    EXPECT_TRUE(c >= kMinChunk || c == kMax);
    EXPECT_TRUE(c * 8 >= m || c == kMax) << m;
  }
}

// ---- pinned zipperd host keys (forwarder_pins.h) ---------------------------

const std::string kKey1(64, '1'), kKey2(64, '2');

// config_from_env removes MMPI_JOB_SECRET once read: give it again.
std::optional<Cfg> load_again(std::string* why) {
  ::setenv("MMPI_JOB_SECRET", std::string(64, 'a').c_str(), 1);
  why->clear();
  return config_from_env(why);
}

TEST_F(ClientConfig, ForwarderKeysPinInAddressOrder) {
  set_forwarded();
  set("MMPI_FORWARDER_KEYS", kKey1);
  std::string why;
  auto c = load_again(&why);
  ASSERT_TRUE(c) << why;
  EXPECT_TRUE(c->pins.strict);  // something is pinned: strict by default
  auto k = c->pins.lookup("tcp:10.0.0.1:7470", 0);
  ASSERT_TRUE(k);
  EXPECT_EQ(zipper::proto::auth::to_hex(*k), kKey1);
  // Two keys for one address, a bad key, a bad policy: refused with a reason.
  set("MMPI_FORWARDER_KEYS", kKey1 + "," + kKey2);
  EXPECT_FALSE(load_again(&why));
  EXPECT_NE(why.find("2 keys for 1 addresses"), std::string::npos) << why;
  set("MMPI_FORWARDER_KEYS", "abc");
  EXPECT_FALSE(load_again(&why));
  EXPECT_NE(why.find("64 hex digits"), std::string::npos) << why;
  set("MMPI_FORWARDER_KEYS", kKey1);
  set("MMPI_FORWARDER_KEY_CHECK", "maybe");
  EXPECT_FALSE(load_again(&why));
  EXPECT_NE(why.find("MMPI_FORWARDER_KEY_CHECK"), std::string::npos) << why;
}

// Strict is the default with or without pins; accept only when asked.
TEST_F(ClientConfig, NothingPinnedIsStrictUnlessAcceptIsAsked) {
  set_forwarded();
  set("MMPI_KNOWN_FORWARDERS", "/dev/null");  // not a regular file: refused
  std::string why;
  EXPECT_FALSE(load_again(&why));
  ASSERT_EQ(::unsetenv("MMPI_KNOWN_FORWARDERS"), 0);
  auto c = load_again(&why);
  ASSERT_TRUE(c) << why;
  EXPECT_TRUE(c->pins.strict);
  EXPECT_FALSE(c->pins.lookup("tcp:10.0.0.1:7470", 0));
  set("MMPI_FORWARDER_KEY_CHECK", "accept");
  c = load_again(&why);
  ASSERT_TRUE(c) << why;
  EXPECT_FALSE(c->pins.strict);
  set("MMPI_FORWARDER_KEY_CHECK", "strict");
  c = load_again(&why);
  ASSERT_TRUE(c) << why;
  EXPECT_TRUE(c->pins.strict);
}

TEST_F(ClientConfig, KnownForwardersFile) {
  char dir[] = "/tmp/zipper_known.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/known_forwarders";
  {
    std::ofstream f(path);
    f << "# site keys\n\n10.0.0.1:7470,bridge:7470 " << kKey1 << "  # bridge A\n"
      << "tcp:10.0.0.2:7470 " << kKey2 << "\n";
  }
  ::chmod(path.c_str(), 0644);
  set_forwarded();
  set("MMPI_KNOWN_FORWARDERS", path);
  std::string why;
  auto c = load_again(&why);
  ASSERT_TRUE(c) << why;
  EXPECT_TRUE(c->pins.strict);
  EXPECT_EQ(zipper::proto::auth::to_hex(*c->pins.lookup("tcp:10.0.0.1:7470", 0)), kKey1);
  EXPECT_EQ(zipper::proto::auth::to_hex(*c->pins.lookup("bridge:7470", 0)), kKey1);
  EXPECT_EQ(zipper::proto::auth::to_hex(*c->pins.lookup("10.0.0.2:7470", 0)), kKey2);
  EXPECT_FALSE(c->pins.lookup("10.0.0.3:7470", 0));
  // MMPI_FORWARDER_KEYS wins over the file for its index.
  set("MMPI_FORWARDER_KEYS", kKey2);
  c = load_again(&why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(zipper::proto::auth::to_hex(*c->pins.lookup("tcp:10.0.0.1:7470", 0)), kKey2);
  ASSERT_EQ(::unsetenv("MMPI_FORWARDER_KEYS"), 0);
  // A file others may write pins nothing: refused.
  ::chmod(path.c_str(), 0666);
  EXPECT_FALSE(load_again(&why));
  EXPECT_NE(why.find("no one else may write"), std::string::npos) << why;
  ::chmod(path.c_str(), 0644);
  {
    std::ofstream f(path);
    f << "10.0.0.1:7470\n";
  }
  EXPECT_FALSE(load_again(&why));
  EXPECT_NE(why.find(path + ":1"), std::string::npos) << why;
  std::remove(path.c_str());
  ::rmdir(dir);
}

}  // namespace

// zipper-run --slurm hands each rank the secret in a memfd (docs/slurm.md):
// read once from offset 0, closed after, refused when others may read it.
TEST_F(ClientConfig, SecretFromAnInheritedMemfd) {
  const std::string hex(64, 'c');
  for (mode_t mode : {0600, 0640}) {
    SCOPED_TRACE(mode);
    int fd = ::memfd_create("zipper-test-secret", 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, (hex + "\n").data(), hex.size() + 1),
              static_cast<ssize_t>(hex.size() + 1));
    ASSERT_EQ(::fchmod(fd, mode), 0);
    set_forwarded();
    ::unsetenv("MMPI_JOB_SECRET");
    set("MMPI_JOB_SECRET_FD", std::to_string(fd));
    if (mode == 0600) {
      Cfg c = accepted();
      ASSERT_TRUE(c.job_secret.has_value());
      for (std::byte b : *c.job_secret) EXPECT_EQ(b, std::byte{0xcc});
    } else {
      EXPECT_NE(rejected().find("0600"), std::string::npos);
    }
    EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "the fd is closed after reading";
    EXPECT_EQ(std::getenv("MMPI_JOB_SECRET_FD"), nullptr);
  }
  set_forwarded();
  ::unsetenv("MMPI_JOB_SECRET");
  set("MMPI_JOB_SECRET_FD", "1000");  // not open
  EXPECT_NE(rejected().find("not open"), std::string::npos);
  set("MMPI_JOB_SECRET_FD", "x");
  EXPECT_NE(rejected().find("MMPI_JOB_SECRET_FD"), std::string::npos);
}

// One-sided communication's settings (client/settings.h): defaults, both
// modes, the interval's bounds, and every malformed value refused by name.
TEST(RmaSettings, DefaultsAndValues) {
  using zipper::client::Environment;
  using zipper::client::rma_settings_from;
  std::string why;
  auto d = rma_settings_from(Environment::of({}), &why);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->progress_thread);
  EXPECT_EQ(d->interval.count(), 1);
  EXPECT_EQ(d->reply_bytes, 4u << 20);
  auto bound = rma_settings_from(Environment::of({{"MMPI_RMA_REPLY_BYTES", "131072"}}), &why);
  ASSERT_TRUE(bound.has_value());
  EXPECT_EQ(bound->reply_bytes, 131072u);
  auto empty = rma_settings_from(
      Environment::of({{"MMPI_RMA_PROGRESS", ""}, {"MMPI_RMA_PROGRESS_INTERVAL_MS", ""}}), &why);
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->progress_thread);
  auto off = rma_settings_from(
      Environment::of({{"MMPI_RMA_PROGRESS", "off"}, {"MMPI_RMA_PROGRESS_INTERVAL_MS", "1000"}}),
      &why);
  ASSERT_TRUE(off.has_value());
  EXPECT_FALSE(off->progress_thread);
  EXPECT_EQ(off->interval.count(), 1000);
  auto thread = rma_settings_from(
      Environment::of({{"MMPI_RMA_PROGRESS", "thread"}, {"MMPI_RMA_PROGRESS_INTERVAL_MS", "7"}}),
      &why);
  ASSERT_TRUE(thread.has_value());
  EXPECT_TRUE(thread->progress_thread);
  EXPECT_EQ(thread->interval.count(), 7);
}

TEST(RmaSettings, BadValuesAreRefusedByName) {
  using zipper::client::Environment;
  using zipper::client::rma_settings_from;
  for (const char* mode : {"on", "Thread", "1", "off "}) {
    std::string why;
    EXPECT_FALSE(rma_settings_from(Environment::of({{"MMPI_RMA_PROGRESS", mode}}), &why)) << mode;
    EXPECT_NE(why.find("MMPI_RMA_PROGRESS"), std::string::npos) << why;
  }
  for (const char* ms : {"0", "1001", "-5", "5ms", "abc", " 5", "99999999999"}) {
    std::string why;
    EXPECT_FALSE(rma_settings_from(Environment::of({{"MMPI_RMA_PROGRESS_INTERVAL_MS", ms}}), &why))
        << ms;
    EXPECT_NE(why.find("MMPI_RMA_PROGRESS_INTERVAL_MS"), std::string::npos) << why;
  }
  for (const char* b : {"131071", "1073741825", "0", "-1", "4M", "4194304 "}) {
    std::string why;
    EXPECT_FALSE(rma_settings_from(Environment::of({{"MMPI_RMA_REPLY_BYTES", b}}), &why)) << b;
    EXPECT_NE(why.find("MMPI_RMA_REPLY_BYTES"), std::string::npos) << why;
  }
}

// The MPI calls' settings (client/settings.h, CallSettings): defaults, every
// accepted value, and every malformed value refused by name.
TEST(CallSettings, DefaultsAndValues) {
  using zipper::client::call_settings_from;
  using zipper::client::Environment;
  std::string why;
  auto d = call_settings_from(Environment::of({}), &why);
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->scan_runs);
  EXPECT_FALSE(d->dist_graph_reorder);
  EXPECT_FALSE(d->debug_log);
  EXPECT_EQ(d->file_lock_timeout.count(), 300);
  auto empty = call_settings_from(Environment::of({{"MMPI_SCAN_ALGORITHM", ""},
                                                   {"MMPI_DIST_GRAPH_REORDER", ""},
                                                   {"MMPI_LOG_LEVEL", ""},
                                                   {"MMPI_FILE_LOCK_TIMEOUT", ""}}),
                                  &why);
  ASSERT_TRUE(empty.has_value());
  EXPECT_FALSE(empty->scan_runs);
  EXPECT_EQ(empty->file_lock_timeout.count(), 300);
  auto on = call_settings_from(Environment::of({{"MMPI_SCAN_ALGORITHM", "runs"},
                                                {"MMPI_DIST_GRAPH_REORDER", "1"},
                                                {"MMPI_LOG_LEVEL", "debug"},
                                                {"MMPI_FILE_LOCK_TIMEOUT", "86400"}}),
                               &why);
  ASSERT_TRUE(on.has_value()) << why;
  EXPECT_TRUE(on->scan_runs);
  EXPECT_TRUE(on->dist_graph_reorder);
  EXPECT_TRUE(on->debug_log);
  EXPECT_EQ(on->file_lock_timeout.count(), 86400);
  auto off = call_settings_from(Environment::of({{"MMPI_SCAN_ALGORITHM", "carry"},
                                                 {"MMPI_DIST_GRAPH_REORDER", "0"},
                                                 {"MMPI_LOG_LEVEL", "warn"},
                                                 {"MMPI_FILE_LOCK_TIMEOUT", "1"}}),
                                &why);
  ASSERT_TRUE(off.has_value()) << why;
  EXPECT_FALSE(off->scan_runs);
  EXPECT_FALSE(off->dist_graph_reorder);
  EXPECT_FALSE(off->debug_log);
  EXPECT_EQ(off->file_lock_timeout.count(), 1);
  for (const char* level : {"trace", "debug"}) {
    auto l = call_settings_from(Environment::of({{"MMPI_LOG_LEVEL", level}}), &why);
    ASSERT_TRUE(l.has_value()) << level;
    EXPECT_TRUE(l->debug_log) << level;
  }
  for (const char* level : {"info", "error", "critical", "off"}) {
    auto l = call_settings_from(Environment::of({{"MMPI_LOG_LEVEL", level}}), &why);
    ASSERT_TRUE(l.has_value()) << level;
    EXPECT_FALSE(l->debug_log) << level;
  }
}

TEST(CallSettings, BadValuesAreRefusedByName) {
  using zipper::client::call_settings_from;
  using zipper::client::Environment;
  const std::pair<const char*, std::vector<const char*>> bad[] = {
      {"MMPI_SCAN_ALGORITHM", {"bogus", "Runs", "carry ", "1"}},
      {"MMPI_DIST_GRAPH_REORDER", {"yes", "true", "2", " 1"}},
      {"MMPI_LOG_LEVEL", {"DEBUG", "verbose", "5"}},
      {"MMPI_FILE_LOCK_TIMEOUT", {"0", "-1", "86401", "10s", "abc", " 5", "99999999999"}},
  };
  for (const auto& [name, values] : bad) {
    for (const char* v : values) {
      std::string why;
      EXPECT_FALSE(call_settings_from(Environment::of({{name, v}}), &why)) << name << "=" << v;
      EXPECT_NE(why.find(name), std::string::npos) << why;
      EXPECT_NE(why.find(v), std::string::npos) << "the line shows the value: " << why;
    }
  }
}

// Every variable CallSettings reads is a row of the one table, so that
// MMPI_Init's Environment::capture keeps it from the process environment.
TEST(CallSettings, CaptureKeepsEveryVariable) {
  using zipper::client::Environment;
  const char* names[] = {"MMPI_SCAN_ALGORITHM", "MMPI_DIST_GRAPH_REORDER", "MMPI_LOG_LEVEL",
                         "MMPI_FILE_LOCK_TIMEOUT"};
  for (const char* name : names) ::setenv(name, "7", 1);
  const Environment env = Environment::capture();
  for (const char* name : names) {
    ::unsetenv(name);
    ASSERT_NE(env.get(name), nullptr) << name;
    EXPECT_STREQ(env.get(name), "7") << name;
  }
}

// The verbs link's rows (proto/verbs/config.h) in libmmpi's table: read as
// ZIPPER_VERBS_* once at MMPI_Init into ClientConfig::verbs, which the
// channel hands to proto::connect. Defaults when unset or empty.
TEST(VerbsSettings, DefaultsAndValues) {
  using zipper::client::config_from;
  using zipper::client::Environment;
  std::string why;
  auto d = config_from(Environment::of({}), &why);
  ASSERT_TRUE(d.has_value()) << why;
  const zipper::proto::verbs::Config defaults;
  EXPECT_EQ(d->verbs.recv_buffers, defaults.recv_buffers);
  EXPECT_EQ(d->verbs.srq_threshold, defaults.srq_threshold);
  EXPECT_EQ(d->verbs.write_min, defaults.write_min);
  EXPECT_FALSE(d->verbs.busy_poll);
  auto empty = config_from(
      Environment::of({{"ZIPPER_VERBS_RECV_BUFFERS", ""}, {"ZIPPER_VERBS_POLL", ""}}), &why);
  ASSERT_TRUE(empty.has_value()) << why;
  EXPECT_EQ(empty->verbs.recv_buffers, defaults.recv_buffers);
  auto set = config_from(Environment::of({{"ZIPPER_VERBS_RECV_BUFFERS", "64"},
                                          {"ZIPPER_VERBS_SRQ_THRESHOLD", "0"},
                                          {"ZIPPER_VERBS_WRITE_MIN", "0"},
                                          {"ZIPPER_VERBS_POLL", "busy"},
                                          {"ZIPPER_VERBS_SOURCE", "10.1.0.1"},
                                          {"ZIPPER_VERBS_RESOLVE_MS", "500"}}),
                         &why);
  ASSERT_TRUE(set.has_value()) << why;
  EXPECT_EQ(set->verbs.recv_buffers, 64u);
  EXPECT_EQ(set->verbs.srq_threshold, 0u);
  EXPECT_EQ(set->verbs.write_min, 0u);
  EXPECT_TRUE(set->verbs.busy_poll);
  EXPECT_EQ(set->verbs.source, "10.1.0.1");
  EXPECT_EQ(set->verbs.resolve_timeout_ms, 500);
}

// A bad value stops MMPI_Init with one line naming the variable and the value.
TEST(VerbsSettings, BadValuesAreRefusedByName) {
  using zipper::client::config_from;
  using zipper::client::Environment;
  const std::pair<const char*, std::vector<const char*>> bad[] = {
      {"ZIPPER_VERBS_RECV_BUFFERS", {"2", "4097", "lots", "-1", " 8"}},
      {"ZIPPER_VERBS_BUFFER_SIZE", {"64", "65536x"}},
      {"ZIPPER_VERBS_ACK_TIMEOUT", {"0", "32"}},
      {"ZIPPER_VERBS_SRQ_CREDITS", {"3"}},
      {"ZIPPER_VERBS_POLL", {"sometimes", "Busy"}},
      {"ZIPPER_VERBS_SOURCE", {"rxeA", "10.1.0"}},
      {"ZIPPER_VERBS_RESOLVE_MS", {"9"}},
  };
  for (const auto& [name, values] : bad) {
    for (const char* v : values) {
      std::string why;
      EXPECT_FALSE(config_from(Environment::of({{name, v}}), &why)) << name << "=" << v;
      EXPECT_EQ(why.rfind(std::string(name) + ": ", 0), 0u) << why;
      EXPECT_NE(why.find(std::string("'") + v + "'"), std::string::npos) << why;
    }
  }
  std::string why;
  EXPECT_FALSE(config_from(Environment::of({{"ZIPPER_VERBS_RECV_BUFFERS", "2"}}), &why));
  EXPECT_EQ(why, "ZIPPER_VERBS_RECV_BUFFERS: expected an integer from 4 to 4096, got '2'");
}

// Every ZIPPER_VERBS_* variable is a row of the one table, so that
// MMPI_Init's Environment::capture keeps it; others of the prefix are not.
TEST(VerbsSettings, CaptureKeepsEveryVariable) {
  using zipper::client::Environment;
  std::vector<std::string> names;
  for (const auto& row : zipper::proto::verbs::settings()) names.push_back(row.env);
  ASSERT_EQ(names.size(), 15u);
  std::size_t in_table = 0;
  for (const auto& s : zipper::client::settings_table())
    if (std::string_view(s.env).starts_with("ZIPPER_VERBS_")) ++in_table;
  EXPECT_EQ(in_table, names.size());
  for (const auto& n : names) ::setenv(n.c_str(), "7", 1);
  ::setenv("ZIPPER_VERBS_NO_SUCH", "7", 1);
  const Environment env = Environment::capture();
  ::unsetenv("ZIPPER_VERBS_NO_SUCH");
  for (const auto& n : names) {
    ::unsetenv(n.c_str());
    ASSERT_NE(env.get(n), nullptr) << n;
    EXPECT_STREQ(env.get(n), "7") << n;
  }
  EXPECT_EQ(env.get("ZIPPER_VERBS_NO_SUCH"), nullptr);
}
