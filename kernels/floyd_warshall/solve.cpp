// solve(): a plan (schedule, layout, register blocking) over a kernel table.
#include <string>

#include "harness/error.hpp"
#include "kernels/floyd_warshall/detail.hpp"

namespace rooflab::fw {

int64_t padded_size(int64_t n, const Plan& plan) {
  if (plan.schedule == Schedule::flat) return n;
  return (n + plan.bs - 1) / plan.bs * plan.bs;
}

CriticalOps critical_tile_ops(const Plan& plan, int64_t nt, int threads) {
  if (plan.schedule == Schedule::flat) throw Error("floyd_warshall: the flat schedule has no tiles");
  CriticalOps c = plan.schedule == Schedule::blocked ? detail::blocked_critical_ops(nt, threads)
                                                     : detail::recursive_critical_ops(nt, (plan.task_min + plan.bs - 1) / plan.bs, threads);
  if (!plan.regblock) c.plain = c.all;
  return c;
}

template <class T>
void solve(const Plan& plan, const Kernels<T>& k, T* D, int64_t np, int64_t ld, T* work) {
  if (plan.schedule == Schedule::flat) {
    if (plan.layout == Layout::bdl || plan.regblock)
      throw Error("floyd_warshall: the flat schedule has no tiles (no bdl, no regblock)");
    return detail::flat_schedule(k, D, np, ld);
  }
  if (plan.bs < 1 || np % plan.bs != 0)
    throw Error("floyd_warshall: matrix size " + std::to_string(np) +
                " is not a multiple of the block size " + std::to_string(plan.bs));
  const bool bdl = plan.layout == Layout::bdl;
  if (bdl && !work) throw Error("floyd_warshall: layout bdl needs a scratch matrix");
  detail::Grid<T> g{bdl ? work : D, ld, plan.bs, np / plan.bs, bdl, k, plan.regblock};
  if (bdl) detail::to_bdl(D, np, ld, plan.bs, work);
  if (plan.schedule == Schedule::blocked) detail::blocked_schedule(g);
  else detail::recursive_schedule(g, (plan.task_min + plan.bs - 1) / plan.bs);
  if (bdl) detail::from_bdl(work, np, plan.bs, D, ld);
}
template void solve<float>(const Plan&, const Kernels<float>&, float*, int64_t, int64_t, float*);
template void solve<double>(const Plan&, const Kernels<double>&, double*, int64_t, int64_t, double*);

}  // namespace rooflab::fw
