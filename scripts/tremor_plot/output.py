"""Output files, by the rules of `tremor compare --html` (estimators/cli/output_file.cpp):
an output may replace only a regular file that is tremor-plot's own output of the
same kind (its marker near the start), never an input; it is written to a
temporary file in the same directory and renamed over the path, so a failure
leaves the old file or nothing."""
from __future__ import annotations

import os
import stat
import tempfile

# The page's generator tag and the PNGs' Software text chunk.
HTML_MARKER = b'<meta name="generator" content="tremor-plot">'
PNG_SOFTWARE = "tremor-plot"
PNG_MARKER = b"Software\x00" + PNG_SOFTWARE.encode()
MARKER_WINDOW = 4096


class OutputRefused(Exception):
    """The message is one line for the user."""


def refusal(path: str, marker: bytes, inputs: list[str]) -> str:
    """'' when `path` may be written, else why not."""
    if not path:
        return "the output file name is empty"
    try:
        target = os.stat(path)
    except FileNotFoundError:
        return ""
    except OSError as error:
        return f"cannot check it: {error.strerror}"
    for name in inputs:
        try:
            read = os.stat(name)
        except OSError:
            continue
        if (read.st_dev, read.st_ino) == (target.st_dev, target.st_ino):
            return f"it is the input {name}; choose another output name"
    if not stat.S_ISREG(target.st_mode):
        return "it exists and is not a regular file"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            head = os.read(fd, MARKER_WINDOW)
        finally:
            os.close(fd)
    except OSError as error:
        return f"cannot check it: {error.strerror}"
    if marker not in head:
        return "it exists and is not tremor-plot's own output of that kind; remove it or choose another name"
    return ""


def check(path: str, marker: bytes, inputs: list[str]) -> None:
    why = refusal(path, marker, inputs)
    if why:
        raise OutputRefused(f"will not write {path}: {why}")


def write(path: str, data: bytes, marker: bytes, inputs: list[str]) -> None:
    """Checks, then writes atomically; OutputRefused with one line on refusal or failure."""
    check(path, marker, inputs)
    directory = os.path.dirname(path) or "."
    try:
        fd, temporary = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=directory)
    except OSError as error:
        raise OutputRefused(f"cannot write {path}: {error.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fchmod(out.fileno(), 0o666 & ~_umask())
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except OSError as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise OutputRefused(f"cannot write {path}: {error.strerror} (nothing was written)") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
