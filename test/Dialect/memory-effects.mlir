// RUN: flamia-opt %s -split-input-file --cse | FileCheck %s
// The memory effects ODS declares, seen by an upstream pass: CSE merges
// identical pure ops (flamia.item.load) and read-only ops with no write
// between them, and keeps every op that writes memory (flamia.tma.load
// writes its shared-memory tile and pipeline, flamia.attn.store and
// flamia.grad.store their outputs).

// CHECK-LABEL: func.func @pure_item_load_is_merged
// CHECK-COUNT-1: flamia.item.load
// CHECK-NOT: flamia.item.load
func.func @pure_item_load_is_merged(%items: !flamia.global<?x8xi32>, %i: i32) -> (i32, i32) {
  %a:8 = flamia.item.load %items[%i] : !flamia.global<?x8xi32>
  %b:8 = flamia.item.load %items[%i] : !flamia.global<?x8xi32>
  return %a#0, %b#0 : i32, i32
}

// -----

// CHECK-LABEL: func.func @tma_loads_are_kept
// CHECK-COUNT-2: flamia.tma.load
func.func @tma_loads_are_kept(%q: !flamia.global<?x8x128xbf16>, %r: i32,
                              %qs: !flamia.smem<1x128x128xbf16>, %qp: !flamia.pipeline<1>) {
  flamia.tma.load %q[%r, %r] -> %qs[%r] on %qp
      : !flamia.global<?x8x128xbf16>, !flamia.smem<1x128x128xbf16>, !flamia.pipeline<1>
  flamia.tma.load %q[%r, %r] -> %qs[%r] on %qp
      : !flamia.global<?x8x128xbf16>, !flamia.smem<1x128x128xbf16>, !flamia.pipeline<1>
  return
}

// -----

// Two identical gradient stores both stay (they write memory).
// CHECK-LABEL: func.func @grad_stores_are_kept
// CHECK-COUNT-2: flamia.grad.store
func.func @grad_stores_are_kept(%acc: !flamia.frag<64x128xf32>, %out: !flamia.global<?x2x128xf32>,
                                %i: i32, %f: f32) {
  flamia.grad.store %acc times %f to %out rows(%i, %i, %i) head %i
      : !flamia.frag<64x128xf32>, !flamia.global<?x2x128xf32>
  flamia.grad.store %acc times %f to %out rows(%i, %i, %i) head %i
      : !flamia.frag<64x128xf32>, !flamia.global<?x2x128xf32>
  return
}

// -----

// softmax.grad only reads LSE and D: two identical ones with no write in
// between are one.
// CHECK-LABEL: func.func @softmax_grad_reads_only
// CHECK-COUNT-1: flamia.softmax.grad
// CHECK-NOT: flamia.softmax.grad
func.func @softmax_grad_reads_only(%s: !flamia.frag<64x64xf32>, %lse: !flamia.global<4x?xf32>,
                                   %i: i32, %c: f32) -> (!flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>) {
  %p, %ds = flamia.softmax.grad %s, %s lse %lse delta %lse head %i queries(%i, %i, %i)
      tokens %i scale %c : !flamia.frag<64x64xf32>, !flamia.global<4x?xf32>
  %p2, %ds2 = flamia.softmax.grad %s, %s lse %lse delta %lse head %i queries(%i, %i, %i)
      tokens %i scale %c : !flamia.frag<64x64xf32>, !flamia.global<4x?xf32>
  return %ds, %ds2 : !flamia.frag<64x64xf32>, !flamia.frag<64x64xf32>
}
