// zipperd's control socket and metrics against a Forwarder on loopback:
// frame clients of a 1+1 job send known payloads, and zipperctl's request
// (over a real Unix socket), the snapshot and the Prometheus text must
// report exactly those bytes and frames; drain refuses a new job.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "forwarder/control_commands.h"
#include "forwarder/forwarder.h"
#include "forwarder/job_registry.h"
#include "forwarder/metrics_http.h"
#include "forwarder/prometheus_text.h"
#include "forwarder/request_server.h"
#include "test_util.h"
#include "zipperctl/control_client.h"

namespace {

using namespace zipper;
using namespace zipper::test;
using proto::FrameType;
namespace fw = zipper::forwarder;

class Control : public ::testing::Test {
 protected:
  void SetUp() override {
    spdlog::set_level(spdlog::level::off);
    fw::Config c;
    std::string why;
    const auto ep = proto::parse_endpoint("tcp:127.0.0.1:0", &why);
    c.listen = {{"A", *ep}, {"B", *ep}};
    c.max_frame = 64u << 10;
    c.conn_credits = 4;  // frames
    c.max_memory = 8u << 20;
    fwd_ = std::make_unique<fw::Forwarder>(c);
    fwd_->start();
    char dir[] = "/tmp/zipper-ctl-XXXXXX";
    dir_ = ::mkdtemp(dir);
    sock_ = dir_ + "/ctl.sock";
    commands_ =
        std::make_unique<fw::ControlCommands>(*fwd_, [this](const std::string& l) { level_ = l; });
    server_ = std::make_unique<fw::RequestServer>(
        fw::listen_unix(sock_, 0660), "\n",
        [this](const std::string& r) { return commands_->handle(r); });
  }
  void TearDown() override {
    server_.reset();
    clients_.clear();
    fwd_->stop();
    ::unlink(sock_.c_str());
    ::rmdir(dir_.c_str());
  }
  FrameClient& join(int side, std::uint64_t job, std::uint32_t rank) {
    clients_.push_back(FrameClient::connect(fwd_->addresses().at(static_cast<std::size_t>(side))));
    send_hello(*clients_.back(), job, rank, 1, 1);
    return *clients_.back();
  }
  std::vector<FrameClient*> all() {
    std::vector<FrameClient*> v;
    for (auto& c : clients_) v.push_back(c.get());
    return v;
  }
  nlohmann::json ask(const nlohmann::json& req) { return ctl::request(sock_, req); }

  std::unique_ptr<fw::Forwarder> fwd_;
  std::unique_ptr<fw::ControlCommands> commands_;
  std::unique_ptr<fw::RequestServer> server_;
  std::vector<std::unique_ptr<FrameClient>> clients_;
  std::string dir_, sock_, level_;
};

TEST_F(Control, CountersMatchWhatTheJobSent) {
  FrameClient& a = join(0, 7, 0);
  FrameClient& b = join(1, 7, 1);
  ASSERT_TRUE(pump_until(all(), [&] { return a.inbox().size() >= 2 && b.inbox().size() >= 2; }));
  a.inbox().clear();
  b.inbox().clear();
  // A -> B: 20 messages of 1000..1019 bytes; B -> A: 3 of 64 KiB (the largest frame).
  std::uint64_t up = 0, down = 0;
  for (std::uint32_t i = 0; i < 20; ++i) {
    send_eager(a, 7, 0, 1, 1, i, pattern(i, 1000 + i));
    up += 1000 + i;
  }
  for (std::uint32_t i = 0; i < 3; ++i) {
    send_eager(b, 7, 1, 0, 2, i, pattern(100 + i, 64u << 10));
    down += 64u << 10;
  }
  ASSERT_TRUE(pump_until(all(), [&] { return b.inbox().size() == 20 && a.inbox().size() == 3; }));

  const auto ans = ask({{"cmd", "jobs"}});
  ASSERT_EQ(ans.at("jobs").size(), 1u);
  const auto& j = ans.at("jobs")[0];
  // One label everywhere (Job::job_label), the id as a string (u64 loses precision in jq).
  const std::string label = fw::Job::job_label(7, proto::auth::job_fingerprint(proto::auth::job_key(
                                                      test_secret(7), fwd_->host_public_key())));
  EXPECT_EQ(j.at("job"), label);
  EXPECT_EQ(j.at("id"), "7");
  EXPECT_EQ(j.at("state"), "running");
  EXPECT_EQ(j.at("ranks_connected"), 2);
  EXPECT_EQ(j.at("low_to_high").at("bytes"), up);
  EXPECT_EQ(j.at("low_to_high").at("frames"), 20);
  EXPECT_EQ(j.at("high_to_low").at("bytes"), down);
  EXPECT_EQ(j.at("high_to_low").at("frames"), 3);

  const auto links = ask({{"cmd", "links"}}).at("links");
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].at("side"), "A");
  EXPECT_EQ(links[0].at("rank"), 0);
  EXPECT_EQ(links[0].at("received").at("bytes"), up);
  EXPECT_EQ(links[0].at("sent").at("bytes"), down);
  EXPECT_EQ(links[1].at("received").at("frames"), 3);
  EXPECT_EQ(links[1].at("errors"), 0);
  EXPECT_EQ(links[0].at("job"), label);
  EXPECT_EQ(links[0].at("credits_granted_frames"), 4);  // --conn-credits, frames
  EXPECT_FALSE(links[0].contains("credits_granted_bytes"));

  const auto st = ask({{"cmd", "status"}}).at("status");
  EXPECT_EQ(st.at("state"), "running");
  EXPECT_EQ(st.at("relayed").at("bytes"), up + down);
  EXPECT_EQ(st.at("sides")[0].at("received").at("bytes"), up);
  EXPECT_EQ(st.at("sides")[1].at("received").at("bytes"), down);
  EXPECT_EQ(st.at("sides")[0].at("sent").at("bytes"), down);

  const std::string text = ask({{"cmd", "metrics"}}).at("text");
  EXPECT_NE(text.find("zipper_job_bytes_total{job=\"" + label + "\",direction=\"low_to_high\"} " +
                      std::to_string(up) + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("zipper_job_frames_total{job=\"" + label + "\",direction=\"high_to_low\"} 3\n"),
      std::string::npos);
  EXPECT_EQ(text.find("job=\"7\""), std::string::npos) << "a raw job id in /metrics";
  EXPECT_NE(text.find("zipper_side_received_bytes_total{side=\"B\"} " + std::to_string(down)),
            std::string::npos);
  EXPECT_NE(text.find("zipper_build_info{version=\""), std::string::npos);

  // The job's counters outlive it.
  clients_.clear();
  for (int i = 0; i < 100 && ask({{"cmd", "jobs"}}).at("jobs")[0].at("state") != "finished"; ++i)
    ::usleep(20000);
  const auto done = ask({{"cmd", "jobs"}}).at("jobs")[0];
  EXPECT_EQ(done.at("state"), "finished");
  EXPECT_EQ(done.at("low_to_high").at("bytes"), up);
}

TEST_F(Control, HostKeyIsThePublicKeyRanksPin) {
  const std::string k = ask({{"cmd", "host-key"}}).at("host_key");
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k, proto::auth::to_hex(fwd_->host_public_key()));
}

TEST_F(Control, DrainRefusesNewJobsOnly) {
  FrameClient& a = join(0, 8, 0);
  ASSERT_TRUE(pump_until(all(), [&] { return !a.inbox().empty(); }));  // HELLO_ACK
  EXPECT_EQ(ask({{"cmd", "drain"}, {"on", true}}).at("draining"), true);
  EXPECT_EQ(ask({{"cmd", "status"}}).at("status").at("state"), "draining");
  FrameClient& b = join(1, 8, 1);   // rank of a running job: admitted
  FrameClient& c = join(0, 9, 0);   // new job: refused
  FrameClient& c1 = join(1, 9, 1);  // its other rank: refused, the job counted once
  ASSERT_TRUE(pump_until(all(), [&] { return c.closed() && c1.closed() && !b.inbox().empty(); }));
  for (FrameClient* r : {&c, &c1}) {
    auto err = r->pop();
    ASSERT_TRUE(err.has_value());
    EXPECT_EQ(err->hdr.type, FrameType::kError);
    EXPECT_NE(err->text().find("draining"), std::string::npos);
  }
  EXPECT_EQ(b.pop()->hdr.type, FrameType::kHelloAck);
  // A new secret under the running job's id is a new job: refused too.
  clients_.push_back(FrameClient::connect(fwd_->addresses().at(1)));
  FrameClient& x = *clients_.back();
  x.set_auto_auth(false);
  send_hello(x, 8, 1, 1, 1);
  ASSERT_TRUE(pump_until(all(), [&] { return !x.inbox().empty(); }));
  proto::auth::ChallengePayload ch;
  ASSERT_TRUE(proto::auth::decode_challenge(x.pop()->payload, &ch));
  x.send(header(FrameType::kAuth, 8, 1, 0),
         auth_payload(test_secret(999), ch, two_site_hello(8, 1, 1, 1), x.link()));
  ASSERT_TRUE(pump_until(all(), [&] { return x.closed(); }));
  auto err = x.pop();
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->text().find("draining"), std::string::npos) << err->text();
  const auto st = ask({{"cmd", "status"}}).at("status");
  EXPECT_EQ(st.at("jobs_refused_draining"), 2);  // jobs, not ranks
  EXPECT_EQ(st.at("ranks_refused"), 3);
  EXPECT_EQ(st.at("protocol_errors"), 0);  // a drain is no client's fault
  EXPECT_EQ(st.at("jobs_active"), 1);
  const std::string text = ask({{"cmd", "metrics"}}).at("text");
  EXPECT_NE(text.find("zipper_protocol_errors_total 0\n"), std::string::npos);
  EXPECT_NE(text.find("zipper_jobs_refused_draining_total 2\n"), std::string::npos);
  ask({{"cmd", "drain"}, {"on", false}});
  EXPECT_EQ(ask({{"cmd", "status"}}).at("status").at("state"), "running");
}

TEST_F(Control, SetLogLevelAndErrors) {
  ask({{"cmd", "set"}, {"key", "log-level"}, {"value", "debug"}});
  EXPECT_EQ(level_, "debug");
  EXPECT_THROW(ask({{"cmd", "set"}, {"key", "log-level"}, {"value", "loud"}}), ctl::ControlError);
  EXPECT_THROW(ask({{"cmd", "nonsense"}}), ctl::ControlError);
  EXPECT_THROW(ctl::request(dir_ + "/missing.sock", {{"cmd", "status"}}), ctl::ControlError);
  // A second server on a live socket is refused.
  EXPECT_THROW(fw::listen_unix(sock_, 0660), std::runtime_error);
  // A file or symlink planted at the path is neither removed nor used.
  const std::string planted = dir_ + "/planted.sock";
  { std::ofstream(planted) << "not a socket\n"; }
  EXPECT_THROW(fw::listen_unix(planted, 0660), std::runtime_error);
  std::ifstream kept(planted);
  std::string line;
  std::getline(kept, line);
  EXPECT_EQ(line, "not a socket");
  std::remove(planted.c_str());
}

// One HTTP request on a new connection to 127.0.0.1:port; the whole answer.
std::string http(std::uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

TEST(MetricsHttp, AnswersGetMetricsOnly) {
  auto fd = fw::listen_tcp("127.0.0.1:0");
  const std::string addr = fw::bound_address(fd.get());
  const auto port = static_cast<std::uint16_t>(std::stoi(addr.substr(addr.rfind(':') + 1)));
  fw::MetricsServer server(std::move(fd), [] { return std::string("zipper_up 1\n"); });
  const std::string ok =
      http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("text/plain; version=0.0.4"), std::string::npos) << ok;
  EXPECT_NE(ok.find("Content-Length: 12\r\n"), std::string::npos) << ok;
  EXPECT_EQ(ok.substr(ok.size() - 12), "zipper_up 1\n");
  EXPECT_NE(http(port, "GET / HTTP/1.0\r\n\r\n").find(" 404 "), std::string::npos);
  EXPECT_NE(http(port, "POST /metrics HTTP/1.0\r\n\r\n").find(" 405 "), std::string::npos);
}

// Idle connections (opened, never a byte sent) hold no scrape back: the
// server polls them on its worker threads and closes them after its timeout.
TEST(MetricsHttp, IdleConnectionsDoNotDelayAScrape) {
  auto fd = fw::listen_tcp("127.0.0.1:0");
  const std::string addr = fw::bound_address(fd.get());
  const auto port = static_cast<std::uint16_t>(std::stoi(addr.substr(addr.rfind(':') + 1)));
  fw::MetricsServer server(std::move(fd), [] { return std::string("zipper_up 1\n"); });
  std::vector<int> idle;
  for (int i = 0; i < 15; ++i) {
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    ASSERT_EQ(::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    idle.push_back(s);
  }
  const auto t0 = Clock::now();
  const std::string ok = http(port, "GET /metrics HTTP/1.0\r\n\r\n");
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_NE(ok.find("zipper_up 1"), std::string::npos) << ok;
  EXPECT_LT(took, 1.5) << "a scrape waited behind idle connections";
  for (int s : idle) ::close(s);
}

}  // namespace
