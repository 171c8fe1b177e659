// RUN: flamia-opt %s -split-input-file -verify-diagnostics
// Every verifier error of the sm_100a block ops (tensor memory, tcgen05
// MMAs, block-scale copies, commits, bulk copies) and of the sm_100a parts
// of flamia.quantize_block (scale-factor tiles) and flamia.pipeline.create
// (producers), one per split.

//===----------------------------------------------------------------------===//
// flamia.tmem.alloc, flamia.tmem.dealloc
//===----------------------------------------------------------------------===//

flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  // expected-error @below {{'flamia.tmem.alloc' op allocates a power of two of columns in [32, 512], got 16}}
  %t = flamia.tmem.alloc columns 16 by_warpgroup 0
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  // expected-error @below {{'flamia.tmem.alloc' op allocates a power of two of columns in [32, 512], got 1024}}
  %t = flamia.tmem.alloc columns 1024 by_warpgroup 0
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  // expected-error @below {{'flamia.tmem.alloc' op allocates a power of two of columns in [32, 512], got 96}}
  %t = flamia.tmem.alloc columns 96 by_warpgroup 0
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  // expected-error @below {{'flamia.tmem.alloc' op warpgroup 2 is not one of the kernel's 2}}
  %t = flamia.tmem.alloc columns 512 by_warpgroup 2
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  // expected-error @below {{'flamia.tmem.alloc' op warpgroup -1 is not one of the kernel's 2}}
  %t = flamia.tmem.alloc columns 512 by_warpgroup -1
  flamia.return
}

// -----
// Both allocations happen before the roles: the second would wait forever.
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  %t = flamia.tmem.alloc columns 256 by_warpgroup 0
  // expected-error @below {{'flamia.tmem.alloc' op the kernel's tensor-memory allocations take 768 columns up to this one, more than the 512 of a multiprocessor}}
  %u = flamia.tmem.alloc columns 512 by_warpgroup 1
  flamia.return
}

// -----
func.func @f() {
  // expected-error @below {{'flamia.tmem.alloc' op expects parent op 'flamia.kernel'}}
  %t = flamia.tmem.alloc columns 512 by_warpgroup 0
  return
}

// -----
flamia.kernel @k(%base: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "all" warpgroups [0, 1) registers 128 {
    // expected-error @below {{'flamia.tmem.dealloc' op the base must be the result of the flamia.tmem.alloc it frees}}
    flamia.tmem.dealloc %base columns 512
    flamia.return
  }
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %t = flamia.tmem.alloc columns 512 by_warpgroup 0
  flamia.role "all" warpgroups [0, 1) registers 128 {
    // expected-error @below {{'flamia.tmem.dealloc' op frees 256 columns but 512 were allocated}}
    flamia.tmem.dealloc %t columns 256
    flamia.return
  }
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  %t = flamia.tmem.alloc columns 512 by_warpgroup 1
  flamia.role "first" warpgroups [0, 1) registers 128 {
    // expected-error @below {{'flamia.tmem.dealloc' op must run in the role that starts at warpgroup 1 (whose first warp allocated), with all its threads}}
    flamia.tmem.dealloc %t columns 512
    flamia.return
  }
  flamia.return
}

// -----
// A single-thread role cannot free: every warp of the warpgroup must be done.
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  %t = flamia.tmem.alloc columns 512 by_warpgroup 1
  flamia.role "mma" warpgroups [1, 2) registers 128 single_thread {
    // expected-error @below {{'flamia.tmem.dealloc' op must run in the role that starts at warpgroup 1 (whose first warp allocated), with all its threads}}
    flamia.tmem.dealloc %t columns 512
    flamia.return
  }
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %t = flamia.tmem.alloc columns 512 by_warpgroup 0
  // expected-error @below {{'flamia.tmem.dealloc' op expects parent op 'flamia.role'}}
  flamia.tmem.dealloc %t columns 512
  flamia.return
}

//===----------------------------------------------------------------------===//
// flamia.tmem.load, flamia.tmem.store, flamia.tmem.fill
//===----------------------------------------------------------------------===//

// -----
func.func @f(%t: i32) {
  // expected-error @below {{'flamia.tmem.load' op moves a 128-row fragment (one row per thread of a warpgroup), got '!flamia.frag<64x128xf32>'}}
  %x = flamia.tmem.load %t[0] : !flamia.frag<64x128xf32>
  return
}

// -----
func.func @f(%t: i32) {
  // expected-error @below {{'flamia.tmem.load' op element type 'bf16' is not f32}}
  %x = flamia.tmem.load %t[0] : !flamia.frag<128x128xbf16>
  return
}

// -----
// 96 columns: tcgen05.ld moves a power of two of 32-bit registers.
func.func @f(%t: i32) {
  // expected-error @below {{'flamia.tmem.load' op a row of '!flamia.frag<128x96xf32>' must be a power of two of 32-bit columns, at most 128 (tcgen05.ld/st), got 3072 bits}}
  %x = flamia.tmem.load %t[0] : !flamia.frag<128x96xf32>
  return
}

// -----
func.func @f(%t: i32) {
  // expected-error @below {{'flamia.tmem.load' op a row of '!flamia.frag<128x256xf32>' must be a power of two of 32-bit columns, at most 128 (tcgen05.ld/st), got 8192 bits}}
  %x = flamia.tmem.load %t[0] : !flamia.frag<128x256xf32>
  return
}

// -----
func.func @f(%t: i32) {
  // expected-error @below {{'flamia.tmem.load' op tensor-memory columns [448, 576) are outside [0, 512)}}
  %x = flamia.tmem.load %t[448] : !flamia.frag<128x128xf32>
  return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %t = flamia.tmem.alloc columns 256 by_warpgroup 0
  flamia.role "all" warpgroups [0, 1) registers 128 {
    // expected-error @below {{'flamia.tmem.load' op tensor-memory columns [192, 320) are outside the 256 columns flamia.tmem.alloc allocated}}
    %x = flamia.tmem.load %t[192] : !flamia.frag<128x128xf32>
    flamia.return
  }
  flamia.return
}

// -----
// tcgen05.ld is warp-collective: one thread cannot load a warpgroup's rows.
flamia.kernel @k(%t: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "mma" warpgroups [0, 1) registers 128 single_thread {
    // expected-error @below {{'flamia.tmem.load' op needs every thread of a warpgroup but is in the single_thread role "mma"}}
    %x = flamia.tmem.load %t[0] : !flamia.frag<128x32xf32>
    flamia.return
  }
  flamia.return
}

// -----
func.func @f(%t: i32, %x: !flamia.frag<64x64xbf16>) {
  // expected-error @below {{'flamia.tmem.store' op moves a 128-row fragment (one row per thread of a warpgroup), got '!flamia.frag<64x64xbf16>'}}
  flamia.tmem.store %x, %t[0] : !flamia.frag<64x64xbf16>
  return
}

// -----
// 48 bf16 are 24 columns: not a power of two.
func.func @f(%t: i32, %x: !flamia.frag<128x48xbf16>) {
  // expected-error @below {{'flamia.tmem.store' op a row of '!flamia.frag<128x48xbf16>' must be a power of two of 32-bit columns, at most 128 (tcgen05.ld/st), got 768 bits}}
  flamia.tmem.store %x, %t[0] : !flamia.frag<128x48xbf16>
  return
}

// -----
// 128 E4M3 are 32 columns (four per column).
func.func @f(%t: i32, %x: !flamia.frag<128x128xf8E4M3FN>) {
  // expected-error @below {{'flamia.tmem.store' op tensor-memory columns [496, 528) are outside [0, 512)}}
  flamia.tmem.store %x, %t[496] : !flamia.frag<128x128xf8E4M3FN>
  return
}

// -----
flamia.kernel @k(%t: i32, %x: !flamia.frag<128x32xf32>) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "mma" warpgroups [0, 1) registers 128 single_thread {
    // expected-error @below {{'flamia.tmem.store' op needs every thread of a warpgroup but is in the single_thread role "mma"}}
    flamia.tmem.store %x, %t[0] : !flamia.frag<128x32xf32>
    flamia.return
  }
  flamia.return
}

// -----
func.func @f(%t: i32) {
  // expected-error @below {{'flamia.tmem.fill' op fills a power of two of columns, at most 128, got 256}}
  flamia.tmem.fill %t[0] columns 256 value 0
  return
}

// -----
func.func @f(%t: i32) {
  // expected-error @below {{'flamia.tmem.fill' op fills a power of two of columns, at most 128, got 0}}
  flamia.tmem.fill %t[0] columns 0 value 0
  return
}

// -----
func.func @f(%t: i32) {
  // expected-error @below {{'flamia.tmem.fill' op fills a power of two of columns, at most 128, got -1}}
  flamia.tmem.fill %t[0] columns -1 value 0
  return
}

// -----
func.func @f(%t: i32) {
  // expected-error @below {{'flamia.tmem.fill' op tensor-memory columns [510, 514) are outside [0, 512)}}
  flamia.tmem.fill %t[510] columns 4 value 0
  return
}

// -----
flamia.kernel @k(%t: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  flamia.role "mma" warpgroups [0, 1) registers 128 single_thread {
    // expected-error @below {{'flamia.tmem.fill' op needs every thread of a warpgroup but is in the single_thread role "mma"}}
    flamia.tmem.fill %t[0] columns 4 value 0
    flamia.return
  }
  flamia.return
}

//===----------------------------------------------------------------------===//
// flamia.umma.scales
//===----------------------------------------------------------------------===//

// -----
func.func @f(%t: i32, %i: i32, %s: !flamia.smem<1x8x32xi8>) {
  // expected-error @below {{'flamia.umma.scales' op copies from stages of 512-byte i8 scale-factor tiles, got '!flamia.smem<1x8x32xi8>'}}
  flamia.umma.scales %s[%i] -> %t[0] : !flamia.smem<1x8x32xi8>
  return
}

// -----
func.func @f(%t: i32, %i: i32, %s: !flamia.smem<1x16x64xi8>) {
  // expected-error @below {{'flamia.umma.scales' op part 2 is outside the 2 scale-factor tile(s) of a stage}}
  flamia.umma.scales %s[%i] -> %t[0] {part = 2 : i64} : !flamia.smem<1x16x64xi8>
  return
}

// -----
// E8M0 scales are i8 codes in shared memory.
func.func @f(%t: i32, %i: i32, %s: !flamia.smem<1x8x64xf8E8M0FNU>) {
  // expected-error @below {{'flamia.umma.scales' op copies from stages of 512-byte i8 scale-factor tiles, got '!flamia.smem<1x8x64xf8E8M0FNU>'}}
  flamia.umma.scales %s[%i] -> %t[0] : !flamia.smem<1x8x64xf8E8M0FNU>
  return
}

// -----
func.func @f(%t: i32, %i: i32, %s: !flamia.smem<1x8x64xi8>) {
  // expected-error @below {{'flamia.umma.scales' op scale factors occupy a 4-column chunk; column 450 is not a multiple of 4}}
  flamia.umma.scales %s[%i] -> %t[450] : !flamia.smem<1x8x64xi8>
  return
}

// -----
func.func @f(%t: i32, %i: i32, %s: !flamia.smem<1x8x64xi8>) {
  // expected-error @below {{'flamia.umma.scales' op scale factors occupy a 4-column chunk; column -2 is not a multiple of 4}}
  flamia.umma.scales %s[%i] -> %t[-2] : !flamia.smem<1x8x64xi8>
  return
}

// -----
func.func @f(%t: i32, %i: i32, %s: !flamia.smem<1x8x64xi8>) {
  // expected-error @below {{'flamia.umma.scales' op tensor-memory columns [512, 516) are outside [0, 512)}}
  flamia.umma.scales %s[%i] -> %t[512] : !flamia.smem<1x8x64xi8>
  return
}

// -----
func.func @f(%t: i32, %s: !flamia.smem<2x8x64xi8>) {
  %c2 = arith.constant 2 : i32
  // expected-error @below {{'flamia.umma.scales' op stage 2 is out of range: the source has 2 stage(s)}}
  flamia.umma.scales %s[%c2] -> %t[0] : !flamia.smem<2x8x64xi8>
  return
}

// -----
// The stage of a 3-stage ring indexes a 2-stage buffer.
func.func @f(%t: i32, %i: i32, %p: !flamia.pipeline<3>, %s: !flamia.smem<2x8x64xi8>) {
  %st = flamia.pipeline.acquire consumer %p[%i] : !flamia.pipeline<3>
  // expected-error @below {{'flamia.umma.scales' op the stage comes from a pipeline of 3 stage(s) but the source has 2}}
  flamia.umma.scales %s[%st] -> %t[0] : !flamia.smem<2x8x64xi8>
  return
}

// -----
// Every thread of the kernel would issue the copy.
flamia.kernel @k(%t: i32, %i: i32, %s: !flamia.smem<1x8x64xi8>) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  // expected-error @below {{'flamia.umma.scales' op is issued by one thread and belongs in a single_thread flamia.role, but every thread of the kernel runs it}}
  flamia.umma.scales %s[%i] -> %t[0] : !flamia.smem<1x8x64xi8>
  flamia.return
}

//===----------------------------------------------------------------------===//
// flamia.umma
//===----------------------------------------------------------------------===//

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op A is either a shared-memory tile (`a`) or tensor memory (`a_column`), exactly one}}
  flamia.umma %t[0] b %b[%i] accumulate %acc : (i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x128xbf16>, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op A is either a shared-memory tile (`a`) or tensor memory (`a_column`), exactly one}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc {a_column = 256 : i64, a_type = bf16}
      : (i32, !flamia.smem<1x128x128xbf16>, i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
// Only the generic form can separate `a` from its stage.
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x128xbf16>, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op a shared-memory A needs its stage}}
  "flamia.umma"(%t, %a, %b, %i, %acc) <{d_column = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 0, 1, 1, 1, 0, 0, 0, 0>}>
      : (i32, !flamia.smem<1x128x128xbf16>, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
// Only the generic form can give a stage to A in tensor memory.
func.func @f(%t: i32, %i: i32, %acc: i1, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op A in tensor memory takes no stage}}
  "flamia.umma"(%t, %i, %b, %i, %acc) <{a_column = 256 : i64, a_type = bf16, b_transposed, d_column = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 1, 0, 0, 0, 0>}>
      : (i32, i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op A in tensor memory needs `a_type`}}
  flamia.umma %t[0] b %b[%i] accumulate %acc {a_column = 256 : i64, b_transposed} : (i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x128xbf16>, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op `a_type` is for A in tensor memory; a shared-memory A has its tile's element type}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc {a_type = f8E4M3FN}
      : (i32, !flamia.smem<1x128x128xbf16>, i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x128xf8E4M3FN>, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op A and B have different element types: 'f8E4M3FN' and 'bf16'}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc
      : (i32, !flamia.smem<1x128x128xf8E4M3FN>, i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op A and B have different element types: 'f8E4M3FN' and 'bf16'}}
  flamia.umma %t[0] b %b[%i] accumulate %acc {a_column = 256 : i64, a_type = f8E4M3FN, b_transposed}
      : (i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x64xf16>, %b: !flamia.smem<1x128x64xf16>) {
  // expected-error @below {{'flamia.umma' op operands are bf16 (kind::f16), f8E4M3FN (kind::mxf8f6f4) or f4E2M1FN (kind::mxf4nvf4), got 'f16'}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc
      : (i32, !flamia.smem<1x128x64xf16>, i32, !flamia.smem<1x128x64xf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x128xf8E4M3FN>, %b: !flamia.smem<1x128x128xf8E4M3FN>) {
  // expected-error @below {{'flamia.umma' op block-scaled operands (f8E4M3FN, f4E2M1FN) need scales(scale_a, scale_b)}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc
      : (i32, !flamia.smem<1x128x128xf8E4M3FN>, i32, !flamia.smem<1x128x128xf8E4M3FN>, i32, i1) -> ()
  return
}

// -----
// Only the generic form can give one scale without the other.
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x128xf8E4M3FN>, %b: !flamia.smem<1x128x128xf8E4M3FN>) {
  // expected-error @below {{'flamia.umma' op block-scaled operands (f8E4M3FN, f4E2M1FN) need scales(scale_a, scale_b)}}
  "flamia.umma"(%t, %a, %i, %b, %i, %acc, %t) <{d_column = 0 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0>}>
      : (i32, !flamia.smem<1x128x128xf8E4M3FN>, i32, !flamia.smem<1x128x128xf8E4M3FN>, i32, i1, i32) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x128xbf16>, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op bf16 operands take no scale factors}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc scales(%t, %t)
      : (i32, !flamia.smem<1x128x128xbf16>, i32, !flamia.smem<1x128x128xbf16>, i32, i1, i32, i32) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x64xbf16>, %b: !flamia.smem<1x8x64xbf16>) {
  // expected-error @below {{'flamia.umma' op N = 8 is not a multiple of 16 in [16, 256] (M = 128)}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc
      : (i32, !flamia.smem<1x128x64xbf16>, i32, !flamia.smem<1x8x64xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x64xbf16>, %b: !flamia.smem<1x272x64xbf16>) {
  // expected-error @below {{'flamia.umma' op N = 272 is not a multiple of 16 in [16, 256] (M = 128)}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc
      : (i32, !flamia.smem<1x128x64xbf16>, i32, !flamia.smem<1x272x64xbf16>, i32, i1) -> ()
  return
}

// -----
// Transposed, N is B's columns: 16 bf16 columns, 8 rows (K).
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x16xbf16>, %b: !flamia.smem<1x8x16xbf16>) {
  // expected-error @below {{'flamia.umma' op K = 8 is not a multiple of the MMA's K (16)}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc {b_transposed}
      : (i32, !flamia.smem<1x128x16xbf16>, i32, !flamia.smem<1x8x16xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %b: !flamia.smem<1x16x64xf8E4M3FN>) {
  // expected-error @below {{'flamia.umma' op K = 16 is not a multiple of the MMA's K (32)}}
  flamia.umma %t[0] b %b[%i] accumulate %acc scales(%t, %t) {a_column = 256 : i64, a_type = f8E4M3FN, b_transposed}
      : (i32, !flamia.smem<1x16x64xf8E4M3FN>, i32, i1, i32, i32) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x256xf8E4M3FN>, %b: !flamia.smem<1x128x256xf8E4M3FN>) {
  // expected-error @below {{'flamia.umma' op K = 256 needs more than one 4-block scale-factor chunk}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc scales(%t, %t)
      : (i32, !flamia.smem<1x128x256xf8E4M3FN>, i32, !flamia.smem<1x128x256xf8E4M3FN>, i32, i1, i32, i32) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x64x128xbf16>, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op A must be a 128 x 128 tile, got '!flamia.smem<1x64x128xbf16>'}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc
      : (i32, !flamia.smem<1x64x128xbf16>, i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
// P V: K is V's rows (128), A has 64 columns.
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x64xbf16>, %b: !flamia.smem<1x128x64xbf16>) {
  // expected-error @below {{'flamia.umma' op A must be a 128 x 128 tile, got '!flamia.smem<1x128x64xbf16>'}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc {b_transposed}
      : (i32, !flamia.smem<1x128x64xbf16>, i32, !flamia.smem<1x128x64xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x128xbf16>, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op tensor-memory columns [448, 576) are outside [0, 512)}}
  flamia.umma %t[448] a %a[%i] b %b[%i] accumulate %acc
      : (i32, !flamia.smem<1x128x128xbf16>, i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
// bf16 A of K = 128 in tensor memory: 64 columns from a_column.
func.func @f(%t: i32, %i: i32, %acc: i1, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op tensor-memory columns [480, 544) are outside [0, 512)}}
  flamia.umma %t[0] b %b[%i] accumulate %acc {a_column = 480 : i64, a_type = bf16, b_transposed}
      : (i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x128xbf16>, %b: !flamia.smem<1x128x128xbf16>) {
  // expected-error @below {{'flamia.umma' op tensor-memory columns [-128, 0) are outside [0, 512)}}
  flamia.umma %t[-128] a %a[%i] b %b[%i] accumulate %acc
      : (i32, !flamia.smem<1x128x128xbf16>, i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x128xbf16>, %b: !flamia.smem<3x128x128xbf16>) {
  %c1 = arith.constant 1 : i32
  // expected-error @below {{'flamia.umma' op stage 1 is out of range: A has 1 stage(s)}}
  flamia.umma %t[0] a %a[%c1] b %b[%c1] accumulate %acc
      : (i32, !flamia.smem<1x128x128xbf16>, i32, !flamia.smem<3x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %p: !flamia.pipeline<2>, %b: !flamia.smem<3x128x128xbf16>) {
  %st = flamia.pipeline.acquire consumer %p[%i] : !flamia.pipeline<2>
  // expected-error @below {{'flamia.umma' op the stage comes from a pipeline of 2 stage(s) but B has 3}}
  flamia.umma %t[0] b %b[%st] accumulate %acc {a_column = 256 : i64, a_type = bf16, b_transposed}
      : (i32, !flamia.smem<3x128x128xbf16>, i32, i1) -> ()
  return
}

// -----
// Every thread of the softmax warpgroup would issue an MMA.
flamia.kernel @k(%i: i32, %acc: i1, %a: !flamia.smem<1x128x128xbf16>, %b: !flamia.smem<1x128x128xbf16>)
    attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %t = flamia.tmem.alloc columns 512 by_warpgroup 0
  flamia.role "softmax" warpgroups [0, 1) registers 128 {
    // expected-error @below {{'flamia.umma' op is issued by one thread and belongs in a single_thread flamia.role, but role "softmax" runs it on every thread of its warpgroups}}
    flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc
        : (i32, !flamia.smem<1x128x128xbf16>, i32, !flamia.smem<1x128x128xbf16>, i32, i1) -> ()
    flamia.return
  }
  flamia.return
}

//===----------------------------------------------------------------------===//
// flamia.umma.commit, flamia.bulk.load
//===----------------------------------------------------------------------===//

// -----
func.func @f(%p: !flamia.pipeline<2>, %i: i32) {
  // expected-error @below {{expected string or keyword containing one of the following enum values for attribute 'barrier' [full, empty]}}
  flamia.umma.commit both %p[%i] : !flamia.pipeline<2>
  return
}

// -----
func.func @f(%p: !flamia.pipeline<2>) {
  %c3 = arith.constant 3 : i32
  // expected-error @below {{'flamia.umma.commit' op stage 3 is out of range: the pipeline has 2 stage(s)}}
  flamia.umma.commit empty %p[%c3] : !flamia.pipeline<2>
  return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 128 : i64} {
  %p = flamia.pipeline.create consumers 1 : !flamia.pipeline<2>
  flamia.role "softmax" warpgroups [0, 1) registers 128 {
    %c0 = arith.constant 0 : i32
    // expected-error @below {{'flamia.umma.commit' op is issued by one thread and belongs in a single_thread flamia.role, but role "softmax" runs it on every thread of its warpgroups}}
    flamia.umma.commit full %p[%c0] : !flamia.pipeline<2>
    flamia.return
  }
  flamia.return
}

// -----
func.func @f(%p: !flamia.pipeline<1>) {
  %c1 = arith.constant 1 : i32
  // expected-error @below {{'flamia.pipeline.arrive' op stage 1 is out of range: the pipeline has 1 stage(s)}}
  flamia.pipeline.arrive %p[%c1] : !flamia.pipeline<1>
  return
}

// -----
func.func @f(%p: !flamia.pipeline<1>, %q: !flamia.pipeline<2>, %i: i32) {
  %st = flamia.pipeline.acquire producer %q[%i] : !flamia.pipeline<2>
  // expected-error @below {{'flamia.pipeline.arrive' op the stage comes from a pipeline of 2 stage(s) but the pipeline has 1}}
  flamia.pipeline.arrive %p[%st] : !flamia.pipeline<1>
  return
}

// -----
// A row of the source holds 2 x 256 bytes: half a 1024-byte tile.
func.func @f(%src: !flamia.global<?x2x256xi8>, %dst: !flamia.smem<2x16x64xi8>, %p: !flamia.pipeline<2>, %i: i32) {
  // expected-error @below {{'flamia.bulk.load' op a row of the source (512 bytes) is not a whole number of 1024-byte chunks}}
  flamia.bulk.load %src[%i] -> %dst[%i] on %p : !flamia.global<?x2x256xi8>, !flamia.smem<2x16x64xi8>, !flamia.pipeline<2>
  return
}

// -----
func.func @f(%src: !flamia.global<?x4x?xi8>, %dst: !flamia.smem<2x8x64xi8>, %p: !flamia.pipeline<2>, %i: i32) {
  // expected-error @below {{'flamia.bulk.load' op the source's innermost dimension must be static (its rows are split into chunks), got '!flamia.global<?x4x?xi8>'}}
  flamia.bulk.load %src[%i] -> %dst[%i] on %p : !flamia.global<?x4x?xi8>, !flamia.smem<2x8x64xi8>, !flamia.pipeline<2>
  return
}

// -----
// A runtime head count multiplies whole chunks; the static 256 bytes after
// it are half a 512-byte tile.
func.func @f(%src: !flamia.global<?x?x256xi8>, %dst: !flamia.smem<2x8x64xi8>, %p: !flamia.pipeline<2>, %i: i32) {
  // expected-error @below {{'flamia.bulk.load' op a row of the source (256 bytes) is not a whole number of 512-byte chunks}}
  flamia.bulk.load %src[%i] -> %dst[%i] on %p : !flamia.global<?x?x256xi8>, !flamia.smem<2x8x64xi8>, !flamia.pipeline<2>
  return
}

// -----
// The stage indexes the tiles and the barriers: one ring for both.
func.func @f(%src: !flamia.global<?x2x512xi8>, %dst: !flamia.smem<3x8x64xi8>, %p: !flamia.pipeline<2>, %i: i32) {
  // expected-error @below {{'flamia.bulk.load' op the destination has 3 stage(s) but its pipeline has 2}}
  flamia.bulk.load %src[%i] -> %dst[%i] on %p : !flamia.global<?x2x512xi8>, !flamia.smem<3x8x64xi8>, !flamia.pipeline<2>
  return
}

// -----
func.func @f(%src: !flamia.global<?x2x512xi8>, %dst: !flamia.smem<2x8x64xi8>, %p: !flamia.pipeline<2>, %i: i32) {
  %c2 = arith.constant 2 : i32
  // expected-error @below {{'flamia.bulk.load' op stage 2 is out of range: the destination has 2 stage(s)}}
  flamia.bulk.load %src[%i] -> %dst[%c2] on %p : !flamia.global<?x2x512xi8>, !flamia.smem<2x8x64xi8>, !flamia.pipeline<2>
  return
}

//===----------------------------------------------------------------------===//
// flamia.pipeline.create: producers
//===----------------------------------------------------------------------===//

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  // expected-error @below {{'flamia.pipeline.create' op producers must be in [1, 1048575] (an mbarrier's arrival count), got 0}}
  %p = flamia.pipeline.create consumers 1 producers 0 : !flamia.pipeline<1>
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  // expected-error @below {{'flamia.pipeline.create' op producers must be in [1, 1048575] (an mbarrier's arrival count), got 1048576}}
  %p = flamia.pipeline.create consumers 1 producers 1048576 : !flamia.pipeline<1>
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_100a>, threads = 256 : i64} {
  // expected-error @below {{'flamia.pipeline.create' op 384 producers exceed the kernel's 256 threads}}
  %p = flamia.pipeline.create consumers 1 producers 384 : !flamia.pipeline<1>
  flamia.return
}

//===----------------------------------------------------------------------===//
// flamia.quantize_block: scale-factor tiles
//===----------------------------------------------------------------------===//

// -----
!src = !flamia.global<?x2x128xbf16>
!pay = !flamia.global<?x2x128xf8E4M3FN>
!sc = !flamia.global<?x2x4xf8E8M0FNU>
!tiles = !flamia.global<?x2x512xi8>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc, %t: !tiles) {
  // expected-error @below {{'flamia.quantize_block' op per-token scale tiles need the per-token quantization}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i token_block(%tb, %tbs) per_token_tiles(%t)
      : (!src, i32, i32, i32, i32, !pay, !sc, !tiles) -> ()
  return
}

// -----
!src = !flamia.global<?x2x128xbf16>
!pay = !flamia.global<?x2x128xf8E4M3FN>
!sc = !flamia.global<?x2x4xf8E8M0FNU>
!tiles = !flamia.global<?x2x512xi8>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc, %t: !tiles) {
  // expected-error @below {{'flamia.quantize_block' op token-block scale tiles need the token-block quantization}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) token_block_tiles(%t) {token_block_tile_rows = "tokens"}
      : (!src, i32, i32, i32, i32, !pay, !sc, !tiles) -> ()
  return
}

// -----
!src = !flamia.global<?x2x128xbf16>
!pay = !flamia.global<?x2x128xf8E4M3FN>
!sc = !flamia.global<?x2x4xf8E8M0FNU>
!tiles = !flamia.global<?x2x512xi8>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc, %t: !tiles) {
  // expected-error @below {{'flamia.quantize_block' op token-block scale tiles need token_block_tile_rows = "tokens" or "channels"}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i token_block(%tb, %tbs) token_block_tiles(%t)
      : (!src, i32, i32, i32, i32, !pay, !sc, !tiles) -> ()
  return
}

// -----
!src = !flamia.global<?x2x128xbf16>
!pay = !flamia.global<?x2x128xf8E4M3FN>
!sc = !flamia.global<?x2x4xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc) {
  // expected-error @below {{'flamia.quantize_block' op token_block_tile_rows without token-block scale tiles}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i token_block(%tb, %tbs) {token_block_tile_rows = "channels"}
      : (!src, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

// -----
!src = !flamia.global<?x2x128xbf16>
!pay = !flamia.global<?x2x128xf8E4M3FN>
!sc = !flamia.global<?x2x4xf8E8M0FNU>
!tiles = !flamia.global<?x2x512xi8>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc, %t: !tiles) {
  // expected-error @below {{'flamia.quantize_block' op token_block_tile_rows must be "tokens" or "channels", got "keys"}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i token_block(%tb, %tbs) token_block_tiles(%t) {token_block_tile_rows = "keys"}
      : (!src, i32, i32, i32, i32, !pay, !sc, !tiles) -> ()
  return
}

// -----
// Q has 8 heads: its tiles must have 8 slots per block as well.
!src = !flamia.global<?x8x128xbf16>
!pay = !flamia.global<?x8x128xf8E4M3FN>
!sc = !flamia.global<?x8x4xf8E8M0FNU>
!tiles = !flamia.global<?x2x512xi8>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc, %t: !tiles) {
  // expected-error @below {{'flamia.quantize_block' op scale tiles are [NB, H, 512] i8 with H = 8 (the source's heads), got '!flamia.global<?x2x512xi8>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) per_token_tiles(%t)
      : (!src, i32, i32, i32, i32, !pay, !sc, !tiles) -> ()
  return
}

// -----
!src = !flamia.global<?x2x128xbf16>
!pay = !flamia.global<?x2x128xf8E4M3FN>
!sc = !flamia.global<?x2x4xf8E8M0FNU>
!tiles = !flamia.global<?x2x128xf32>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc, %t: !tiles) {
  // expected-error @below {{'flamia.quantize_block' op scale tiles are [NB, H, 512] i8 with H = 2 (the source's heads), got '!flamia.global<?x2x128xf32>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i token_block(%tb, %tbs) token_block_tiles(%t) {token_block_tile_rows = "channels"}
      : (!src, i32, i32, i32, i32, !pay, !sc, !tiles) -> ()
  return
}

// -----
// D = 256: 8 channel blocks per token, or 256 channel rows, in a tile of 4
// K-blocks and 128 rows.
!src = !flamia.global<?x2x256xbf16>
!pay = !flamia.global<?x2x256xf8E4M3FN>
!sc = !flamia.global<?x2x8xf8E8M0FNU>
!tiles = !flamia.global<?x2x512xi8>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc, %t: !tiles) {
  // expected-error @below {{'flamia.quantize_block' op scale tiles hold at most 128 channels (4 32-channel K-blocks, or 128 channel rows), the source has D = 256}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) per_token_tiles(%t)
      : (!src, i32, i32, i32, i32, !pay, !sc, !tiles) -> ()
  return
}

// -----
func.func @f(%t: i32, %st: i32, %acc: i1, %sfp: i32, %sfv: i32, %v8: !flamia.smem<2x128x128xf8E4M3FN>) {
  %zero = arith.constant 0 : i32
  // expected-error @below {{'flamia.umma' op k_valid = 0 issues no K step (it must be at least 1)}}
  flamia.umma %t[256] b %v8[%st] accumulate %acc scales(%sfp, %sfv) k_valid %zero {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
      : (i32, !flamia.smem<2x128x128xf8E4M3FN>, i32, i1, i32, i32, i32) -> ()
  return
}

// -----
// A second orientation of the token-block tiles needs the first.
!src = !flamia.global<?x2x128xbf16>
!pay = !flamia.global<?x2x128xf8E4M3FN>
!sc = !flamia.global<?x2x4xf8E8M0FNU>
!tiles = !flamia.global<?x2x512xi8>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc, %t: !tiles) {
  // expected-error @below {{'flamia.quantize_block' op transposed scale tiles are the token-block tiles' second orientation: they need token_block_tiles}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i token_block(%tb, %tbs) transposed_tiles(%t)
      : (!src, i32, i32, i32, i32, !pay, !sc, !tiles) -> ()
  return
}

// -----
!src = !flamia.global<?x2x128xbf16>
!pay = !flamia.global<?x2x128xf8E4M3FN>
!sc = !flamia.global<?x2x4xf8E8M0FNU>
!tiles = !flamia.global<?x2x512xi8>
!bad = !flamia.global<?x4x512xi8>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc, %t: !tiles, %u: !bad) {
  // expected-error @below {{'flamia.quantize_block' op scale tiles are [NB, H, 512] i8 with H = 2 (the source's heads), got '!flamia.global<?x4x512xi8>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i token_block(%tb, %tbs) token_block_tiles(%t) transposed_tiles(%u) {token_block_tile_rows = "tokens"}
      : (!src, i32, i32, i32, i32, !pay, !sc, !tiles, !bad) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %b: !flamia.smem<1x64x128xbf16>) {
  // expected-error @below {{'flamia.umma' op b_k_block selects block scale factors; bf16 operands have none}}
  flamia.umma %t[128] b %b[%i] accumulate %acc b_k_block %i {a_column = 384 : i64, a_type = bf16, b_transposed}
      : (i32, !flamia.smem<1x64x128xbf16>, i32, i1, i32) -> ()
  return
}

// -----
// K = 64 (two 32-blocks) from K-block 3 would read a fifth block.
func.func @f(%t: i32, %i: i32, %acc: i1, %b: !flamia.smem<1x64x128xf8E4M3FN>) {
  %c3 = arith.constant 3 : i32
  // expected-error @below {{'flamia.umma' op b_k_block = 3 with K = 64 reads scale-factor K-blocks [3, 5), outside the 4 of a scale-factor tile}}
  flamia.umma %t[128] b %b[%i] accumulate %acc scales(%t, %t) b_k_block %c3 {a_column = 384 : i64, a_type = f8E4M3FN, b_transposed}
      : (i32, !flamia.smem<1x64x128xf8E4M3FN>, i32, i1, i32, i32, i32) -> ()
  return
}

// -----
func.func @f(%x: !flamia.frag<128x64xf32>, %sf: !flamia.smem<1x8x64xi8>, %i: i32) {
  // expected-error @below {{'flamia.frag.mx_quantize' op quantizes an f32 fragment into f8E4M3FN codes of the same shape, got '!flamia.frag<128x64xf32>' -> '!flamia.frag<128x64xbf16>'}}
  %c = flamia.frag.mx_quantize %x scales %sf[%i] k_block %i
      : !flamia.frag<128x64xf32>, !flamia.smem<1x8x64xi8> -> !flamia.frag<128x64xbf16>
  return
}

// -----
func.func @f(%x: !flamia.frag<64x64xf32>, %sf: !flamia.smem<1x8x64xi8>, %i: i32) {
  // expected-error @below {{'flamia.frag.mx_quantize' op quantizes 128-row fragments (one row per thread of a warpgroup, the block amax a thread's own), got '!flamia.frag<64x64xf32>'}}
  %c = flamia.frag.mx_quantize %x scales %sf[%i] k_block %i
      : !flamia.frag<64x64xf32>, !flamia.smem<1x8x64xi8> -> !flamia.frag<64x64xf8E4M3FN>
  return
}

// -----
func.func @f(%x: !flamia.frag<128x48xf32>, %sf: !flamia.smem<1x8x64xi8>, %i: i32) {
  // expected-error @below {{'flamia.frag.mx_quantize' op blocks of 32 columns need a multiple of 32 columns, got 48}}
  %c = flamia.frag.mx_quantize %x scales %sf[%i] k_block %i
      : !flamia.frag<128x48xf32>, !flamia.smem<1x8x64xi8> -> !flamia.frag<128x48xf8E4M3FN>
  return
}

// -----
func.func @f(%x: !flamia.frag<128x64xf32>, %sf: !flamia.smem<1x16x64xi8>, %i: i32) {
  // expected-error @below {{'flamia.frag.mx_quantize' op writes one 512-byte i8 scale-factor tile per stage, got '!flamia.smem<1x16x64xi8>'}}
  %c = flamia.frag.mx_quantize %x scales %sf[%i] k_block %i
      : !flamia.frag<128x64xf32>, !flamia.smem<1x16x64xi8> -> !flamia.frag<128x64xf8E4M3FN>
  return
}

// -----
func.func @f(%x: !flamia.frag<128x64xf32>, %sf: !flamia.smem<1x8x64xi8>, %i: i32) {
  %c3 = arith.constant 3 : i32
  // expected-error @below {{'flamia.frag.mx_quantize' op k_block = 3 with 2 block(s) per row writes K-blocks outside the 4 of a scale-factor tile}}
  %c = flamia.frag.mx_quantize %x scales %sf[%i] k_block %c3
      : !flamia.frag<128x64xf32>, !flamia.smem<1x8x64xi8> -> !flamia.frag<128x64xf8E4M3FN>
  return
}

// -----
func.func @f(%x: !flamia.frag<128x64xf32>, %sf: !flamia.smem<2x8x64xi8>, %i: i32) {
  %c2 = arith.constant 2 : i32
  // expected-error @below {{'flamia.frag.mx_quantize' op stage 2 is out of range: the scale tile has 2 stage(s)}}
  %c = flamia.frag.mx_quantize %x scales %sf[%c2] k_block %i
      : !flamia.frag<128x64xf32>, !flamia.smem<2x8x64xi8> -> !flamia.frag<128x64xf8E4M3FN>
  return
}

// -----
// flamia.smem.store
func.func @f(%p: !flamia.frag<128x128xf32>, %t: !flamia.smem<1x128x128xf32>, %i: i32) {
  // expected-error @below {{'flamia.smem.store' op stores f8E4M3FN or bf16 MMA operands, got '!flamia.frag<128x128xf32>'}}
  flamia.smem.store %p, %t[%i] : !flamia.frag<128x128xf32>, !flamia.smem<1x128x128xf32>
  return
}

// -----
func.func @f(%p: !flamia.frag<64x128xf8E4M3FN>, %t: !flamia.smem<1x64x128xf8E4M3FN>, %i: i32) {
  // expected-error @below {{'flamia.smem.store' op stores 128-row fragments (one row per thread of a warpgroup), got '!flamia.frag<64x128xf8E4M3FN>'}}
  flamia.smem.store %p, %t[%i] : !flamia.frag<64x128xf8E4M3FN>, !flamia.smem<1x64x128xf8E4M3FN>
  return
}

// -----
func.func @f(%p: !flamia.frag<128x128xf8E4M3FN>, %t: !flamia.smem<1x128x64xf8E4M3FN>, %i: i32) {
  // expected-error @below {{'flamia.smem.store' op stores '!flamia.frag<128x128xf8E4M3FN>' into a tile of the same rows, columns and element type, got '!flamia.smem<1x128x64xf8E4M3FN>'}}
  flamia.smem.store %p, %t[%i] : !flamia.frag<128x128xf8E4M3FN>, !flamia.smem<1x128x64xf8E4M3FN>
  return
}

// -----
func.func @f(%p: !flamia.frag<128x128xf8E4M3FN>, %t: !flamia.smem<1x128x128xf8E4M3FN>) {
  %c1 = arith.constant 1 : i32
  // expected-error @below {{'flamia.smem.store' op stage 1 is out of range: the tile has 1 stage(s)}}
  flamia.smem.store %p, %t[%c1] : !flamia.frag<128x128xf8E4M3FN>, !flamia.smem<1x128x128xf8E4M3FN>
  return
}

// -----
// flamia.umma with f4E2M1FN (kind::mxf4nvf4)
func.func @f(%t: i32, %i: i32, %acc: i1, %s: i32, %b: !flamia.smem<1x128x128xf4E2M1FN>) {
  // expected-error @below {{'flamia.umma' op kind::mxf4nvf4 reads both f4E2M1FN operands K-major from shared memory (no A in tensor memory, no transposed B)}}
  flamia.umma %t[0] b %b[%i] accumulate %acc scales(%s, %s) {a_column = 384 : i64, a_type = f4E2M1FN}
      : (i32, !flamia.smem<1x128x128xf4E2M1FN>, i32, i1, i32, i32) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %s: i32, %a: !flamia.smem<1x128x128xf4E2M1FN>, %b: !flamia.smem<1x128x128xf4E2M1FN>) {
  // expected-error @below {{'flamia.umma' op kind::mxf4nvf4 reads both f4E2M1FN operands K-major from shared memory (no A in tensor memory, no transposed B)}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc scales(%s, %s) {b_transposed}
      : (i32, !flamia.smem<1x128x128xf4E2M1FN>, i32, !flamia.smem<1x128x128xf4E2M1FN>, i32, i1, i32, i32) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %s: i32, %a: !flamia.smem<1x128x128xf4E2M1FN>, %b: !flamia.smem<1x128x128xf4E2M1FN>) {
  // expected-error @below {{'flamia.umma' op f4E2M1FN operands take no b_k_block or k_valid (one scale chunk per 64-wide K step)}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc scales(%s, %s) k_valid %i
      : (i32, !flamia.smem<1x128x128xf4E2M1FN>, i32, !flamia.smem<1x128x128xf4E2M1FN>, i32, i1, i32, i32, i32) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %a: !flamia.smem<1x128x128xf4E2M1FN>, %b: !flamia.smem<1x128x128xf4E2M1FN>) {
  // expected-error @below {{'flamia.umma' op block-scaled operands (f8E4M3FN, f4E2M1FN) need scales(scale_a, scale_b)}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc
      : (i32, !flamia.smem<1x128x128xf4E2M1FN>, i32, !flamia.smem<1x128x128xf4E2M1FN>, i32, i1) -> ()
  return
}

// -----
func.func @f(%t: i32, %i: i32, %acc: i1, %s: i32, %a: !flamia.smem<1x128x256xf4E2M1FN>, %b: !flamia.smem<1x128x256xf4E2M1FN>) {
  // expected-error @below {{'flamia.umma' op K = 256 needs more than two scale-factor chunks}}
  flamia.umma %t[0] a %a[%i] b %b[%i] accumulate %acc scales(%s, %s)
      : (i32, !flamia.smem<1x128x256xf4E2M1FN>, i32, !flamia.smem<1x128x256xf4E2M1FN>, i32, i1, i32, i32) -> ()
  return
}
