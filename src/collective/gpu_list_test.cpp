#include "collective/gpu_list.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace podnet::collective {
namespace {

TEST(GpuList, RangesStridesAndLists) {
  auto g = parse_gpu_list("0-511", 4096);
  ASSERT_EQ(g.size(), 512u);
  EXPECT_EQ(g.front(), 0);
  EXPECT_EQ(g.back(), 511);

  // 0, 8, ..., 4088: 4096 / 8 = 512 GPUs.
  g = parse_gpu_list("0-4095:8", 4096);
  ASSERT_EQ(g.size(), 512u);
  EXPECT_EQ(g[1], 8);
  EXPECT_EQ(g.back(), 4088);

  EXPECT_EQ(parse_gpu_list("0,8,16", 32), (std::vector<int32_t>{0, 8, 16}));
  g = parse_gpu_list("0-7,64-71", 128);
  ASSERT_EQ(g.size(), 16u);
  EXPECT_EQ(g[7], 7);
  EXPECT_EQ(g[8], 64);
  // Order is kept (it is the naive ring order); spaces are ignored.
  EXPECT_EQ(parse_gpu_list(" 9 , 3-5 ,1", 16), (std::vector<int32_t>{9, 3, 4, 5, 1}));
  // A stride that overshoots stops at the last GPU <= end: 1, 4, 7.
  EXPECT_EQ(parse_gpu_list("1-8:3", 9), (std::vector<int32_t>{1, 4, 7}));
  EXPECT_EQ(parse_gpu_list("5-5", 6), (std::vector<int32_t>{5}));
}

void expect_error(const std::string& spec, int32_t total, const std::string& fragment) {
  try {
    parse_gpu_list(spec, total);
    ADD_FAILURE() << "'" << spec << "' was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(fragment), std::string::npos) << "'" << spec << "': " << what;
    EXPECT_NE(what.find("GPU list '" + spec + "'"), std::string::npos) << what;  // names the list
  }
}

TEST(GpuList, Errors) {
  expect_error("", 8, "empty");
  expect_error("1,,2", 8, "empty item");
  expect_error("0-7,", 8, "empty item");
  expect_error("a", 8, "not a GPU number");
  expect_error("-3", 8, "not a range");
  expect_error("0-", 8, "not a range");
  expect_error("0:4", 8, "stride needs a range");
  expect_error("0-7:x", 8, "stride is not a number");
  expect_error("0-7:0", 8, "at least 1");
  expect_error("5-3", 8, "ends before it starts");
  expect_error("8", 8, "out of range");
  // One item is named once (the list is it); in a longer list the item at fault is named too.
  expect_error("0-4096", 4096, "GPU list '0-4096': GPU 4096 is out of range");
  expect_error("0-7,9-12", 10, "GPU list '0-7,9-12': '9-12': GPU 12 is out of range");
  expect_error("0-7,4", 8, "GPU 4 is listed more than once");
  expect_error("0-7:2,6", 8, "GPU 6 is listed more than once");
}

}  // namespace
}  // namespace podnet::collective
