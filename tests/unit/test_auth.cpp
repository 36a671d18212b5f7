// The admission exchange (proto/auth.h) and zipperd's host key file
// (proto/host_key.h), without a network.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "proto/auth.h"
#include "proto/host_key.h"

namespace {

namespace auth = zipper::proto::auth;

auth::Secret secret_of(int seed) {
  auth::Secret s{};
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = std::byte(seed * 7 + i);
  return s;
}

TEST(Auth, ZipperdWithTheHostKeyAdmitsAndConfirms) {
  const auth::HostKey host;
  const zipper::proto::ConnectHello who{42, 1, 0, {2, 3}};
  const auth::ChallengePayload ch{auth::random_nonce(), host.public_key()};
  const auto p = auth::prove(secret_of(1), ch, who, "10.0.0.5:40000", "10.0.0.1:7470");
  // What zipperd does with a job it does not know: open, hash, check.
  auto opened = host.open(p.auth.sealed_key);
  ASSERT_TRUE(opened);
  EXPECT_EQ(auth::job_fingerprint(*opened), p.auth.fingerprint);
  EXPECT_TRUE(auth::check_tag(*opened, ch, p.auth, who));
  EXPECT_TRUE(auth::check_confirm(p.job_key, p.auth.tag, auth::confirm_tag(*opened, p.auth.tag)));
  // The wire never carries the secret.
  const auto bytes = auth::encode_auth(p.auth);
  const auto s = secret_of(1);
  EXPECT_EQ(std::search(bytes.begin(), bytes.end(), s.begin(), s.end()), bytes.end());
}

TEST(Auth, WhatASquatterLearnsAdmitsNobodyAtTheRealZipperd) {
  const auth::HostKey real, squatter;
  const zipper::proto::ConnectHello who{42, 0, 0, {1, 1}};
  const auth::ChallengePayload to_squatter{auth::random_nonce(), squatter.public_key()};
  const auto p = auth::prove(secret_of(2), to_squatter, who, "a:1", "b:2");
  auto learned = squatter.open(p.auth.sealed_key);  // the squatter opens its own box
  ASSERT_TRUE(learned);
  EXPECT_FALSE(real.open(p.auth.sealed_key));
  const auto real_key = auth::job_key(secret_of(2), real.public_key());
  EXPECT_NE(*learned, real_key);
  EXPECT_NE(auth::job_fingerprint(*learned), auth::job_fingerprint(real_key));
  // Relaying the AUTH to the real zipperd: its challenge differs (nonce and
  // key), so the tag fails under the real job key and under the learned one.
  const auth::ChallengePayload real_ch{auth::random_nonce(), real.public_key()};
  EXPECT_FALSE(auth::check_tag(real_key, real_ch, p.auth, who));
  EXPECT_FALSE(auth::check_tag(*learned, real_ch, p.auth, who));
  // The squatter cannot confirm the real zipperd's key to a rank either.
  const auth::ChallengePayload replayed{auth::random_nonce(), real.public_key()};
  const auto q = auth::prove(secret_of(2), replayed, who, "a:1", "b:2");
  EXPECT_FALSE(auth::check_confirm(q.job_key, q.auth.tag, auth::confirm_tag(*learned, q.auth.tag)));
}

// The tag covers the hello's site table: a proof for one layout, site or
// rank admits none other.
TEST(Auth, TagBindsTheSiteTable) {
  const auth::HostKey host;
  const zipper::proto::ConnectHello who{7, 4, 1, {4, 4, 2}};
  const auth::ChallengePayload ch{auth::random_nonce(), host.public_key()};
  const auto p = auth::prove(secret_of(4), ch, who, "10.0.0.5:40000", "10.0.0.9:7470");
  EXPECT_TRUE(auth::check_tag(p.job_key, ch, p.auth, who));
  for (const zipper::proto::ConnectHello& other : {zipper::proto::ConnectHello{7, 4, 1, {4, 4}},
                                                   zipper::proto::ConnectHello{7, 4, 1, {4, 4, 3}},
                                                   zipper::proto::ConnectHello{7, 4, 1, {4, 2, 4}},
                                                   zipper::proto::ConnectHello{7, 4, 2, {4, 4, 2}},
                                                   zipper::proto::ConnectHello{7, 5, 1, {4, 4, 2}},
                                                   zipper::proto::ConnectHello{8, 4, 1, {4, 4, 2}}})
    EXPECT_FALSE(auth::check_tag(p.job_key, ch, p.auth, other));
}

TEST(Auth, TagBindsTheConnectionEnds) {
  const auth::HostKey host;
  const zipper::proto::ConnectHello who{7, 0, 0, {1, 1}};
  const auth::ChallengePayload ch{auth::random_nonce(), host.public_key()};
  auto p = auth::prove(secret_of(3), ch, who, "10.0.0.5:40000", "10.0.0.9:7470");
  EXPECT_TRUE(auth::check_tag(p.job_key, ch, p.auth, who));
  auto moved = p.auth;
  moved.client_peer = "10.0.0.1:7470";  // a relay rewriting the ends it reports
  EXPECT_FALSE(auth::check_tag(p.job_key, ch, moved, who));
  moved = p.auth;
  moved.client_nonce[0] ^= std::byte{1};
  EXPECT_FALSE(auth::check_tag(p.job_key, ch, moved, who));
  auth::AuthPayload decoded;
  ASSERT_TRUE(auth::decode_auth(auth::encode_auth(p.auth), &decoded));
  EXPECT_EQ(decoded.client_local, "10.0.0.5:40000");
  EXPECT_EQ(decoded.client_peer, "10.0.0.9:7470");
  EXPECT_TRUE(auth::check_tag(p.job_key, ch, decoded, who));
  auto truncated = auth::encode_auth(p.auth);
  truncated.resize(truncated.size() - 1);
  EXPECT_FALSE(auth::decode_auth(truncated, &decoded));
}

class HostKeyFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char d[] = "/tmp/zipper_hostkey.XXXXXX";
    ASSERT_NE(::mkdtemp(d), nullptr);
    dir_ = d;
    path_ = dir_ + "/host_key";
  }
  void TearDown() override {
    for (const char* f : {"/host_key", "/host_key.pub", "/link", "/target"})
      std::remove((dir_ + f).c_str());
    ::rmdir(dir_.c_str());
  }
  std::string dir_, path_;
};

TEST_F(HostKeyFile, CreatedOnceThenLoadedWithTheSameKey) {
  bool created = false;
  std::string why;
  auto k = auth::HostKey::load_or_create(path_, &created, &why);
  ASSERT_TRUE(k) << why;
  EXPECT_TRUE(created);
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream pub(path_ + ".pub");
  std::string hex;
  pub >> hex;
  EXPECT_EQ(hex, auth::to_hex(k->public_key()));
  auto again = auth::HostKey::load_or_create(path_, &created, &why);
  ASSERT_TRUE(again) << why;
  EXPECT_FALSE(created);
  EXPECT_EQ(again->public_key(), k->public_key());
  // The loaded private half opens what was sealed to the public one.
  const auth::Key jk = auth::job_key(secret_of(4), k->public_key());
  EXPECT_EQ(again->open(auth::seal(jk, k->public_key())), jk);
}

TEST_F(HostKeyFile, BadPermissionsSymlinksAndSharedDirsAreRefused) {
  bool created = false;
  std::string why;
  ASSERT_TRUE(auth::HostKey::load_or_create(path_, &created, &why)) << why;
  ::chmod(path_.c_str(), 0640);
  EXPECT_FALSE(auth::HostKey::load(path_, &why));
  EXPECT_NE(why.find("mode 0600"), std::string::npos) << why;
  ::chmod(path_.c_str(), 0600);
  ASSERT_EQ(::symlink(path_.c_str(), (dir_ + "/link").c_str()), 0);
  EXPECT_FALSE(auth::HostKey::load_or_create(dir_ + "/link", &created, &why));
  EXPECT_NE(why.find("symbolic link"), std::string::npos) << why;
  // A dangling link is not created through either.
  ASSERT_EQ(::unlink((dir_ + "/link").c_str()), 0);
  ASSERT_EQ(::symlink((dir_ + "/target").c_str(), (dir_ + "/link").c_str()), 0);
  EXPECT_FALSE(auth::HostKey::load_or_create(dir_ + "/link", &created, &why));
  EXPECT_NE(::access((dir_ + "/target").c_str(), F_OK), 0);
  // A directory others may write to (not sticky): refused.
  ::chmod(dir_.c_str(), 0777);
  EXPECT_FALSE(auth::HostKey::load(path_, &why));
  EXPECT_NE(why.find("written by other users"), std::string::npos) << why;
  ::chmod(dir_.c_str(), 0700);
  if (::geteuid() == 0) {  // another owner: only root can make one
    ASSERT_EQ(::chown(path_.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(auth::HostKey::load(path_, &why));
    EXPECT_NE(why.find("owned by uid"), std::string::npos) << why;
  }
}

}  // namespace
