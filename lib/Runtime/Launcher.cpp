//===- Launcher.cpp - Parameter packing and kernel launches ---------------===//

#include "flamia/Runtime/Launcher.h"

#include <cmath>
#include <cstring>

namespace flamia::runtime {

void PackedParams::bindPointers() {
  pointers.resize(slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    pointers[i] = slots[i].bytes;
}

Status packKernelParams(const Manifest &manifest, size_t kernelIndex,
                        const std::vector<BoundBuffer> &buffers,
                        const SymbolValues &symbols,
                        const NamedScalars &scalars,
                        const TensorMapEncoder &encoder, PackedParams &out) {
  const ManifestKernel &kernel = manifest.kernels[kernelIndex];
  out.slots.assign(kernel.params.size(), ParamSlot{});
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const ManifestParam &p = kernel.params[i];
    const std::string what =
        "kernel '" + kernel.name + "' parameter '" + p.name + "'";
    unsigned char *slot = out.slots[i].bytes;
    switch (p.kind) {
    case ParamKind::Ptr: {
      CUdeviceptr address = buffers[p.buffer].address;
      memcpy(slot, &address, sizeof address);
      break;
    }
    case ParamKind::I32: {
      int64_t value;
      Status s = p.value.evaluate(symbols, value);
      if (!s.ok())
        return s.withContext(what);
      if (value < INT32_MIN || value > INT32_MAX)
        return invalidArgument(what + ": '" + p.value.text() + "' = " +
                               std::to_string(value) + " does not fit in i32");
      int32_t v32 = static_cast<int32_t>(value);
      memcpy(slot, &v32, sizeof v32);
      break;
    }
    case ParamKind::F32: {
      float f = 0.0f;
      switch (p.named) {
      case NamedValue::SoftmaxScale:
        f = scalars.softmaxScale;
        break;
      case NamedValue::SoftmaxScaleLog2:
        f = scalars.softmaxScaleLog2;
        break;
      case NamedValue::FloatLiteral:
        f = static_cast<float>(p.floatLiteral);
        break;
      case NamedValue::None: {
        int64_t value;
        Status s = p.value.evaluate(symbols, value);
        if (!s.ok())
          return s.withContext(what);
        f = static_cast<float>(value);
        break;
      }
      }
      memcpy(slot, &f, sizeof f);
      break;
    }
    case ParamKind::TensorMap: {
      const TensorMapSpec &t = p.tensorMap;
      TensorMapRequest r;
      r.what = what;
      r.bufferName = manifest.buffers[p.buffer].name;
      r.dtype = t.dtype;
      r.address = buffers[p.buffer].address;
      r.bufferBytes = buffers[p.buffer].bytes;
      r.swizzle = t.swizzle;
      r.l2Promotion = t.l2Promotion;
      struct {
        const Expression *e;
        int64_t *dst;
        const char *name;
      } fields[] = {{&t.rows, &r.rows, "dims[0]"},
                    {&t.cols, &r.cols, "dims[1]"},
                    {&t.boxRows, &r.boxRows, "box[0]"},
                    {&t.boxCols, &r.boxCols, "box[1]"}};
      for (auto &f : fields) {
        Status s = f.e->evaluate(symbols, *f.dst);
        if (!s.ok())
          return s.withContext(what + " " + f.name);
      }
      CUtensorMap map;
      memset(&map, 0, sizeof map);
      FLAMIA_RETURN_IF_ERROR(encoder(r, map));
      static_assert(sizeof(CUtensorMap) == sizeof(ParamSlot), "slot size");
      memcpy(slot, &map, sizeof map);
      break;
    }
    }
  }
  out.bindPointers();
  return Status::success();
}

Status evaluateGrid(const ManifestKernel &kernel, const SymbolValues &symbols,
                    LaunchGrid &out) {
  static const char *axis[3] = {"x", "y", "z"};
  static const int64_t limit[3] = {INT32_MAX, 65535, 65535};
  for (int i = 0; i < 3; ++i) {
    int64_t v;
    Status s = kernel.grid[i].evaluate(symbols, v);
    if (!s.ok())
      return s.withContext("kernel '" + kernel.name + "' grid " + axis[i]);
    if (v < 0 || v > limit[i])
      return invalidArgument("kernel '" + kernel.name + "' grid " + axis[i] +
                             " '" + kernel.grid[i].text() +
                             "' = " + std::to_string(v) + " is outside [0, " +
                             std::to_string(limit[i]) + "]");
    if (v % kernel.cluster[i] != 0)
      return invalidArgument("kernel '" + kernel.name + "' grid " + axis[i] +
                             " = " + std::to_string(v) +
                             " is not a multiple of the cluster dimension " +
                             std::to_string(kernel.cluster[i]));
    out.dims[i] = static_cast<uint32_t>(v);
  }
  return Status::success();
}

Status launchKernel(const CudaDriver &driver, KernelLaunch &launch,
                    CUstream stream) {
  const ManifestKernel &k = *launch.kernel;
  if (launch.grid.empty())
    return Status::success();
  if (launch.counter)
    FLAMIA_RETURN_IF_ERROR(driver.check(
        driver.memsetD32Async(launch.counter, 0, 1, stream),
        "zeroing the work counter before kernel '" + k.name + "'"));
  launch.params.bindPointers();
  CUlaunchAttribute attributes[1];
  memset(attributes, 0, sizeof attributes);
  CUlaunchConfig config;
  memset(&config, 0, sizeof config);
  config.gridDimX = launch.grid.dims[0];
  config.gridDimY = launch.grid.dims[1];
  config.gridDimZ = launch.grid.dims[2];
  config.blockDimX = k.block[0];
  config.blockDimY = k.block[1];
  config.blockDimZ = k.block[2];
  config.sharedMemBytes = static_cast<unsigned>(k.smemBytes);
  config.hStream = stream;
  if (k.clusterSize() > 1) {
    attributes[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attributes[0].value.clusterDim.x = k.cluster[0];
    attributes[0].value.clusterDim.y = k.cluster[1];
    attributes[0].value.clusterDim.z = k.cluster[2];
    config.attrs = attributes;
    config.numAttrs = 1;
  }
  CUresult r = driver.launchKernelEx(&config, launch.function,
                                     launch.params.pointers.data(), nullptr);
  if (r != CUDA_SUCCESS)
    return Status::error(
        ErrorCode::CudaError,
        "cuLaunchKernelEx of kernel '" + k.name + "' (grid [" +
            std::to_string(config.gridDimX) + ", " +
            std::to_string(config.gridDimY) + ", " +
            std::to_string(config.gridDimZ) + "], block [" +
            std::to_string(k.block[0]) + ", " + std::to_string(k.block[1]) +
            ", " + std::to_string(k.block[2]) + "], cluster [" +
            std::to_string(k.cluster[0]) + ", " + std::to_string(k.cluster[1]) +
            ", " + std::to_string(k.cluster[2]) + "], " +
            std::to_string(k.smemBytes) +
            " bytes of dynamic shared memory) failed: " +
            driver.errorString(r));
  return Status::success();
}

} // namespace flamia::runtime
