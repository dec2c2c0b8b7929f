// Inputs (graph generators), input and result checks, and the double-precision references.
#include <cmath>
#include <limits>
#include <mutex>
#include <sstream>

#include "harness/error.hpp"
#include "kernels/floyd_warshall/floyd_warshall.hpp"

namespace rooflab::fw {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// Counter-based hash: edge (u, v) does not depend on the order of generation or on n, so a
// threaded first touch and the references see the same graph.
uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
uint64_t edge_hash(Graph g, int64_t u, int64_t v) {
  return mix(mix(0xF100 + uint64_t(g)) ^ (uint64_t(u) << 32 | uint64_t(v)));
}
// Edge present with probability per10k / 10000 (high bits), weight in [1, 100] (low bits).
double random_edge(uint64_t h, uint64_t per10k) {
  return (h >> 40) % 10000 < per10k ? double(1 + h % 100) : kInf;
}
}  // namespace

std::string to_string(Graph g) {
  switch (g) {
    case Graph::dense: return "dense";
    case Graph::sparse: return "sparse";
    case Graph::negative: return "negative";
    case Graph::negcycle: return "negcycle";
  }
  return "?";
}

Graph parse_graph(const std::string& s) {
  for (Graph g : {Graph::dense, Graph::sparse, Graph::negative, Graph::negcycle})
    if (to_string(g) == s) return g;
  throw Error("unknown graph '" + s + "' (known: dense, sparse, negative, negcycle)");
}

double potential(Graph g, int64_t v) {
  if (g != Graph::negative && g != Graph::negcycle) return 0;
  return double(mix(0xB07E ^ uint64_t(v)) % 200);
}

double weight(Graph g, int64_t n, int64_t u, int64_t v) {
  if (g == Graph::negcycle) {
    // A cycle of total weight -1 or less: 0 -> 1 -> 2 -> 0, 0 <-> 1, or a self-loop.
    if (n == 1 && u == 0 && v == 0) return -1;
    if (n == 2 && u < 2 && v < 2 && u != v) return u == 0 ? -2 : 1;
    if (n >= 3 && u < 3 && v == (u + 1) % 3) return -1;
  }
  if (u == v) return 0;
  const uint64_t h = edge_hash(g, u, v);
  switch (g) {
    case Graph::dense: return random_edge(h, 10000);
    case Graph::sparse: return random_edge(h, 200);
    case Graph::negative:
    case Graph::negcycle: {
      const double w = random_edge(h, 500);
      return w == kInf ? kInf : w + potential(g, u) - potential(g, v);
    }
  }
  return kInf;
}

template <class T>
void generate(Graph g, int64_t n, T* D, int64_t ld) {
#pragma omp parallel for schedule(static)
  for (int64_t u = 0; u < n; ++u)
    for (int64_t v = 0; v < n; ++v) D[u * ld + v] = T(weight(g, n, u, v));
}

template <class T>
void check_input(const T* D, int64_t n, int64_t ld) {
  if (n <= 0) throw Error("floyd_warshall: N must be >= 1, got " + std::to_string(n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const T w = D[i * ld + j];
      if (std::isnan(w) || w == -std::numeric_limits<T>::infinity())
        throw Error("floyd_warshall: weight of edge " + std::to_string(i) + " -> " +
                    std::to_string(j) + " is " + (std::isnan(w) ? "NaN" : "-inf") +
                    " (weights must be finite or +inf for no edge)");
    }
}

template <class T>
int64_t negative_cycle_vertex(const T* D, int64_t n, int64_t ld) {
  for (int64_t v = 0; v < n; ++v)
    if (!(D[v * ld + v] >= 0)) return v;
  return -1;
}

std::shared_ptr<const std::vector<double>> reference(Graph g, int64_t n) {
  static std::mutex m;
  static Graph last_g;
  static std::shared_ptr<const std::vector<double>> last;
  const std::lock_guard lock(m);
  if (last && last_g == g && int64_t(last->size()) == n * n) return last;
  auto R = std::make_shared<std::vector<double>>(size_t(n * n));
  double* r = R->data();
  generate(g, n, r, n);
  for (int64_t k = 0; k < n; ++k) {
    const double* rk = r + k * n;
    for (int64_t i = 0; i < n; ++i) {
      const double a = r[i * n + k];
      if (a == kInf) continue;  // nothing to relax through k (and no inf + -inf)
      double* ri = r + i * n;
      for (int64_t j = 0; j < n; ++j) ri[j] = a + rk[j] < ri[j] ? a + rk[j] : ri[j];
    }
  }
  last_g = g;
  last = std::move(R);
  return last;
}

namespace {
// Dense Dijkstra from `s` on the reduced weights w(u,v) - p(u) + p(v) >= 0 (forward: edges
// s -> ...; backward: edges ... -> s), converted back to true distances.
std::vector<double> dijkstra(Graph g, int64_t n, int64_t s, bool forward) {
  if (g == Graph::negcycle) throw Error("floyd_warshall: no Dijkstra reference on a graph with a negative cycle");
  std::vector<double> d(size_t(n), kInf);
  std::vector<char> done(size_t(n), 0);
  d[size_t(s)] = 0;
  for (int64_t step = 0; step < n; ++step) {
    int64_t u = -1;
    for (int64_t v = 0; v < n; ++v)
      if (!done[size_t(v)] && (u < 0 || d[size_t(v)] < d[size_t(u)])) u = v;
    if (d[size_t(u)] == kInf) break;
    done[size_t(u)] = 1;
    for (int64_t v = 0; v < n; ++v) {
      if (done[size_t(v)]) continue;
      const double w = forward ? weight(g, n, u, v) - potential(g, u) + potential(g, v)
                               : weight(g, n, v, u) - potential(g, v) + potential(g, u);
      if (d[size_t(u)] + w < d[size_t(v)]) d[size_t(v)] = d[size_t(u)] + w;
    }
  }
  for (int64_t v = 0; v < n; ++v)
    if (d[size_t(v)] != kInf)
      d[size_t(v)] += forward ? potential(g, s) - potential(g, v) : potential(g, v) - potential(g, s);
  return d;
}
}  // namespace

std::vector<double> dijkstra_row(Graph g, int64_t n, int64_t s) { return dijkstra(g, n, s, true); }
std::vector<double> dijkstra_col(Graph g, int64_t n, int64_t t) { return dijkstra(g, n, t, false); }

template void generate<float>(Graph, int64_t, float*, int64_t);
template void generate<double>(Graph, int64_t, double*, int64_t);
template void check_input<float>(const float*, int64_t, int64_t);
template void check_input<double>(const double*, int64_t, int64_t);
template int64_t negative_cycle_vertex<float>(const float*, int64_t, int64_t);
template int64_t negative_cycle_vertex<double>(const double*, int64_t, int64_t);

}  // namespace rooflab::fw
