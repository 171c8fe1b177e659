// RUN: flamia-opt %s -split-input-file -verify-diagnostics --convert-flamia-to-nvvm
// Errors of convert-flamia-to-nvvm's fragment, wgmma and memory patterns on
// IR that verifies (each followed by the conversion's failure to legalize the
// op), and the verifier messages that stop the ones IR cannot reach.

// sm_90a's P V MMA reads P as bf16 pairs only.
flamia.kernel @sm_90a_quantize_to_codes() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %p = flamia.frag.zero : !flamia.frag<64x16xf32>
    %true = arith.constant true
    // expected-error @+2 {{'flamia.frag.quantize' op sm_90a lowering: P as E4M3 codes is not an MMA operand layout of this target (bf16 only)}}
    // expected-error @+1 {{failed to legalize operation 'flamia.frag.quantize' that was explicitly marked illegal}}
    %c = flamia.frag.quantize %p quantized %true {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x16xf32> -> !flamia.frag<64x16xf8E4M3FN>
  }
  flamia.return
}

// -----

// P's precision must be E4M3 (the verifier allows any fixed-scale precision
// with a bf16 result).
flamia.kernel @sm_90a_quantize_f4() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %p = flamia.frag.zero : !flamia.frag<64x16xf32>
    %true = arith.constant true
    // expected-error @+2 {{'flamia.frag.quantize' op sm_90a lowering: P rounds to f8E4M3FN only}}
    // expected-error @+1 {{failed to legalize operation 'flamia.frag.quantize'}}
    %c = flamia.frag.quantize %p quantized %true {precision = #flamia.precision<f4E2M1FN, fixed_scale = 2>} : !flamia.frag<64x16xf32> -> !flamia.frag<64x16xbf16>
  }
  flamia.return
}

// -----

flamia.kernel @sm_100a_quantize_e5m2() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %p = flamia.frag.zero : !flamia.frag<128x16xf32>
    %true = arith.constant true
    // expected-error @+2 {{'flamia.frag.quantize' op sm_100a lowering: P rounds to f8E4M3FN only}}
    // expected-error @+1 {{failed to legalize operation 'flamia.frag.quantize'}}
    %c = flamia.frag.quantize %p quantized %true {precision = #flamia.precision<f8E5M2, fixed_scale = 8>} : !flamia.frag<128x16xf32> -> !flamia.frag<128x16xbf16>
  }
  flamia.return
}

// -----

// The sm_100a attn.store error (a row of O not a multiple of 8 columns)
// cannot be reached: fragment types already require columns in multiples of
// 8, and attn.store's verifier ties O's D to them.
flamia.kernel @sm_100a_attn_store_narrow(%o: !flamia.global<?x2x4xbf16> {flamia.param = "o"}, %lse: !flamia.global<2x?xf32> {flamia.param = "lse"}, %x: i32 {flamia.param = "x"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    // expected-error @+1 {{fragment columns must be a positive multiple of 8, got 4}}
    %acc = flamia.frag.zero : !flamia.frag<128x4xf32>
  }
  flamia.return
}

// -----

// A shared-memory A operand is split among the role's warpgroups.
flamia.kernel @sm_90a_wg_mma_outside_role() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %q = flamia.smem.alloc : !flamia.smem<1x64x64xbf16>
  %k = flamia.smem.alloc : !flamia.smem<1x16x64xbf16>
  %c0 = arith.constant 0 : i32
  // expected-error @+2 {{'flamia.wg.mma' op is not inside a flamia.role}}
  // expected-error @+1 {{failed to legalize operation 'flamia.wg.mma'}}
  %s = flamia.wg.mma %q[%c0], %k[%c0] : !flamia.smem<1x64x64xbf16>, !flamia.smem<1x16x64xbf16> -> !flamia.frag<64x16xf32>
  flamia.return
}

// -----

flamia.kernel @sm_90a_wg_mma_e4m3() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %q = flamia.smem.alloc : !flamia.smem<1x64x64xf8E4M3FN>
  %k = flamia.smem.alloc : !flamia.smem<1x16x64xf8E4M3FN>
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %c0 = arith.constant 0 : i32
    // expected-error @+2 {{'flamia.wg.mma' op sm_90a lowering: bf16 operands only}}
    // expected-error @+1 {{failed to legalize operation 'flamia.wg.mma'}}
    %s = flamia.wg.mma %q[%c0], %k[%c0] : !flamia.smem<1x64x64xf8E4M3FN>, !flamia.smem<1x16x64xf8E4M3FN> -> !flamia.frag<64x16xf32>
  }
  flamia.return
}

// -----

flamia.kernel @sm_90a_wg_mma_regs_not_transposed() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<1x64x16xbf16>
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %c0 = arith.constant 0 : i32
    %true = arith.constant true
    %z = flamia.frag.zero : !flamia.frag<64x16xf32>
    %p = flamia.frag.quantize %z quantized %true {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x16xf32> -> !flamia.frag<64x16xbf16>
    // expected-error @+2 {{'flamia.wg.mma' op sm_90a lowering: a register A operand reads B transposed (P V)}}
    // expected-error @+1 {{failed to legalize operation 'flamia.wg.mma'}}
    %o = flamia.wg.mma %p, %v[%c0] : !flamia.frag<64x16xbf16>, !flamia.smem<1x64x16xbf16> -> !flamia.frag<64x64xf32>
  }
  flamia.return
}

// -----

// A transposed (MN-major) B needs N in whole 128-byte swizzle atoms.
flamia.kernel @sm_90a_wg_mma_narrow_v() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<1x16x16xbf16>
  flamia.role "consumer" warpgroups[0, 1) registers 240 {
    %c0 = arith.constant 0 : i32
    %true = arith.constant true
    %z = flamia.frag.zero : !flamia.frag<64x16xf32>
    %p = flamia.frag.quantize %z quantized %true {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>} : !flamia.frag<64x16xf32> -> !flamia.frag<64x16xbf16>
    // expected-error @+2 {{'flamia.wg.mma' op wgmma descriptor: MN extent 16 is not a positive multiple of the swizzle atom's 64 elements (MN-major, 128B swizzle)}}
    // expected-error @+1 {{failed to legalize operation 'flamia.wg.mma'}}
    %o = flamia.wg.mma %p, %v[%c0] {b_transposed} : !flamia.frag<64x16xbf16>, !flamia.smem<1x16x16xbf16> -> !flamia.frag<64x16xf32>
  }
  flamia.return
}

// -----

// TurnLowering's "is not inside a flamia.role" cannot be reached: the
// verifier rejects a turn outside a role first (so does smem.zero_rows').
flamia.kernel @sm_90a_turn_outside_role() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  // expected-error @+1 {{'flamia.turn' op takes turns among the warpgroups of a flamia.role but is not inside one}}
  flamia.turn give among 2
  flamia.return
}

// -----

// Tensor memory has no sm_90a lowering, wgmma no sm_100a one: the target
// says so (TargetInfo::checkLowers) before the conversion starts.
flamia.kernel @sm_90a_tmem_load(%t: i32 {flamia.param = "tmem"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    // expected-error @+1 {{'flamia.tmem.load' op is a tensor-memory (tcgen05) op, which sm_90a does not have}}
    %a = flamia.tmem.load %t[0] : !flamia.frag<128x8xf32>
  }
  flamia.return
}

// -----

flamia.kernel @sm_100a_wg_mma() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  %q = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
  %k = flamia.smem.alloc : !flamia.smem<2x16x64xbf16>
  flamia.role "consumer" warpgroups[1, 2) registers 232 {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    // expected-error @+1 {{'flamia.wg.mma' op is a wgmma op, which the sm_100a lowering does not implement (its MMAs are tcgen05: flamia.umma)}}
    %s = flamia.wg.mma %q[%c0], %k[%c1] : !flamia.smem<1x128x64xbf16>, !flamia.smem<2x16x64xbf16> -> !flamia.frag<64x16xf32>
  }
  flamia.return
}

// -----

// The kernel plan: shared memory past the target's opt-in limit.
// expected-error @+1 {{'flamia.kernel' op needs 262144 bytes of shared memory, more than the target's 232448}}
flamia.kernel @sm_90a_smem_limit() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %q = flamia.smem.alloc : !flamia.smem<2x128x512xbf16>
  flamia.return
}

// -----

// A kernel parameter without its manifest name (flamia-varlen-schedule
// names every one): an error, not a crash.
// expected-error @+1 {{'flamia.kernel' op parameter 0 has no {flamia.param = "<name>"}: the runtime manifest names every kernel parameter}}
flamia.kernel @unnamed_parameter(%n: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.return
}

// -----

// sm_100a's dS codes with a scale-factor tile need one row per thread: the
// sm_90a lowering says that the op is sm_100a's.
flamia.kernel @sm_90a_mx_quantize() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %sf = flamia.smem.alloc : !flamia.smem<1x8x64xi8>
  flamia.role "grad" warpgroups[0, 1) registers 240 {
    %c0 = arith.constant 0 : i32
    %ds = flamia.frag.zero : !flamia.frag<128x64xf32>
    // expected-error @+1 {{'flamia.frag.mx_quantize' op is a tensor-memory (tcgen05) op, which sm_90a does not have}}
    %codes = flamia.frag.mx_quantize %ds scales %sf[%c0] k_block %c0
        : !flamia.frag<128x64xf32>, !flamia.smem<1x8x64xi8> -> !flamia.frag<128x64xf8E4M3FN>
  }
  flamia.return
}

// -----

// P staged in shared memory stores sm_100a's row-per-thread fragments: the
// sm_90a lowering refuses it instead of writing its own layout's rows.
flamia.kernel @sm_90a_smem_store() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  %t = flamia.smem.alloc : !flamia.smem<1x128x64xbf16>
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    %c0 = arith.constant 0 : i32
    %p = flamia.frag.zero : !flamia.frag<128x64xbf16>
    // expected-error @+1 {{'flamia.smem.store' op stores a fragment in sm_100a's row-per-thread layout, which the sm_90a lowering does not implement}}
    flamia.smem.store %p, %t[%c0] : !flamia.frag<128x64xbf16>, !flamia.smem<1x128x64xbf16>
  }
  flamia.return
}

// -----

// sm_100a's softmax holds a whole row per thread and loads its queries'
// values in softmax.grad (by lane and shuffle), not ahead.
flamia.kernel @sm_100a_load_lse2(%lse: !flamia.global<4x?xf32> {flamia.param = "lse"}, %i: i32 {flamia.param = "i"}) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "softmax" warpgroups[0, 1) registers 240 {
    // expected-error @+2 {{'flamia.frag.load_lse2' op sm_100a lowering: a whole row per thread; softmax.grad loads LSE itself there}}
    // expected-error @+1 {{failed to legalize operation 'flamia.frag.load_lse2' that was explicitly marked illegal}}
    %l2 = flamia.frag.load_lse2 %lse head %i queries(%i, %i, %i) tokens %i {transposed} : !flamia.global<4x?xf32> -> !flamia.frag<128x64xf32>
  }
  flamia.return
}
