//===- ScheduleSerialization.h - Metadata as bytes --------------*- C++ -*-===//
//
// Writes a built schedule into the buffer layout of ScheduleMetadata.h (the
// runtime uploads it with one copy) and reads such a buffer back with every
// size and offset checked.
//
//===----------------------------------------------------------------------===//
#ifndef FLAMIA_SCHEDULE_SCHEDULESERIALIZATION_H
#define FLAMIA_SCHEDULE_SCHEDULESERIALIZATION_H

#include "flamia/Schedule/ScheduleMetadata.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace flamia {

struct VarlenSchedule;

/// Serializes `schedule`. Fails (with a message) only if the buffer would
/// exceed 2^31 - 1 bytes, the limit of its int32 offsets.
bool serializeVarlenSchedule(const VarlenSchedule &schedule,
                             std::vector<uint8_t> &out, std::string &error);

/// A buffer read back into host structures.
struct ParsedVarlenSchedule {
  VarlenScheduleHeader header{};
  std::vector<VarlenWorkItem> items;
  std::vector<int32_t> docBlockBase; // num_docs + 1 entries
};

/// Parses a buffer: magic, version, header and item sizes, section offsets
/// (aligned, in order, inside the buffer), total size. On failure returns
/// false with a message naming the field.
bool parseVarlenScheduleBuffer(const uint8_t *data, size_t size,
                               ParsedVarlenSchedule &out, std::string &error);

} // namespace flamia

#endif // FLAMIA_SCHEDULE_SCHEDULESERIALIZATION_H
