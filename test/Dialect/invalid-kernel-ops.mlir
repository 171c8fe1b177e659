// RUN: flamia-opt %s -split-input-file -verify-diagnostics
// Every verifier error of the block-level types and ops, one per split.

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// expected-error @below {{a global buffer has rank 1 or more; a scalar parameter is a plain i32 or f32}}
func.func private @f(!flamia.global<i32>)

// -----
// expected-error @below {{global buffers hold integers or floats, got 'complex<f32>'}}
func.func private @f(!flamia.global<4xcomplex<f32>>)

// -----
// expected-error @below {{a shared-memory buffer is stages x rows x cols, got rank 2}}
func.func private @f(!flamia.smem<128x64xbf16>)

// -----
// expected-error @below {{shared-memory buffers hold scalars, got 'index'}}
func.func private @f(!flamia.smem<1x128x64xindex>)

// -----
// expected-error @below {{a shared-memory buffer has at least one stage, got 0}}
func.func private @f(!flamia.smem<0x128x64xbf16>)

// -----
// expected-error @below {{a swizzled tile needs a multiple of 8 rows and rows of 32, 64 or a multiple of 128 bytes, got 100 x 64 x 'bf16'}}
func.func private @f(!flamia.smem<1x100x64xbf16>)

// -----
// 24 bf16 columns are 48 bytes: no swizzle mode covers that row.
// expected-error @below {{a swizzled tile needs a multiple of 8 rows and rows of 32, 64 or a multiple of 128 bytes, got 128 x 24 x 'bf16'}}
func.func private @f(!flamia.smem<1x128x24xbf16>)

// -----
// expected-error @below {{a pipeline has at least one stage, got 0}}
func.func private @f(!flamia.pipeline<0>)

// -----
// expected-error @below {{a fragment is a rows x cols tile, got rank 3}}
func.func private @f(!flamia.frag<2x64x128xf32>)

// -----
// expected-error @below {{fragment rows must be a positive multiple of 64 (a warpgroup's MMA rows), got 32}}
func.func private @f(!flamia.frag<32x128xf32>)

// -----
// expected-error @below {{fragment columns must be a positive multiple of 8, got 12}}
func.func private @f(!flamia.frag<64x12xf32>)

// -----
// expected-error @below {{fragments hold f32 (accumulators), bf16 (MMA A operands) or f8E4M3FN (P for a block-scaled MMA), got 'f16'}}
func.func private @f(!flamia.frag<64x128xf16>)

// -----
// expected-error @below {{rows must be a positive multiple of 64 (the rows of a fragment), got 16}}
func.func private @f(!flamia.rows<16 x f32>)

// -----
// expected-error @below {{per-row values are f32, got 'bf16'}}
func.func private @f(!flamia.rows<64 x bf16>)

//===----------------------------------------------------------------------===//
// flamia.kernel, flamia.return
//===----------------------------------------------------------------------===//

// -----
// expected-error @below {{'flamia.kernel' op a kernel returns nothing; it writes its outputs to global parameters}}
flamia.kernel @k() -> i32 attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.return
}

// -----
// expected-error @below {{'flamia.kernel' op threads must be whole warpgroups (a multiple of 128) up to 1024, got 96}}
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 96 : i64} {
  flamia.return
}

// -----
// A negative count reads as negative (not as a huge unsigned number).
// expected-error @below {{'flamia.kernel' op threads must be whole warpgroups (a multiple of 128) up to 1024, got -128}}
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = -128 : i64} {
  flamia.return
}

// -----
// expected-error @below {{'flamia.kernel' op threads must be whole warpgroups (a multiple of 128) up to 1024, got 1152}}
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 1152 : i64} {
  flamia.return
}

// -----
// expected-error @below {{'flamia.kernel' op launch must be #flamia.launch<persistent> or #flamia.launch<grid>, got "cluster"}}
flamia.kernel @k() attributes {launch = "cluster", target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.return
}

// -----
// The body's arguments are the parameters (FunctionOpInterface's check).
// expected-error @below {{'flamia.kernel' op entry block must have 1 arguments to match function signature}}
"flamia.kernel"() <{function_type = (i32) -> (), sym_name = "k", launch = #flamia.launch<grid>,
                    target = #flamia.target<sm_90a>, threads = 128 : i64}> ({
  "flamia.return"() : () -> ()
}) : () -> ()

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 256 : i64} {
  flamia.role "producer" warpgroups [0, 1) registers 40 {
  }
  // expected-error @below {{'flamia.role' op warpgroups [1, 3) exceed the kernel's 2 warpgroups}}
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
  }
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  flamia.role "producer" warpgroups [0, 2) registers 40 {
  }
  // expected-error @below {{'flamia.role' op warpgroups [1, 3) overlap another role's [0, 2)}}
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
  }
  flamia.return
}

// -----
// 128 x (240 + 2 x 240) = 92160 registers: setmaxnreg would wait forever.
// expected-error @below {{'flamia.kernel' op the roles ask for 92160 registers (registers x 128 threads per warpgroup), more than the 65536 of a multiprocessor}}
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  flamia.role "producer" warpgroups [0, 1) registers 240 {
  }
  flamia.role "consumer" warpgroups [1, 3) registers 240 {
  }
  flamia.return
}

// -----
func.func @f() {
  // expected-error @below {{'flamia.return' op expects parent op to be one of 'flamia.kernel, flamia.role'}}
  flamia.return
}

//===----------------------------------------------------------------------===//
// flamia.role, flamia.warpgroup_id, flamia.turn
//===----------------------------------------------------------------------===//

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.role' op warpgroup range [2, 2) is empty}}
  flamia.role "consumer" warpgroups [2, 2) registers 232 {
  }
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.role' op the first warpgroup must be 0 or more, got -1}}
  flamia.role "consumer" warpgroups [-1, 1) registers 232 {
  }
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.role' op registers must be a multiple of 8 in [24, 256] (setmaxnreg), got 20}}
  flamia.role "producer" warpgroups [0, 1) registers 20 {
  }
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.role' op registers must be a multiple of 8 in [24, 256] (setmaxnreg), got 100}}
  flamia.role "producer" warpgroups [0, 1) registers 100 {
  }
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.role' op a single_thread role runs on one thread of one warpgroup, got warpgroups [0, 2)}}
  flamia.role "producer" warpgroups [0, 2) registers 40 single_thread {
  }
  flamia.return
}

// -----
// A single thread cannot hold its share of a warpgroup's fragment.
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  flamia.role "producer" warpgroups [0, 1) registers 40 single_thread {
    // expected-error @below {{'flamia.frag.zero' op needs every thread of a warpgroup but is in the single_thread role "producer"}}
    %z = flamia.frag.zero : !flamia.frag<64x128xf32>
  }
  flamia.return
}

// -----
// ... nor issue a warpgroup MMA, even nested in a loop.
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %a = flamia.smem.alloc : !flamia.smem<1x64x64xbf16>
  %b = flamia.smem.alloc : !flamia.smem<1x64x64xbf16>
  flamia.role "producer" warpgroups [0, 1) registers 40 single_thread {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %s = arith.constant 0 : i32
    scf.for %i = %c0 to %c1 step %c1 {
      // expected-error @below {{'flamia.wg.mma' op needs every thread of a warpgroup but is in the single_thread role "producer"}}
      %x = flamia.wg.mma %a[%s], %b[%s] : !flamia.smem<1x64x64xbf16>, !flamia.smem<1x64x64xbf16> -> !flamia.frag<64x64xf32>
    }
  }
  flamia.return
}

// -----
func.func @f() {
  // expected-error @below {{'flamia.role' op expects parent op 'flamia.kernel'}}
  flamia.role "producer" warpgroups [0, 1) registers 40 {
  }
  return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  // expected-error @below {{'flamia.warpgroup_id' op expects parent op 'flamia.role'}}
  %w = flamia.warpgroup_id
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 256 : i64} {
  flamia.role "consumer" warpgroups [0, 2) registers 232 {
    // expected-error @below {{expected string or keyword containing one of the following enum values for attribute 'action' [take, give]}}
    flamia.turn pass among 2
  }
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.role "consumer" warpgroups [0, 1) registers 232 {
    // expected-error @below {{'flamia.turn' op turns are taken among 2 to 7 warpgroups (one named barrier each), got 1}}
    flamia.turn take among 1
  }
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 256 : i64} {
  // expected-error @below {{'flamia.turn' op takes turns among the warpgroups of a flamia.role but is not inside one}}
  flamia.turn take among 2
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 512 : i64} {
  flamia.role "consumer" warpgroups [1, 4) registers 160 {
    // expected-error @below {{'flamia.turn' op is taken among 2 warpgroups but role "consumer" has 3}}
    flamia.turn give among 2
  }
  flamia.return
}

//===----------------------------------------------------------------------===//
// Shared memory and pipelines
//===----------------------------------------------------------------------===//

// -----
func.func @f() {
  // expected-error @below {{'flamia.smem.alloc' op expects parent op 'flamia.kernel'}}
  %s = flamia.smem.alloc : !flamia.smem<1x64x64xbf16>
  return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.pipeline.create' op consumers must be in [1, 1048575] (an mbarrier's arrival count), got 0}}
  %p = flamia.pipeline.create consumers 0 : !flamia.pipeline<2>
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.pipeline.create' op 512 consumers exceed the kernel's 384 threads}}
  %p = flamia.pipeline.create consumers 512 : !flamia.pipeline<2>
  flamia.return
}

// -----
flamia.kernel @k(%it: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  // expected-error @below {{expected string or keyword containing one of the following enum values for attribute 'side' [producer, consumer]}}
  %s = flamia.pipeline.acquire reader %p[%it] : !flamia.pipeline<2>
  flamia.return
}

// -----
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  // expected-error @below {{'flamia.pipeline.expect' op bytes must be in [1, 1048575] (an mbarrier's transaction count), got 0}}
  flamia.pipeline.expect %p[%s] bytes 0 : !flamia.pipeline<2>
  flamia.return
}

// -----
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  // expected-error @below {{'flamia.pipeline.expect' op bytes must be in [1, 1048575] (an mbarrier's transaction count), got 1048576}}
  flamia.pipeline.expect %p[%s] bytes 1048576 : !flamia.pipeline<2>
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  %c2 = arith.constant 2 : i32
  // expected-error @below {{'flamia.pipeline.expect' op stage 2 is out of range: the pipeline has 2 stage(s)}}
  flamia.pipeline.expect %p[%c2] bytes 65536 : !flamia.pipeline<2>
  flamia.return
}

// -----
flamia.kernel @k(%it: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %p1 = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
  %p2 = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  %s = flamia.pipeline.acquire producer %p2[%it] : !flamia.pipeline<2>
  // expected-error @below {{'flamia.pipeline.expect' op the stage comes from a pipeline of 2 stage(s) but the pipeline has 1}}
  flamia.pipeline.expect %p1[%s] bytes 32768 : !flamia.pipeline<1>
  flamia.return
}

// -----
flamia.kernel @k() attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  %c = arith.constant -1 : i32
  // expected-error @below {{'flamia.pipeline.release' op stage -1 is out of range: the pipeline has 2 stage(s)}}
  flamia.pipeline.release %p[%c] : !flamia.pipeline<2>
  flamia.return
}

// -----
flamia.kernel @k(%it: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %p2 = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  %p3 = flamia.pipeline.create consumers 256 : !flamia.pipeline<3>
  %s = flamia.pipeline.acquire consumer %p3[%it] : !flamia.pipeline<3>
  // expected-error @below {{'flamia.pipeline.release' op the stage comes from a pipeline of 3 stage(s) but the pipeline has 2}}
  flamia.pipeline.release %p2[%s] : !flamia.pipeline<2>
  flamia.return
}

//===----------------------------------------------------------------------===//
// flamia.tma.load
//===----------------------------------------------------------------------===//

// -----
// The TMA box of a bf16 buffer does not fit an FP8 tensor.
flamia.kernel @k(%src: !flamia.global<?x8x128xf8E4M3FN>, %r: i32, %c: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %t = flamia.smem.alloc : !flamia.smem<2x128x64xbf16>
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  %s = flamia.pipeline.acquire producer %p[%r] : !flamia.pipeline<2>
  // expected-error @below {{'flamia.tma.load' op element types differ: source 'f8E4M3FN', destination 'bf16'}}
  flamia.tma.load %src[%r, %c] -> %t[%s] on %p
      : !flamia.global<?x8x128xf8E4M3FN>, !flamia.smem<2x128x64xbf16>, !flamia.pipeline<2>
  flamia.return
}

// -----
flamia.kernel @k(%src: !flamia.global<?x1024xbf16>, %r: i32, %c: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %t = flamia.smem.alloc : !flamia.smem<2x128x64xbf16>
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  %s = flamia.pipeline.acquire producer %p[%r] : !flamia.pipeline<2>
  // expected-error @below {{'flamia.tma.load' op the source must be a packed [T, H, D] tensor with static D}}
  flamia.tma.load %src[%r, %c] -> %t[%s] on %p
      : !flamia.global<?x1024xbf16>, !flamia.smem<2x128x64xbf16>, !flamia.pipeline<2>
  flamia.return
}

// -----
flamia.kernel @k(%src: !flamia.global<?x1x64xbf16>, %r: i32, %c: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %t = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  %s = flamia.pipeline.acquire producer %p[%r] : !flamia.pipeline<2>
  // expected-error @below {{'flamia.tma.load' op tile columns 128 exceed a row of the source (H * D = 64)}}
  flamia.tma.load %src[%r, %c] -> %t[%s] on %p
      : !flamia.global<?x1x64xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
  flamia.return
}

// -----
flamia.kernel @k(%src: !flamia.global<?x8x128xbf16>, %r: i32, %c: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %t = flamia.smem.alloc : !flamia.smem<1x512x64xbf16>
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<1>
  %s = flamia.pipeline.acquire producer %p[%r] : !flamia.pipeline<1>
  // expected-error @below {{'flamia.tma.load' op tile rows 512 exceed a TMA box (256 rows)}}
  flamia.tma.load %src[%r, %c] -> %t[%s] on %p
      : !flamia.global<?x8x128xbf16>, !flamia.smem<1x512x64xbf16>, !flamia.pipeline<1>
  flamia.return
}

// -----
flamia.kernel @k(%src: !flamia.global<?x8x128xbf16>, %r: i32, %c: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %t = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<3>
  %s = flamia.pipeline.acquire producer %p[%r] : !flamia.pipeline<3>
  // expected-error @below {{'flamia.tma.load' op the destination has 2 stage(s) but its pipeline has 3}}
  flamia.tma.load %src[%r, %c] -> %t[%s] on %p
      : !flamia.global<?x8x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<3>
  flamia.return
}

// -----
flamia.kernel @k(%src: !flamia.global<?x8x128xbf16>, %r: i32, %c: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %t = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<2>
  %c3 = arith.constant 3 : i32
  // expected-error @below {{'flamia.tma.load' op stage 3 is out of range: the destination has 2 stage(s)}}
  flamia.tma.load %src[%r, %c] -> %t[%c3] on %p
      : !flamia.global<?x8x128xbf16>, !flamia.smem<2x128x128xbf16>, !flamia.pipeline<2>
  flamia.return
}

//===----------------------------------------------------------------------===//
// Work queue and schedule tables
//===----------------------------------------------------------------------===//

// -----
flamia.kernel @k(%counter: !flamia.global<2xi32>, %n: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.queue.create' op the counter must be a one-element i32 buffer (!flamia.global<1xi32>), got '!flamia.global<2xi32>'}}
  %q = flamia.queue.create %counter, %n : !flamia.global<2xi32>
  flamia.return
}

// -----
flamia.kernel @k(%counter: !flamia.global<1xi64>, %n: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.queue.create' op the counter must be a one-element i32 buffer (!flamia.global<1xi32>), got '!flamia.global<1xi64>'}}
  %q = flamia.queue.create %counter, %n : !flamia.global<1xi64>
  flamia.return
}

// -----
flamia.kernel @k(%counter: !flamia.global<1xi32>, %n: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.queue.create' op receivers must be in [0, 384] (the kernel's threads), got 512}}
  %q = flamia.queue.create %counter, %n receivers 512 : !flamia.global<1xi32>
  flamia.return
}

// -----
flamia.kernel @k(%counter: !flamia.global<1xi32>, %n: i32)
    attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.queue.create' op a work queue belongs to a persistent kernel, but the kernel's launch is "grid"}}
  %q = flamia.queue.create %counter, %n : !flamia.global<1xi32>
  flamia.return
}

// -----
func.func @f(%counter: !flamia.global<1xi32>, %n: i32) {
  // expected-error @below {{'flamia.queue.create' op expects parent op 'flamia.kernel'}}
  %q = flamia.queue.create %counter, %n : !flamia.global<1xi32>
  return
}

// -----
flamia.kernel @k(%counter: !flamia.global<1xi32>, %n: i32, %it: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %q = flamia.queue.create %counter, %n : !flamia.global<1xi32>
  // expected-error @below {{expected string or keyword containing one of the following enum values for attribute 'side' [fetch, receive]}}
  %i = flamia.queue.next take %q[%it]
  flamia.return
}

// -----
flamia.kernel @k(%items: !flamia.global<?x4xi32>, %i: i32)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  // expected-error @below {{'flamia.item.load' op the item array must be an [N, 8] i32 array, got '!flamia.global<?x4xi32>'}}
  %0:8 = flamia.item.load %items[%i] : !flamia.global<?x4xi32>
  flamia.return
}

// -----
flamia.kernel @k(%info: !flamia.global<?x2xi64>, %b: i32)
    attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  // expected-error @below {{'flamia.block_info.load' op the block list must be an [N, 2] i32 array, got '!flamia.global<?x2xi64>'}}
  %start, %length = flamia.block_info.load %info[%b] : !flamia.global<?x2xi64>
  flamia.return
}

//===----------------------------------------------------------------------===//
// flamia.wg.mma
//===----------------------------------------------------------------------===//

// -----
!qt = !flamia.smem<1x128x128xbf16>
!kt = !flamia.smem<2x64x128xbf16>
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %a = flamia.smem.alloc : !qt
  %b = flamia.smem.alloc : !kt
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    // expected-error @below {{'flamia.wg.mma' op B provides N = 64 but the result has 128 columns}}
    %x = flamia.wg.mma %a[%s], %b[%s] : !qt, !kt -> !flamia.frag<64x128xf32>
  }
  flamia.return
}

// -----
!qt = !flamia.smem<1x128x64xbf16>
!kt = !flamia.smem<2x512x64xbf16>
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %a = flamia.smem.alloc : !qt
  %b = flamia.smem.alloc : !kt
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    // expected-error @below {{'flamia.wg.mma' op N = 512 exceeds the 256 columns of one MMA}}
    %x = flamia.wg.mma %a[%s], %b[%s] : !qt, !kt -> !flamia.frag<64x512xf32>
  }
  flamia.return
}

// -----
!qt = !flamia.smem<1x128x128xbf16>
!kt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%it: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %a = flamia.smem.alloc : !qt
  %b = flamia.smem.alloc : !kt
  %p = flamia.pipeline.create consumers 256 : !flamia.pipeline<3>
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %s = flamia.pipeline.acquire consumer %p[%it] : !flamia.pipeline<3>
    // expected-error @below {{'flamia.wg.mma' op the stage comes from a pipeline of 3 stage(s) but B has 2}}
    %x = flamia.wg.mma %a[%s], %b[%s] : !qt, !kt -> !flamia.frag<64x128xf32>
  }
  flamia.return
}

// -----
!qt = !flamia.smem<1x128x128xbf16>
!kt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %a = flamia.smem.alloc : !qt
  %b = flamia.smem.alloc : !kt
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    // expected-error @below {{'flamia.wg.mma' op a shared-memory A operand needs a stage}}
    %x = flamia.wg.mma %a, %b[%s] : !qt, !kt -> !flamia.frag<64x128xf32>
  }
  flamia.return
}

// -----
!qt = !flamia.smem<1x128x128xf8E4M3FN>
!kt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %a = flamia.smem.alloc : !qt
  %b = flamia.smem.alloc : !kt
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    // expected-error @below {{'flamia.wg.mma' op A and B element types differ}}
    %x = flamia.wg.mma %a[%s], %b[%s] : !qt, !kt -> !flamia.frag<64x128xf32>
  }
  flamia.return
}

// -----
!qt = !flamia.smem<1x96x128xbf16>
!kt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %a = flamia.smem.alloc : !qt
  %b = flamia.smem.alloc : !kt
  flamia.role "consumer" warpgroups [1, 2) registers 232 {
    // expected-error @below {{'flamia.wg.mma' op A tiles of 96 rows do not split into warpgroup rows of 64}}
    %x = flamia.wg.mma %a[%s], %b[%s] : !qt, !kt -> !flamia.frag<64x128xf32>
  }
  flamia.return
}

// -----
// Two consumer warpgroups of 64 rows each need a 128-row Q tile.
!qt = !flamia.smem<1x64x128xbf16>
!kt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %a = flamia.smem.alloc : !qt
  %b = flamia.smem.alloc : !kt
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    // expected-error @below {{'flamia.wg.mma' op the 2 warpgroups of role "consumer" read rows [0, 128) of A tiles of 64 rows}}
    %x = flamia.wg.mma %a[%s], %b[%s] : !qt, !kt -> !flamia.frag<64x128xf32>
  }
  flamia.return
}

// -----
!qt = !flamia.smem<1x128x128xbf16>
!kt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %a = flamia.smem.alloc : !qt
  %b = flamia.smem.alloc : !kt
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %c1 = arith.constant 1 : i32
    // expected-error @below {{'flamia.wg.mma' op stage 1 is out of range: A has 1 stage(s)}}
    %x = flamia.wg.mma %a[%c1], %b[%s] : !qt, !kt -> !flamia.frag<64x128xf32>
  }
  flamia.return
}

// -----
!vt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%s: i32, %p: !flamia.frag<64x128xbf16>)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %b = flamia.smem.alloc : !vt
  // expected-error @below {{'flamia.wg.mma' op a fragment A operand takes no stage}}
  %x = flamia.wg.mma %p[%s], %b[%s] {b_transposed} : !flamia.frag<64x128xbf16>, !vt -> !flamia.frag<64x128xf32>
  flamia.return
}

// -----
!vt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%s: i32, %p: !flamia.frag<128x128xbf16>)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %b = flamia.smem.alloc : !vt
  // expected-error @below {{'flamia.wg.mma' op A has 128 rows but the result 64}}
  %x = flamia.wg.mma %p, %b[%s] {b_transposed} : !flamia.frag<128x128xbf16>, !vt -> !flamia.frag<64x128xf32>
  flamia.return
}

// -----
// P must be rounded (flamia.frag.quantize) into the A-operand layout first.
!vt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%s: i32, %p: !flamia.frag<64x128xf32>)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %b = flamia.smem.alloc : !vt
  // expected-error @below {{'flamia.wg.mma' op a fragment A operand is bf16 (the MMA's A-operand layout), got 'f32'}}
  %x = flamia.wg.mma %p, %b[%s] {b_transposed} : !flamia.frag<64x128xf32>, !vt -> !flamia.frag<64x128xf32>
  flamia.return
}

// -----
!vt = !flamia.smem<2x128x128xf8E4M3FN>
flamia.kernel @k(%s: i32, %p: !flamia.frag<64x128xbf16>)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %b = flamia.smem.alloc : !vt
  // expected-error @below {{'flamia.wg.mma' op A fragment element type 'bf16' differs from B's 'f8E4M3FN'}}
  %x = flamia.wg.mma %p, %b[%s] {b_transposed} : !flamia.frag<64x128xbf16>, !vt -> !flamia.frag<64x128xf32>
  flamia.return
}

// -----
// P V: K is the key count, B's rows when transposed.
!vt = !flamia.smem<2x64x128xbf16>
flamia.kernel @k(%s: i32, %p: !flamia.frag<64x128xbf16>)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %b = flamia.smem.alloc : !vt
  // expected-error @below {{'flamia.wg.mma' op contraction mismatch: A has K = 128, B has K = 64}}
  %x = flamia.wg.mma %p, %b[%s] {b_transposed} : !flamia.frag<64x128xbf16>, !vt -> !flamia.frag<64x128xf32>
  flamia.return
}

// -----
!vt = !flamia.smem<2x8x64xbf16>
flamia.kernel @k(%s: i32, %p: !flamia.frag<64x8xbf16>)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %b = flamia.smem.alloc : !vt
  // expected-error @below {{'flamia.wg.mma' op K = 8 is not a multiple of 16 (the MMA's K step)}}
  %x = flamia.wg.mma %p, %b[%s] {b_transposed} : !flamia.frag<64x8xbf16>, !vt -> !flamia.frag<64x64xf32>
  flamia.return
}

// -----
!vt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%s: i32, %p: !flamia.frag<64x128xbf16>, %o: !flamia.frag<64x64xf32>)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %b = flamia.smem.alloc : !vt
  // expected-error @below {{'flamia.wg.mma' op the accumulator must have the result type}}
  %x = flamia.wg.mma %p, %b[%s] acc(%o : !flamia.frag<64x64xf32>) {b_transposed}
      : !flamia.frag<64x128xbf16>, !vt -> !flamia.frag<64x128xf32>
  flamia.return
}

// -----
!vt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%s: i32, %p: !flamia.frag<64x128xbf16>)
    attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %b = flamia.smem.alloc : !vt
  // expected-error @below {{'flamia.wg.mma' op the accumulator is f32}}
  %x = flamia.wg.mma %p, %b[%s] {b_transposed} : !flamia.frag<64x128xbf16>, !vt -> !flamia.frag<64x128xbf16>
  flamia.return
}

// -----
!qt = !flamia.smem<1x128x128xbf16>
!kt = !flamia.smem<2x128x128xbf16>
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %a = flamia.smem.alloc : !qt
  %b = flamia.smem.alloc : !kt
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    // expected-error @below {{'flamia.wg.mma' op the result of an async MMA is pending: only flamia.wg.wait may use it, not 'flamia.frag.scale_rows'}}
    %x = flamia.wg.mma %a[%s], %b[%s] {async} : !qt, !kt -> !flamia.frag<64x128xf32>
    %r = flamia.rows.fill 1.0 : !flamia.rows<64 x f32>
    %y = flamia.frag.scale_rows %x by %r : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
  }
  flamia.return
}

//===----------------------------------------------------------------------===//
// flamia.smem.mx_round
//===----------------------------------------------------------------------===//

// -----
func.func @f(%v: !flamia.smem<1x128x128xbf16>, %s: i32, %row: i32) {
  // expected-error @below {{'flamia.smem.mx_round' op is executed by the warpgroups of a flamia.role (it ends with the warpgroup's barrier)}}
  flamia.smem.mx_round %v[%s] to %v[%s] rows %row : !flamia.smem<1x128x128xbf16>, !flamia.smem<1x128x128xbf16>
  return
}

// -----
func.func @f(%v: !flamia.smem<1x128x128xbf16>, %w: !flamia.smem<1x128x64xbf16>, %s: i32, %row: i32) {
  // expected-error @below {{'flamia.smem.mx_round' op source and dest tiles must have the same rows and columns, got '!flamia.smem<1x128x128xbf16>' and '!flamia.smem<1x128x64xbf16>'}}
  flamia.smem.mx_round %v[%s] to %w[%s] rows %row : !flamia.smem<1x128x128xbf16>, !flamia.smem<1x128x64xbf16>
  return
}

// -----
func.func @f(%v: !flamia.smem<1x128x128xf8E4M3FN>, %s: i32, %row: i32) {
  // expected-error @below {{'flamia.smem.mx_round' op rounds a bf16 tile into a bf16 tile, got '!flamia.smem<1x128x128xf8E4M3FN>' and '!flamia.smem<1x128x128xf8E4M3FN>'}}
  flamia.smem.mx_round %v[%s] to %v[%s] rows %row : !flamia.smem<1x128x128xf8E4M3FN>, !flamia.smem<1x128x128xf8E4M3FN>
  return
}

// -----
func.func @f(%v: !flamia.smem<1x128x32xbf16>, %s: i32, %row: i32) {
  // expected-error @below {{'flamia.smem.mx_round' op rounds 64-row slices of tiles of whole 128-byte swizzle atoms (a multiple of 64 bf16 columns), got '!flamia.smem<1x128x32xbf16>'}}
  flamia.smem.mx_round %v[%s] to %v[%s] rows %row : !flamia.smem<1x128x32xbf16>, !flamia.smem<1x128x32xbf16>
  return
}

// -----
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %row = arith.constant 96 : i32
    // expected-error @below {{'flamia.smem.mx_round' op row = 96 is not a multiple of 64 below 128}}
    flamia.smem.mx_round %v[%s] to %v[%s] rows %row : !flamia.smem<1x128x128xbf16>, !flamia.smem<1x128x128xbf16>
  }
  flamia.return
}

// -----
flamia.kernel @k(%row: i32) attributes {launch = #flamia.launch<persistent>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<1x128x128xbf16>
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %s = arith.constant 1 : i32
    // expected-error @below {{'flamia.smem.mx_round' op stage 1 is out of range: the source tile has 1 stage(s)}}
    flamia.smem.mx_round %v[%s] to %v[%s] rows %row : !flamia.smem<1x128x128xbf16>, !flamia.smem<1x128x128xbf16>
  }
  flamia.return
}

//===----------------------------------------------------------------------===//
// flamia.smem.zero_rows
//===----------------------------------------------------------------------===//

// -----
func.func @f(%v: !flamia.smem<2x128x128xbf16>, %s: i32, %from: i32) {
  // expected-error @below {{'flamia.smem.zero_rows' op is executed by the threads of a flamia.role (it ends with the role's barrier)}}
  flamia.smem.zero_rows %v[%s] from %from : !flamia.smem<2x128x128xbf16>
  return
}

// -----
flamia.kernel @k(%s: i32, %from: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<2x128x16xbf16>
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    // expected-error @below {{'flamia.smem.zero_rows' op zeroes rows of a multiple of 128 bytes (whole swizzle atoms) or of 64 bytes (one atom), got 32-byte rows}}
    flamia.smem.zero_rows %v[%s] from %from : !flamia.smem<2x128x16xbf16>
  }
  flamia.return
}

// -----
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %from = arith.constant 129 : i32
    // expected-error @below {{'flamia.smem.zero_rows' op from = 129 is outside [0, 128]}}
    flamia.smem.zero_rows %v[%s] from %from : !flamia.smem<2x128x128xbf16>
  }
  flamia.return
}

// -----
flamia.kernel @k(%from: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %s = arith.constant 2 : i32
    // expected-error @below {{'flamia.smem.zero_rows' op stage 2 is out of range: the tile has 2 stage(s)}}
    flamia.smem.zero_rows %v[%s] from %from : !flamia.smem<2x128x128xbf16>
  }
  flamia.return
}

// -----
flamia.kernel @k(%s: i32, %from: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %to = arith.constant 129 : i32
    // expected-error @below {{'flamia.smem.zero_rows' op to = 129 is outside [0, 128]}}
    flamia.smem.zero_rows %v[%s] from %from to %to : !flamia.smem<2x128x128xbf16>
  }
  flamia.return
}

// -----
flamia.kernel @k(%s: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 384 : i64} {
  %v = flamia.smem.alloc : !flamia.smem<2x128x128xbf16>
  flamia.role "consumer" warpgroups [1, 3) registers 232 {
    %from = arith.constant 40 : i32
    %to = arith.constant 32 : i32
    // expected-error @below {{'flamia.smem.zero_rows' op to = 32 is before from = 40}}
    flamia.smem.zero_rows %v[%s] from %from to %to : !flamia.smem<2x128x128xbf16>
  }
  flamia.return
}

//===----------------------------------------------------------------------===//
// flamia.wg.wait
//===----------------------------------------------------------------------===//

// -----
func.func @f() {
  // expected-error @below {{'flamia.wg.wait' op waits for at least one fragment}}
  "flamia.wg.wait"() {pending = 0 : i64} : () -> ()
  return
}

// -----
!qt = !flamia.smem<1x128x128xbf16>
!kt = !flamia.smem<2x128x128xbf16>
func.func @f(%a: !qt, %b: !kt, %s: i32) {
  %x = flamia.wg.mma %a[%s], %b[%s] {async} : !qt, !kt -> !flamia.frag<64x128xf32>
  // expected-error @below {{'flamia.wg.wait' op pending must be >= 0, got -1}}
  %y = flamia.wg.wait %x pending -1 : !flamia.frag<64x128xf32>
  return
}

// -----
!qt = !flamia.smem<1x128x128xbf16>
!kt = !flamia.smem<2x128x128xbf16>
func.func @f(%a: !qt, %b: !kt, %s: i32) {
  %x = flamia.wg.mma %a[%s], %b[%s] : !qt, !kt -> !flamia.frag<64x128xf32>
  // expected-error @below {{'flamia.wg.wait' op operand #0 is not the result of an async flamia.wg.mma}}
  %y = flamia.wg.wait %x pending 0 : !flamia.frag<64x128xf32>
  return
}

// -----
!qt = !flamia.smem<1x128x128xbf16>
!kt = !flamia.smem<2x128x128xbf16>
func.func @f(%a: !qt, %b: !kt, %s: i32, %c: i1) {
  %x = flamia.wg.mma %a[%s], %b[%s] {async} : !qt, !kt -> !flamia.frag<64x128xf32>
  scf.if %c {
    // expected-error @below {{'flamia.wg.wait' op operand #0 must come from an async MMA earlier in the same block}}
    %y = flamia.wg.wait %x pending 0 : !flamia.frag<64x128xf32>
  }
  return
}

// -----
// Groups finish in issue order: with one group allowed to stay pending,
// only MMAs issued before the last one are complete.
!qt = !flamia.smem<1x128x128xbf16>
!kt = !flamia.smem<2x128x128xbf16>
func.func @f(%a: !qt, %b: !kt, %s: i32) {
  %x = flamia.wg.mma %a[%s], %b[%s] {async} : !qt, !kt -> !flamia.frag<64x128xf32>
  %z = flamia.wg.mma %a[%s], %b[%s] {async} : !qt, !kt -> !flamia.frag<64x128xf32>
  %x1 = flamia.wg.wait %x pending 1 : !flamia.frag<64x128xf32>
  // expected-error @below {{'flamia.wg.wait' op operand #0 may still be running: 0 async MMA(s) were issued after it, but pending 1 lets the last 1 run on}}
  %z1 = flamia.wg.wait %z pending 1 : !flamia.frag<64x128xf32>
  return
}

//===----------------------------------------------------------------------===//
// Masking, online softmax, P rounding, epilogue
//===----------------------------------------------------------------------===//

// -----
func.func @f(%s: !flamia.frag<64x128xbf16>, %i: i32) {
  // expected-error @below {{'flamia.frag.mask' op masks f32 scores, got '!flamia.frag<64x128xbf16>'}}
  %m = flamia.frag.mask %s query %i key %i limit %i {causal} : !flamia.frag<64x128xbf16>
  return
}

// -----
func.func @f(%s: !flamia.frag<64x128xbf16>, %m: !flamia.rows<64 x f32>, %scale: f32) {
  // expected-error @below {{'flamia.softmax.update' op the scores must be f32, got '!flamia.frag<64x128xbf16>'}}
  %p, %m1, %l1, %a = flamia.softmax.update %s max %m sum %m scale %scale
      : !flamia.frag<64x128xbf16>, !flamia.rows<64 x f32>
  return
}

// -----
func.func @f(%s: !flamia.frag<64x128xf32>, %m: !flamia.rows<128 x f32>, %scale: f32) {
  // expected-error @below {{'flamia.softmax.update' op the per-row values have 128 rows but the scores 64}}
  %p, %m1, %l1, %a = flamia.softmax.update %s max %m sum %m scale %scale
      : !flamia.frag<64x128xf32>, !flamia.rows<128 x f32>
  return
}

// -----
func.func @f(%s: !flamia.frag<64x128xf32>, %m: !flamia.rows<64 x f32>, %scale: f32) {
  // expected-error @below {{'flamia.softmax.update' op p_scale must be in [0, 64], got 65}}
  %p, %m1, %l1, %a = flamia.softmax.update %s max %m sum %m scale %scale {p_scale = 65}
      : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
  return
}

// -----
// A P scaled by 2^8 in the softmax, rounded as if it were not: 2^16 off.
func.func @f(%s: !flamia.frag<64x128xf32>, %m: !flamia.rows<64 x f32>, %scale: f32, %q: i1) {
  %p, %m1, %l1, %a = flamia.softmax.update %s max %m sum %m scale %scale {p_scale = 8}
      : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
  // expected-error @below {{'flamia.frag.quantize' op P comes from flamia.softmax.update with p_scale 8: `prescaled` needs p_scale = fixed_scale (8), and without it p_scale must be 0}}
  %r = flamia.frag.quantize %p quantized %q {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
  return
}

// -----
func.func @f(%s: !flamia.frag<64x128xf32>, %m: !flamia.rows<64 x f32>, %scale: f32, %q: i1) {
  %p, %m1, %l1, %a = flamia.softmax.update %s max %m sum %m scale %scale
      : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>
  // expected-error @below {{'flamia.frag.quantize' op P comes from flamia.softmax.update with p_scale 0: `prescaled` needs p_scale = fixed_scale (8), and without it p_scale must be 0}}
  %r = flamia.frag.quantize %p quantized %q {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>, prescaled}
      : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
  return
}

// -----
// The backward's P is unscaled: frag.quantize must multiply it.
func.func @f(%s: !flamia.frag<64x64xf32>, %lse: !flamia.global<8x?xf32>, %delta: !flamia.global<8x?xf32>, %i: i32, %scale: f32, %q: i1) {
  %p, %ds = flamia.softmax.grad %s, %s lse %lse delta %delta head %i
      queries(%i, %i, %i) tokens %i scale %scale
      : !flamia.frag<64x64xf32>, !flamia.global<8x?xf32>
  // expected-error @below {{'flamia.frag.quantize' op `prescaled` P from flamia.softmax.grad, which returns P unscaled}}
  %r = flamia.frag.quantize %p quantized %q {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>, prescaled}
      : !flamia.frag<64x64xf32> -> !flamia.frag<64x64xbf16>
  return
}

// -----
func.func @f(%p: !flamia.frag<64x128xf32>, %q: i1) {
  // expected-error @below {{'flamia.frag.quantize' op rounds an f32 fragment into a bf16 or f8E4M3FN fragment of the same shape}}
  %r = flamia.frag.quantize %p quantized %q {precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : !flamia.frag<64x128xf32> -> !flamia.frag<64x64xbf16>
  return
}

// -----
// nan_via_row_sum picks the E4M3-to-bf16 conversion: meaningless for codes.
func.func @f(%p: !flamia.frag<64x128xf32>) {
  %true = arith.constant true
  // expected-error @below {{'flamia.frag.quantize' op `nan_via_row_sum` chooses how E4M3 codes become bf16: it needs a bf16 result, got 'f8E4M3FN'}}
  %r = flamia.frag.quantize %p quantized %true {nan_via_row_sum, precision = #flamia.precision<f8E4M3FN, fixed_scale = 8>}
      : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xf8E4M3FN>
  return
}

// -----
func.func @f(%p: !flamia.frag<64x128xf32>, %q: i1) {
  // expected-error @below {{'flamia.frag.quantize' op P is quantized with a fixed scale (P <= 1), got #flamia.precision<f8E4M3FN, online = 32>}}
  %r = flamia.frag.quantize %p quantized %q {precision = #flamia.precision<f8E4M3FN, online = 32>}
      : !flamia.frag<64x128xf32> -> !flamia.frag<64x128xbf16>
  return
}

// -----
func.func @f(%o: !flamia.frag<64x128xbf16>, %a: !flamia.rows<64 x f32>) {
  // expected-error @below {{'flamia.frag.scale_rows' op scales an f32 fragment, got '!flamia.frag<64x128xbf16>'}}
  %r = flamia.frag.scale_rows %o by %a : !flamia.frag<64x128xbf16>, !flamia.rows<64 x f32>
  return
}

// -----
func.func @f(%o: !flamia.frag<64x128xf32>, %a: !flamia.rows<128 x f32>) {
  // expected-error @below {{'flamia.frag.scale_rows' op the factors have 128 rows but the fragment 64}}
  %r = flamia.frag.scale_rows %o by %a : !flamia.frag<64x128xf32>, !flamia.rows<128 x f32>
  return
}

// -----
func.func @f(%acc: !flamia.frag<64x128xbf16>, %m: !flamia.rows<64 x f32>, %o: !flamia.global<?x8x128xbf16>,
             %lse: !flamia.global<8x?xf32>, %i: i32) {
  // expected-error @below {{'flamia.attn.store' op the accumulator must be f32, got '!flamia.frag<64x128xbf16>'}}
  flamia.attn.store %acc max %m sum %m to %o, %lse rows(%i, %i, %i) head %i tokens %i {fixed_scale = 8 : i64}
      : !flamia.frag<64x128xbf16>, !flamia.rows<64 x f32>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>
  return
}

// -----
func.func @f(%acc: !flamia.frag<64x128xf32>, %m: !flamia.rows<128 x f32>, %o: !flamia.global<?x8x128xbf16>,
             %lse: !flamia.global<8x?xf32>, %i: i32) {
  // expected-error @below {{'flamia.attn.store' op the per-row values have 128 rows but the accumulator 64}}
  flamia.attn.store %acc max %m sum %m to %o, %lse rows(%i, %i, %i) head %i tokens %i {fixed_scale = 8 : i64}
      : !flamia.frag<64x128xf32>, !flamia.rows<128 x f32>, !flamia.global<?x8x128xbf16>, !flamia.global<8x?xf32>
  return
}

// -----
func.func @f(%acc: !flamia.frag<64x128xf32>, %m: !flamia.rows<64 x f32>, %o: !flamia.global<?x8x128xf32>,
             %lse: !flamia.global<8x?xf32>, %i: i32) {
  // expected-error @below {{'flamia.attn.store' op O must be a bf16 [T, H, D] tensor with static D, got '!flamia.global<?x8x128xf32>'}}
  flamia.attn.store %acc max %m sum %m to %o, %lse rows(%i, %i, %i) head %i tokens %i {fixed_scale = 8 : i64}
      : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>, !flamia.global<?x8x128xf32>, !flamia.global<8x?xf32>
  return
}

// -----
func.func @f(%acc: !flamia.frag<64x128xf32>, %m: !flamia.rows<64 x f32>, %o: !flamia.global<?x8x64xbf16>,
             %lse: !flamia.global<8x?xf32>, %i: i32) {
  // expected-error @below {{'flamia.attn.store' op the accumulator has 128 columns but O's head dim is 64}}
  flamia.attn.store %acc max %m sum %m to %o, %lse rows(%i, %i, %i) head %i tokens %i {fixed_scale = 8 : i64}
      : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>, !flamia.global<?x8x64xbf16>, !flamia.global<8x?xf32>
  return
}

// -----
// LSE is [H, T] (head-major), not [T, H].
func.func @f(%acc: !flamia.frag<64x128xf32>, %m: !flamia.rows<64 x f32>, %o: !flamia.global<?x8x128xbf16>,
             %lse: !flamia.global<?x8xf32>, %i: i32) {
  // expected-error @below {{'flamia.attn.store' op LSE must be an f32 [H, T] tensor with O's 8 heads, got '!flamia.global<?x8xf32>'}}
  flamia.attn.store %acc max %m sum %m to %o, %lse rows(%i, %i, %i) head %i tokens %i {fixed_scale = 8 : i64}
      : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>, !flamia.global<?x8x128xbf16>, !flamia.global<?x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// flamia.quantize_block
//===----------------------------------------------------------------------===//

// -----
!src = !flamia.global<?x4x128xbf16>
func.func @f(%x: !src, %i: i32) {
  // expected-error @below {{'flamia.quantize_block' op writes no copy: give per_token(...) or per_token_scales(...) and/or token_block(...) or token_block_scales(...)}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i : (!src, i32, i32, i32, i32) -> ()
  return
}

// -----
// A copy without its payload takes its format from its scales: not E4M3
// (NVFP4), so MXFP8's E8M0.
!src = !flamia.global<?x4x128xbf16>
!sc = !flamia.global<?x4x4xf8E5M2>
func.func @f(%x: !src, %i: i32, %pts: !sc, %deq: !src) {
  // expected-error @below {{'flamia.quantize_block' op the per-token scales must be [N, 4, 4] of f8E8M0FNU, got '!flamia.global<?x4x4xf8E5M2>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token_scales(%pts) per_token_dequant(%deq)
      : (!src, i32, i32, i32, i32, !sc, !src) -> ()
  return
}

// -----
// ... and E4M3 scales without a payload are NVFP4's: one per 16 channels.
!src = !flamia.global<?x4x128xbf16>
!sc = !flamia.global<?x4x4xf8E4M3FN>
func.func @f(%x: !src, %i: i32, %pts: !sc, %deq: !src) {
  // expected-error @below {{'flamia.quantize_block' op the per-token scales must be [N, 4, 8] of f8E4M3FN (unsigned E4M3, NVFP4), got '!flamia.global<?x4x4xf8E4M3FN>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token_scales(%pts) per_token_dequant(%deq)
      : (!src, i32, i32, i32, i32, !sc, !src) -> ()
  return
}

// -----
// The generic form can name a payload without its scales.
!src = !flamia.global<?x4x128xbf16>
!pay = !flamia.global<?x4x128xf8E4M3FN>
func.func @f(%x: !src, %i: i32, %tb: !pay) {
  // expected-error @below {{'flamia.quantize_block' op a token-block payload needs its scales}}
  "flamia.quantize_block"(%x, %i, %i, %i, %i, %tb) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0>}>
      : (!src, i32, i32, i32, i32, !pay) -> ()
  return
}

// -----
!src = !flamia.global<?x4x128xbf16>
!pay = !flamia.global<?x4x128xf8E4M3FN>
!sc = !flamia.global<?x4x4xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc, %deq: !src) {
  // expected-error @below {{'flamia.quantize_block' op a per-token dequantized copy needs the per-token quantization}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token_dequant(%deq) token_block(%tb, %tbs)
      : (!src, i32, i32, i32, i32, !src, !pay, !sc) -> ()
  return
}

// -----
!src = !flamia.global<?x4x128xbf16>
!pay = !flamia.global<?x4x128xf8E4M3FN>
!sc = !flamia.global<?x4x4xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc, %deq: !src) {
  // expected-error @below {{'flamia.quantize_block' op a token-block dequantized copy needs the token-block quantization}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) token_block_dequant(%deq)
      : (!src, i32, i32, i32, i32, !pay, !sc, !src) -> ()
  return
}

// -----
!src = !flamia.global<?x4x128xf32>
!pay = !flamia.global<?x4x128xf8E4M3FN>
!sc = !flamia.global<?x4x4xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc) {
  // expected-error @below {{'flamia.quantize_block' op the source must be a bf16 [T, H, D] tensor with static D a multiple of 32, got '!flamia.global<?x4x128xf32>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) : (!src, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

// -----
!src = !flamia.global<?x4x80xbf16>
!pay = !flamia.global<?x4x80xf8E4M3FN>
!sc = !flamia.global<?x4x2xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc) {
  // expected-error @below {{'flamia.quantize_block' op the source must be a bf16 [T, H, D] tensor with static D a multiple of 32, got '!flamia.global<?x4x80xbf16>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) : (!src, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

// -----
!src = !flamia.global<?x4x128xbf16>
!pay = !flamia.global<?x4x128xf8E5M2>
!sc = !flamia.global<?x4x4xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc) {
  // expected-error @below {{'flamia.quantize_block' op the per-token payload must be [N, 4, 128] of f8E4M3FN, got '!flamia.global<?x4x128xf8E5M2>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) : (!src, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

// -----
// An NVFP4 per-token copy (E2M1 payload) has one scale per 16 channels.
!src = !flamia.global<?x4x128xbf16>
!pay = !flamia.global<?x4x128xf4E2M1FN>
!sc = !flamia.global<?x4x4xf8E4M3FN>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc) {
  // expected-error @below {{'flamia.quantize_block' op the per-token scales must be [N, 4, 8] of f8E4M3FN (unsigned E4M3, NVFP4), got '!flamia.global<?x4x4xf8E4M3FN>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) : (!src, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

// -----
// ... in unsigned E4M3, not E8M0.
!src = !flamia.global<?x4x128xbf16>
!pay = !flamia.global<?x4x128xf4E2M1FN>
!sc = !flamia.global<?x4x8xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc) {
  // expected-error @below {{'flamia.quantize_block' op the per-token scales must be [N, 4, 8] of f8E4M3FN (unsigned E4M3, NVFP4), got '!flamia.global<?x4x8xf8E8M0FNU>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) : (!src, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

// -----
// NVFP4 in token blocks is no copy of the contract.
!src = !flamia.global<?x4x128xbf16>
!pay = !flamia.global<?x4x128xf4E2M1FN>
!sc = !flamia.global<?x4x8xf8E4M3FN>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc) {
  // expected-error @below {{'flamia.quantize_block' op the token-block payload must be [N, 4, 128] of f8E4M3FN, got '!flamia.global<?x4x128xf4E2M1FN>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i token_block(%tb, %tbs) : (!src, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

// -----
// An NVFP4 copy's scale-factor tiles (scale_vec::4X) have a 512-byte tile per
// 64 channels in each slot: 1024 bytes at D = 128.
!src = !flamia.global<?x4x128xbf16>
!pay = !flamia.global<?x4x128xf4E2M1FN>
!sc = !flamia.global<?x4x8xf8E4M3FN>
!tiles = !flamia.global<?x4x512xi8>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc, %t: !tiles) {
  // expected-error @below {{'flamia.quantize_block' op scale tiles are [NB, H, 1024] i8 with H = 4 (the source's heads), a 512-byte tile per 64 channels of NVFP4, got '!flamia.global<?x4x512xi8>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) per_token_tiles(%t) : (!src, i32, i32, i32, i32, !pay, !sc, !tiles) -> ()
  return
}

// -----
// One scale per 32 channels: [T, H, D / 32].
!src = !flamia.global<?x4x128xbf16>
!pay = !flamia.global<?x4x128xf8E4M3FN>
!sc = !flamia.global<?x4x128xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc) {
  // expected-error @below {{'flamia.quantize_block' op the per-token scales must be [N, 4, 4] of f8E8M0FNU, got '!flamia.global<?x4x128xf8E8M0FNU>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) : (!src, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

// -----
!src = !flamia.global<?x4x128xbf16>
!pay = !flamia.global<?x4x128xf8E4M3FN>
!sc = !flamia.global<?x4x4xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc, %deq: !flamia.global<?x4x128xf32>) {
  // expected-error @below {{'flamia.quantize_block' op the per-token dequantized copy must be [N, 4, 128] of bf16, got '!flamia.global<?x4x128xf32>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i per_token(%pt, %pts) per_token_dequant(%deq)
      : (!src, i32, i32, i32, i32, !pay, !sc, !flamia.global<?x4x128xf32>) -> ()
  return
}

// -----
// GQA: K has 2 heads; its copies must have 2 as well.
!src = !flamia.global<?x2x128xbf16>
!pay = !flamia.global<?x4x128xf8E4M3FN>
!sc = !flamia.global<?x2x4xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc) {
  // expected-error @below {{'flamia.quantize_block' op the token-block payload must be [N, 2, 128] of f8E4M3FN, got '!flamia.global<?x4x128xf8E4M3FN>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i token_block(%tb, %tbs) : (!src, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

// -----
!src = !flamia.global<?x2x128xbf16>
!pay = !flamia.global<?x2x128xf8E4M3FN>
!sc = !flamia.global<?x2x4xf8E4M3FN>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc) {
  // expected-error @below {{'flamia.quantize_block' op the token-block scales must be [N, 2, 4] of f8E8M0FNU, got '!flamia.global<?x2x4xf8E4M3FN>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i token_block(%tb, %tbs) : (!src, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

// -----
!src = !flamia.global<?x2x128xbf16>
!pay = !flamia.global<?x2x128xf8E4M3FN>
!sc = !flamia.global<?x2x4xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %tb: !pay, %tbs: !sc, %deq: !flamia.global<?x2x64xbf16>) {
  // expected-error @below {{'flamia.quantize_block' op the token-block dequantized copy must be [N, 2, 128] of bf16, got '!flamia.global<?x2x64xbf16>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i token_block(%tb, %tbs) token_block_dequant(%deq)
      : (!src, i32, i32, i32, i32, !pay, !sc, !flamia.global<?x2x64xbf16>) -> ()
  return
}

//===----------------------------------------------------------------------===//
// flamia.attention_tile
//===----------------------------------------------------------------------===//

// -----
!items = !flamia.global<?x8xi32>
!b8 = !flamia.global<?x8x128xbf16>
!lse = !flamia.global<8x?xf32>
func.func @f(%items: !items, %n: i32, %q: !b8, %o: !b8, %lse: !lse, %scale: f32) {
  // expected-error @below {{'flamia.attention_tile' op round_q rounds Q to per-token MXFP8; recipe #flamia.recipe<nvfp4_mixed, safe_block = 128> quantizes Q otherwise}}
  flamia.attention_tile %items[%n] q(%q) k(%q) v(%q) safe(%q, %q, %q) to %o, %lse scale %scale tokens %n
      {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<nvfp4_mixed, safe_block = 128>, round_q} : (!items, i32, !b8, !b8, !b8, !b8, !b8, !b8, !b8, !lse, f32, i32) -> ()
  return
}

// -----
!items = !flamia.global<?x8xi32>
!b8 = !flamia.global<?x8x128xbf16>
!lse = !flamia.global<8x?xf32>
func.func @f(%items: !items, %n: i32, %q: !b8, %q2: !b8, %o: !b8, %lse: !lse, %scale: f32) {
  // expected-error @below {{'flamia.attention_tile' op with round_q, q and the safe block's q are the same bf16 original}}
  flamia.attention_tile %items[%n] q(%q) k(%q) v(%q) safe(%q2, %q, %q) to %o, %lse scale %scale tokens %n
      {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8, safe_block = 128>, round_q} : (!items, i32, !b8, !b8, !b8, !b8, !b8, !b8, !b8, !lse, f32, i32) -> ()
  return
}

// -----
!items = !flamia.global<?x8xi32>
!b8 = !flamia.global<?x8x128xbf16>
!lse = !flamia.global<8x?xf32>
func.func @f(%items: !items, %n: i32, %q: !b8, %o: !b8, %lse: !lse, %scale: f32) {
  // expected-error @below {{'flamia.attention_tile' op needs the q, k and v operands}}
  flamia.attention_tile %items[%n] q(%q) k() v() safe() to %o, %lse scale %scale tokens %n
      {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8>} : (!items, i32, !b8, !b8, !lse, f32, i32) -> ()
  return
}

// -----
!items = !flamia.global<?x8xi32>
!b8 = !flamia.global<?x8x128xbf16>
!lse = !flamia.global<8x?xf32>
func.func @f(%items: !items, %n: i32, %q: !b8, %o: !b8, %lse: !lse, %scale: f32) {
  // expected-error @below {{'flamia.attention_tile' op the recipe has safe_block = 128: give the bf16 q, k, v in safe(...)}}
  flamia.attention_tile %items[%n] q(%q) k(%q) v(%q) safe() to %o, %lse scale %scale tokens %n
      {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8, safe_block = 128>} : (!items, i32, !b8, !b8, !b8, !b8, !lse, f32, i32) -> ()
  return
}

// -----
!items = !flamia.global<?x8xi32>
!b8 = !flamia.global<?x8x128xbf16>
!lse = !flamia.global<8x?xf32>
func.func @f(%items: !items, %n: i32, %q: !b8, %o: !b8, %lse: !lse, %scale: f32) {
  // expected-error @below {{'flamia.attention_tile' op the recipe has no safe block but safe(...) has 3 operand(s)}}
  flamia.attention_tile %items[%n] q(%q) k(%q) v(%q) safe(%q, %q, %q) to %o, %lse scale %scale tokens %n
      {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8>} : (!items, i32, !b8, !b8, !b8, !b8, !b8, !b8, !b8, !lse, f32, i32) -> ()
  return
}

// -----
!items = !flamia.global<?x8xi32>
!b8 = !flamia.global<?x8x128xbf16>
!lse = !flamia.global<8x?xf32>
func.func @f(%items: !items, %n: i32, %q: !b8, %o: !b8, %lse: !lse, %scale: f32) {
  // expected-error @below {{'flamia.attention_tile' op tile sizes must be positive multiples of 64, got 128 x 96}}
  flamia.attention_tile %items[%n] q(%q) k(%q) v(%q) safe() to %o, %lse scale %scale tokens %n
      {block_m = 128 : i64, block_n = 96 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8>} : (!items, i32, !b8, !b8, !b8, !b8, !lse, f32, i32) -> ()
  return
}

// -----
!items = !flamia.global<?x8xi32>
!b8 = !flamia.global<?x8x128xbf16>
!lse = !flamia.global<8x?xf32>
func.func @f(%items: !items, %n: i32, %q: !b8, %o: !b8, %lse: !lse, %scale: f32) {
  // expected-error @below {{'flamia.attention_tile' op P is quantized with a fixed scale (P <= 1), got #flamia.precision<bf16>}}
  flamia.attention_tile %items[%n] q(%q) k(%q) v(%q) safe() to %o, %lse scale %scale tokens %n
      {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<bf16>,
       recipe = #flamia.recipe<mxfp8>} : (!items, i32, !b8, !b8, !b8, !b8, !lse, f32, i32) -> ()
  return
}

// -----
!items = !flamia.global<?x8xi64>
!b8 = !flamia.global<?x8x128xbf16>
!lse = !flamia.global<8x?xf32>
func.func @f(%items: !items, %n: i32, %q: !b8, %o: !b8, %lse: !lse, %scale: f32) {
  // expected-error @below {{'flamia.attention_tile' op the item array must be an [N, 8] i32 array, got '!flamia.global<?x8xi64>'}}
  flamia.attention_tile %items[%n] q(%q) k(%q) v(%q) safe() to %o, %lse scale %scale tokens %n
      {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8>} : (!items, i32, !b8, !b8, !b8, !b8, !lse, f32, i32) -> ()
  return
}

// -----
!items = !flamia.global<?x8xi32>
!b8 = !flamia.global<?x8x128xbf16>
!o = !flamia.global<?x8x64xbf16>
!lse = !flamia.global<8x?xf32>
func.func @f(%items: !items, %n: i32, %q: !b8, %o: !o, %lse: !lse, %scale: f32) {
  // expected-error @below {{'flamia.attention_tile' op q and o must be [T, H, D] tensors of the same H and D, got '!flamia.global<?x8x128xbf16>' and '!flamia.global<?x8x64xbf16>'}}
  flamia.attention_tile %items[%n] q(%q) k(%q) v(%q) safe() to %o, %lse scale %scale tokens %n
      {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8>} : (!items, i32, !b8, !b8, !b8, !o, !lse, f32, i32) -> ()
  return
}

// -----
!items = !flamia.global<?x8xi32>
!b8 = !flamia.global<?x8x128xbf16>
!lse = !flamia.global<4x?xf32>
func.func @f(%items: !items, %n: i32, %q: !b8, %o: !b8, %lse: !lse, %scale: f32) {
  // expected-error @below {{'flamia.attention_tile' op LSE must be an f32 [H, T] tensor with O's 8 heads, got '!flamia.global<4x?xf32>'}}
  flamia.attention_tile %items[%n] q(%q) k(%q) v(%q) safe() to %o, %lse scale %scale tokens %n
      {block_m = 128 : i64, block_n = 128 : i64, p = #flamia.precision<f8E4M3FN, fixed_scale = 8>,
       recipe = #flamia.recipe<mxfp8>} : (!items, i32, !b8, !b8, !b8, !b8, !lse, f32, i32) -> ()
  return
}

//===----------------------------------------------------------------------===//
// Host side: workspaces, runtime values, launches
//===----------------------------------------------------------------------===//

// -----
func.func @f() {
  // expected-error @below {{expected string or keyword containing one of the following enum values for attribute 'kind' [workspace, schedule]}}
  %w = flamia.workspace scratch "q_pt" dims ["T", "4", "128"] : !flamia.global<?x4x128xf8E4M3FN>
  return
}

// -----
func.func @f() {
  // expected-error @below {{'flamia.workspace' op dims has 2 expressions for a rank-3 buffer}}
  %w = flamia.workspace workspace "q_pt" dims ["T", "4"] : !flamia.global<?x4x128xf8E4M3FN>
  return
}

// -----
func.func @f() {
  // expected-error @below {{'flamia.workspace' op schedule buffers are items, kv_items, block_info and counter, got "q_pt"}}
  %w = flamia.workspace schedule "q_pt" dims ["T", "4", "128"] : !flamia.global<?x4x128xf8E4M3FN>
  return
}

// -----
func.func @f() {
  // expected-error @below {{'flamia.runtime_value' op unknown runtime value "NUM_HEADS"}}
  %v = flamia.runtime_value "NUM_HEADS" : i32
  return
}

// -----
func.func @f() {
  // expected-error @below {{'flamia.runtime_value' op "softmax_scale" is an f32}}
  %v = flamia.runtime_value "softmax_scale" : i32
  return
}

// -----
func.func @f() {
  // expected-error @below {{'flamia.runtime_value' op "T" is an i32}}
  %v = flamia.runtime_value "T" : f32
  return
}

// -----
flamia.kernel @k(%n: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.return
}
func.func @f(%n: i32) {
  // expected-error @below {{'flamia.launch' op grid takes 3 expressions, got 2}}
  flamia.launch @k(%n) grid ["NB", "Hq"] : (i32) -> ()
  return
}

// -----
module @m {
}
func.func @f(%n: i32) {
  // expected-error @below {{'flamia.launch' op '@m::@k' does not name a kernel in a gpu.module or gpu.binary}}
  flamia.launch @m::@k(%n) grid ["NB", "Hq", "1"] : (i32) -> ()
  return
}

// -----
func.func @k(%n: i32) {
  return
}
func.func @f(%n: i32) {
  // expected-error @below {{'flamia.launch' op '@k' does not name a flamia.kernel}}
  flamia.launch @k(%n) grid ["NB", "Hq", "1"] : (i32) -> ()
  return
}

// -----
flamia.kernel @k(%n: i32, %m: i32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.return
}
func.func @f(%n: i32) {
  // expected-error @below {{'flamia.launch' op '@k' takes 2 parameters, got 1}}
  flamia.launch @k(%n) grid ["NB", "Hq", "1"] : (i32) -> ()
  return
}

// -----
flamia.kernel @k(%n: i32, %s: f32) attributes {launch = #flamia.launch<grid>, target = #flamia.target<sm_90a>, threads = 128 : i64} {
  flamia.return
}
func.func @f(%n: i32) {
  // expected-error @below {{'flamia.launch' op parameter 1 of '@k' is 'f32', got 'i32'}}
  flamia.launch @k(%n, %n) grid ["NB", "Hq", "1"] : (i32, i32) -> ()
  return
}

// -----
// A runtime head count ('?' heads) needs the `heads` operand: the lowering
// has no other way to index the packed tensor.
func.func @f(%acc: !flamia.frag<64x128xf32>, %m: !flamia.rows<64 x f32>, %o: !flamia.global<?x?x128xbf16>,
             %lse: !flamia.global<?x?xf32>, %i: i32) {
  // expected-error @below {{'flamia.attn.store' op O has a runtime head count ('!flamia.global<?x?x128xbf16>'): give it as the `heads` operand}}
  flamia.attn.store %acc max %m sum %m to %o, %lse rows(%i, %i, %i) head %i tokens %i {fixed_scale = 8 : i64}
      : !flamia.frag<64x128xf32>, !flamia.rows<64 x f32>, !flamia.global<?x?x128xbf16>, !flamia.global<?x?xf32>
  return
}

// -----
// ... and a static one has none.
!src = !flamia.global<?x4x128xbf16>
!pay = !flamia.global<?x4x128xf8E4M3FN>
!sc = !flamia.global<?x4x4xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc) {
  // expected-error @below {{'flamia.quantize_block' op the source has a static head count ('!flamia.global<?x4x128xbf16>'): the `heads` operand is for runtime ones}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i heads %i per_token(%pt, %pts) : (!src, i32, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

// -----
// The copies of a source with runtime heads have runtime heads too.
!src = !flamia.global<?x?x128xbf16>
!pay = !flamia.global<?x4x128xf8E4M3FN>
!sc = !flamia.global<?x4x4xf8E8M0FNU>
func.func @f(%x: !src, %i: i32, %pt: !pay, %pts: !sc) {
  // expected-error @below {{'flamia.quantize_block' op the per-token payload must be [N, ?, 128] of f8E4M3FN, got '!flamia.global<?x4x128xf8E4M3FN>'}}
  flamia.quantize_block %x rows(%i, %i) block %i head %i heads %i per_token(%pt, %pts) : (!src, i32, i32, i32, i32, i32, !pay, !sc) -> ()
  return
}

//===----------------------------------------------------------------------===//
// flamia.prefetch_rows
//===----------------------------------------------------------------------===//

// -----
func.func @f(%x: !flamia.global<?x4x?xbf16>, %i: i32) {
  // expected-error @below {{'flamia.prefetch_rows' op the source must be a [T, H, D] tensor with static D, got '!flamia.global<?x4x?xbf16>'}}
  flamia.prefetch_rows %x rows(%i, %i) head %i : !flamia.global<?x4x?xbf16>
  return
}

// -----
func.func @f(%x: !flamia.global<?x4x8xf8E4M3FN>, %i: i32) {
  // expected-error @below {{'flamia.prefetch_rows' op a row of '!flamia.global<?x4x8xf8E4M3FN>' is 8 bytes; the bulk prefetch needs a positive multiple of 16}}
  flamia.prefetch_rows %x rows(%i, %i) head %i : !flamia.global<?x4x8xf8E4M3FN>
  return
}

// -----
func.func @f(%x: !flamia.global<?x?x128xbf16>, %i: i32) {
  // expected-error @below {{'flamia.prefetch_rows' op the source has a runtime head count ('!flamia.global<?x?x128xbf16>'): give it as the `heads` operand}}
  flamia.prefetch_rows %x rows(%i, %i) head %i : !flamia.global<?x?x128xbf16>
  return
}
