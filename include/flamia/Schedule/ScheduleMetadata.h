//===- ScheduleMetadata.h - What the kernel reads ---------------*- C++ -*-===//
//
// The bytes the varlen attention kernel reads: a header, the work items in
// execution order, and the per-document scale-block offsets. Shared by host
// code (the schedule builder, the runtime) and device code (CUDA kernels, the
// MLIR lowering's view of the layout), so this header includes nothing beyond
// <stdint.h>/<stddef.h> and compiles as C++ under nvcc and as host C++17.
//
// Buffer layout (little-endian, every field an int32; offsets in bytes):
//
//   [0, header_bytes)                         VarlenScheduleHeader
//   [items_offset, + num_items * item_bytes)  VarlenWorkItem[num_items], in
//                                             execution order (item k is the
//                                             k-th value of the work counter)
//   [doc_block_base_offset, + 4*(num_docs+1)) int32 doc_block_base[num_docs+1]:
//                                             entry d = number of 32-token
//                                             scale blocks in documents < d;
//                                             the last entry is NB
//   total_bytes                               end of the buffer
//
// Sections start at multiples of 16 bytes so that a kernel may load an item
// with two 16-byte vector loads. See docs/scheduling.md.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SCHEDULE_SCHEDULEMETADATA_H
#define FLAMIA_SCHEDULE_SCHEDULEMETADATA_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define FLAMIA_HOST_DEVICE __host__ __device__
#else
#define FLAMIA_HOST_DEVICE
#endif

namespace flamia {

/// "FLVS" read as a little-endian int32.
constexpr int32_t kVarlenScheduleMagic = 0x53564C46;
constexpr int32_t kVarlenScheduleVersion = 1;
/// Section alignment in the serialized buffer.
constexpr int32_t kVarlenScheduleAlign = 16;

/// One unit of work: one query tile of one document for one query head.
/// Row and key ranges are global token indices into the packed [T, H, D]
/// tensors; the kernel clips every load at `doc_end` (the packed tensor goes
/// on into the next document, so TMA out-of-bounds fill does not do it).
struct VarlenWorkItem {
  int32_t q_start;        // global index of the tile's first query row
  int32_t q_rows;         // rows in this tile: min(block_m, doc_end - q_start)
  int32_t doc_start;      // cu_seqlens[doc]
  int32_t doc_end;        // cu_seqlens[doc + 1]
  int32_t q_head;         // query head
  int32_t kv_head;        // q_head / (num_q_heads / num_kv_heads)  (GQA)
  int32_t doc_block_base; // 32-token scale blocks in all previous documents
  int32_t q_tile_in_doc;  // (q_start - doc_start) / block_m
};

static_assert(sizeof(VarlenWorkItem) == 32, "VarlenWorkItem is 8 int32");
static_assert(offsetof(VarlenWorkItem, q_start) == 0, "layout");
static_assert(offsetof(VarlenWorkItem, q_rows) == 4, "layout");
static_assert(offsetof(VarlenWorkItem, doc_start) == 8, "layout");
static_assert(offsetof(VarlenWorkItem, doc_end) == 12, "layout");
static_assert(offsetof(VarlenWorkItem, q_head) == 16, "layout");
static_assert(offsetof(VarlenWorkItem, kv_head) == 20, "layout");
static_assert(offsetof(VarlenWorkItem, doc_block_base) == 24, "layout");
static_assert(offsetof(VarlenWorkItem, q_tile_in_doc) == 28, "layout");

/// The buffer's header. Everything the kernel needs besides the items.
struct VarlenScheduleHeader {
  int32_t magic;              // kVarlenScheduleMagic
  int32_t version;            // kVarlenScheduleVersion
  int32_t header_bytes;       // sizeof(VarlenScheduleHeader)
  int32_t item_bytes;         // sizeof(VarlenWorkItem)
  int32_t num_items;          // entries of the item array (work counter bound)
  int32_t num_docs;           // documents, zero-length ones included
  int32_t total_tokens;       // T = cu_seqlens[num_docs]
  int32_t total_scale_blocks; // NB: sum over documents of ceil(L / 32)
  int32_t num_q_heads;        // Hq
  int32_t num_kv_heads;       // Hkv (Hq is a multiple)
  int32_t head_dim;           // D
  int32_t block_m;            // query tile rows (BM)
  int32_t block_n;            // key tile columns (BN)
  int32_t safe_block;         // document-local bf16 safe block (tokens)
  int32_t scale_block;        // token block of the K/V scales (32)
  int32_t causal;             // 1 causal, 0 not
  int32_t items_offset;       // byte offset of the item array
  int32_t doc_block_base_offset; // byte offset of doc_block_base[num_docs + 1]
  int32_t total_bytes;           // size of the whole buffer
  int32_t reserved;              // 0
};

static_assert(sizeof(VarlenScheduleHeader) == 80, "header is 20 int32");
static_assert(offsetof(VarlenScheduleHeader, magic) == 0, "layout");
static_assert(offsetof(VarlenScheduleHeader, version) == 4, "layout");
static_assert(offsetof(VarlenScheduleHeader, header_bytes) == 8, "layout");
static_assert(offsetof(VarlenScheduleHeader, item_bytes) == 12, "layout");
static_assert(offsetof(VarlenScheduleHeader, num_items) == 16, "layout");
static_assert(offsetof(VarlenScheduleHeader, num_docs) == 20, "layout");
static_assert(offsetof(VarlenScheduleHeader, total_tokens) == 24, "layout");
static_assert(offsetof(VarlenScheduleHeader, total_scale_blocks) == 28,
              "layout");
static_assert(offsetof(VarlenScheduleHeader, num_q_heads) == 32, "layout");
static_assert(offsetof(VarlenScheduleHeader, num_kv_heads) == 36, "layout");
static_assert(offsetof(VarlenScheduleHeader, head_dim) == 40, "layout");
static_assert(offsetof(VarlenScheduleHeader, block_m) == 44, "layout");
static_assert(offsetof(VarlenScheduleHeader, block_n) == 48, "layout");
static_assert(offsetof(VarlenScheduleHeader, safe_block) == 52, "layout");
static_assert(offsetof(VarlenScheduleHeader, scale_block) == 56, "layout");
static_assert(offsetof(VarlenScheduleHeader, causal) == 60, "layout");
static_assert(offsetof(VarlenScheduleHeader, items_offset) == 64, "layout");
static_assert(offsetof(VarlenScheduleHeader, doc_block_base_offset) == 68,
              "layout");
static_assert(offsetof(VarlenScheduleHeader, total_bytes) == 72, "layout");
static_assert(offsetof(VarlenScheduleHeader, reserved) == 76, "layout");
static_assert(sizeof(VarlenScheduleHeader) % kVarlenScheduleAlign == 0,
              "items start aligned right after the header");
static_assert(sizeof(VarlenWorkItem) % kVarlenScheduleAlign == 0,
              "the block-base array starts aligned after the items");

/// Key tiles an item visits, from the document's first token, BN keys each:
/// causal: up to the tile holding its last query row; otherwise all tiles of
/// the document. Never a tile that starts at or after doc_end.
FLAMIA_HOST_DEVICE inline int32_t
varlenItemNumKeyTiles(const VarlenWorkItem &item, int32_t block_n,
                      bool causal) {
  int32_t keys = causal ? item.q_start + item.q_rows - item.doc_start
                        : item.doc_end - item.doc_start;
  return (keys + block_n - 1) / block_n;
}

/// One past the last key row an item reads: the key tiles it visits, clipped
/// at the document's end.
FLAMIA_HOST_DEVICE inline int32_t
varlenItemKeyEnd(const VarlenWorkItem &item, int32_t block_n, bool causal) {
  int64_t end =
      static_cast<int64_t>(item.doc_start) +
      static_cast<int64_t>(varlenItemNumKeyTiles(item, block_n, causal)) *
          block_n;
  return end < item.doc_end ? static_cast<int32_t>(end) : item.doc_end;
}

} // namespace flamia

#endif // FLAMIA_SCHEDULE_SCHEDULEMETADATA_H
