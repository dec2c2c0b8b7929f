// Registry: the naming grammar round-trips, bad names and bad cases give clear errors,
// profiles expand to valid, unique, ISA-supported cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <regex>
#include <set>

#include "harness/args.hpp"
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
    if (c.family != "floyd_warshall" && c.dims.size() > 1) {  // FW's matrices are square; peak has one size
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
  EXPECT_EQ(filter_cases(all, "").size(), all.size());
}

// A filter that does not compile is a usage error naming the pattern and what is wrong.
TEST(Registry, MalformedFilterIsAUsageErrorNamingIt) {
  const auto all = expand_cases("smoke");
  for (const std::string bad : {"(unclosed", "[", "a{1000}{1000}", "\\1", "(?=x)", "*a", "a**", "(?<name"}) {
    try {
      filter_cases(all, bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const args::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("bad filter regex '" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

// Patterns that make a backtracking engine (std::regex) exponential in the name's length run
// in linear time: every one of them over names of thousands of characters finishes at once. A
// watchdog turns a hang into a failure.
TEST(Registry, CatastrophicFiltersCannotHang) {
  std::vector<Case> cases;
  for (const char fill : {'a', 'x', '0'}) {
    Case c{"sinkhorn", "c2r", Isa::none, DType::f64, {4, 4}, {{"pad", std::string(4000, fill)}}, 1};
    cases.push_back(c);
  }
  const std::vector<std::pair<std::string, size_t>> patterns = {
      {"(a*)*b", 0}, {"(x+x+)+y", 0}, {"(a|aa)+$", 0}, {"(.*)*(.*)*(.*)*z", 0},
      {"((((((((((a*)*)*)*)*)*)*)*)*)*)*c$", 0}, {"(\\w+\\d+)+\\W\\W\\W\\W\\W\\W\\W\\W$", 0},
      {"(0|00)+1", 0}, {"^(a+)+$", 0}, {"threads:1$", 3}};
  auto done = std::async(std::launch::async, [&] {
    for (const auto& [re, expected] : patterns) EXPECT_EQ(filter_cases(cases, re).size(), expected) << re;
  });
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "a filter did not finish within 60 s";
    std::_Exit(1);  // the matcher cannot be interrupted
  }
  done.get();
}

// A filter that selects nothing is an error (as Google Benchmark's "Failed to match any
// benchmarks"), not an empty run.
TEST(Registry, FilterMatchingNothingIsAnError) {
  EXPECT_FALSE(match_cases("smoke", "^sinkhorn/").empty());
  for (const std::string re : {"no-such-benchmark", "^$", "(x+x+)+y"}) {
    try {
      match_cases("smoke", re);
      ADD_FAILURE() << re << " matched";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("filter '" + re + "' matches no benchmark of profile smoke"), std::string::npos) << m;
      EXPECT_NE(m.find("Failed to match any benchmarks"), std::string::npos) << m;
    }
  }
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

void expect_refused(const std::string& name, const std::string& needle) {
  try {
    validate_case(parse_case_name(name));
    ADD_FAILURE() << name << " accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Sizes whose product does not fit in 64 bits, and sizes that do not fit themselves.
TEST(Registry, SizesOverflowingSixtyFourBitsAreRefused) {
  for (const char* name : {"gemm/ijk/f64/4294967296x4294967296x4294967296/threads:1",
                           "gemm/blocked/avx2/f64/2147483648x2147483648x2147483648/threads:1",
                           "sinkhorn/c2r/f64/3037000500x3037000500/part:iter/threads:1",
                           "rtamm/mnk/f64/4294967296x4294967296x4294967296/threads:1"})
    expect_refused(name, "overflows 64 bits");
  expect_refused("sinkhorn/c2r/f64/99999999999999999999x4/part:iter/threads:1", "does not fit in 64 bits");
  expect_refused("gemm/ijk/f64/100000x100000x100000/threads:1", "elements is absurd");
}

// Memory beyond the machine: refused before anything is allocated, with what is needed and
// what is available.
TEST(Registry, MemoryBeyondTheMachineIsRefusedBeforeAllocating) {
  const std::regex needs("needs [0-9]+ MiB but only [0-9]+ MiB of memory is available");
  for (const char* name : {"sinkhorn/c2r/f64/3000000x3000000/part:iter/threads:1",
                           "gemm/blocked/avx2/f64/1000000x1000000x10/threads:1",
                           "floyd_warshall/naive/f32/3000000x3000000/threads:1",
                           "rtamm/mnk/f64/2000000x2000000x2/threads:1"}) {
    Case c = parse_case_name(name);
    if (c.isa != Isa::none && !isa_supported(c.isa)) c.isa = Isa::scalar;
    try {
      validate_case(c);
      ADD_FAILURE() << name << " accepted";
    } catch (const Error& e) {
      EXPECT_TRUE(std::regex_search(e.what(), needs)) << e.what();
    }
  }
}

// Thread counts that do not fit an int are refused by name, never wrapped (4294967297 would
// wrap to 1); the others must be in 1..max_case_threads().
TEST(Registry, ThreadCountsThatWrapOrCannotBeCreatedAreRefused) {
  for (const char* t : {"99999999999", "4294967297", "2147483648", "-2147483649", "18446744073709551617"}) {
    const std::string name = std::string("sinkhorn/c2r/f64/64x64/part:iter/threads:") + t;
    try {
      parse_case_name(name);
      ADD_FAILURE() << name << " parsed";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_TRUE(m.find("out of range") != std::string::npos || m.find("must be an integer") != std::string::npos) << m;
    }
  }
  EXPECT_GE(max_case_threads(), 1);
  EXPECT_LE(max_case_threads(), args::kMaxThreads);
  for (const std::string& t : {std::string("0"), std::string("-1"), std::to_string(max_case_threads() + 1),
                              std::to_string(args::kMaxThreads + 1), std::string("99999")})
    expect_refused("sinkhorn/c2r/f64/64x64/part:iter/threads:" + t, "threads must be in 1..");
  EXPECT_NO_THROW(validate_case(parse_case_name("sinkhorn/c2r/f64/64x64/part:iter/threads:2")));
}

// Knobs whose products are sizes (panels, tiles, blocks) are bounded before they are
// multiplied: no overflow into a crash, a hang or a wrong result.
TEST(Registry, KnobsWhoseProductsOverflowAreRefused) {
  const std::string isa(to_string(best_isa()));
  expect_refused("gemm/blocked/" + isa + "/f64/64x64x64/mc:4611686018427387904/kc:4/threads:1", "must be in 1..2^28");
  expect_refused("gemm/blocked/" + isa + "/f64/64x64x64/nc:4611686018427387904/kc:4/threads:1", "must be in 1..2^28");
  expect_refused("gemm/blocked/" + isa + "/f64/64x64x64/kc:9223372036854775807/threads:1", "must be in 1..2^28");
  expect_refused("gemm/sfc_ca/" + isa + "/f64/64x64x64/bm:4611686018427387904/threads:1", "must be <= 2^20");
  expect_refused("gemm/sfc_ca/" + isa + "/f64/64x64x64/bk:4611686018427387904/threads:1", "must be <= 2^20");
  expect_refused("rtamm/mnk/f64/64x64x64/ncg:3458764513820540928/threads:1", "a block above 2^26 elements");
  expect_refused("rtamm/mnk/f64/64x64x64/mcg:3458764513820540928/threads:1", "a block above 2^26 elements");
  expect_refused("rtamm/mnk/f64/64x64x64/kcg:4611686018427387904/threads:1", "a block above 2^26 elements");
}
