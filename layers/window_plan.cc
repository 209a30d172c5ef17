#include "layers/window_plan.h"

namespace distconv {

bool operator==(const WindowPlan& a, const WindowPlan& b) {
  return a.haloed == b.haloed && a.plain == b.plain && a.window == b.window &&
         a.haloed_local == b.haloed_local && a.plain_local == b.plain_local &&
         a.zero_first == b.zero_first;
}

WindowPlan plan_window(const ConvGeometry& geometry, const HaloLayout& haloed,
                       const HaloLayout& plain, int rank) {
  WindowPlan w{haloed, plain, geometry.forward_window(plain.shard(rank)),
               Box(), Box(), true};
  const Box& buffer = haloed.buffer_box(rank);
  w.haloed_local = w.window.src.shifted(-buffer.lower);
  w.plain_local = w.window.dst.shifted(-plain.buffer_box(rank).lower);
  w.zero_first = !w.has_kernel() || w.window.src != buffer;
  return w;
}

}  // namespace distconv
