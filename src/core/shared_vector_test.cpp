// SharedVector: copies share one buffer until one of them is written.
#include "core/shared_vector.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace podnet {
namespace {

TEST(SharedVector, CopiesShareUntilOneIsWritten) {
  SharedVector<int> a{1, 2, 3};
  SharedVector<int> b = a;
  EXPECT_TRUE(a.shares_with(b));
  // Reads through a const view never copy.
  const SharedVector<int>& cb = b;
  EXPECT_EQ(cb[1], 2);
  EXPECT_EQ(cb.size(), 3u);
  int sum = 0;
  for (int x : cb) sum += x;
  EXPECT_EQ(sum, 6);
  EXPECT_TRUE(a.shares_with(b));
  // A write gives the writer its own buffer; the other copy keeps the old values.
  b.push_back(4);
  EXPECT_FALSE(a.shares_with(b));
  EXPECT_EQ(a.vec(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(b.vec(), (std::vector<int>{1, 2, 3, 4}));
  // A list no other copy shares is written in place.
  const void* own = b.storage();
  b[0] = 9;
  EXPECT_EQ(b.storage(), own);
  EXPECT_EQ(b.vec(), (std::vector<int>{9, 2, 3, 4}));
}

TEST(SharedVector, InsertAndEraseKeepTheirPositionAcrossTheCopy) {
  SharedVector<int> a{1, 2, 3};
  SharedVector<int> b = a;
  // The iterators point into the shared buffer; the write happens in b's own copy at the same offsets.
  const std::vector<int> more{7, 8};
  b.insert(std::as_const(b).begin() + 1, more.begin(), more.end());
  EXPECT_EQ(b.vec(), (std::vector<int>{1, 7, 8, 2, 3}));
  SharedVector<int> c = b;
  c.erase(std::as_const(c).begin(), std::as_const(c).begin() + 2);
  EXPECT_EQ(c.vec(), (std::vector<int>{8, 2, 3}));
  EXPECT_EQ(b.vec(), (std::vector<int>{1, 7, 8, 2, 3}));
  EXPECT_EQ(a.vec(), (std::vector<int>{1, 2, 3}));
}

TEST(SharedVector, EmptyListsAndEquality) {
  SharedVector<int> e, f;
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e.storage(), nullptr);
  EXPECT_FALSE(e.shares_with(f));  // two empty lists share nothing
  EXPECT_TRUE(e == f);
  SharedVector<int> a{1, 2}, b{1, 2};
  EXPECT_FALSE(a.shares_with(b));
  EXPECT_TRUE(a == b);  // equal by content
  b.clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(a.size(), 2u);
  SharedVector<std::pair<int, int>> edges;
  edges.emplace_back(1, 2);
  EXPECT_EQ(edges.front(), std::make_pair(1, 2));
}

}  // namespace
}  // namespace podnet
