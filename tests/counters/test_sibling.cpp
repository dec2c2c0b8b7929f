// Which case valgrind simulates for a requested case (harness/counters/cachegrind.hpp
// valgrind_case): valgrind 3.x cannot execute AVX-512, so an avx512 case runs as its avx2
// sibling, else its scalar one, else it is a failed row with the reason. The pure overload
// takes the variant's ISA list and validity check, so every branch is tested on any CPU.
#include <gtest/gtest.h>

#include "harness/counters/cachegrind.hpp"
#include "harness/isa.hpp"
#include "harness/registry.hpp"

using namespace rooflab;
using namespace rooflab::counters;

namespace {
const auto accept_all = [](const Case&) { return std::string(); };

Case avx512_case() {
  return parse_case_name("sinkhorn/microkernel/avx512/f64/256x192/mc:64/part:col/threads:1");
}
}  // namespace

TEST(ValgrindCase, NotAvx512IsItself) {
  for (const char* n : {"sinkhorn/microkernel/avx2/f64/256x192/part:col/threads:1",
                        "sinkhorn/microkernel/scalar/f64/256x192/part:col/threads:1",
                        "sinkhorn/c2r/f64/256x192/part:col/threads:1"}) {
    const Case c = parse_case_name(n);
    const ValgrindCase v = valgrind_case(c, {Isa::scalar, Isa::avx2, Isa::avx512}, accept_all);
    ASSERT_TRUE(v.simulated) << n;
    EXPECT_EQ(v.simulated->name(), c.name());
    EXPECT_TRUE(v.note.empty());
  }
}

TEST(ValgrindCase, Avx512PrefersAvx2ThenScalar) {
  const Case c = avx512_case();
  ValgrindCase v = valgrind_case(c, {Isa::scalar, Isa::avx2, Isa::avx512}, accept_all);
  ASSERT_TRUE(v.simulated);
  EXPECT_EQ(v.simulated->name(), "sinkhorn/microkernel/avx2/f64/256x192/mc:64/part:col/threads:1");
  EXPECT_NE(v.note.find("AVX-512"), std::string::npos) << v.note;
  EXPECT_NE(v.note.find(v.simulated->name()), std::string::npos) << v.note;

  v = valgrind_case(c, {Isa::scalar, Isa::avx512}, accept_all);  // no avx2 path
  ASSERT_TRUE(v.simulated);
  EXPECT_EQ(v.simulated->isa, Isa::scalar);

  // The avx2 sibling refuses the case (an ISA-specific parameter, say): scalar is next.
  v = valgrind_case(c, {Isa::scalar, Isa::avx2, Isa::avx512},
                    [](const Case& s) { return s.isa == Isa::avx2 ? std::string("mc not a multiple of MR") : ""; });
  ASSERT_TRUE(v.simulated);
  EXPECT_EQ(v.simulated->isa, Isa::scalar);
}

TEST(ValgrindCase, NoSiblingIsAReason) {
  const Case c = avx512_case();
  ValgrindCase v = valgrind_case(c, {Isa::avx512}, accept_all);
  EXPECT_FALSE(v.simulated);
  EXPECT_NE(v.reason.find("no avx2 or scalar sibling"), std::string::npos) << v.reason;

  v = valgrind_case(c, {Isa::scalar, Isa::avx2, Isa::avx512}, [](const Case& s) {
    return std::string(to_string(s.isa)) + " refuses";
  });
  EXPECT_FALSE(v.simulated);
  EXPECT_NE(v.reason.find("avx2 refuses"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("scalar refuses"), std::string::npos) << v.reason;
}

// The registry's own table: the microkernel declares scalar/avx2/avx512, and an AVX2 path
// runs on every CPU that has AVX-512 (and is skipped with the reason elsewhere).
TEST(ValgrindCase, RegistrySiblingOfMicrokernel) {
  if (!isa_supported(Isa::avx2)) GTEST_SKIP() << "this CPU has no AVX2: the avx2 sibling cannot be validated here";
  const ValgrindCase v = valgrind_case(avx512_case());
  ASSERT_TRUE(v.simulated) << v.reason;
  EXPECT_EQ(v.simulated->isa, Isa::avx2);
  EXPECT_EQ(v.simulated->dims, avx512_case().dims);
  EXPECT_EQ(v.simulated->params, avx512_case().params);
}
