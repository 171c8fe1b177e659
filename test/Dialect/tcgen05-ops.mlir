// RUN: flamia-opt %s -split-input-file | flamia-opt -split-input-file | FileCheck %s
// RUN: flamia-opt %s -split-input-file --mlir-print-op-generic | flamia-opt -split-input-file | FileCheck %s
// The sm_100a block ops (tensor memory, tcgen05 MMAs, block-scale copies,
// commits, arrivals, bulk copies) print in a form that parses back to the
// same IR, custom and generic, in each of their forms.

// A kernel in the shape flamia-tile writes for sm_100a (loops left out): a
// single-thread producer, a single-thread MMA issuer and a softmax
// warpgroup around 512 columns of tensor memory.
flamia.kernel @tcgen05(%ksf_g: !flamia.global<?x2x512xi8>, %slot: i32)
    attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 384 : i64} {
  %q8 = flamia.smem.alloc : !flamia.smem<1x128x128xf8E4M3FN>
  %k8 = flamia.smem.alloc : !flamia.smem<2x128x128xf8E4M3FN>
  %v8 = flamia.smem.alloc : !flamia.smem<2x128x128xf8E4M3FN>
  %qsf = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
  %ksf = flamia.smem.alloc : !flamia.smem<2x8x64xi8>
  %vsf = flamia.smem.alloc : !flamia.smem<2x8x64xi8>
  %q16 = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
  %k16 = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
  %v16 = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
  %kvp = flamia.pipeline.create consumers 1 : !flamia.pipeline<2>
  %sp = flamia.pipeline.create consumers 128 : !flamia.pipeline<1>
  %pp = flamia.pipeline.create consumers 1 producers 128 : !flamia.pipeline<1>
  %tmem = flamia.tmem.alloc columns 512 by_warpgroup 2
  flamia.role "producer" warpgroups [0, 1) registers 40 single_thread {
    %c0 = arith.constant 0 : i32
    %st = flamia.pipeline.acquire producer %kvp[%c0] : !flamia.pipeline<2>
    flamia.pipeline.expect %kvp[%st] bytes 33792 : !flamia.pipeline<2>
    flamia.bulk.load %ksf_g[%slot] -> %ksf[%st] on %kvp
        : !flamia.global<?x2x512xi8>, !flamia.smem<2x8x64xi8>, !flamia.pipeline<2>
    flamia.return
  }
  flamia.role "mma" warpgroups [1, 2) registers 104 single_thread {
    %c0 = arith.constant 0 : i32
    %c448 = arith.constant 448 : i32
    %c452 = arith.constant 452 : i32
    %c456 = arith.constant 456 : i32
    %c468 = arith.constant 468 : i32
    %true = arith.constant true
    %false = arith.constant false
    %st = flamia.pipeline.acquire consumer %kvp[%c0] : !flamia.pipeline<2>
    // Block scales of Q and K, then S = Q K^T with A in shared memory:
    // E4M3 (block-scaled) and bf16.
    flamia.umma.scales %qsf[%c0] -> %tmem[448] : !flamia.smem<1x8x64xi8>
    %sfq = arith.addi %tmem, %c448 : i32
    %sfk = arith.addi %tmem, %c452 : i32
    flamia.umma.scales %ksf[%st] -> %sfk[0] : !flamia.smem<2x8x64xi8>
    flamia.umma %tmem[0] a %q8[%c0] b %k8[%st] accumulate %false scales(%sfq, %sfk)
        : (i32, !flamia.smem<1x128x128xf8E4M3FN>, i32, !flamia.smem<2x128x128xf8E4M3FN>, i32, i1, i32, i32) -> ()
    flamia.umma %tmem[128] a %q16[%c0] b %k16[%c0] accumulate %false
        : (i32, !flamia.smem<1x128x128xbf16>, i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
    flamia.umma.commit full %sp[%c0] : !flamia.pipeline<1>
    // O += P V with P in tensor memory: bf16, and E4M3 with V's scales.
    %p = flamia.pipeline.acquire consumer %pp[%c0] : !flamia.pipeline<1>
    flamia.umma %tmem[256] b %v16[%c0] accumulate %true {a_column = 384 : i64, a_type = bf16, b_transposed}
        : (i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
    %sfp = arith.addi %tmem, %c468 : i32
    %sfv = arith.addi %tmem, %c456 : i32
    flamia.umma.scales %vsf[%st] -> %sfv[0] : !flamia.smem<2x8x64xi8>
    flamia.umma %tmem[256] b %v8[%st] accumulate %true scales(%sfp, %sfv) {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
        : (i32, !flamia.smem<2x128x128xf8E4M3FN>, i32, i1, i32, i32) -> ()
    flamia.umma.commit empty %pp[%p] : !flamia.pipeline<1>
    flamia.umma.commit empty %kvp[%st] : !flamia.pipeline<2>
    flamia.return
  }
  flamia.role "softmax" warpgroups [2, 3) registers 240 {
    %c0 = arith.constant 0 : i32
    // Scale 1 (E8M0 127) for the fixed-scale P.
    flamia.tmem.fill %tmem[468] columns 4 value 2139062143
    %s = flamia.tmem.load %tmem[0] : !flamia.frag<128x128xf32>
    %pb = flamia.frag.zero : !flamia.frag<128x128xbf16>
    flamia.tmem.store %pb, %tmem[384] : !flamia.frag<128x128xbf16>
    %p8 = flamia.frag.zero : !flamia.frag<128x128xf8E4M3FN>
    flamia.tmem.store %p8, %tmem[384] : !flamia.frag<128x128xf8E4M3FN>
    %o = flamia.tmem.load %tmem[256] : !flamia.frag<128x32xf32>
    flamia.tmem.store %o, %tmem[256] : !flamia.frag<128x32xf32>
    flamia.pipeline.arrive %pp[%c0] : !flamia.pipeline<1>
    flamia.tmem.dealloc %tmem columns 512
    flamia.return
  }
  flamia.return
}

// CHECK-LABEL: flamia.kernel @tcgen05(
// CHECK: %[[Q8:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xf8E4M3FN>
// CHECK-NEXT: %[[K8:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xf8E4M3FN>
// CHECK-NEXT: %[[V8:.*]] = flamia.smem.alloc : !flamia.smem<2x128x128xf8E4M3FN>
// CHECK-NEXT: %[[QSF:.*]] = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
// CHECK-NEXT: %[[KSF:.*]] = flamia.smem.alloc : !flamia.smem<2x8x64xi8>
// CHECK-NEXT: %[[VSF:.*]] = flamia.smem.alloc : !flamia.smem<2x8x64xi8>
// CHECK-NEXT: %[[Q16:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK-NEXT: %[[K16:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK-NEXT: %[[V16:.*]] = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
// CHECK-NEXT: %[[KVP:.*]] = flamia.pipeline.create consumers 1 : !flamia.pipeline<2>
// CHECK-NEXT: %[[SP:.*]] = flamia.pipeline.create consumers 128 : !flamia.pipeline<1>
// CHECK-NEXT: %[[PP:.*]] = flamia.pipeline.create consumers 1 producers 128 : !flamia.pipeline<1>
// CHECK-NEXT: %[[TMEM:.*]] = flamia.tmem.alloc columns 512 by_warpgroup 2{{$}}
// CHECK: flamia.role "producer"
// CHECK: %[[ST0:.*]] = flamia.pipeline.acquire producer %[[KVP]]
// CHECK: flamia.bulk.load %arg0[%arg1] -> %[[KSF]][%[[ST0]]] on %[[KVP]] : !flamia.global<?x2x512xi8>, !flamia.smem<2x8x64xi8>, !flamia.pipeline<2>{{$}}
// CHECK: flamia.role "mma" warpgroups[1, 2) registers 104 single_thread
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[TRUE:.*]] = arith.constant true
// CHECK-DAG: %[[FALSE:.*]] = arith.constant false
// CHECK: %[[ST:.*]] = flamia.pipeline.acquire consumer %[[KVP]]
// CHECK-NEXT: flamia.umma.scales %[[QSF]][%[[C0]]] -> %[[TMEM]][448] : !flamia.smem<1x8x64xi8>{{$}}
// CHECK-NEXT: %[[SFQ:.*]] = arith.addi %[[TMEM]]
// CHECK-NEXT: %[[SFK:.*]] = arith.addi %[[TMEM]]
// CHECK-NEXT: flamia.umma.scales %[[KSF]][%[[ST]]] -> %[[SFK]][0] : !flamia.smem<2x8x64xi8>{{$}}
// CHECK-NEXT: flamia.umma %[[TMEM]][0] a %[[Q8]][%[[C0]]] b %[[K8]][%[[ST]]] accumulate %[[FALSE]] scales(%[[SFQ]], %[[SFK]]) : (i32, !flamia.smem<1x128x128xf8E4M3FN>, i32, !flamia.smem<2x128x128xf8E4M3FN>, i32, i1, i32, i32) -> (){{$}}
// CHECK-NEXT: flamia.umma %[[TMEM]][128] a %[[Q16]][%[[C0]]] b %[[K16]][%[[C0]]] accumulate %[[FALSE]] : (i32, !flamia.smem<1x128x128xbf16>, i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> (){{$}}
// CHECK-NEXT: flamia.umma.commit full %[[SP]][%[[C0]]] : !flamia.pipeline<1>{{$}}
// CHECK-NEXT: %[[P:.*]] = flamia.pipeline.acquire consumer %[[PP]]
// CHECK-NEXT: flamia.umma %[[TMEM]][256] b %[[V16]][%[[C0]]] accumulate %[[TRUE]] {a_column = 384 : i64, a_type = bf16, b_transposed} : (i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> (){{$}}
// CHECK-NEXT: %[[SFP:.*]] = arith.addi %[[TMEM]]
// CHECK-NEXT: %[[SFV:.*]] = arith.addi %[[TMEM]]
// CHECK-NEXT: flamia.umma.scales %[[VSF]][%[[ST]]] -> %[[SFV]][0] : !flamia.smem<2x8x64xi8>{{$}}
// CHECK-NEXT: flamia.umma %[[TMEM]][256] b %[[V8]][%[[ST]]] accumulate %[[TRUE]] scales(%[[SFP]], %[[SFV]]) {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed} : (i32, !flamia.smem<2x128x128xf8E4M3FN>, i32, i1, i32, i32) -> (){{$}}
// CHECK-NEXT: flamia.umma.commit empty %[[PP]][%[[P]]] : !flamia.pipeline<1>{{$}}
// CHECK-NEXT: flamia.umma.commit empty %[[KVP]][%[[ST]]] : !flamia.pipeline<2>{{$}}
// CHECK: flamia.role "softmax" warpgroups[2, 3) registers 240 {
// CHECK-NEXT: %[[C0S:.*]] = arith.constant 0 : i32
// CHECK-NEXT: flamia.tmem.fill %[[TMEM]][468] columns 4 value 2139062143{{$}}
// CHECK-NEXT: flamia.tmem.load %[[TMEM]][0] : !flamia.frag<128x128xf32>{{$}}
// CHECK-NEXT: %[[PB:.*]] = flamia.frag.zero : !flamia.frag<128x128xbf16>
// CHECK-NEXT: flamia.tmem.store %[[PB]], %[[TMEM]][384] : !flamia.frag<128x128xbf16>{{$}}
// CHECK-NEXT: %[[P8:.*]] = flamia.frag.zero : !flamia.frag<128x128xf8E4M3FN>
// CHECK-NEXT: flamia.tmem.store %[[P8]], %[[TMEM]][384] : !flamia.frag<128x128xf8E4M3FN>{{$}}
// CHECK-NEXT: %[[O:.*]] = flamia.tmem.load %[[TMEM]][256] : !flamia.frag<128x32xf32>{{$}}
// CHECK-NEXT: flamia.tmem.store %[[O]], %[[TMEM]][256] : !flamia.frag<128x32xf32>{{$}}
// CHECK-NEXT: flamia.pipeline.arrive %[[PP]][%[[C0S]]] : !flamia.pipeline<1>{{$}}
// CHECK-NEXT: flamia.tmem.dealloc %[[TMEM]] columns 512{{$}}
// CHECK-NEXT: }
// CHECK-NEXT: flamia.return

// -----

// The smallest allocation, by the first warpgroup, freed by a role of two
// warpgroups that starts there.
flamia.kernel @alloc_first(%x: i32)
    attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  %tmem = flamia.tmem.alloc columns 32 by_warpgroup 0
  flamia.role "all" warpgroups [0, 2) registers 128 {
    %s = flamia.tmem.load %tmem[16] : !flamia.frag<128x16xf32>
    flamia.tmem.fill %tmem[0] columns 1 value -1
    flamia.tmem.dealloc %tmem columns 32
    flamia.return
  }
  flamia.return
}

// CHECK-LABEL: flamia.kernel @alloc_first(
// CHECK: %[[TMEM:.*]] = flamia.tmem.alloc columns 32 by_warpgroup 0{{$}}
// CHECK-NEXT: flamia.role "all" warpgroups[0, 2) registers 128 {
// CHECK-NEXT: flamia.tmem.load %[[TMEM]][16] : !flamia.frag<128x16xf32>{{$}}
// CHECK-NEXT: flamia.tmem.fill %[[TMEM]][0] columns 1 value -1{{$}}
// CHECK-NEXT: flamia.tmem.dealloc %[[TMEM]] columns 32{{$}}

// -----

// MMA shapes outside a kernel: N from 16 to 256, B K-major (N x K) or
// transposed (K x N), A in tensor memory with a K-major B, the smallest K of
// each kind (16 for bf16, 32 for E4M3) and the largest block-scaled K (128:
// one 4-block scale chunk).
func.func @umma_shapes(%t: i32, %i: i32, %acc: i1,
                       %a16: !flamia.smem<2x128x16xbf16>, %b16: !flamia.smem<2x16x16xbf16>,
                       %bt: !flamia.smem<1x64x256xbf16>, %a64: !flamia.smem<1x128x64xbf16>,
                       %a8: !flamia.smem<1x128x32xf8E4M3FN>, %b8: !flamia.smem<1x256x32xf8E4M3FN>,
                       %v8: !flamia.smem<3x128x64xf8E4M3FN>) {
  flamia.umma %t[0] a %a16[%i] b %b16[%i] accumulate %acc
      : (i32, !flamia.smem<2x128x16xbf16>, i32, !flamia.smem<2x16x16xbf16>, i32, i1) -> ()
  flamia.umma %t[256] a %a64[%i] b %bt[%i] accumulate %acc {b_transposed}
      : (i32, !flamia.smem<1x128x64xbf16>, i32, !flamia.smem<1x64x256xbf16>, i32, i1) -> ()
  flamia.umma %t[0] b %b16[%i] accumulate %acc {a_column = 504 : i64, a_type = bf16}
      : (i32, !flamia.smem<2x16x16xbf16>, i32, i1) -> ()
  flamia.umma %t[256] a %a8[%i] b %b8[%i] accumulate %acc scales(%t, %t)
      : (i32, !flamia.smem<1x128x32xf8E4M3FN>, i32, !flamia.smem<1x256x32xf8E4M3FN>, i32, i1, i32, i32) -> ()
  flamia.umma %t[0] b %v8[%i] accumulate %acc scales(%t, %t) {a_column = 480 : i64, a_type = f8E4M3FN, b_transposed}
      : (i32, !flamia.smem<3x128x64xf8E4M3FN>, i32, i1, i32, i32) -> ()
  return
}

// CHECK-LABEL: func.func @umma_shapes(
// CHECK-NEXT: flamia.umma %arg0[0] a %arg3[%arg1] b %arg4[%arg1] accumulate %arg2 : (i32, !flamia.smem<2x128x16xbf16>, i32, !flamia.smem<2x16x16xbf16>, i32, i1) -> (){{$}}
// CHECK-NEXT: flamia.umma %arg0[256] a %arg6[%arg1] b %arg5[%arg1] accumulate %arg2 {b_transposed} : (i32, !flamia.smem<1x128x64xbf16>, i32, !flamia.smem<1x64x256xbf16>, i32, i1) -> (){{$}}
// CHECK-NEXT: flamia.umma %arg0[0] b %arg4[%arg1] accumulate %arg2 {a_column = 504 : i64, a_type = bf16} : (i32, !flamia.smem<2x16x16xbf16>, i32, i1) -> (){{$}}
// CHECK-NEXT: flamia.umma %arg0[256] a %arg7[%arg1] b %arg8[%arg1] accumulate %arg2 scales(%arg0, %arg0) : (i32, !flamia.smem<1x128x32xf8E4M3FN>, i32, !flamia.smem<1x256x32xf8E4M3FN>, i32, i1, i32, i32) -> (){{$}}
// CHECK-NEXT: flamia.umma %arg0[0] b %arg9[%arg1] accumulate %arg2 scales(%arg0, %arg0) {a_column = 480 : i64, a_type = f8E4M3FN, b_transposed} : (i32, !flamia.smem<3x128x64xf8E4M3FN>, i32, i1, i32, i32) -> (){{$}}
// CHECK-NEXT: return

// -----
// O += P V over the keys left in the document only (k_valid).
func.func @umma_k_valid(%t: i32, %st: i32, %acc: i1, %keys: i32, %sfp: i32, %sfv: i32,
                        %v8: !flamia.smem<2x128x128xf8E4M3FN>) {
  flamia.umma %t[256] b %v8[%st] accumulate %acc scales(%sfp, %sfv) k_valid %keys {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
      : (i32, !flamia.smem<2x128x128xf8E4M3FN>, i32, i1, i32, i32, i32) -> ()
  return
}
// CHECK-LABEL: func.func @umma_k_valid(
// CHECK: flamia.umma %arg0[256] b %arg6[%arg1] accumulate %arg2 scales(%arg4, %arg5) k_valid %arg3 {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}

// -----
// The backward's 64-query tiles: dV += P^T dO reads K-blocks 2 and 3 of dO's
// scale tile (b_k_block), with and without k_valid.
func.func @umma_b_k_block(%t: i32, %st: i32, %acc: i1, %keys: i32, %kb: i32, %sfp: i32, %sfd: i32,
                          %do8: !flamia.smem<3x64x128xf8E4M3FN>) {
  flamia.umma %t[128] b %do8[%st] accumulate %acc scales(%sfp, %sfd) b_k_block %kb {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
      : (i32, !flamia.smem<3x64x128xf8E4M3FN>, i32, i1, i32, i32, i32) -> ()
  flamia.umma %t[128] b %do8[%st] accumulate %acc scales(%sfp, %sfd) b_k_block %kb k_valid %keys {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
      : (i32, !flamia.smem<3x64x128xf8E4M3FN>, i32, i1, i32, i32, i32, i32) -> ()
  return
}
// CHECK-LABEL: func.func @umma_b_k_block(
// CHECK-NEXT: flamia.umma %arg0[128] b %arg7[%arg1] accumulate %arg2 scales(%arg5, %arg6) b_k_block %arg4 {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed} : (i32, !flamia.smem<3x64x128xf8E4M3FN>, i32, i1, i32, i32, i32) -> (){{$}}
// CHECK-NEXT: flamia.umma %arg0[128] b %arg7[%arg1] accumulate %arg2 scales(%arg5, %arg6) b_k_block %arg4 k_valid %arg3 {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed} : (i32, !flamia.smem<3x64x128xf8E4M3FN>, i32, i1, i32, i32, i32, i32) -> (){{$}}

// -----
// dS quantized online for a block-scaled MMA: E4M3 codes, the scales into a
// scale-factor tile from K-block %kb on; then the codes into tensor memory.
flamia.kernel @mx_quantize(%kb: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %sf = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
  %tmem = flamia.tmem.alloc columns 512 by_warpgroup 0
  flamia.role "grad" warpgroups [0, 1) registers 240 {
    %c0 = arith.constant 0 : i32
    %ds = flamia.frag.zero : !flamia.frag<128x64xf32>
    %codes = flamia.frag.mx_quantize %ds scales %sf[%c0] k_block %kb
        : !flamia.frag<128x64xf32>, !flamia.smem<1x8x64xi8> -> !flamia.frag<128x64xf8E4M3FN>
    flamia.tmem.store %codes, %tmem[384] : !flamia.frag<128x64xf8E4M3FN>
    flamia.tmem.dealloc %tmem columns 512
    flamia.return
  }
  flamia.return
}
// CHECK-LABEL: flamia.kernel @mx_quantize(
// CHECK: %[[CODES:.*]] = flamia.frag.mx_quantize %{{.*}} scales %{{.*}}[%{{.*}}] k_block %arg0 : !flamia.frag<128x64xf32>, !flamia.smem<1x8x64xi8> -> !flamia.frag<128x64xf8E4M3FN>
// CHECK-NEXT: flamia.tmem.store %[[CODES]], %{{.*}}[384] : !flamia.frag<128x64xf8E4M3FN>

// -----
// A gradient written half by half (the two warpgroups of sm_100a's backward).
func.func @grad_store_columns(%acc: !flamia.frag<128x64xf32>, %dq: !flamia.global<?x4x128xbf16>,
                              %s: i32, %r: i32, %h: i32, %c: i32, %f: f32) {
  flamia.grad.store %acc times %f to %dq rows(%s, %r, %r) head %h columns %c
      : !flamia.frag<128x64xf32>, !flamia.global<?x4x128xbf16>
  return
}
// CHECK-LABEL: func.func @grad_store_columns(
// CHECK-NEXT: flamia.grad.store %arg0 times %arg6 to %arg1 rows(%arg2, %arg3, %arg3) head %arg4 columns %arg5 : !flamia.frag<128x64xf32>, !flamia.global<?x4x128xbf16>

// -----
// P staged in shared memory for P V (flamia-tile{p-in-smem}).
func.func @smem_store(%p: !flamia.frag<128x128xf8E4M3FN>, %pb: !flamia.frag<128x64xbf16>,
                      %t8: !flamia.smem<1x128x128xf8E4M3FN>, %t16: !flamia.smem<2x128x64xbf16>,
                      %i: i32) {
  flamia.smem.store %p, %t8[%i] : !flamia.frag<128x128xf8E4M3FN>, !flamia.smem<1x128x128xf8E4M3FN>
  flamia.smem.store %pb, %t16[%i] : !flamia.frag<128x64xbf16>, !flamia.smem<2x128x64xbf16>
  return
}
// CHECK-LABEL: func.func @smem_store(
// CHECK-NEXT: flamia.smem.store %arg0, %arg2[%arg4] : !flamia.frag<128x128xf8E4M3FN>, !flamia.smem<1x128x128xf8E4M3FN>{{$}}
// CHECK-NEXT: flamia.smem.store %arg1, %arg3[%arg4] : !flamia.frag<128x64xbf16>, !flamia.smem<2x128x64xbf16>{{$}}

// -----
// NVFP4's S = Q K^T (recipe nvfp4-mixed): E2M1 tiles, the two scale tiles of
// a 1024-byte slot copied one part at a time.
func.func @umma_nvfp4(%t: i32, %st: i32, %acc: i1, %sfq: i32, %sfk: i32,
                      %q4: !flamia.smem<1x128x128xf4E2M1FN>, %k4: !flamia.smem<3x128x128xf4E2M1FN>,
                      %ksf: !flamia.smem<3x16x64xi8>) {
  flamia.umma.scales %ksf[%st] -> %t[456] : !flamia.smem<3x16x64xi8>
  flamia.umma.scales %ksf[%st] -> %t[460] {part = 1 : i64} : !flamia.smem<3x16x64xi8>
  flamia.umma %t[0] a %q4[%st] b %k4[%st] accumulate %acc scales(%sfq, %sfk)
      : (i32, !flamia.smem<1x128x128xf4E2M1FN>, i32, !flamia.smem<3x128x128xf4E2M1FN>, i32, i1, i32, i32) -> ()
  return
}
// CHECK-LABEL: func.func @umma_nvfp4(
// CHECK-NEXT: flamia.umma.scales %arg7[%arg1] -> %arg0[456] : !flamia.smem<3x16x64xi8>{{$}}
// CHECK-NEXT: flamia.umma.scales %arg7[%arg1] -> %arg0[460] {part = 1 : i64} : !flamia.smem<3x16x64xi8>{{$}}
// CHECK-NEXT: flamia.umma %arg0[0] a %arg5[%arg1] b %arg6[%arg1] accumulate %arg2 scales(%arg3, %arg4) : (i32, !flamia.smem<1x128x128xf4E2M1FN>, i32, !flamia.smem<3x128x128xf4E2M1FN>, i32, i1, i32, i32) -> (){{$}}
