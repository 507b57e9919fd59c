#!/usr/bin/env python3
"""Generates Tremor's wrappers from mpi_calls.py (one table per concept, docs/design.md).

usage: generate_wrappers.py profiler OUTDIR   call_ids.hpp, mpi_wrappers.cpp, posix_wrappers.cpp
       generate_wrappers.py injector OUTDIR   mpi_calls.inc, posix_calls.inc (libtremor-inject)
       generate_wrappers.py docs FILE         docs/intercepted_calls.md ("-": standard output)
Both libraries are generated from the same table at build time; neither links
the other. Standard library only.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_calls import MPI_CALLS, POSIX_CALLS, POSIX_VARIADIC, injector_family  # noqa: E402

SPECIAL = ["MPI_Init", "MPI_Init_thread", "MPI_Finalize"]


def arg_names(params):
    names = []
    for param in params.split(","):
        param = param.strip()
        if param == "void" or not param:
            continue
        match = re.search(r"(\w+)\s*(\[\])?$", param)
        names.append(match.group(1))
    return names


def call_id(name):
    return name[4:] if name.startswith("MPI_") else "posix_" + name


def both_directions(sent, received):
    """Bytes sent and received; one evaluation when both are the same expression (Allreduce)."""
    if sent == received and sent != "0":
        return [f"const std::uint64_t bytes = {sent};",
                "state->add(Feature::bytes_sent, bytes);", "state->add(Feature::bytes_received, bytes);"]
    return [f"state->add(Feature::bytes_sent, {sent});", f"state->add(Feature::bytes_received, {received});"]


def feature_code(kind, rule):
    """C++ statements run after a successful call; `state` is the thread's state."""
    sent, received = rule if rule else ("0", "0")
    add = lambda feature, expr: f"state->add(Feature::{feature}, {expr});"
    if kind == "send":
        return [add("p2p_send_blocking", 1), add("bytes_sent", sent)]
    if kind == "isend":
        return [add("p2p_send_nonblocking", 1), add("bytes_sent", sent)]
    if kind == "recv":
        return [add("p2p_recv_blocking", 1), add("bytes_received", received)]
    if kind == "irecv":
        return [add("p2p_recv_nonblocking", 1), add("bytes_received", received)]
    if kind == "sendrecv":
        return [add("p2p_send_blocking", 1), add("p2p_recv_blocking", 1),
                add("bytes_sent", sent), add("bytes_received", received)]
    if kind == "persistent_send":
        return [f"remember_persistent(*request, true, {sent});"]
    if kind == "persistent_recv":
        return [f"remember_persistent(*request, false, {received});"]
    if kind == "start":
        return ["count_started(*state, started);"]
    if kind == "startall":
        return ["count_started(*state, started_all);"]
    if kind.startswith("boundary:") or kind.startswith("coll:"):
        cls = kind.split(":")[1]
        return [add(f"coll_{cls}", 1), *both_directions(sent, received)]
    if kind == "rma":
        return [add("rma_ops", 1), *both_directions(sent, received)]
    if kind == "io_open":
        return [add("io_opens", 1)]
    if kind == "io_close":
        return [add("io_closes", 1)]
    if kind == "io_read":
        return [add("io_reads", 1), add("io_bytes_read", received)]
    if kind == "io_write":
        return [add("io_writes", 1), add("io_bytes_written", sent)]
    if kind in ("complete", "time", "io_time", "request_free", "comm_free", "type_free"):
        return []
    raise ValueError(f"unknown kind {kind}")


def mpi_wrapper(name, params, kind, rule):
    args = arg_names(params)
    pmpi_args = list(args)
    before, after_call = [], []
    uses_status = rule and any("received_bytes(status" in part for part in rule)
    if uses_status:
        # Count exactly what arrived, even when the caller ignores the status.
        before += ["MPI_Status local_status;",
                   "MPI_Status* const status_used = status == MPI_STATUS_IGNORE ? &local_status : status;"]
        pmpi_args = ["status_used" if a == "status" else a for a in pmpi_args]
        rule = tuple(part.replace("received_bytes(status,", "received_bytes(status_used,") for part in rule)
    if kind == "start":
        before.append("const PersistentFacts started = persistent_facts(*request);")
    if kind == "startall":
        before.append("const PersistentBatch started_all = persistent_facts(count, array_of_requests);")
    if kind == "request_free":
        before.append("forget_persistent(*request);")
    if kind == "comm_free":
        before.append("forget_communicator(*comm);")
    boundary = kind.startswith("boundary:")
    if boundary:
        before += ["const bool closes_segment = spans_world(comm);",
                   "const WorkReading work_at_entry = closes_segment ? boundary_entry_work(*state) : WorkReading{};"]
    leave = "leave_io" if kind.startswith("io_") else "leave_mpi"
    cid = call_id(name)
    arglist = ", ".join(args)
    # One body serves both MPI_X and PMPI_X (Darshan's way): Fortran bindings
    # that call PMPI_X directly (Open MPI, MPICH's mpi_f08) are recorded too,
    # and the depth guard keeps a call from being counted twice. The real
    # function is the next PMPI_X in the search order (a stacked injector or
    # the MPI library).
    # The next definition: the pointer starts at a resolver that looks it up
    # at the first call and puts it in its place, so a call loads and jumps
    # (no guard variable, no test).
    # The exported MPI_X and PMPI_X are forwarding entries (wrapper_support.hpp):
    # they jump to record_X, or, in a process that runs another MPI than the
    # one Tremor was built for, straight to next_X with the caller's registers
    # untouched (the two MPIs' handle types differ).
    lines = [f"using {cid}_fn = int (*)({params});",
             f"int resolve_{cid}({params});",
             f'[[gnu::used]] constinit std::atomic<{cid}_fn> next_{cid} asm("tremor_next_{cid}"){{&resolve_{cid}}};',
             f'[[gnu::used]] int record_{cid}({params}) asm("tremor_record_{cid}");',
             f"int resolve_{cid}({params}) {{",
             f'  const auto real = reinterpret_cast<{cid}_fn>(next_mpi_symbol("P{name}"));',
             "  if (!real) return MPI_ERR_INTERN;",
             f"  next_{cid}.store(real, std::memory_order_relaxed);",
             f"  return real({arglist});",
             "}",
             f"int record_{cid}({params}) {{",
             f"  const {cid}_fn real = next_{cid}.load(std::memory_order_relaxed);"]
    if kind == "type_free":
        # Before the recording check: a type freed inside a nested call (an
        # attribute delete callback) must not leave a stale size behind.
        lines.append("  forget_type_sizes();")
    lines += ["  ThreadState* const state = enter();",
             f"  if (!state) return real({arglist});"]
    lines += ["  " + b for b in before]
    lines += ["  const std::uint64_t start = ticks();"]
    if not boundary:
        lines.append("  refresh_if_stale(*state, start);")
    lines += [f"  const int rc = real({', '.join(pmpi_args)});",
              "  const std::uint64_t end = ticks();"]
    facts = feature_code(kind, rule)
    if facts:
        lines.append("  if (rc == MPI_SUCCESS) {")
        lines += ["    " + f for f in facts]
        lines.append("  }")
    if boundary:
        lines += ["  if (closes_segment && rc == MPI_SUCCESS) {",
                  "    leave_boundary(*state, start, end);",
                  f"    close_segment(CallId::{cid}, start, end, work_at_entry);",
                  "  } else {",
                  f"    {leave}(*state, start, end);",
                  "  }"]
    else:
        lines.append(f"  {leave}(*state, start, end);")
    lines += ["  return rc;", "}",
              f"TREMOR_FORWARDING_ENTRY({name}, tremor_record_{cid}, tremor_next_{cid})",
              f"TREMOR_FORWARDING_ENTRY(P{name}, tremor_record_{cid}, tremor_next_{cid})",
              ""]
    return "\n".join(lines)


def posix_wrapper(name, ret, params, kind, bytes_expr):
    args = ", ".join(arg_names(params))
    fn_type = f"{ret} (*)({params})"
    success = {"FILE *": "result != nullptr", "size_t": "true"}.get(ret, "result >= 0")
    facts = feature_code(kind, (bytes_expr, bytes_expr))
    # Only regular files count (posix_support.hpp): opens classify the new
    # descriptor; the others look up the one they use, closes before closing.
    if kind == "io_open":
        fd_after = "fileno(result)" if ret == "FILE *" else "result"
        before, counted = [], f"classify_opened({fd_after})"
    else:
        fd = "fileno(stream)" if "FILE *stream" in params else "fd"
        # Not a regular file (pipe, socket, event fd of an MPI progress
        # thread): forwarded untimed, it is not the application's file I/O.
        before = [f"const int descriptor = {fd};",
                  "if (!is_regular_file(descriptor)) {",
                  "  state->depth = 0;"]
        if kind == "io_close":
            before.append("  forget_descriptor(descriptor);")
        before += [f"  return real({args});", "}"]
        counted = "true"
    after = ["  forget_descriptor(descriptor);"] if kind == "io_close" else []
    return "\n".join([
        f'extern "C" TREMOR_EXPORT {ret} {name}({params}) {{',
        f'  static const auto real = reinterpret_cast<{fn_type}>(next_symbol("{name}"));',
        f"  if (!real) return missing_symbol<{ret}>();",
        "  ThreadState* const state = enter();",
        f"  if (!state) return real({args});",
        *["  " + b for b in before],
        "  const std::uint64_t start = ticks();",
        "  refresh_if_stale(*state, start);",
        f"  {ret} const result = real({args});",
        "  const std::uint64_t end = ticks();",
        "  const int result_errno = errno;",
        *after,
        f"  if ({success}{'' if counted == 'true' else ' && ' + counted}) {{",
        *["    " + f for f in facts],
        "  }",
        "  leave_io(*state, start, end);",
        "  errno = result_errno;  // the caller sees the real call's errno",
        "  return result;",
        "}",
        ""])


def forward_all_function():
    """forward_every_mpi_call(): points every next_X at the real PMPI_X, for the
    forwarding entries of a process that runs another MPI (mpi_library_check.cpp)."""
    lines = ["void forward_every_mpi_call() noexcept {"]
    for name, _, _, _ in MPI_CALLS:
        cid = call_id(name)
        lines.append(f'  next_{cid}.store(reinterpret_cast<{cid}_fn>(forwarding_target("P{name}")), '
                     "std::memory_order_relaxed);")
    return "\n".join(lines + ["}", ""])


GENERATED_NOTE = "// Generated by interpose/generate_wrappers.py from mpi_calls.py. Do not edit.\n"


def write_profiler(outdir):
    os.makedirs(outdir, exist_ok=True)
    names = SPECIAL + [c[0] for c in MPI_CALLS] + [p[0] for p in POSIX_CALLS] + [v[0] for v in POSIX_VARIADIC]
    with open(os.path.join(outdir, "call_ids.hpp"), "w") as out:
        out.write(GENERATED_NOTE)
        out.write("#pragma once\n#include <array>\n#include <cstdint>\n#include <string_view>\n\n")
        out.write("namespace tremor::interpose {\n\nenum class CallId : std::uint16_t {\n")
        out.write("".join(f"  {call_id(n)},\n" for n in names))
        out.write("};\n\ninline constexpr std::array<std::string_view, %d> kCallNames{\n" % len(names))
        out.write("".join(f'    "{n}",\n' for n in names))
        out.write("};\n\n}  // namespace tremor::interpose\n")
    with open(os.path.join(outdir, "mpi_wrappers.cpp"), "w") as out:
        out.write(GENERATED_NOTE)
        out.write('#include "wrapper_support.hpp"\n\nnamespace tremor::interpose {\n\n')
        for name, params, kind, rule in MPI_CALLS:
            out.write(mpi_wrapper(name, params, kind, rule) + "\n")
        out.write(forward_all_function())
        out.write("}  // namespace tremor::interpose\n")
    with open(os.path.join(outdir, "posix_wrappers.cpp"), "w") as out:
        out.write(GENERATED_NOTE)
        out.write('#include "posix_support.hpp"\n\nnamespace tremor::interpose {\n\n')
        for entry in POSIX_CALLS:
            out.write(posix_wrapper(*entry) + "\n")
        out.write("}  // namespace tremor::interpose\n")


def posix_failure(name, ret):
    """What an injector wrapper returns when the next definition is missing."""
    if ret == "FILE *":
        return "nullptr"
    if ret == "size_t":
        return "0"
    return "EOF" if name == "fclose" else "-1"


def write_injector(outdir):
    """X-macro lists expanded by injector/src/mpi_wrappers.cpp and posix_wrappers.cpp."""
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "mpi_calls.inc"), "w") as out:
        out.write(GENERATED_NOTE)
        out.write("// TREMOR_INJECT_MPI_CALL(family, name without MPI_, (parameters), (arguments))\n")
        for name, params, kind, _ in MPI_CALLS:
            family = injector_family(kind)
            if family:
                out.write(f"TREMOR_INJECT_MPI_CALL({family}, {name[4:]}, ({params}), ({', '.join(arg_names(params))}))\n")
    with open(os.path.join(outdir, "posix_calls.inc"), "w") as out:
        out.write(GENERATED_NOTE)
        out.write("// TREMOR_INJECT_POSIX_OPEN(name, (fixed parameters), (fixed arguments))\n")
        out.write("// TREMOR_INJECT_POSIX_CALL(return type, failure value, name, (parameters), (arguments))\n")
        for name, fixed in POSIX_VARIADIC:
            out.write(f"TREMOR_INJECT_POSIX_OPEN({name}, ({fixed}), ({', '.join(arg_names(fixed))}))\n")
        for name, ret, params, _, _ in POSIX_CALLS:
            out.write(f"TREMOR_INJECT_POSIX_CALL({ret}, {posix_failure(name, ret)}, {name}, ({params}), "
                      f"({', '.join(arg_names(params))}))\n")


NEVER = "\u2014"  # the injector never delays the call


def code(text):
    return f"`{text}`" if text else ""


def docs_text():
    lines = ["# Intercepted calls", "",
             "Generated from `interpose/mpi_calls.py` by `interpose/generate_wrappers.py`; do not edit by hand.",
             "", "Every call below is wrapped by the profiler (`libtremor-<flavour>.so`): *kind* says what a "
             "successful call adds to the segment's features, the byte columns how many bytes it counts. "
             "The injector (`libtremor-inject-<flavour>.so`) wraps the same table: *injector family* is the "
             f"`TREMOR_INJECT_CALLS` family under which it may delay the call; {NEVER} means never delayed.", "",
             "| call | kind | bytes sent | bytes received | injector family |", "|---|---|---|---|---|"]
    for name in SPECIAL:
        lines.append(f"| `{name}` | lifecycle | | | {NEVER} (starts / stops the injector) |")
    for name, _, kind, rule in MPI_CALLS:
        sent, received = rule if rule else ("", "")
        lines.append(f"| `{name}` | {kind} | {code(sent)} | {code(received)} | {injector_family(kind) or NEVER} |")
    for name, _, _, kind, expr in POSIX_CALLS:
        sent, received = (expr, "") if kind == "io_write" else ("", expr) if kind == "io_read" else ("", "")
        lines.append(f"| `{name}` (POSIX) | {kind} | {code(sent)} | {code(received)} | posix |")
    for name, _ in POSIX_VARIADIC:
        lines.append(f"| `{name}` (POSIX) | io_open | | | posix |")
    lines += ["", "Boundary kinds close a segment when the communicator's group is all of "
              "`MPI_COMM_WORLD` (intracommunicators only). The bytes of `io_*` kinds (MPI-IO and POSIX) count as "
              "`io_bytes_read` / `io_bytes_written`, all others as `bytes_sent` / `bytes_received`.", ""]
    return "\n".join(lines)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("profiler", "injector", "docs"):
        sys.exit(__doc__)
    what, target = sys.argv[1], sys.argv[2]
    if what == "profiler":
        write_profiler(target)
    elif what == "injector":
        write_injector(target)
    elif target == "-":
        sys.stdout.write(docs_text())
    else:
        with open(target, "w") as out:
            out.write(docs_text())


if __name__ == "__main__":
    main()
