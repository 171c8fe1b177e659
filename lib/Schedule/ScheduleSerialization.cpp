//===- ScheduleSerialization.cpp - The varlen schedule as one byte buffer -===//
#include "flamia/Schedule/ScheduleSerialization.h"

#include "flamia/Schedule/VarlenSchedule.h"

#include <cstring>
#include <limits>

namespace flamia {

namespace {
int64_t alignUp(int64_t value) {
  return (value + kVarlenScheduleAlign - 1) / kVarlenScheduleAlign *
         kVarlenScheduleAlign;
}

// The buffer layout is little-endian int32; the struct copies below assume
// the host is too (x86-64 and AArch64 hosts, like the GPU, are).
bool hostIsLittleEndian() {
  const uint32_t one = 1;
  uint8_t first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}
} // namespace

bool serializeVarlenSchedule(const VarlenSchedule &s, std::vector<uint8_t> &out,
                             std::string &error) {
  if (!hostIsLittleEndian()) {
    error = "serializing a varlen schedule needs a little-endian host";
    return false;
  }
  const int64_t numItems = static_cast<int64_t>(s.items.size());
  const int64_t numDocs = s.docs.numDocuments();
  const int64_t itemsOffset = alignUp(sizeof(VarlenScheduleHeader));
  const int64_t baseOffset = alignUp(
      itemsOffset + numItems * static_cast<int64_t>(sizeof(VarlenWorkItem)));
  const int64_t total = alignUp(baseOffset + (numDocs + 1) * 4);
  if (total > std::numeric_limits<int32_t>::max()) {
    error = "the schedule needs " + std::to_string(total) +
            " bytes, more than the 2^31 - 1 its int32 offsets address";
    return false;
  }
  const VarlenScheduleParams &p = s.params;
  VarlenScheduleHeader h{};
  h.magic = kVarlenScheduleMagic;
  h.version = kVarlenScheduleVersion;
  h.header_bytes = sizeof(VarlenScheduleHeader);
  h.item_bytes = sizeof(VarlenWorkItem);
  h.num_items = static_cast<int32_t>(numItems);
  h.num_docs = static_cast<int32_t>(numDocs);
  h.total_tokens = static_cast<int32_t>(s.docs.numTokens());
  h.total_scale_blocks = s.docs.numScaleBlocks();
  h.num_q_heads = p.numQHeads;
  h.num_kv_heads = p.numKVHeads;
  h.head_dim = p.headDim;
  h.block_m = p.blockM;
  h.block_n = p.blockN;
  h.safe_block = p.safeBlock;
  h.scale_block = kVarlenScaleBlock;
  h.causal = p.causal ? 1 : 0;
  h.items_offset = static_cast<int32_t>(itemsOffset);
  h.doc_block_base_offset = static_cast<int32_t>(baseOffset);
  h.total_bytes = static_cast<int32_t>(total);
  h.reserved = 0;

  out.assign(static_cast<size_t>(total), 0);
  std::memcpy(out.data(), &h, sizeof(h));
  if (numItems)
    std::memcpy(out.data() + itemsOffset, s.items.data(),
                s.items.size() * sizeof(VarlenWorkItem));
  const std::vector<int32_t> &bases = s.docs.scaleBlocksBefore();
  std::memcpy(out.data() + baseOffset, bases.data(),
              bases.size() * sizeof(int32_t));
  return true;
}

bool parseVarlenScheduleBuffer(const uint8_t *data, size_t size,
                               ParsedVarlenSchedule &out, std::string &error) {
  if (!hostIsLittleEndian()) {
    error = "reading a varlen schedule needs a little-endian host";
    return false;
  }
  VarlenScheduleHeader h;
  if (data == nullptr || size < sizeof(h)) {
    error = "schedule buffer of " + std::to_string(size) +
            " bytes is shorter than its " + std::to_string(sizeof(h)) +
            "-byte header";
    return false;
  }
  std::memcpy(&h, data, sizeof(h));
  auto fail = [&](const std::string &what) {
    error = "bad schedule buffer: " + what;
    return false;
  };
  if (h.magic != kVarlenScheduleMagic)
    return fail("bad magic " + std::to_string(h.magic));
  if (h.version != kVarlenScheduleVersion)
    return fail("version " + std::to_string(h.version) +
                ", this reader knows " +
                std::to_string(kVarlenScheduleVersion));
  if (h.header_bytes != static_cast<int32_t>(sizeof(VarlenScheduleHeader)) ||
      h.item_bytes != static_cast<int32_t>(sizeof(VarlenWorkItem)))
    return fail("header_bytes " + std::to_string(h.header_bytes) +
                " / item_bytes " + std::to_string(h.item_bytes) +
                ", expected " + std::to_string(sizeof(VarlenScheduleHeader)) +
                " / " + std::to_string(sizeof(VarlenWorkItem)));
  if (h.total_bytes < 0 || static_cast<size_t>(h.total_bytes) != size)
    return fail("total_bytes " + std::to_string(h.total_bytes) +
                " but the buffer has " + std::to_string(size));
  if (h.num_items < 0 || h.num_docs < 0)
    return fail("negative num_items or num_docs");
  int64_t itemsEnd = static_cast<int64_t>(h.items_offset) +
                     static_cast<int64_t>(h.num_items) * h.item_bytes;
  int64_t baseEnd = static_cast<int64_t>(h.doc_block_base_offset) +
                    (static_cast<int64_t>(h.num_docs) + 1) * 4;
  if (h.items_offset < h.header_bytes ||
      h.items_offset % kVarlenScheduleAlign != 0 ||
      h.doc_block_base_offset < itemsEnd ||
      h.doc_block_base_offset % kVarlenScheduleAlign != 0 ||
      baseEnd > static_cast<int64_t>(size))
    return fail("sections out of place: items at " +
                std::to_string(h.items_offset) + ", block bases at " +
                std::to_string(h.doc_block_base_offset) + ", " +
                std::to_string(size) + " bytes");
  out.header = h;
  out.items.resize(static_cast<size_t>(h.num_items));
  if (h.num_items)
    std::memcpy(out.items.data(), data + h.items_offset,
                out.items.size() * sizeof(VarlenWorkItem));
  out.docBlockBase.resize(static_cast<size_t>(h.num_docs) + 1);
  std::memcpy(out.docBlockBase.data(), data + h.doc_block_base_offset,
              out.docBlockBase.size() * sizeof(int32_t));
  return true;
}

} // namespace flamia
