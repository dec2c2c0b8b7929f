// harness/buffer: the one allocation policy of kernels and bandwidth microbenchmarks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "harness/buffer.hpp"

namespace {
using namespace rooflab;

bool aligned(const void* p, size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

TEST(Buffer, HugePageSizeIsAPowerOfTwoOfAtLeastAPage) {
  const size_t h = huge_page_bytes();
  EXPECT_GE(h, 4096u);
  EXPECT_EQ(h & (h - 1), 0u);
}

TEST(Buffer, LargeBuffersAreAlignedToTheHugePage) {
  const size_t h = huge_page_bytes();
  for (size_t bytes : {h, h + 8, 3 * h - 64}) {
    void* p = allocate_pages(bytes);
    EXPECT_TRUE(aligned(p, h)) << bytes;
    static_cast<char*>(p)[bytes - 1] = 1;  // the whole request is usable
    std::free(p);
  }
  AlignedBuffer<double> b(h / sizeof(double) + 1);
  EXPECT_TRUE(aligned(b.data(), h));
}

TEST(Buffer, SmallBuffersKeepTheirAlignmentOnly) {
  for (size_t a : {size_t(16), size_t(64), size_t(4096)}) {
    void* p = allocate_pages(100, a);
    EXPECT_TRUE(aligned(p, a)) << a;
    std::free(p);
  }
  AlignedBuffer<float> odd(7, 128);
  EXPECT_TRUE(aligned(odd.data(), 128));
  EXPECT_EQ(odd.size(), 7u);
}

TEST(Buffer, PagePolicyNamesTheKernelsThpMode) {
  const std::string policy = page_policy();
  EXPECT_NE(policy.find(std::to_string(huge_page_bytes() / 1024) + " KiB"), std::string::npos) << policy;
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(in, line)) {
    EXPECT_NE(policy.find("THP unknown"), std::string::npos) << policy;
    return;
  }
  const auto a = line.find('['), b = line.find(']');
  ASSERT_NE(a, std::string::npos);
  EXPECT_NE(policy.find("THP " + line.substr(a + 1, b - a - 1) + ";"), std::string::npos) << policy << " vs " << line;
}
}  // namespace
