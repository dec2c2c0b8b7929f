// Cross-family conformance: walks the registry and, for every family / variant / ISA / dtype,
// builds instances at tiny odd sizes (M != N, sizes that no register block, vector width or
// tile divides, 1 x N and N x 1 where the family takes them, 2 threads where it does) and
// checks that verify() passes. A new family or variant is covered without a line here.
#include <gtest/gtest.h>

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/isa.hpp"

namespace rooflab {
namespace {

struct Target {
  std::string family, variant;
  Isa isa;
  DType dtype;
};

void PrintTo(const Target& t, std::ostream* os) {
  // streamed piece by piece: a "/" + std::string temporary here trips GCC 12's -Wrestrict
  // false positive (in the inlined memcpy of std::string) when gtest inlines the printer
  *os << t.family << "/" << t.variant;
  if (t.isa != Isa::none) *os << "/" << to_string(t.isa);
  *os << "/" << to_string(t.dtype);
}

std::vector<Target> targets() {
  std::vector<Target> out;
  for (const Family& f : families())
    for (const Variant& v : f.variants)
      for (Isa isa : v.isas.empty() ? std::vector<Isa>{Isa::none} : v.isas)
        for (DType dt : v.dtypes) out.push_back({f.name, v.name, isa, dt});
  return out;
}

std::string target_name(const testing::TestParamInfo<Target>& info) {
  const Target& t = info.param;
  std::string n = t.family + "_" + t.variant;
  if (t.isa != Isa::none) n += "_" + std::string(to_string(t.isa));
  return n + "_" + std::string(to_string(t.dtype));
}

// The cases the family's profiles list for this variant on this machine (any ISA, dtype).
std::vector<Case> profile_cases(const Family& f, const std::string& variant) {
  std::vector<Case> out;
  for (const auto& profile : known_profiles())
    for (const Case& c : f.cases(profile))
      if (c.variant == variant) out.push_back(c);
  return out;
}

// Odd shapes of the family's arity; the first is the one every variant must take. None of 13,
// 17, 23, 29, 31, 37, 45, 53, 67 is a multiple of any MR (4, 6, 8, 12), NR (4 .. 32) or tile.
std::vector<std::vector<int64_t>> odd_shapes(size_t arity, bool square) {
  if (arity == 1) return {{37}, {13}, {1}};
  if (arity == 3) return {{37, 53, 29}, {53, 29, 37}, {1, 45, 17}, {45, 1, 17}, {23, 31, 1}};
  if (square) return {{37, 37}, {13, 13}, {1, 1}};
  return {{37, 53}, {53, 37}, {1, 67}, {67, 1}};
}

class Conformance : public testing::TestWithParam<Target> {};

TEST_P(Conformance, VerifiesAtOddSizes) {
  const Target& t = GetParam();
  if (!isa_supported(t.isa)) {
    const auto cap = isa_cap();
    GTEST_SKIP() << "this CPU does not run " << to_string(t.isa)
                 << (cap ? " (ROOFLAB_MAX_ISA=" + std::string(to_string(*cap)) + ")" : std::string());
  }
  const Family& fam = *find_family(t.family);
  const Variant& var = fam.at(t.variant);
  const std::vector<Case> listed = profile_cases(fam, t.variant);
  if (listed.empty()) {
    // Not runnable here (sinkhorn_cuda without a device, rtamm/adaptive without unit costs):
    // say why in the skip, from the variant itself, at a shape of the arity it takes (a 2-D
    // probe of a 3-D family gave its dimension complaint instead of the reason).
    std::string why;
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{37, 53}, std::vector<int64_t>{37, 53, 29}}) {
      const Case probe{t.family, t.variant, t.isa, t.dtype, dims, {}, 1};
      const std::string refused = var.accepts ? var.accepts(probe) : "";
      if (!refused.empty()) {
        if (why.empty()) why = refused;
        continue;
      }
      try {
        var.make(probe);
        why.clear();
      } catch (const Error& e) {
        why = e.what();
      }
      break;
    }
    GTEST_SKIP() << t.family << "/" << t.variant << " is in no profile on this machine: " << why;
  }
  bool square = true;
  for (const Case& c : listed) square = square && c.dims.size() == 2 && c.dims[0] == c.dims[1];
  const auto shapes = odd_shapes(listed.front().dims.size(), square);

  int verified = 0;
  std::string refused;  // recorded in the test's XML: what the family does not take
  for (size_t s = 0; s < shapes.size(); ++s) {
    for (int threads : {1, 2}) {
      // Default parameters: every knob the family chooses itself (blockings, tiles, plans).
      const Case c{t.family, t.variant, t.isa, t.dtype, shapes[s], {}, threads};
      SCOPED_TRACE(c.name());
      const std::string why = var.accepts ? var.accepts(c) : "";
      if (!why.empty()) {
        // The first shape on one thread is what every variant must take; the others (1 x N,
        // N x 1, threads) only where the family allows them.
        if (s == 0 && threads == 1) ADD_FAILURE() << "refused: " << why;
        refused += c.name() + " (" + why + "); ";
        continue;
      }
      ASSERT_NO_THROW(check_case(fam, c));
      const Verification v = var.make(c)->verify();
      EXPECT_TRUE(v.ok) << v.detail;
      ++verified;
    }
  }
  RecordProperty("verified", verified);
  RecordProperty("refused", refused);
  EXPECT_GE(verified, 1);
}

INSTANTIATE_TEST_SUITE_P(Registry, Conformance, testing::ValuesIn(targets()), target_name);

// The walk above reaches every family and variant of the registry (a family added to the list
// is conformance-tested without a line here).
TEST(Conformance, WalksEveryVariant) {
  std::set<std::string> walked;
  for (const Target& t : targets()) walked.insert(t.family + "/" + t.variant);
  size_t variants = 0;
  for (const Family& f : families()) {
    variants += f.variants.size();
    for (const Variant& v : f.variants) EXPECT_TRUE(walked.count(f.name + "/" + v.name)) << f.name << "/" << v.name;
  }
  EXPECT_EQ(walked.size(), variants);
  EXPECT_GE(families().size(), 4u);
}

}  // namespace
}  // namespace rooflab
