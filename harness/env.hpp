#pragma once
// Environment variables: a read that treats empty as unset, and a setting for one scope.
#include <optional>
#include <string>

namespace rooflab {

// The variable's value when set and not empty.
std::optional<std::string> env(const char* name);

// Sets an environment variable for the lifetime of the object and restores the previous state
// (value or absence) after, exceptions included: e.g. a library's selection variable for that
// library's choice only, or PATH for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace rooflab
