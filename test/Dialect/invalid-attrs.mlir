// RUN: flamia-opt %s -split-input-file -verify-diagnostics
// Every attribute and type verifier error, one per split.

// expected-error @below {{channel block must be 16 (NVFP4) or 32 (MX), got 64}}
func.func @f() attributes {x = #flamia.scale_layout<32x64>} { return }

// -----
// expected-error @below {{token block must be 1 (per token) or a positive multiple of 16, got 8}}
func.func @f() attributes {x = #flamia.scale_layout<8x32>} { return }

// -----
// expected-error @below {{a per-token layout has no token blocks to anchor}}
func.func @f() attributes {x = #flamia.scale_layout<1x32, packed>} { return }

// -----
// expected-error @below {{expected token-block anchor `document` or `packed`, got 'global'}}
func.func @f() attributes {x = #flamia.scale_layout<32x32, global>} { return }

// -----
// expected-error @below {{expected a scale block `<token_block>x<channel_block>` or `tensor`}}
func.func @f() attributes {x = #flamia.scale_layout<32x32x32>} { return }

// -----
// expected-error @below {{unknown recipe 'fp8' (expected mxfp8 or nvfp4_mixed)}}
func.func @f() attributes {x = #flamia.recipe<fp8>} { return }

// -----
// expected-error @below {{safe_block must be a positive multiple of 32 (omit it for no safe block), got 0}}
func.func @f() attributes {x = #flamia.recipe<mxfp8, safe_block = 0>} { return }

// -----
// expected-error @below {{safe_block must be a positive multiple of 32, got 48}}
func.func @f() attributes {x = #flamia.recipe<mxfp8, safe_block = 48>} { return }

// -----
// A safe block past 2^20 tokens (these made flamia-verify-causality hang).
// expected-error @below {{safe_block must be at most 1048576 (2^20 tokens), got 2147483648}}
func.func @f() attributes {x = #flamia.recipe<mxfp8, safe_block = 2147483648>} { return }

// -----
// expected-error @below {{token block must be at most 1024, got 2048}}
func.func @f(%q: !flamia.qtensor<?x2x64xf8E4M3FN, f8E8M0FNU, 2048x32>) { return }

// -----
// expected-error @below {{unknown recipe parameter 'block' (expected safe_block or strict)}}
func.func @f() attributes {x = #flamia.recipe<mxfp8, block = 32>} { return }

// -----
// expected-error @below {{a bf16 operand has no scale}}
func.func @f() attributes {x = #flamia.precision<bf16, fixed_scale = 8>} { return }

// -----
// expected-error @below {{precision must be bf16, f8E4M3FN, f8E5M2 or f4E2M1FN, got 'f16'}}
func.func @f() attributes {x = #flamia.precision<f16>} { return }

// -----
// expected-error @below {{a quantized operand needs exactly one of `fixed_scale` and `online`}}
func.func @f() attributes {x = #flamia.precision<f8E4M3FN>} { return }

// -----
// expected-error @below {{fixed_scale = 9 overflows 'f8E4M3FN': values up to 1 scaled by 2^9 exceed its maximum 448}}
func.func @f() attributes {x = #flamia.precision<f8E4M3FN, fixed_scale = 9>} { return }

// -----
// expected-error @below {{fixed_scale must be an E8M0 exponent in [-127, 127], got 200}}
func.func @f() attributes {x = #flamia.precision<f8E5M2, fixed_scale = 200>} { return }

// -----
// expected-error @below {{online block must be 32 for 'f8E4M3FN', got 16}}
func.func @f() attributes {x = #flamia.precision<f8E4M3FN, online = 16>} { return }

// -----
// expected-error @below {{unknown precision parameter 'stochastic' (expected fixed_scale or online)}}
func.func @f() attributes {x = #flamia.precision<f8E4M3FN, stochastic = 1>} { return }

// -----
// expected-error @below {{unsupported chip 'sm_80' (expected sm_90a or sm_100a)}}
func.func @f() attributes {x = #flamia.target<sm_80>} { return }

// -----
// expected-error @below {{cta_group must be 1 or 2, got 3}}
func.func @f() attributes {x = #flamia.target<sm_100a, cta_group = 3>} { return }

// -----
// expected-error @below {{cta_group = 2 (CTA pairs) needs sm_100a}}
func.func @f() attributes {x = #flamia.target<sm_90a, cta_group = 2>} { return }

// -----
// expected-error @below {{a qtensor is a packed [T, H, D] tensor (rank 3), got rank 2}}
func.func @f(%x: !flamia.qtensor<16x128xf8E4M3FN, f8E8M0FNU, 1x32>) { return }

// -----
// expected-error @below {{the head dim D of a qtensor must be static}}
func.func @f(%x: !flamia.qtensor<16x4x?xf8E4M3FN, f8E8M0FNU, 1x32>) { return }

// -----
// expected-error @below {{payload format must be f8E4M3FN, f8E5M2 or f4E2M1FN, got 'f16'}}
func.func @f(%x: !flamia.qtensor<16x2x128xf16, f8E8M0FNU, 1x32>) { return }

// -----
// expected-error @below {{scale type must be f8E8M0FNU (MX) or f8E4M3FN (NVFP4, unsigned), got 'f32'}}
func.func @f(%x: !flamia.qtensor<16x2x128xf8E4M3FN, f32, 1x32>) { return }

// -----
// expected-error @below {{a per-tensor layout uses an f8E8M0FNU scale}}
func.func @f(%x: !flamia.qtensor<16x2x128xf4E2M1FN, f8E4M3FN, tensor>) { return }

// -----
// expected-error @below {{E4M3 scales (NVFP4) need an f4E2M1FN payload, got 'f8E4M3FN'}}
func.func @f(%x: !flamia.qtensor<16x2x128xf8E4M3FN, f8E4M3FN, 1x16>) { return }

// -----
// expected-error @below {{NVFP4 scales cover 16 channels: the channel block must be 16, got 32}}
func.func @f(%x: !flamia.qtensor<16x2x128xf4E2M1FN, f8E4M3FN, 1x32>) { return }

// -----
// expected-error @below {{E8M0 (MX) scales cover 32 channels: the channel block must be 32, got 16}}
func.func @f(%x: !flamia.qtensor<16x2x128xf8E4M3FN, f8E8M0FNU, 16x16>) { return }

// -----
// expected-error @below {{head dim 80 is not divisible by the channel block 32}}
func.func @f(%x: !flamia.qtensor<16x2x80xf8E4M3FN, f8E8M0FNU, 1x32>) { return }
