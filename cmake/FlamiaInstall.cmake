# `cmake --install BUILD --prefix P`: headers, libraries, tools and the CMake
# package (P/lib/cmake/Flamia), so that another project can
#   find_package(Flamia REQUIRED CONFIG)
#   target_link_libraries(app PRIVATE Flamia::Compiler Flamia::CAPI)
# docs/cmake.md lists the targets; examples/consumer is such a project and
# scripts/test-consumer.sh builds it against a fresh install.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FLAMIA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Flamia)

# Headers: include/flamia/**.h and the generated ones they include
# (Version.h; the ODS and pass declarations of the compiler's headers).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/flamia
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(FILES ${PROJECT_BINARY_DIR}/include/flamia/Support/Version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/flamia/Support)
if(FLAMIA_ENABLE_COMPILER)
  foreach(dir Transforms Conversion)
    install(FILES ${PROJECT_BINARY_DIR}/include/flamia/${dir}/Passes.h.inc
      DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/flamia/${dir})
  endforeach()
  # Included as "Flamia/FlamiaOps.h.inc" (build/dialects/Flamia).
  install(DIRECTORY ${PROJECT_BINARY_DIR}/dialects/Flamia
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.h.inc" PATTERN "CMakeFiles" EXCLUDE)
endif()

# Libraries, exported as Flamia::<export name>. The static libraries come
# along with what links them (a static library's dependencies are part of
# its link interface).
set(_flamia_exports
  FlamiaSupport:Support FlamiaAnalysis:Analysis FlamiaSchedule:Schedule
  FlamiaNumerics:Numerics FlamiaTargetDescriptors:TargetDescriptors
  FlamiaManifest:Manifest FlamiaValidation:Validation
  # The runtime (C++) and its C API: static for C++ programs, shared (the
  # stable ABI) for everything else.
  FlamiaRuntime:Runtime FlamiaRuntimeCAPI:RuntimeCAPI flamia_runtime:CAPI
  # The CPU reference's C API (libflamia_reference.so).
  flamia_reference:Reference
  # The compiler: flamia::compileAttention (Compiler) and its C API
  # (libflamia_compiler.so); the dialect and passes for MLIR tools.
  FlamiaDialect:Dialect FlamiaTransforms:Transforms FlamiaToNVVM:ToNVVM
  FlamiaCompiler:Compiler FlamiaInterpreter:Interpreter
  flamia_compiler:CompilerCAPI)
set(_flamia_libs)
foreach(pair ${_flamia_exports})
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 target)
  list(GET pair 1 name)
  if(TARGET ${target})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
    list(APPEND _flamia_libs ${target})
  endif()
endforeach()

set(_flamia_tools)
foreach(tool flamia-ref flamia-desc flamia-run flamia-opt flamia-compile flamia-interp)
  if(TARGET ${tool})
    list(APPEND _flamia_tools ${tool})
  endif()
endforeach()

# Installed tools and shared libraries find libMLIR.so and libLLVM.so where
# they were linked from (/usr/lib/llvm-22/lib is not on the loader's path)
# and each other in ../lib.
set_target_properties(${_flamia_tools} PROPERTIES
  INSTALL_RPATH "\$ORIGIN/../${CMAKE_INSTALL_LIBDIR}"
  INSTALL_RPATH_USE_LINK_PATH ON)
foreach(target ${_flamia_libs})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "SHARED_LIBRARY")
    set_target_properties(${target} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  endif()
endforeach()

install(TARGETS ${_flamia_libs} ${_flamia_tools}
  EXPORT FlamiaTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT FlamiaTargets
  NAMESPACE Flamia::
  FILE FlamiaTargets.cmake
  DESTINATION ${FLAMIA_INSTALL_CMAKEDIR})

# FlamiaConfig.cmake: what the package was built with, and its dependencies.
set(FLAMIA_CONFIG_HAS_COMPILER ${FLAMIA_ENABLE_COMPILER})
set(FLAMIA_CONFIG_HAS_RUNTIME ${FLAMIA_ENABLE_RUNTIME})
set(FLAMIA_CONFIG_MLIR_DIR "${MLIR_DIR}")
set(FLAMIA_CONFIG_CUDA_INCLUDE_DIR "${FLAMIA_CUDA_INCLUDE_DIR}")
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/FlamiaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/FlamiaConfig.cmake
  INSTALL_DESTINATION ${FLAMIA_INSTALL_CMAKEDIR})
# 0.x: only the same minor version is compatible.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/FlamiaConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/FlamiaConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/FlamiaConfigVersion.cmake
  DESTINATION ${FLAMIA_INSTALL_CMAKEDIR})
