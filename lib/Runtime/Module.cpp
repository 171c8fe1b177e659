//===- Module.cpp - Loading the manifest's cubins -------------------------===//

#include "flamia/Runtime/Module.h"

#include <fstream>
#include <sstream>

namespace flamia::runtime {

size_t paramSizeBytes(ParamKind kind) {
  switch (kind) {
  case ParamKind::Ptr:
    return sizeof(CUdeviceptr);
  case ParamKind::I32:
    return sizeof(int32_t);
  case ParamKind::F32:
    return sizeof(float);
  case ParamKind::TensorMap:
    return sizeof(CUtensorMap);
  }
  return 0;
}

static bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

static Status artifactError(std::string message) {
  return Status::error(ErrorCode::InvalidArtifact, std::move(message));
}

Status ModuleSet::load(const CudaDriver &driver, const std::string &dir,
                       const Manifest &manifest, const DeviceLimits &limits) {
  kernels_.clear();
  for (const ManifestKernel &k : manifest.kernels) {
    CUmodule module = nullptr;
    for (const auto &loaded : modules_)
      if (loaded.first == k.cubin)
        module = loaded.second;
    if (!module) {
      std::string path = dir + "/" + k.cubin, image;
      if (!readFile(path, image) || image.empty())
        return artifactError("missing cubin '" + k.cubin + "' of kernel '" +
                             k.name + "' (cannot read " + path + ")");
      CUresult r = driver.moduleLoadData(&module, image.data());
      if (r != CUDA_SUCCESS) {
        std::string hint;
        if (r == CUDA_ERROR_NO_BINARY_FOR_GPU ||
            r == CUDA_ERROR_INVALID_IMAGE ||
            r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
          hint = " (built for target " + manifest.target.name +
                 "; does it match the device and the driver?)";
        return artifactError("loading cubin '" + path + "' of kernel '" +
                             k.name + "' failed: " + driver.errorString(r) +
                             hint);
      }
      modules_.emplace_back(k.cubin, module);
    }

    LoadedKernel lk;
    CUresult r = driver.moduleGetFunction(&lk.function, module, k.name.c_str());
    if (r == CUDA_ERROR_NOT_FOUND)
      return artifactError("kernel symbol '" + k.name +
                           "' not found in cubin '" + k.cubin + "'");
    FLAMIA_RETURN_IF_ERROR(driver.check(r, "cuModuleGetFunction('" + k.name +
                                               "') in '" + k.cubin + "'"));

    auto attribute = [&](CUfunction_attribute a, int &out,
                         const char *name) -> Status {
      return driver.check(driver.funcGetAttribute(&out, a, lk.function),
                          std::string("cuFuncGetAttribute(") + name +
                              ") of kernel '" + k.name + "'");
    };
    FLAMIA_RETURN_IF_ERROR(attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                     lk.staticSharedBytes,
                                     "SHARED_SIZE_BYTES"));
    FLAMIA_RETURN_IF_ERROR(attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                     lk.maxThreadsPerBlock,
                                     "MAX_THREADS_PER_BLOCK"));
    FLAMIA_RETURN_IF_ERROR(
        attribute(CU_FUNC_ATTRIBUTE_NUM_REGS, lk.registers, "NUM_REGS"));
    FLAMIA_RETURN_IF_ERROR(attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                                     lk.localBytes, "LOCAL_SIZE_BYTES"));

    if (k.threadsPerBlock() > lk.maxThreadsPerBlock)
      return artifactError("kernel '" + k.name + "' runs at most " +
                           std::to_string(lk.maxThreadsPerBlock) +
                           " threads per block (" +
                           std::to_string(lk.registers) +
                           " registers per thread) but the manifest launches " +
                           std::to_string(k.threadsPerBlock()));
    const int64_t smemTotal = k.smemBytes + lk.staticSharedBytes;
    if (smemTotal > limits.maxSharedMemoryOptin)
      return artifactError(
          "kernel '" + k.name + "' needs " + std::to_string(k.smemBytes) +
          " bytes of dynamic + " + std::to_string(lk.staticSharedBytes) +
          " bytes of static shared memory, more than the device's " +
          std::to_string(limits.maxSharedMemoryOptin) + " per block");
    if (k.smemBytes > 48 * 1024)
      FLAMIA_RETURN_IF_ERROR(driver.check(
          driver.funcSetAttribute(
              lk.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              static_cast<int>(k.smemBytes)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = " +
              std::to_string(k.smemBytes) + ") of kernel '" + k.name + "'"));
    if (k.clusterSize() > 8)
      FLAMIA_RETURN_IF_ERROR(driver.check(
          driver.funcSetAttribute(
              lk.function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
              1),
          "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED) of kernel '" +
              k.name + "'"));

    if (driver.funcGetParamInfo) {
      // Check the manifest's parameters against the cubin's. Probing past
      // the last one would answer CUDA_ERROR_INVALID_VALUE, which
      // compute-sanitizer reports as an API error, so only the manifest's
      // indices are asked for: a cubin with fewer parameters is caught, one
      // with extra trailing parameters is not.
      lk.paramLayoutChecked = true;
      for (size_t i = 0; i < k.params.size(); ++i) {
        size_t offset = 0, size = 0;
        CUresult pr = driver.funcGetParamInfo(lk.function, i, &offset, &size);
        if (pr == CUDA_ERROR_INVALID_VALUE)
          return artifactError("kernel '" + k.name + "' takes " +
                               std::to_string(i) +
                               " parameters in the cubin but the manifest "
                               "lists " +
                               std::to_string(k.params.size()));
        if (pr != CUDA_SUCCESS) {
          lk.paramLayoutChecked = false; // not supported for this module
          break;
        }
        const ManifestParam &p = k.params[i];
        if (size != paramSizeBytes(p.kind))
          return artifactError("kernel '" + k.name + "' parameter " +
                               std::to_string(i) + " '" + p.name + "' is " +
                               paramKindName(p.kind) + " (" +
                               std::to_string(paramSizeBytes(p.kind)) +
                               " bytes) in the manifest but " +
                               std::to_string(size) + " bytes in the cubin");
      }
    }
    kernels_.push_back(lk);
  }
  return Status::success();
}

void ModuleSet::unload(const CudaDriver &driver) {
  for (auto &m : modules_)
    driver.moduleUnload(m.second);
  modules_.clear();
  kernels_.clear();
}

} // namespace flamia::runtime
