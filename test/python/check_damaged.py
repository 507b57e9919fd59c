"""Damaged run files raise tremor.RunFileError, the package's one documented
exception, with a one-line reason and the tool's exit status.

usage: check_damaged.py RUNS_DIR --tremor PATH SCRATCH_DIR

Cases: a missing file, a text file, a truncated run file, a run file of an
unknown schema version, a file the analysis fails on (a tremor that exits 70),
no tremor tool at all; read_many fails on the first bad path. Known-wrong
implementation it fails: a reader that opens the file with h5py before asking
`tremor analyze` (FileNotFoundError / OSError escape), or that lets a
subprocess or JSON error through.
"""
import argparse
import os
import shutil
import stat

import h5py
import tremor

from python_testing import check, finish, run_files

parser = argparse.ArgumentParser()
parser.add_argument("directory")
parser.add_argument("scratch")
parser.add_argument("--tremor", required=True)
options = parser.parse_args()
shutil.rmtree(options.scratch, ignore_errors=True)
os.makedirs(options.scratch)
good = run_files(options.directory)[0]


def scratch(name):
    return os.path.join(options.scratch, name)


def expect_error(what, call, status, fragment):
    try:
        call()
    except tremor.RunFileError as error:
        message = str(error)
        check(error.exit_code == status, f"{what}: exit status {error.exit_code}, expected {status}")
        check("\n" not in message and fragment in message, f"{what}: one line naming {fragment!r}: {message!r}")
        return
    except Exception as error:  # noqa: BLE001  the failure this test is for
        check(False, f"{what}: raised {type(error).__name__}: {error}, not tremor.RunFileError")
        return
    check(False, f"{what}: no error")


with open(scratch("notes.h5"), "w") as handle:
    handle.write("not a run file\n")
with open(good, "rb") as source:
    whole = source.read()
with open(scratch("truncated.h5"), "wb") as sink:
    sink.write(whole[:len(whole) // 2])
shutil.copy(good, scratch("schema99.h5"))
with h5py.File(scratch("schema99.h5"), "r+") as handle:
    handle.attrs["schema_version"] = 99
failing_tool = scratch("tremor-failing")
with open(failing_tool, "w") as handle:
    handle.write("#!/bin/sh\necho 'tremor: error: the analysis died (Segmentation fault)' >&2\nexit 70\n")
os.chmod(failing_tool, stat.S_IRWXU)

expect_error("missing file", lambda: tremor.read(scratch("absent.h5")), 2, "absent.h5")
expect_error("text file", lambda: tremor.read(scratch("notes.h5")), 2, "not an HDF5 file")
expect_error("truncated file", lambda: tremor.read(scratch("truncated.h5")), 2, "truncated.h5")
expect_error("unknown schema", lambda: tremor.read(scratch("schema99.h5")), 2, "unsupported schema version 99")
expect_error("analysis failing", lambda: tremor.read(good, tremor_bin=failing_tool), 70, "the analysis died")
expect_error("read_many, one bad file", lambda: tremor.read_many([good, scratch("notes.h5")]), 2, "not an HDF5 file")
saved = {name: os.environ.pop(name, None) for name in ("TREMOR_BIN",)}
os.environ["PATH"] = "/usr/bin:/bin"
import tremor.tool  # noqa: E402
tremor.tool._configured_tool = lambda: None  # as the source folder: no tool beside the package
expect_error("no tremor tool", lambda: tremor.read(good), 127, "the tremor tool is not installed")
finish("check_damaged")
