//===- AttentionArgsFuzzer.cpp - Fuzz the C API's argument checks ---------===//
//
// flamia_attention_prepare on the fake CUDA driver (unittests/Runtime) with
// arguments and cu_seqlens contents taken from the input: sizes, head counts,
// head dim, document count, softmax scale, and six pointers anywhere in (or
// past) one fake device arena, aligned or not, overlapping or not. prepare
// runs every host check (validateAttentionArgs), the pointer checks, copies
// cu_seqlens from the "device", validates it and builds the schedule: it must
// accept or reject with a message, never crash, hang or overflow.
//
// Input layout (little-endian; missing bytes read as zero):
//   u8 flags      bit k < 6: pointer k is null; bit 6: the runtime that
//                 zeroes its workspace and checks every schedule
//   i64 num_tokens, i32 num_q_heads, num_kv_heads, head_dim, num_docs,
//   f32 softmax_scale, u32 offsets of q, k, v, cu_seqlens, o, lse in bytes
//   then int32 cu_seqlens entries, copied to the cu_seqlens pointer
//
//===----------------------------------------------------------------------===//
#include "FuzzTarget.h"

#include "flamia/CAPI/Runtime.h"

#include "FakeCudaControl.h"

#include <cstring>
#include <string>

using namespace flamia::runtime::test;

namespace {
constexpr size_t kArenaBytes = size_t{8} << 20;

struct Fixture {
  flamia_runtime *plain = nullptr, *checking = nullptr;
  uint8_t *arena = nullptr;

  Fixture() {
    setenv("FLAMIA_LIBCUDA", FLAMIA_FAKE_CUDA_PATH, 1);
    FakeCuda &f = FakeCuda::get();
    f.resetAll();
    arena = f.host<uint8_t>(f.alloc(kArenaBytes));
    FUZZ_CHECK(arena);
    char err[512];
    flamia_runtime_options options;
    flamia_runtime_options_init(&options);
    FUZZ_CHECK(flamia_runtime_create_with_options(FLAMIA_FAKE_ARTIFACTS, 0,
                                                  &options, &plain, err,
                                                  sizeof err) ==
               FLAMIA_STATUS_OK);
    options.zero_workspace = 1;
    options.check_schedule = 1;
    FUZZ_CHECK(flamia_runtime_create_with_options(FLAMIA_FAKE_ARTIFACTS, 0,
                                                  &options, &checking, err,
                                                  sizeof err) ==
               FLAMIA_STATUS_OK);
  }
};

struct Reader {
  const uint8_t *data;
  size_t size, pos = 0;
  template <typename T> T get() {
    T v;
    uint8_t bytes[sizeof(T)] = {};
    for (size_t i = 0; i < sizeof(T) && pos < size; ++i)
      bytes[i] = data[pos++];
    std::memcpy(&v, bytes, sizeof(T));
    return v;
  }
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Fixture fixture;
  Reader in{data, size};
  const uint8_t flags = in.get<uint8_t>();
  flamia_attention_args a;
  flamia_attention_args_init(&a);
  a.num_tokens = in.get<int64_t>();
  a.num_q_heads = in.get<int32_t>();
  a.num_kv_heads = in.get<int32_t>();
  a.head_dim = in.get<int32_t>();
  a.num_docs = in.get<int32_t>();
  a.softmax_scale = in.get<float>();
  void *pointers[6];
  for (int i = 0; i < 6; ++i) {
    // Offsets wrap inside twice the arena: half land past its end.
    const size_t offset = in.get<uint32_t>() % (2 * kArenaBytes);
    pointers[i] = (flags >> i) & 1 ? nullptr : fixture.arena + offset;
  }
  a.q = pointers[0];
  a.k = pointers[1];
  a.v = pointers[2];
  a.cu_seqlens = static_cast<const int32_t *>(pointers[3]);
  a.o = pointers[4];
  a.lse = static_cast<float *>(pointers[5]);
  // The rest is cu_seqlens, where it fits in the arena.
  if (a.cu_seqlens) {
    uint8_t *cu = static_cast<uint8_t *>(pointers[3]);
    uint8_t *end = fixture.arena + kArenaBytes;
    size_t n = size - in.pos;
    if (cu < end) {
      if (n > static_cast<size_t>(end - cu))
        n = static_cast<size_t>(end - cu);
      std::memcpy(cu, data + in.pos, n);
    }
  }
  flamia_runtime *rt = (flags & 0x40) ? fixture.checking : fixture.plain;
  flamia_status s = flamia_attention_prepare(rt, &a, nullptr);
  // FLAMIA_FUZZ_VERBOSE=1: what each input got (to check that the seeds
  // reach the schedule, not just the first check).
  static const bool verbose = getenv("FLAMIA_FUZZ_VERBOSE") != nullptr;
  if (verbose)
    fprintf(stderr, "prepare: %s%s%s\n", flamia_status_string(s),
            s ? ": " : "", s ? flamia_last_error() : "");
  if (s != FLAMIA_STATUS_OK) {
    FUZZ_CHECK(std::strlen(flamia_last_error()) > 0);
    FUZZ_CHECK(s != FLAMIA_STATUS_INTERNAL); // bad input is the caller's error
    return 0;
  }
  // An accepted call bound its buffers: the schedule's work items exist.
  flamia_buffer_info info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  FUZZ_CHECK(flamia_runtime_get_buffer(rt, "items", &info) == FLAMIA_STATUS_OK);
  return 0;
}
