"""cmake --install into a scratch prefix, then use only the installed tree:
tremor-run on the demo, tremor-plot, tremor (with `tremor plot`), tremor.pc and find_package(Tremor).

usage: check_install.py --build-dir B --prefix P --libdir lib --flavour F --version V
                        --launcher "cmd" --demo BSP_DEMO --env-app UX_MPI_APP
"""
import argparse
import os
import shutil
import subprocess

from ux_common import check, finish, mpi_run, run, single_run_file

parser = argparse.ArgumentParser()
for option in ("--build-dir", "--prefix", "--libdir", "--flavour", "--version", "--launcher", "--demo", "--env-app"):
    parser.add_argument(option, required=True)
options = parser.parse_args()
prefix = os.path.abspath(options.prefix)
shutil.rmtree(prefix, ignore_errors=True)
clean_env = {"LD_PRELOAD": None, "TREMOR_LIBDIR": None, "TREMOR_PYTHON": None}

result = run(["cmake", "--install", options.build_dir, "--prefix", prefix], timeout=300)
check(result.returncode == 0, f"cmake --install: {result.stderr[-1500:]}")
lib = os.path.join(prefix, options.libdir)
profiler = os.path.join(lib, f"libtremor-{options.flavour}.so")
expected = [os.path.join(prefix, "bin", name) for name in ("tremor", "tremor-run", "tremor-plot")]
expected += [profiler, os.path.join(lib, f"libtremor-inject-{options.flavour}.so"),
             os.path.join(lib, "cmake", "Tremor", "TremorConfig.cmake"),
             os.path.join(lib, "cmake", "Tremor", "TremorConfigVersion.cmake"),
             os.path.join(lib, "pkgconfig", "tremor.pc"),
             os.path.join(prefix, "share", "tremor", "python", "tremor_plot", "__main__.py")]
for path in expected:
    check(os.path.isfile(path), f"installed: {path}")
tremor_run = os.path.join(prefix, "bin", "tremor-run")
tremor = os.path.join(prefix, "bin", "tremor")

# The installed tool runs from the install tree (RPATH) and finds every library.
result = run([tremor, "--version"], clean_env)
check(result.returncode == 0 and options.version in result.stdout, f"installed tremor --version: {result.stdout!r}")
linked = subprocess.run(["ldd", tremor], capture_output=True, text=True).stdout
check("not found" not in linked, f"tremor's libraries all resolve: {linked}")

# The installed launcher preloads the installed library, not the build tree's.
result = run([tremor_run, options.env_app, "--print-env"], clean_env)
check(f"LD_PRELOAD={profiler}" in result.stdout, f"installed tremor-run preloads {profiler}: {result.stdout!r}")

output_dir = os.path.join(prefix, "runs")
result = mpi_run(options.launcher, 2, [tremor_run, "--output-dir", output_dir, "--report", "text",
                                       options.demo, "-n", "40", "-u", "500", "-k", "0", "-q"], clean_env)
check(result.returncode == 0, f"demo through the installed tremor-run: {result.stderr[-1500:]}")
check("Run: " in result.stderr and "2 processes on 1 node" in result.stderr,
      f"the text report is printed: {result.stderr[-1500:]}")
run_file = single_run_file(output_dir)
if run_file:
    page = os.path.join(output_dir, "report.html")
    result = run([os.path.join(prefix, "bin", "tremor-plot"), run_file, "-o", page], clean_env)
    check(result.returncode == 0 and os.path.getsize(page) > 10000, f"installed tremor-plot: {result.stderr}")
    result = run([tremor, "analyze", run_file], clean_env)
    check(result.returncode == 0, f"installed tremor analyze: {result.stderr}")
    # `tremor plot` runs the tremor-plot of its own bin/, even with another one first on PATH.
    decoy_dir = os.path.join(prefix, "decoy")
    os.makedirs(decoy_dir)
    with open(os.path.join(decoy_dir, "tremor-plot"), "w") as handle:
        handle.write("#!/bin/sh\necho 'the tremor-plot on PATH ran' >&2\nexit 9\n")
    os.chmod(os.path.join(decoy_dir, "tremor-plot"), 0o755)
    decoy_env = {**clean_env, "PATH": decoy_dir + os.pathsep + os.environ["PATH"]}
    page_via_tremor = os.path.join(output_dir, "report-via-tremor.html")
    result = run([tremor, "plot", run_file, "-o", page_via_tremor], decoy_env)
    check(result.returncode == 0 and os.path.isfile(page_via_tremor),
          f"installed tremor plot uses the installed tremor-plot: {result.returncode} {result.stderr}")
    if os.path.isfile(page_via_tremor):
        with open(page, encoding="utf-8") as first, open(page_via_tremor, encoding="utf-8") as second:
            check(first.read() == second.read(), "installed tremor plot writes the page tremor-plot writes")
    result = run([tremor, "--help"], clean_env)
    check(any(line.split()[:1] == ["plot"] for line in result.stdout.splitlines()),
          f"installed tremor --help lists plot: {result.stdout!r}")

# pkg-config, relocatable through ${pcfiledir}.
pkg_env = {**clean_env, "PKG_CONFIG_PATH": os.path.join(lib, "pkgconfig")}
result = run(["pkg-config", "--modversion", "tremor"], pkg_env)
check(result.stdout.strip() == options.version, f"tremor.pc version: {result.stdout!r} {result.stderr!r}")
for variable, path in (("preload", profiler), ("mpi_flavour", None)):
    result = run(["pkg-config", f"--variable={variable}", "tremor"], pkg_env)
    value = result.stdout.strip()
    if path:
        check(os.path.realpath(value) == os.path.realpath(path), f"tremor.pc {variable}={value!r}")
    else:
        check(value == options.flavour, f"tremor.pc mpi_flavour={value!r}")

# find_package(Tremor) from a consumer project.
consumer = os.path.join(prefix, "consumer")
os.makedirs(consumer)
with open(os.path.join(consumer, "CMakeLists.txt"), "w") as handle:
    handle.write("cmake_minimum_required(VERSION 3.25)\nproject(consumer LANGUAGES NONE)\n"
                 f"find_package(Tremor {options.version} REQUIRED)\n"
                 "get_target_property(preload Tremor::preload IMPORTED_LOCATION)\n"
                 "get_target_property(tool Tremor::tremor IMPORTED_LOCATION)\n"
                 'file(WRITE ${CMAKE_BINARY_DIR}/found.txt "${preload}\\n${tool}\\n${TREMOR_RUN_EXECUTABLE}\\n'
                 '${TREMOR_MPI_FLAVOUR}\\n")\n')
result = run(["cmake", "-S", consumer, "-B", os.path.join(consumer, "build"), f"-DCMAKE_PREFIX_PATH={prefix}"],
             clean_env)
check(result.returncode == 0, f"find_package(Tremor): {result.stderr[-1500:]}")
found_file = os.path.join(consumer, "build", "found.txt")
if os.path.exists(found_file):
    found = [os.path.realpath(line) if "/" in line else line for line in open(found_file).read().split("\n")[:4]]
    check(found == [os.path.realpath(profiler), os.path.realpath(tremor), os.path.realpath(tremor_run), options.flavour],
          f"find_package(Tremor) results: {found}")
shutil.rmtree(prefix, ignore_errors=True)
finish("check_install")
