# -*- Python -*-
# The plain tools' lit tests, run from test/ in a build without the compiler
# (test-plain/CMakeLists.txt says why). The substitutions and features are
# those of test/lit.cfg.py for the tools that exist here.
import os
import sys

from lit.llvm import llvm_config

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plainformat import PlainShTest  # noqa: E402

config.name = "FLAMIA-plain"
config.test_format = PlainShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.join(config.flamia_src_root, "test")
config.test_exec_root = os.path.join(config.flamia_obj_root, "test-plain")

llvm_config.use_default_substitutions()  # FileCheck, not, count, ...
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# The sanitizer runtimes read their options from the environment.
llvm_config.with_system_environment(["ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"])

tools = ["flamia-ref", "flamia-desc"]
if os.access(os.path.join(config.flamia_tools_dir, "flamia-run"), os.X_OK):
    tools.append("flamia-run")
llvm_config.add_tool_substitutions(tools, [config.flamia_tools_dir])

config.substitutions.append(("%flamia_src_root", config.flamia_src_root))
config.substitutions.append(("%flamia_obj_root", config.flamia_obj_root))
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", config.flamia_python))

if config.flamia_ptxas and os.access(config.flamia_ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.flamia_ptxas))
    config.substitutions.append(("%{ptxas_dir}", os.path.dirname(config.flamia_ptxas)))
if os.access(config.flamia_python, os.X_OK):
    config.available_features.add("numpy")
if "flamia-run" in tools:
    config.available_features.add("runtime")
fake_libcuda = os.path.join(config.flamia_obj_root, "lib", "libflamia_fake_cuda.so")
if os.path.exists(fake_libcuda):
    config.available_features.add("fake-cuda")
    config.substitutions.append(("%fake_libcuda", fake_libcuda))
if config.flamia_sanitize:
    config.available_features.add("sanitizers")
