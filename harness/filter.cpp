// --filter over case names with RE2 (its own file: the only one that needs RE2's headers).
#include <re2/re2.h>

#include "harness/args.hpp"  // args::UsageError
#include "harness/error.hpp"
#include "harness/families.hpp"

namespace rooflab {

std::vector<Case> filter_cases(const std::vector<Case>& cases, const std::string& regex) {
  if (regex.empty()) return cases;
  // RE2 runs in time linear in the name whatever the pattern ((a*)*b cannot backtrack); it
  // has no backreferences or lookaround, which names do not need.
  RE2::Options opt;
  opt.set_log_errors(false);
  const RE2 re(regex, opt);
  if (!re.ok()) throw args::UsageError("bad filter regex '" + regex + "': " + re.error());
  std::vector<Case> out;
  for (const auto& c : cases)
    if (RE2::PartialMatch(c.name(), re)) out.push_back(c);
  return out;
}

std::vector<Case> match_cases(std::string_view profile, const std::string& regex) {
  std::vector<Case> out = filter_cases(expand_cases(profile), regex);
  if (out.empty())
    throw Error("filter '" + regex + "' matches no benchmark of profile " + std::string(profile) +
                " (Failed to match any benchmarks; see `rooflab list --profile " + std::string(profile) + "`)");
  return out;
}

}  // namespace rooflab
