// Registry: the naming grammar round-trips, bad names and bad cases give clear errors,
// profiles expand to valid, unique, ISA-supported cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "harness/error.hpp"
#include "harness/families.hpp"

using namespace rooflab;

TEST(Naming, RoundTripWithIsaAndParams) {
  Case c{"sinkhorn", "microkernel", Isa::avx2, DType::f32, {1023, 517}, {{"part", "col"}}, 2};
  EXPECT_EQ(c.name(), "sinkhorn/microkernel/avx2/f32/1023x517/part:col/threads:2");
  Case p = parse_case_name(c.name());
  EXPECT_EQ(p.family, "sinkhorn");
  EXPECT_EQ(p.variant, "microkernel");
  EXPECT_EQ(p.isa, Isa::avx2);
  EXPECT_EQ(p.dtype, DType::f32);
  EXPECT_EQ(p.dims, (std::vector<int64_t>{1023, 517}));
  EXPECT_EQ(p.param_str("part", ""), "col");
  EXPECT_EQ(p.threads, 2);
  EXPECT_EQ(p.name(), c.name());
}

TEST(Naming, NoIsaThreeDims) {
  Case p = parse_case_name("gemm/sfc_ca/f64/256x512x1024/k_layers:2/threads:1");
  EXPECT_EQ(p.isa, Isa::none);
  EXPECT_EQ(p.dims.size(), 3u);
  EXPECT_EQ(p.param_int("k_layers", 0), 2);
  EXPECT_EQ(p.param_int("kbf", 7), 7);
  EXPECT_EQ(p.name(), "gemm/sfc_ca/f64/256x512x1024/k_layers:2/threads:1");
}

TEST(Naming, RejectsMalformed) {
  for (const char* bad : {"sinkhorn", "sinkhorn/c2r/f16/4x4/threads:1", "sinkhorn/c2r/f64/4xx4/threads:1",
                          "sinkhorn/c2r/f64/x4/threads:1", "sinkhorn/c2r/f64/4x4/nokv",
                          "sinkhorn/c2r/f64/4x4/threads:1/part:col", "sinkhorn/c2r/f64/4x4/threads:two"}) {
    EXPECT_THROW(parse_case_name(bad), Error) << bad;
  }
  try {
    parse_case_name("sinkhorn/c2r/f16/4x4/threads:1");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown dtype 'f16'"), std::string::npos) << e.what();
  }
}

TEST(Naming, ParamIntRejectsNonInteger) {
  Case p = parse_case_name("sinkhorn/blocked/f64/8x8/mc:abc/threads:1");
  EXPECT_THROW(p.param_int("mc", 8), Error);
}

TEST(Registry, ProfilesExpandToValidUniqueCases) {
  for (const auto& profile : known_profiles()) {
    auto cases = expand_cases(profile);
    ASSERT_FALSE(cases.empty()) << profile;
    std::set<std::string> names;
    for (const auto& c : cases) {
      EXPECT_TRUE(names.insert(c.name()).second) << "duplicate " << c.name();
      EXPECT_EQ(parse_case_name(c.name()).name(), c.name());
      const Variant& v = variant_of(c);
      if (!v.isas.empty()) {
        EXPECT_TRUE(isa_supported(c.isa)) << c.name();
      }
      if (v.accepts) {
        EXPECT_EQ(v.accepts(c), "") << c.name();
      }
    }
  }
  EXPECT_THROW(expand_cases("nope"), Error);
}

// The smoke profile: every family and every variant it can run here at least once, at odd
// sizes (M != N where the family has rectangles), and every case verified against its
// family's reference: an edge this CPU's micro-kernels get wrong fails here, in a second.
TEST(Registry, SmokeCoversEveryVariantAndEveryCaseVerifies) {
  const auto cases = expand_cases("smoke");
  std::map<std::string, std::set<std::string>> seen;
  for (const Case& c : cases) seen[c.family].insert(c.variant);
  for (const Family& f : families()) {
    if (f.cases("quick").empty()) continue;  // nothing runs here (sinkhorn_cuda without a device)
    EXPECT_FALSE(f.cases("smoke").empty()) << f.name;
    for (const Variant& v : f.variants) {
      if (f.name == "rtamm" && v.name == "adaptive") continue;  // needs measured unit costs (rtamm evaluate)
      EXPECT_TRUE(seen[f.name].count(v.name)) << "smoke lacks " << f.name << "/" << v.name;
    }
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name());
    EXPECT_TRUE(std::any_of(c.dims.begin(), c.dims.end(), [](int64_t d) { return d % 2 == 1; }));
    if (c.family != "floyd_warshall") {  // FW's matrices are square
      EXPECT_NE(c.dims[0], c.dims[1]);
    }
    ASSERT_NO_THROW(validate_case(c));
    auto inst = variant_of(c).make(c);
    const Verification v = inst->verify();
    EXPECT_TRUE(v.ok) << v.detail;
  }
}

TEST(Registry, FilterIsRegexSearch) {
  auto all = expand_cases("quick");
  auto some = filter_cases(all, "^sinkhorn/c2r/");
  ASSERT_FALSE(some.empty());
  EXPECT_LT(some.size(), all.size());
  for (const auto& c : some) EXPECT_EQ(c.variant, "c2r");
  EXPECT_TRUE(filter_cases(all, "no-such-benchmark").empty());
  EXPECT_THROW(filter_cases(all, "(unclosed"), Error);
}

TEST(Registry, ValidateGivesClearErrors) {
  auto expect_error = [](const std::string& name, const std::string& needle) {
    try {
      validate_case(parse_case_name(name));
      ADD_FAILURE() << name << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("nofamily/x/f64/4x4/threads:1", "unknown family 'nofamily'");
  expect_error("sinkhorn/novariant/f64/4x4/part:iter/threads:1", "unknown variant 'novariant'");
  expect_error("sinkhorn/c2r/f64/0x4/part:iter/threads:1", "sizes must be positive");
  expect_error("sinkhorn/c2r/f64/4x4/part:iter/threads:0", "threads must be");
  expect_error("sinkhorn/c2r/f64/4000000000x4/part:iter/threads:1", "absurd");
  // Fits the size limits but not in memory: refused before allocating.
  expect_error("sinkhorn/c2r/f64/2000000x2000000/part:iter/threads:1", "memory");
  expect_error("sinkhorn/c2r/avx2/f64/4x4/part:iter/threads:1", "not ISA-specific");
}
