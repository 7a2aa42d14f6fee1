// History<T> (include/handoff/history.h, issue 28): the bounded ring a character keeps its records
// in, with sequence numbers and readSince(); and the character's rings bounded by HistorySettings.
#include "handoff/history.h"

#include "handoff/controller.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace handoff {
namespace {

std::vector<int> items(const History<int>& h) { return std::vector<int>(h.begin(), h.end()); }

TEST(History, KeepsTheNewestCapacityItemsInOrder) {
  History<int> h(3);
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.capacity(), 3u);
  for (int i = 0; i < 5; ++i) h.push(i);
  EXPECT_EQ(h.size(), 3u);
  EXPECT_EQ(h.total(), 5u);
  EXPECT_EQ(h.firstSequence(), 2u);
  EXPECT_EQ(items(h), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(h.latest(), 4);
  EXPECT_EQ(h.front(), 2);
  EXPECT_EQ(h[1], 3);
  EXPECT_EQ(h.at(4), 4);
  EXPECT_FALSE(h.retained(1));
  EXPECT_TRUE(h.retained(2));
  EXPECT_FALSE(h.retained(5));
}

TEST(History, ReadSinceReturnsTheNewItemsAndCountsTheMissedOnes) {
  History<int> h(4);
  for (int i = 0; i < 3; ++i) h.push(i);
  History<int>::Range r = h.readSince(0);
  EXPECT_EQ(std::vector<int>(r.begin(), r.end()), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(r.missed, 0u);
  EXPECT_EQ(r.next, 3u);
  std::uint64_t seen = r.next;
  for (int i = 3; i < 10; ++i) h.push(i);  // 7 new, 4 kept: 3 missed
  r = h.readSince(seen);
  EXPECT_EQ(std::vector<int>(r.begin(), r.end()), (std::vector<int>{6, 7, 8, 9}));
  EXPECT_EQ(r.missed, 3u);
  EXPECT_EQ(r.next, 10u);
  EXPECT_TRUE(h.readSince(r.next).empty());
  EXPECT_EQ(h.readSince(r.next).missed, 0u);
}

TEST(History, SlotsAreReusedInPlace) {
  // A slot keeps its storage: a vector written round the ring does not reallocate.
  History<std::vector<double>> h(2, std::vector<double>(100, 0.0));
  const double* slots[2] = {h.push().data(), h.push().data()};
  for (int round = 0; round < 3; ++round) {
    std::vector<double>& a = h.push();
    a.assign(100, round);
    EXPECT_EQ(a.data(), slots[round % 2]);
  }
}

TEST(History, CharacterRefusesAHistoryOfZero) {
  HistorySettings s;
  EXPECT_TRUE(validateHistorySettings(s));
  s.landings = 0;
  const Status bad = validateHistorySettings(s);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("history.landings"), std::string::npos) << bad.error();
}

TEST(History, EventTextIsTheKindAndTheDetail) {
  CharacterEvent e;
  e.kind = CharacterEventKind::Knockout;
  std::strcpy(e.detail, "a joint broke");
  EXPECT_EQ(describeEvent(e), "knockout: a joint broke");
  EXPECT_STREQ(eventKindName(CharacterEventKind::GetUp), "getup");
  EXPECT_LE(sizeof(CharacterEvent), 168u);  // a plain value, no string: recording one allocates nothing
}

}  // namespace
}  // namespace handoff
