# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FLAMIA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.flamia_obj_root, "test")

llvm_config.use_default_substitutions()  # FileCheck, not, count, ...
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = [
    "flamia-opt",
    "flamia-ref",
    "flamia-desc",
    "flamia-compile",
    "flamia-interp",
    ToolSubst("flamia-run", unresolved="ignore"),
    ToolSubst("mlir-translate", unresolved="ignore"),
    ToolSubst("llc", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, [config.flamia_tools_dir, config.llvm_tools_dir])

config.substitutions.append(("%flamia_src_root", config.flamia_src_root))
config.substitutions.append(("%flamia_obj_root", config.flamia_obj_root))
# use_default_substitutions() already maps %python to lit's own interpreter;
# ours (the .venv with numpy + ml_dtypes) must replace it, not follow it.
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", config.flamia_python))
config.substitutions.append(("%examples", os.path.join(config.flamia_src_root, "examples")))

# `REQUIRES: ptxas` tests assemble PTX with CUDA's ptxas.
if config.flamia_ptxas and os.access(config.flamia_ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.flamia_ptxas))
    config.substitutions.append(("%{ptxas_dir}", os.path.dirname(config.flamia_ptxas)))

# `REQUIRES: numpy` tests run independent checks with numpy + ml_dtypes.
if os.access(config.flamia_python, os.X_OK):
    config.available_features.add("numpy")

# `REQUIRES: runtime` tests run flamia-run (built when cuda.h was found);
# `REQUIRES: fake-cuda` ones run it on the fake CUDA driver of
# unittests/Runtime (host memory, host "kernels"), without a GPU.
if os.access(os.path.join(config.flamia_tools_dir, "flamia-run"), os.X_OK):
    config.available_features.add("runtime")
fake_libcuda = os.path.join(config.flamia_obj_root, "lib", "libflamia_fake_cuda.so")
if os.path.exists(fake_libcuda):
    config.available_features.add("fake-cuda")
    config.substitutions.append(("%fake_libcuda", fake_libcuda))
