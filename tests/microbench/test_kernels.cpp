#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "harness/error.hpp"
#include "microbench/kernels.hpp"

using namespace rooflab::microbench;
using rooflab::Isa;

namespace {
class Kernels : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!rooflab::isa_supported(GetParam()))
      GTEST_SKIP() << "CPU lacks " << to_string(GetParam());
    k = &kernels_for(GetParam());
  }
  const KernelTable* k = nullptr;
};

// 1003 elements: not a multiple of any unroll width, so the tails run too. One guard
// element after the end checks that nothing writes past n.
constexpr size_t N = 1003;

// 64-byte aligned storage; offset shifts the start so the NT kernels' unaligned head runs.
struct Arr {
  explicit Arr(size_t offset = 0) : buf(N + 16 + offset, -7.0) {
    auto p = reinterpret_cast<uintptr_t>(buf.data());
    size_t skip = ((64 - p % 64) % 64) / sizeof(double);
    data = buf.data() + skip + offset;
  }
  std::vector<double> buf;
  double* data;
  double& operator[](size_t i) { return data[i]; }
};
}  // namespace

TEST_P(Kernels, ReadSumsEveryElement) {
  Arr a;
  double want = 0;
  for (size_t i = 0; i < N; ++i) want += (a[i] = double(i % 13));
  EXPECT_EQ(k->read(a.data, N, 1), want);  // small integers: exact in any order
  EXPECT_EQ(k->read(a.data, 5, 1), 0 + 1 + 2 + 3 + 4);
}

TEST_P(Kernels, CopyAndNontemporalCopyCopyExactlyN) {
  for (size_t offset : {0, 1, 3}) {
    for (auto fn : {k->copy, k->copy_nt}) {
      Arr a, b(offset);
      for (size_t i = 0; i < N; ++i) a[i] = 0.5 * double(i);
      fn(b.data, a.data, N, 1);
      for (size_t i = 0; i < N; ++i) ASSERT_EQ(b[i], 0.5 * double(i)) << i;
      EXPECT_EQ(b[N], -7.0) << "wrote past the end";
    }
  }
}

TEST_P(Kernels, UpdateScalesInPlace) {
  Arr a;
  for (size_t i = 0; i < N; ++i) a[i] = double(i);
  k->update(a.data, 3.0, N, 1);
  for (size_t i = 0; i < N; ++i) ASSERT_EQ(a[i], 3.0 * double(i)) << i;
  EXPECT_EQ(a[N], -7.0);
}

TEST_P(Kernels, TriadAndNontemporalTriadComputeBPlusSC) {
  for (size_t offset : {0, 2}) {
    for (auto fn : {k->triad, k->triad_nt}) {
      Arr a(offset), b, c;
      for (size_t i = 0; i < N; ++i) {
        b[i] = double(i);
        c[i] = double(N - i);
      }
      fn(a.data, b.data, c.data, 0.25, N, 1);
      for (size_t i = 0; i < N; ++i) ASSERT_EQ(a[i], double(i) + 0.25 * double(N - i)) << i;
      EXPECT_EQ(a[N], -7.0);
    }
  }
}

// Every S: all S arrays, whole and with tails (N = 1003 and short lengths), nothing past n.
TEST_P(Kernels, StreamKernelsCoverEveryArrayExactlyN) {
  for (int S : kStreamCounts) {
    const int si = stream_index(S);
    ASSERT_GE(si, 0);
    for (size_t n : {N, size_t(5), size_t(37)}) {
      std::vector<Arr> arrs(static_cast<size_t>(S));  // built in place: no move invalidates data
      std::vector<double*> p;
      double want = 0;
      for (int q = 0; q < S; ++q) {
        for (size_t i = 0; i < n; ++i) want += (arrs[size_t(q)][i] = double((i + 3 * size_t(q)) % 13));
        p.push_back(arrs[size_t(q)].data);
      }
      EXPECT_EQ(k->read_streams[si](p.data(), n, 1), want) << "S " << S << " n " << n;
      k->update_streams[si](p.data(), 2.0, n, 1);
      for (int q = 0; q < S; ++q) {
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(arrs[size_t(q)][i], 2.0 * double((i + 3 * size_t(q)) % 13)) << S << " " << q << " " << i;
        EXPECT_EQ(arrs[size_t(q)][n], -7.0) << "wrote past the end, S " << S;
      }
    }
  }
  EXPECT_EQ(stream_index(3), -1);
  EXPECT_EQ(stream_index(16), -1);
}

// Every length from 0 to past two unrolled steps of the widest table (8 vectors of 8): each
// combination of whole steps, leftover whole vectors and a partial vector, and reps > 1
// (several passes per call, as the timing makes them).
TEST_P(Kernels, EveryLengthAndRepeatCountCoversExactlyN) {
  constexpr size_t kMax = 2 * 64 + 9;
  for (size_t n = 0; n <= kMax; ++n) {
    for (uint64_t reps : {uint64_t(1), uint64_t(3)}) {
      const double r = double(reps);
      Arr a, b, c;
      double sum = 0;
      for (size_t i = 0; i < n; ++i) sum += (a[i] = double(i % 7));
      ASSERT_EQ(k->read(a.data, n, reps), r * sum) << "n " << n << " reps " << reps;
      for (auto fn : {k->copy, k->copy_nt}) {
        Arr d(n % 3);
        fn(d.data, a.data, n, reps);
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(d[i], double(i % 7)) << "n " << n << " i " << i;
        ASSERT_EQ(d[n], -7.0) << "copy wrote past the end, n " << n;
      }
      k->update(a.data, 2.0, n, reps);  // 2^reps: exact
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], std::exp2(r) * double(i % 7)) << n;
      ASSERT_EQ(a[n], -7.0) << "update wrote past the end, n " << n;
      for (auto fn : {k->triad, k->triad_nt}) {
        Arr d(n % 2);
        for (size_t i = 0; i < n; ++i) b[i] = double(i), c[i] = 4.0;
        fn(d.data, b.data, c.data, 0.5, n, reps);
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(d[i], double(i) + 2.0) << "n " << n << " i " << i;
        ASSERT_EQ(d[n], -7.0) << "triad wrote past the end, n " << n;
      }
      for (int S : kStreamCounts) {
        std::vector<Arr> arrs(static_cast<size_t>(S));
        std::vector<double*> p;
        double want = 0;
        for (auto& x : arrs) {
          for (size_t i = 0; i < n; ++i) want += (x[i] = double((i + p.size()) % 5));
          p.push_back(x.data);
        }
        ASSERT_EQ(k->read_streams[stream_index(S)](p.data(), n, reps), r * want)
            << "S " << S << " n " << n << " reps " << reps;
        k->update_streams[stream_index(S)](p.data(), 2.0, n, reps);
        for (size_t q = 0; q < p.size(); ++q) {
          for (size_t i = 0; i < n; ++i)
            ASSERT_EQ(arrs[q][i], std::exp2(r) * double((i + q) % 5)) << S << " " << n;
          ASSERT_EQ(arrs[q][n], -7.0) << "update_streams wrote past the end, S " << S;
        }
      }
    }
  }
}

TEST_P(Kernels, ComputeKernelsGiveTheAnalyticResult) {
  const double l64 = k->lanes_f64, l32 = k->lanes_f32;
  EXPECT_GE(l64, 8);  // enough independent chains to cover latency
  EXPECT_EQ(l64, double(kComputeAccumulators) * (l64 / kComputeAccumulators));
  // fma: acc = acc * 1 + 1, ten times -> 10 per lane.
  EXPECT_EQ(k->fma_f64(10, 1.0, 1.0), 10 * l64);
  EXPECT_EQ(k->fma_f32(10, 1.0, 1.0), 10 * l32);
  // fma with x = 2: acc = 2 acc + 1 -> 2^n - 1.
  EXPECT_EQ(k->fma_f64(5, 2.0, 1.0), 31 * l64);
  EXPECT_EQ(k->add_f64(7, 0.0, 0.5), 3.5 * l64);
  EXPECT_EQ(k->add_f32(7, 0.0, 0.5), 3.5 * l32);
  EXPECT_EQ(k->mul_f64(10, 2.0, 0.0), 1024 * l64);
  EXPECT_EQ(k->mul_f32(10, 2.0, 0.0), 1024 * l32);
  // addmin: acc = min(acc + 1, 5): clamps after five steps...
  EXPECT_EQ(k->addmin_f64(10, 5.0, 1.0), 5 * l64);
  EXPECT_EQ(k->addmin_f32(10, 5.0, 1.0), 5 * l32);
  // ...and is a plain sum while below the bound.
  EXPECT_EQ(k->addmin_f64(10, 100.0, 1.0), 10 * l64);
  EXPECT_EQ(k->fma_f64(0, 1.0, 1.0), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Isas, Kernels, ::testing::Values(Isa::scalar, Isa::avx2, Isa::avx512),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(KernelDispatch, WidestIsaIsSupportedAndUnsupportedIsasAreRefused) {
  EXPECT_TRUE(rooflab::isa_supported(rooflab::best_isa()));
  EXPECT_EQ(kernels_for(rooflab::best_isa()).isa, rooflab::best_isa());
  for (Isa isa : {Isa::avx2, Isa::avx512})
    if (!rooflab::isa_supported(isa)) {
      EXPECT_THROW(kernels_for(isa), rooflab::Error);
    }
}
