# The Python package's libraries (pyproject.toml, scikit-build-core): the C
# API shared libraries go to flamia/_lib in the wheel, in install component
# `python` (the only one the wheel installs). Target flamia_python_libraries
# builds just them.
set(_flamia_python_libs flamia_reference)
if(TARGET flamia_runtime)
  list(APPEND _flamia_python_libs flamia_runtime)
endif()
if(TARGET flamia_compiler)
  list(APPEND _flamia_python_libs flamia_compiler)
endif()
add_custom_target(flamia_python_libraries DEPENDS ${_flamia_python_libs})
# The compiler library links LLVM's and MLIR's shared libraries, which live
# outside the default search path (/usr/lib/llvm-22/lib): keep the directories
# they were linked from.
set_target_properties(${_flamia_python_libs} PROPERTIES
  INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ${_flamia_python_libs}
  LIBRARY DESTINATION flamia/_lib COMPONENT python)
