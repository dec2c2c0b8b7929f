// The peak family (kernels/peak): a case's flops are characterize's for the same loop (so the
// model prices it against that ceiling), it verifies on every thread, and it refuses what it
// cannot count exactly.
#include <gtest/gtest.h>

#include <string>

#include "harness/families.hpp"
#include "harness/isa.hpp"
#include "microbench/kernels.hpp"

namespace rooflab {
namespace {

const Variant& peak(const std::string& op) { return find_family("peak")->at(op); }

TEST(Peak, FlopsAreCharacterizesForTheSameLoopAndItsCeilingIsNamedAlike) {
  for (const microbench::ComputeKernel& k : microbench::compute_kernels(microbench::kernels_for(best_isa()))) {
    const std::string name = k.name, op = name.substr(0, name.find('_'));
    const DType dt = name.ends_with("f32") ? DType::f32 : DType::f64;
    const Case c{"peak", op, best_isa(), dt, {1000}, {}, 3};
    const Model m = peak(op).model(c);
    SCOPED_TRACE(c.name());
    EXPECT_EQ(m.flops, 1000.0 * k.lanes * k.flops_per_lane * 3);
    EXPECT_EQ(m.compute_ceiling, name);
    EXPECT_EQ(m.bytes(), 0.0);
  }
}

TEST(Peak, EveryThreadsAccumulatorsAreChecked) {
  for (const char* op : {"fma", "add", "mul", "addmin"})
    for (DType dt : {DType::f32, DType::f64}) {
      const Case c{"peak", op, best_isa(), dt, {4097}, {}, 2};
      SCOPED_TRACE(c.name());
      const Verification v = peak(op).make(c)->verify();
      EXPECT_TRUE(v.ok) << v.detail;
    }
  // The most iterations it takes: f32 still counts exactly, and addmin's bound (2^24 + 1, 2^24 in
  // f32) is not reached before the last one. One thread: seconds in the sanitizer build.
  for (const char* op : {"fma", "addmin"}) {
    const Case c{"peak", op, best_isa(), DType::f32, {int64_t(1) << 24}, {}, 1};
    SCOPED_TRACE(c.name());
    const Verification v = peak(op).make(c)->verify();
    EXPECT_TRUE(v.ok) << v.detail;
  }
}

TEST(Peak, RefusesWhatItCannotCountExactlyAndOtherShapes) {
  const Variant& fma = peak("fma");
  EXPECT_NE(fma.accepts({"peak", "fma", Isa::scalar, DType::f32, {(int64_t(1) << 24) + 1}, {}, 1}).find("1 to 2^24"), std::string::npos);
  EXPECT_NE(fma.accepts({"peak", "fma", Isa::scalar, DType::f64, {64, 64}, {}, 1}).find("one size"), std::string::npos);
  EXPECT_NE(fma.accepts({"peak", "fma", Isa::scalar, DType::f64, {64}, {{"bs", "8"}}, 1}).find("no parameters"), std::string::npos);
  EXPECT_EQ(fma.accepts({"peak", "fma", Isa::scalar, DType::f64, {64}, {}, 1}), "");
}

TEST(Peak, OnlyTheSmokeProfileListsIt) {
  const Family& f = *find_family("peak");
  EXPECT_FALSE(f.cases("smoke").empty());
  EXPECT_TRUE(f.cases("quick").empty());
  EXPECT_TRUE(f.cases("paper").empty());
}

}  // namespace
}  // namespace rooflab
