// MPI matching semantics of client::MatchQueue.
#include <gtest/gtest.h>

#include "client/match_queue.h"

namespace {

using zipper::client::Envelope;
using zipper::client::kAnySource;
using zipper::client::kAnyTag;
using zipper::client::MatchQueue;
using zipper::client::Selector;

using Queue = MatchQueue<int, int>;

Envelope env(int src, int tag, std::uint32_t ctx = 0) { return Envelope{src, tag, ctx}; }
Selector sel(int src, int tag, std::uint32_t ctx = 0) { return Selector{src, tag, ctx}; }

TEST(MatchQueue, SelectorMatching) {
  EXPECT_TRUE(sel(1, 2).matches(env(1, 2)));
  EXPECT_FALSE(sel(1, 2).matches(env(1, 3)));
  EXPECT_FALSE(sel(1, 2).matches(env(2, 2)));
  EXPECT_TRUE(sel(kAnySource, 2).matches(env(9, 2)));
  EXPECT_TRUE(sel(1, kAnyTag).matches(env(1, 12345)));
  EXPECT_TRUE(sel(kAnySource, kAnyTag).matches(env(3, 0)));
  EXPECT_FALSE(sel(kAnySource, kAnyTag, 1).matches(env(3, 0, 2)));
  // Default selector: any source, any tag, world context.
  EXPECT_TRUE(Selector{}.matches(env(5, 7)));
}

TEST(MatchQueue, EmptyQueueMatchesNothing) {
  Queue q;
  EXPECT_FALSE(q.match_posted(env(0, 0)).has_value());
  EXPECT_FALSE(q.match_unexpected(sel(kAnySource, kAnyTag)).has_value());
  EXPECT_EQ(q.peek_posted(env(0, 0)), nullptr);
  EXPECT_EQ(q.peek_unexpected(sel(kAnySource, kAnyTag)), nullptr);
  EXPECT_FALSE(q.remove_posted(1));
  EXPECT_EQ(q.posted_count(), 0u);
  EXPECT_EQ(q.unexpected_count(), 0u);
}

TEST(MatchQueue, PostedReceivesMatchInPostOrder) {
  Queue q;
  q.post(sel(1, 5), 100);
  q.post(sel(1, 5), 101);
  q.post(sel(1, 5), 102);
  EXPECT_EQ(q.posted_count(), 3u);
  EXPECT_EQ(q.match_posted(env(1, 5)), 100);
  EXPECT_EQ(q.match_posted(env(1, 5)), 101);
  EXPECT_EQ(q.match_posted(env(1, 5)), 102);
  EXPECT_FALSE(q.match_posted(env(1, 5)).has_value());
}

TEST(MatchQueue, EarliestMatchingPostedWinsOverLaterSpecificOne) {
  Queue q;
  q.post(sel(2, 5), 1);           // does not match src 1
  q.post(sel(kAnySource, 5), 2);  // wildcard, posted before the specific one
  q.post(sel(1, 5), 3);
  EXPECT_EQ(q.match_posted(env(1, 5)), 2);
  EXPECT_EQ(q.match_posted(env(1, 5)), 3);
  EXPECT_EQ(q.match_posted(env(2, 5)), 1);
  EXPECT_EQ(q.posted_count(), 0u);
}

TEST(MatchQueue, UnexpectedMessagesMatchInArrivalOrder) {
  Queue q;
  q.add_unexpected(env(1, 5), 10);
  q.add_unexpected(env(2, 5), 20);
  q.add_unexpected(env(1, 5), 11);
  q.add_unexpected(env(1, 6), 12);
  EXPECT_EQ(q.unexpected_count(), 4u);
  auto m = q.match_unexpected(sel(1, 5));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->msg, 10);
  EXPECT_EQ(m->env.src, 1);
  EXPECT_EQ(m->env.tag, 5);
  m = q.match_unexpected(sel(1, 5));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->msg, 11);
  EXPECT_FALSE(q.match_unexpected(sel(1, 5)).has_value());
  EXPECT_EQ(q.unexpected_count(), 2u);
}

TEST(MatchQueue, AnySource) {
  Queue q;
  q.add_unexpected(env(3, 7), 30);
  q.add_unexpected(env(1, 7), 10);
  q.add_unexpected(env(2, 8), 20);
  auto m = q.match_unexpected(sel(kAnySource, 7));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->msg, 30);  // the earliest arrival, whichever source
  EXPECT_EQ(m->env.src, 3);
  m = q.match_unexpected(sel(kAnySource, 7));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->msg, 10);
  EXPECT_FALSE(q.match_unexpected(sel(kAnySource, 7)).has_value());

  q.post(sel(kAnySource, 9), 99);
  EXPECT_FALSE(q.match_posted(env(4, 8)).has_value());
  EXPECT_EQ(q.match_posted(env(4, 9)), 99);
}

TEST(MatchQueue, AnyTag) {
  Queue q;
  q.add_unexpected(env(2, 1), 21);
  q.add_unexpected(env(1, 42), 142);
  q.add_unexpected(env(1, 7), 107);
  auto m = q.match_unexpected(sel(1, kAnyTag));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->msg, 142);
  EXPECT_EQ(m->env.tag, 42);
  m = q.match_unexpected(sel(kAnySource, kAnyTag));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->msg, 21);

  q.post(sel(1, kAnyTag), 5);
  EXPECT_FALSE(q.match_posted(env(2, 3)).has_value());
  EXPECT_EQ(q.match_posted(env(1, 12345)), 5);
}

TEST(MatchQueue, ContextIsolation) {
  Queue q;
  q.add_unexpected(env(1, 5, /*ctx=*/1), 1);
  q.add_unexpected(env(1, 5, /*ctx=*/2), 2);
  // Wildcards never cross communicators.
  auto m = q.match_unexpected(sel(kAnySource, kAnyTag, 2));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->msg, 2);
  EXPECT_FALSE(q.match_unexpected(sel(kAnySource, kAnyTag, 0)).has_value());
  EXPECT_FALSE(q.match_unexpected(sel(kAnySource, kAnyTag, 2)).has_value());
  m = q.match_unexpected(sel(1, 5, 1));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->msg, 1);

  q.post(sel(kAnySource, kAnyTag, 3), 30);
  q.post(sel(kAnySource, kAnyTag, 4), 40);
  EXPECT_FALSE(q.match_posted(env(1, 5, 0)).has_value());
  EXPECT_EQ(q.match_posted(env(1, 5, 4)), 40);
  EXPECT_EQ(q.match_posted(env(1, 5, 3)), 30);
}

TEST(MatchQueue, NonOvertaking) {
  // Two messages with the same source and tag are received in the order sent,
  // whether they arrive before or after the receives are posted.
  Queue q;
  q.add_unexpected(env(1, 5), 1);
  q.add_unexpected(env(1, 5), 2);
  auto a = q.match_unexpected(sel(kAnySource, kAnyTag));
  auto b = q.match_unexpected(sel(1, 5));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->msg, 1);
  EXPECT_EQ(b->msg, 2);

  // Receives posted first: the first-posted receive gets the first message.
  q.post(sel(1, 5), 100);
  q.post(sel(1, kAnyTag), 101);
  EXPECT_EQ(q.match_posted(env(1, 5)), 100);
  EXPECT_EQ(q.match_posted(env(1, 5)), 101);
}

TEST(MatchQueue, PeekDoesNotRemove) {
  Queue q;
  q.post(sel(1, 5), 7);
  const int* p = q.peek_posted(env(1, 5));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 7);
  EXPECT_EQ(q.peek_posted(env(2, 5)), nullptr);
  EXPECT_EQ(q.posted_count(), 1u);
  EXPECT_EQ(q.match_posted(env(1, 5)), 7);
  EXPECT_EQ(q.peek_posted(env(1, 5)), nullptr);

  q.add_unexpected(env(1, 5), 50);
  q.add_unexpected(env(1, 5), 51);
  const auto* u = q.peek_unexpected(sel(1, 5));
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->msg, 50);
  // Peeking again returns the same message (probe does not consume).
  EXPECT_EQ(q.peek_unexpected(sel(kAnySource, kAnyTag)), u);
  EXPECT_EQ(q.unexpected_count(), 2u);
  auto m = q.match_unexpected(sel(1, 5));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->msg, 50);
  u = q.peek_unexpected(sel(1, 5));
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->msg, 51);
}

TEST(MatchQueue, RemovePosted) {
  Queue q;
  q.post(sel(1, 5), 1);
  q.post(sel(1, 5), 2);
  q.post(sel(1, 5), 3);
  EXPECT_TRUE(q.remove_posted(2));
  EXPECT_FALSE(q.remove_posted(2));
  EXPECT_FALSE(q.remove_posted(42));
  EXPECT_EQ(q.posted_count(), 2u);
  EXPECT_EQ(q.match_posted(env(1, 5)), 1);
  EXPECT_EQ(q.match_posted(env(1, 5)), 3);
  EXPECT_EQ(q.posted_count(), 0u);
}

TEST(MatchQueue, AnyPostedAndPostedList) {
  Queue q;
  q.post(sel(kAnySource, 5), 1);
  q.post(sel(3, 6), 2);
  EXPECT_TRUE(q.any_posted([](const Selector& s) { return s.src == kAnySource; }));
  EXPECT_TRUE(q.any_posted([](const Selector& s) { return s.src == 3; }));
  EXPECT_FALSE(q.any_posted([](const Selector& s) { return s.src == 4; }));
  ASSERT_EQ(q.posted().size(), 2u);
  EXPECT_EQ(q.posted().front().recv, 1);
  EXPECT_EQ(q.posted().back().sel.tag, 6);
}

TEST(MatchQueue, PostedAndUnexpectedListsAreIndependent) {
  Queue q;
  q.post(sel(1, 5), 10);
  q.add_unexpected(env(1, 5), 20);  // the caller decides; the queue just stores
  EXPECT_EQ(q.posted_count(), 1u);
  EXPECT_EQ(q.unexpected_count(), 1u);
  auto m = q.match_unexpected(sel(1, 5));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->msg, 20);
  EXPECT_EQ(q.match_posted(env(1, 5)), 10);
}

}  // namespace
