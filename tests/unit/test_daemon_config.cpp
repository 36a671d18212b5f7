// zipperd's settings (forwarder/daemon_config.h): file keys, command-line
// override, refusals naming file, line and key, and what SIGHUP may apply.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "forwarder/daemon_config.h"
#include "test_util.h"

namespace {

namespace fw = zipper::forwarder;

class TomlFile {
 public:
  explicit TomlFile(const std::string& text) {
    char tmpl[] = "/tmp/zipperd-test-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    ::close(fd);
    path_ = tmpl;
    std::ofstream(path_) << text;
  }
  ~TomlFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string error_of(const std::string& file, const fw::CommandLine& cli = {}) {
  try {
    fw::load(file, cli);
  } catch (const fw::ConfigError& e) {
    return e.what();
  }
  return "";
}

const char* kGood = R"([listen]
A = "127.0.0.1:7470"
B = "verbs:10.202.0.254:7471"

[flow]
conn_credits = 128
max_memory = 536870912
max_frame = "512KiB"
hello_timeout = 3

[log]
level = "debug"

[control]
socket = "/run/zipper/zipperd.sock"

[metrics]
listen = "0.0.0.0:9479"
)";

TEST(DaemonConfig, FileSetsEveryKind) {
  TomlFile f(kGood);
  const fw::DaemonConfig c = fw::load(f.path(), {});
  ASSERT_EQ(c.forwarder.listen.size(), 2u);
  EXPECT_EQ(c.forwarder.listen[0].name, "A");
  EXPECT_EQ(c.forwarder.listen[0].endpoint.to_string(), "tcp:127.0.0.1:7470");
  EXPECT_EQ(c.forwarder.listen[1].endpoint.to_string(), "verbs:10.202.0.254:7471");
  EXPECT_EQ(c.forwarder.conn_credits, 128u);
  EXPECT_EQ(c.forwarder.max_memory, 512u << 20);
  EXPECT_EQ(c.forwarder.max_frame, 512u << 10);
  EXPECT_EQ(c.forwarder.hello_timeout_ms, 3000);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.control_socket, "/run/zipper/zipperd.sock");
  EXPECT_EQ(c.metrics_listen, "0.0.0.0:9479");
}

TEST(DaemonConfig, CommandLineOverridesFile) {
  TomlFile f(kGood);
  const fw::DaemonConfig c = fw::load(
      f.path(),
      {{"--listen", {"X=127.0.0.1:1"}}, {"--conn-credits", {"32"}}, {"--log-level", {"warn"}}});
  ASSERT_EQ(c.forwarder.listen.size(), 1u);  // a list from the command line replaces the file's
  EXPECT_EQ(c.forwarder.listen[0].name, "X");
  EXPECT_EQ(c.forwarder.conn_credits, 32u);
  EXPECT_EQ(c.log_level, "warn");
  EXPECT_EQ(c.forwarder.max_memory, 512u << 20);  // untouched keys keep the file's value
}

// A bridge of three legs (the star): from flags in their order, from a
// [listen] table in the order of the names, from an array in its order.
TEST(DaemonConfig, ListenersAreLegsInOrder) {
  const auto names = [](const fw::DaemonConfig& c) {
    std::string out;
    for (const auto& l : c.forwarder.listen) out += l.name + "=" + l.endpoint.to_string() + " ";
    return out;
  };
  EXPECT_EQ(
      names(fw::load("", {{"--listen", {"C=127.0.0.1:3", "A=127.0.0.1:1", "B=127.0.0.1:2"}}})),
      "C=tcp:127.0.0.1:3 A=tcp:127.0.0.1:1 B=tcp:127.0.0.1:2 ");
  TomlFile table("[listen]\nC = \"127.0.0.1:3\"\nA = \"127.0.0.1:1\"\nB = \"127.0.0.1:2\"\n");
  EXPECT_EQ(names(fw::load(table.path(), {})),
            "A=tcp:127.0.0.1:1 B=tcp:127.0.0.1:2 C=tcp:127.0.0.1:3 ");
  TomlFile array(
      "listen = [\"gpu=127.0.0.1:2\", \"cpu=127.0.0.1:1\", \"store=verbs:10.0.0.1:7471\"]\n");
  EXPECT_EQ(names(fw::load(array.path(), {})),
            "gpu=tcp:127.0.0.1:2 cpu=tcp:127.0.0.1:1 store=verbs:10.0.0.1:7471 ");
  TomlFile bad("listen = [\"A=127.0.0.1:1\", 7]\n");
  EXPECT_NE(error_of(bad.path()).find("array of \"NAME=HOST:PORT\""), std::string::npos)
      << error_of(bad.path());
  EXPECT_EQ(error_of("", {{"--listen", {"A=127.0.0.1:1", "A=127.0.0.1:2"}}}),
            "--listen: listener A is given twice");
}

TEST(DaemonConfig, EveryCommandLineFlagHasAFileKey) {
  for (const auto& s : fw::settings()) {
    EXPECT_EQ(s.flag.rfind("--", 0), 0u) << s.key;
    EXPECT_FALSE(s.key.empty());
  }
}

TEST(DaemonConfig, UnknownKeyNamesFileLineAndKey) {
  TomlFile f("[listen]\nA = \"127.0.0.1:1\"\n\n[flow]\nconn_credit = 5\n");
  EXPECT_EQ(error_of(f.path()),
            f.path() +
                ":5: unknown key 'flow.conn_credit' (zipperd --help lists the settings; the "
                "file's keys are in /usr/share/doc/zipper/examples/zipperd.toml)");
  TomlFile g("colour = \"blue\"\n");
  EXPECT_NE(error_of(g.path()).find(g.path() + ":1: unknown key 'colour'"), std::string::npos);
  TomlFile h("[nosuchsection]\nx = 1\n");
  EXPECT_NE(error_of(h.path()).find(":1: unknown key 'nosuchsection'"), std::string::npos);
}

TEST(DaemonConfig, BadValuesNameFileLineAndKey) {
  const std::string head = "[listen]\nA = \"127.0.0.1:1\"\n[flow]\n";
  TomlFile size(head + "max_frame = \"huge\"\n");
  EXPECT_EQ(error_of(size.path()), size.path() +
                                       ":4: key 'flow.max_frame': expected a size in bytes (e.g. "
                                       "8388608 or 8MiB), got 'huge'");
  TomlFile range(head + "max_frame = 12\n");
  EXPECT_NE(error_of(range.path()).find(":4: key 'flow.max_frame': must be between 1024 and"),
            std::string::npos);
  TomlFile type(head + "hello_timeout = \"soon\"\n");
  EXPECT_EQ(error_of(type.path()),
            type.path() + ":4: key 'flow.hello_timeout': expected an integer");
  TomlFile level("[listen]\nA = \"127.0.0.1:1\"\n[log]\nlevel = \"loud\"\n");
  EXPECT_EQ(error_of(level.path()),
            level.path() +
                ":4: key 'log.level': expected one of trace, debug, info, warn, error, got 'loud'");
  TomlFile ep("[listen]\nA = \"nowhere\"\n");
  EXPECT_NE(error_of(ep.path()).find(":2: key 'listen.A':"), std::string::npos)
      << error_of(ep.path());
  TomlFile syntax("[flow\nmax_frame = 1\n");
  EXPECT_NE(error_of(syntax.path()).find(syntax.path() + ":1:"), std::string::npos);
}

TEST(DaemonConfig, CommandLineErrorsNameTheFlag) {
  EXPECT_EQ(error_of("", {{"--listen", {"A=127.0.0.1:1"}}, {"--max-memory", {"lots"}}}),
            "--max-memory: expected a size in bytes (e.g. 8388608 or 8MiB), got 'lots'");
  EXPECT_NE(error_of("", {}).find("no listener"), std::string::npos);
}

TEST(DaemonConfig, ReloadSplitsApplicableFromRestart) {
  TomlFile f(kGood);
  const fw::DaemonConfig a = fw::load(f.path(), {});
  fw::DaemonConfig b = a;
  b.log_level = "error";
  b.forwarder.max_frame = 2u << 20;
  b.metrics_listen = "";
  const fw::ConfigDiff d = fw::diff(a, b);
  EXPECT_EQ(d.applicable, std::vector<std::string>{"log.level"});
  EXPECT_EQ(d.needs_restart, (std::vector<std::string>{"flow.max_frame", "metrics.listen"}));
  EXPECT_TRUE(fw::diff(a, a).applicable.empty());
  EXPECT_TRUE(fw::diff(a, a).needs_restart.empty());
}

}  // namespace

namespace {

const char* kListenOnly = "[listen]\nA = \"verbs:10.202.0.254:7471\"\n";

}  // namespace

// The verbs link's rows (proto/verbs/config.h) in zipperd's table: [verbs]
// keys and --verbs-* flags for what accepted links use; the connect-only
// rows (poll, source, resolve_ms) are libmmpi's alone.
TEST(DaemonConfig, VerbsKeysFromFileAndFlags) {
  const fw::DaemonConfig d = fw::load("", {{"--listen", {"A=127.0.0.1:1"}}});
  const zipper::proto::verbs::Config defaults;
  EXPECT_EQ(d.forwarder.verbs.recv_buffers, defaults.recv_buffers);
  EXPECT_EQ(d.forwarder.verbs.srq_threshold, defaults.srq_threshold);
  EXPECT_EQ(fw::value_of(d, "verbs.buffer_size"), "65536");
  TomlFile f(std::string(kListenOnly) +
             "[verbs]\nrecv_buffers = 64\nsrq_threshold = 0\ninline = 0\nkeepalive_ms = 250\n");
  const fw::DaemonConfig c = fw::load(f.path(), {{"--verbs-write-min", {"0"}}});
  EXPECT_EQ(c.forwarder.verbs.recv_buffers, 64u);
  EXPECT_EQ(c.forwarder.verbs.srq_threshold, 0u);
  EXPECT_EQ(c.forwarder.verbs.inline_max, 0u);
  EXPECT_EQ(c.forwarder.verbs.keepalive_ms, 250u);
  EXPECT_EQ(c.forwarder.verbs.write_min, 0u);
  EXPECT_EQ(c.forwarder.verbs.buffer_size, defaults.buffer_size);
  // Links are made with the listener's settings: a change waits for a restart.
  const fw::DaemonConfig same = fw::load(f.path(), {});
  const auto dd = fw::diff(same, c);
  EXPECT_TRUE(dd.applicable.empty());
  EXPECT_EQ(dd.needs_restart, std::vector<std::string>{"verbs.write_min"});
  std::size_t rows = 0;
  for (const auto& s : fw::settings()) {
    if (s.key.rfind("verbs.", 0) != 0) continue;
    ++rows;
    std::string flag = "--verbs-" + s.key.substr(6);
    std::replace(flag.begin(), flag.end(), '_', '-');
    EXPECT_EQ(s.flag, flag);
  }
  EXPECT_EQ(rows, 12u);
}

TEST(DaemonConfig, VerbsBadValuesNameFileLineAndKey) {
  const std::string head = std::string(kListenOnly) + "[verbs]\n";
  TomlFile low(head + "recv_buffers = 2\n");
  EXPECT_EQ(
      error_of(low.path()),
      low.path() + ":4: key 'verbs.recv_buffers': expected an integer from 4 to 4096, got '2'");
  TomlFile negative(head + "srq_credits = -4\n");
  EXPECT_EQ(error_of(negative.path()),
            negative.path() +
                ":4: key 'verbs.srq_credits': expected an integer from 4 to 4096, got '-4'");
  TomlFile text(head + "buffer_size = \"64KiB\"\n");
  EXPECT_EQ(error_of(text.path()),
            text.path() + ":4: key 'verbs.buffer_size': expected an integer");
  TomlFile client_only(head + "poll = \"busy\"\n");
  EXPECT_NE(error_of(client_only.path()).find(":4: unknown key 'verbs.poll'"), std::string::npos);
  EXPECT_EQ(error_of("", {{"--listen", {"A=127.0.0.1:1"}}, {"--verbs-ack-timeout", {"32"}}}),
            "--verbs-ack-timeout: expected an integer from 1 to 31, got '32'");
}

// zipperd reads no ZIPPER_VERBS_* variable: neither a valid one nor one that
// libmmpi would refuse changes what it loads; only its file and flags do.
TEST(DaemonConfig, VerbsIgnoresTheEnvironment) {
  zipper::test::EnvGuard env{"ZIPPER_VERBS_RECV_BUFFERS", "ZIPPER_VERBS_SRQ_THRESHOLD",
                             "ZIPPER_VERBS_POLL"};
  ASSERT_EQ(::setenv("ZIPPER_VERBS_RECV_BUFFERS", "2", 1), 0);  // libmmpi refuses it
  ASSERT_EQ(::setenv("ZIPPER_VERBS_SRQ_THRESHOLD", "0", 1), 0);
  ASSERT_EQ(::setenv("ZIPPER_VERBS_POLL", "busy", 1), 0);
  TomlFile f(std::string(kListenOnly) + "[verbs]\nsrq_threshold = 5\n");
  const fw::DaemonConfig c = fw::load(f.path(), {});
  const zipper::proto::verbs::Config defaults;
  EXPECT_EQ(c.forwarder.verbs.recv_buffers, defaults.recv_buffers);
  EXPECT_EQ(c.forwarder.verbs.srq_threshold, 5u);
  EXPECT_FALSE(c.forwarder.verbs.busy_poll);
}
