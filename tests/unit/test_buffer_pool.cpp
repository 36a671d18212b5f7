// zipperd's payload buffer pools: size classes, borrowing, exhaustion, limits.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "forwarder/buffer_pool.h"

namespace {

using zipper::forwarder::BufferPool;
using zipper::forwarder::default_pool_classes;
using zipper::forwarder::parse_pool_classes;
using zipper::forwarder::PoolClassConfig;
using zipper::forwarder::validate_pool_classes;

std::uint64_t total(const std::vector<PoolClassConfig>& cs) {
  std::uint64_t t = 0;
  for (const auto& c : cs) t += std::uint64_t{c.buffer_bytes} * c.buffers;
  return t;
}

TEST(BufferPool, DefaultClassesFitTheLimits) {
  for (std::uint64_t mem : {8ull << 20, 64ull << 20, 256ull << 20, 4ull << 30}) {
    for (std::uint32_t frame : {1024u, 64u << 10, 1u << 20, 8u << 20}) {
      if (mem < 2ull * frame) continue;
      const auto cs = default_pool_classes(mem, frame);
      SCOPED_TRACE(std::to_string(mem) + " " + std::to_string(frame));
      EXPECT_EQ(validate_pool_classes(cs, mem, frame), "");
      EXPECT_EQ(cs.back().buffer_bytes, frame);
      EXPECT_LE(total(cs), mem);
    }
  }
  const auto cs = default_pool_classes(256ull << 20, 1u << 20);
  ASSERT_EQ(cs.size(), 4u);
  EXPECT_EQ(cs[0].buffer_bytes, 1024u);
  EXPECT_EQ(cs[1].buffer_bytes, 16u << 10);
  EXPECT_EQ(cs[2].buffer_bytes, 128u << 10);
  EXPECT_GT(total(cs), (256ull << 20) * 9 / 10);  // nearly all of the limit is used
}

TEST(BufferPool, ParseClasses) {
  std::string why;
  auto cs = parse_pool_classes("1KiB:8,64KiB:4,1MiB:2", &why);
  ASSERT_TRUE(cs) << why;
  ASSERT_EQ(cs->size(), 3u);
  EXPECT_EQ((*cs)[0].buffer_bytes, 1024u);
  EXPECT_EQ((*cs)[0].buffers, 8u);
  EXPECT_EQ((*cs)[2].buffer_bytes, 1u << 20);
  EXPECT_EQ((*cs)[2].buffers, 2u);
  cs = parse_pool_classes("4096:3", &why);
  ASSERT_TRUE(cs);
  EXPECT_EQ((*cs)[0].buffer_bytes, 4096u);
  for (const char* bad :
       {"", "1KiB", "1KiB:", ":4", "1GiB:4", "x:4", "1KiB:-1", "1KiB:4,", "1KiB:99999999999"}) {
    why.clear();
    EXPECT_FALSE(parse_pool_classes(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(BufferPool, ValidateRefusesWithAReason) {
  const std::uint32_t frame = 64u << 10;
  EXPECT_NE(validate_pool_classes({}, 1u << 20, frame), "");
  EXPECT_NE(validate_pool_classes({{32, 4}, {frame, 4}}, 1u << 20, frame), "");    // tiny buffers
  EXPECT_NE(validate_pool_classes({{frame, 4}, {1024, 4}}, 1u << 20, frame), "");  // order
  EXPECT_NE(validate_pool_classes({{1024, 1}, {frame, 4}}, 1u << 20, frame), "");  // 1 buffer
  EXPECT_NE(validate_pool_classes({{1024, 4}}, 1u << 20, frame), "");       // frame does not fit
  const auto over = validate_pool_classes({{frame, 17}}, 1u << 20, frame);  // 1.06 MiB > 1 MiB
  EXPECT_NE(over.find("more than the memory limit"), std::string::npos) << over;
  EXPECT_EQ(validate_pool_classes({{1024, 4}, {frame, 16}}, 2u << 20, frame), "");
}

TEST(BufferPool, SmallestFittingClassThenBorrowThenExhausted) {
  BufferPool pool({{1024, 2}, {4096, 2}});
  EXPECT_EQ(pool.total_bytes(), 2u * 1024 + 2u * 4096);
  auto a = pool.acquire(10);
  auto b = pool.acquire(1024);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->capacity, 1024u);
  EXPECT_EQ(b->capacity, 1024u);
  auto c = pool.acquire(1);  // tiny class empty: the larger class lends one
  ASSERT_TRUE(c);
  EXPECT_EQ(c->capacity, 4096u);
  auto d = pool.acquire(1025);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->capacity, 4096u);
  EXPECT_FALSE(pool.acquire(1));     // everything in use
  EXPECT_FALSE(pool.acquire(4097));  // larger than any class
  EXPECT_EQ(pool.bytes_in_use(), 2u * 1024 + 2u * 4096);
  auto st = pool.stats();
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].in_use, 2u);
  EXPECT_EQ(st[1].in_use, 2u);
  EXPECT_EQ(st[1].borrowed, 1u);
  EXPECT_EQ(st[0].exhausted, 1u);
  pool.release(*c);
  auto e = pool.acquire(2000);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->data, c->data);  // the warm buffer comes back first
  for (const auto& x : {*a, *b, *d, *e}) pool.release(x);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
  EXPECT_EQ(pool.peak_bytes(), 2u * 1024 + 2u * 4096);
  st = pool.stats();
  EXPECT_EQ(st[0].peak, 2u);
  EXPECT_EQ(st[1].taken, 3u);
}

TEST(BufferPool, BuffersNeverOverlap) {
  BufferPool pool({{100, 7}, {1000, 5}});
  std::vector<BufferPool::Buffer> held;
  while (auto b = pool.acquire(1)) held.push_back(*b);
  ASSERT_EQ(held.size(), 12u);
  for (std::size_t i = 0; i < held.size(); ++i)
    std::memset(held[i].data, static_cast<int>(i + 1), held[i].capacity);
  for (std::size_t i = 0; i < held.size(); ++i)
    for (std::uint32_t j = 0; j < held[i].capacity; ++j)
      ASSERT_EQ(static_cast<int>(held[i].data[j]), static_cast<int>(i + 1)) << i << " " << j;
  for (const auto& b : held) pool.release(b);
}

TEST(BufferPool, ConcurrentUseHandsOutEachBufferOnce) {
  BufferPool pool({{256, 8}, {4096, 8}});
  std::atomic<int> owners[16] = {};
  auto slot = [&](const BufferPool::Buffer& b) { return b.cls * 8 + b.index; };
  auto worker = [&](unsigned seed) {
    std::uint64_t x = seed;
    std::vector<BufferPool::Buffer> mine;
    for (int i = 0; i < 50000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      if (auto b = pool.acquire(static_cast<std::uint32_t>(1 + (x >> 33) % 4096))) {
        ASSERT_EQ(owners[slot(*b)].fetch_add(1), 0) << "buffer handed out twice";
        mine.push_back(*b);
      }
      if (!mine.empty() && ((x >> 20) & 1)) {
        owners[slot(mine.back())].fetch_sub(1);
        pool.release(mine.back());
        mine.pop_back();
      }
    }
    for (const auto& b : mine) {
      owners[slot(b)].fetch_sub(1);
      pool.release(b);
    }
  };
  std::thread t1(worker, 1u), t2(worker, 2u);
  t1.join();
  t2.join();
  EXPECT_EQ(pool.bytes_in_use(), 0u);
  for (const auto& s : pool.stats()) EXPECT_EQ(s.in_use, 0u);
}

}  // namespace
