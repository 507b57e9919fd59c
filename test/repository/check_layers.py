#!/usr/bin/python3
"""Fails on an include that goes against the layers of docs/design.md.

LAYERS below is the one table of which module may include which. Every
#include "..." of the modules' C and C++ sources (tests aside) that names a
file of the repository must name one of its own module or of a module it may
use; conditional includes count too (`__has_include` hides a dependency, so
it is an offence of its own). Inside the repository no two units (a header
and the source of the same name) may include each other, directly or
through others. No CMake file outside test/ may compile a test source.
docs/design.md holds the table as printed by --markdown, between the
GENERATED markers. Offences are printed as file:line.

    check_layers.py [ROOT]      (default: the repository holding this script)
    check_layers.py --markdown  the table for docs/design.md
    check_layers.py --self-test
"""

import argparse
import pathlib
import re
import sys
import tempfile

# (module, files it owns: path prefixes, longest match wins, modules it may include)
# in order from the top layer down.
LAYERS = [
    ("interpose", ["interpose/"],
     ["analysis", "statistics", "json-text", "segments", "config", "counters", "injector-interface"]),
    ("cli", ["estimators/cli/"],
     ["analysis", "fleet", "statistics", "json-text", "segments", "config", "injector-interface"]),
    ("fleet", ["estimators/fleet/"], []),
    ("analysis", ["estimators/analysis/"], ["statistics", "json-text", "segments", "config"]),
    ("injector", ["injector/"], ["injector-interface"]),
    ("statistics", ["estimators/statistics/"], []),
    ("json-text", ["estimators/json/"], []),
    ("segments", ["segments/"], ["counter-kind"]),
    ("config", ["config/"], []),
    ("counters", ["counters/"], ["counter-kind"]),
    ("injector-interface", ["injector/interface/"], []),
    ("counter-kind", ["counters/kind/"], []),
]
# Units whose source and header only share a name: src/primary/primary.cpp is
# the primary step (declared in primary/estimate.hpp), primary.hpp the type
# of its result.
OWN_UNITS = {"estimators/analysis/src/primary/primary.cpp": "analysis:primary step"}
SOURCES = (".cpp", ".hpp", ".h", ".c", ".cc", ".def", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
TEST_SOURCE = re.compile(r"\btest/[\w/.-]+\.(?:cpp|cc|c)\b")
BEGIN = "<!-- BEGIN GENERATED: test/repository/check_layers.py --markdown -->"
END = "<!-- END GENERATED -->"
DESIGN = pathlib.Path("docs/design.md")


def levels():
    """{module: height}: 0 for a module that uses none, else one above the highest it uses."""
    uses, height = {name: used for name, _, used in LAYERS}, {}

    def visit(name, path=()):
        if name not in height:
            known = [u for u in uses.get(name, []) if u in uses and u not in path]
            height[name] = 1 + max((visit(u, path + (name,)) for u in known), default=-1)
        return height[name]

    for name in uses:
        visit(name)
    return height


def markdown():
    lines = ["| module | folders | may include |", "|---|---|---|"]
    for name, prefixes, uses in LAYERS:
        lines.append(f"| {name} | {', '.join('`' + p + '`' for p in prefixes)} | {', '.join(uses) or '(none)'} |")
    # The picture is the same graph by height: every include points to a lower row.
    height = levels()
    lines += ["", "```"]
    for level in range(max(height.values()), -1, -1):
        lines.append(f"{level}  " + "   ".join(n for n, _, _ in LAYERS if height[n] == level))
    lines.append("```")
    return "\n".join(lines) + "\n"


def owner(relative):
    best = None
    for name, prefixes, _ in LAYERS:
        for prefix in prefixes:
            if (relative == prefix or relative.startswith(prefix)) and (best is None or len(prefix) > best[1]):
                best = (name, len(prefix))
    return best[0] if best else None


def table_offences(root):
    found, names = [], [name for name, _, _ in LAYERS]
    for index, (name, prefixes, uses) in enumerate(LAYERS):
        for prefix in prefixes:
            if not (root / prefix).exists():
                found.append(f"check_layers.py: module {name} names {prefix}, which does not exist")
        for used in uses:
            if used not in names:
                found.append(f"check_layers.py: module {name} may use {used}, which is not a module")
            elif names.index(used) <= index:
                found.append(f"check_layers.py: module {name} may use {used}, listed above it (a cycle)")
    return found


def sources(root):
    files = set()
    for _, prefixes, _ in LAYERS:
        for prefix in prefixes:
            path = root / prefix
            candidates = [path] if path.is_file() else path.rglob("*") if path.is_dir() else []
            files.update(p for p in candidates if p.is_file() and p.suffix in SOURCES)
    return sorted(files)


def include_roots(root):
    return sorted(p for p in root.glob("*/**/include") if p.is_dir() and "test" not in p.relative_to(root).parts
                  and not p.relative_to(root).parts[0].startswith("build"))


def resolve(root, roots, includer, name):
    for base in [includer.parent] + roots:
        path = (base / name).resolve()
        if path.is_file() and path.is_relative_to(root.resolve()):
            return path
    return None


def include_offences(root):
    found, edges, roots = [], {}, include_roots(root)
    allowed = {name: set(uses) | {name} for name, _, uses in LAYERS}
    for path in sources(root):
        relative = path.relative_to(root).as_posix()
        module = owner(relative)
        text = path.read_text(errors="replace").splitlines()
        for number, line in enumerate(text, 1):
            if "__has_include" in line.split("//")[0]:
                found.append(f"{relative}:{number}: __has_include hides a dependency; link a CMake target instead")
            match = INCLUDE.match(line)
            if not match:
                continue
            target = resolve(root, roots, path, match.group(1))
            if target is None:
                continue  # generated in the build tree, or a system header
            target_relative = target.relative_to(root.resolve()).as_posix()
            target_module = owner(target_relative)
            if target_module is None:
                found.append(f"{relative}:{number}: includes {target_relative}, which no module of the table owns")
            elif target_module not in allowed[module]:
                found.append(f"{relative}:{number}: {module} includes {target_relative} of {target_module}, "
                             f"which it may not use (docs/design.md#layers)")
            if target_module is not None:
                edges.setdefault(unit(module, relative), set()).add(unit(target_module, target_relative))
    return found + cycle_offences(edges)


def unit(module, relative):
    """A module's header and source of the same name (include/ and src/) are one unit."""
    if relative in OWN_UNITS:
        return OWN_UNITS[relative]
    return module + ":" + re.sub(r"\.(cpp|hpp|h|c|cc)$", "", relative.rsplit("/", 1)[-1])


def cycle_offences(edges):
    state, stack, found = {}, [], []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for following in sorted(edges.get(node, ())):
            if following == node:
                continue
            if state.get(following) == "open":
                cycle = stack[stack.index(following):] + [following]
                found.append("include cycle: " + " -> ".join(cycle))
            elif following not in state:
                visit(following)
        stack.pop()
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node)
    return found


def cmake_offences(root):
    found = []
    for path in sorted(root.rglob("CMakeLists.txt")):
        relative = path.relative_to(root)
        if relative.parts[0] == "test" or relative.parts[0].startswith("build"):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = TEST_SOURCE.search(line.split("#")[0])
            if match:
                found.append(f"{relative.as_posix()}:{number}: compiles the test source {match.group(0)}")
    return found


def design_offences(root):
    path = root / DESIGN
    text = path.read_text() if path.is_file() else ""
    if BEGIN not in text or END not in text[text.find(BEGIN):]:
        return [f"{DESIGN}: lacks the region {BEGIN} ... {END}"]
    start = text.index(BEGIN) + len(BEGIN) + 1
    region = text[start:text.index(END, start)]
    if region != markdown():
        return [f"{DESIGN}: the layer table differs from check_layers.py --markdown; paste its output "
                "between the markers"]
    return []


def unowned_offences(root):
    """A source in a module's top folder that no module owns (a file left beside the layers,
    such as estimators/x.cpp) would escape the include check."""
    tops = sorted({prefix.split("/", 1)[0] for _, prefixes, _ in LAYERS for prefix in prefixes})
    found = []
    for top in tops:
        for path in sorted((root / top).rglob("*")):
            relative = path.relative_to(root).as_posix()
            if path.is_file() and path.suffix in SOURCES and owner(relative) is None:
                found.append(f"{relative}: in no module of the table; move it into one (docs/design.md#layers)")
    return found


def offences(root):
    return (table_offences(root) + unowned_offences(root) + include_offences(root) + cmake_offences(root)
            + design_offences(root))


def self_test():
    def write(root, relative, text):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)

    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        for _, prefixes, _ in LAYERS:
            for prefix in prefixes:
                if prefix.endswith("/"):
                    (root / prefix).mkdir(parents=True, exist_ok=True)
                else:
                    write(root, prefix, "\n")
        write(root, DESIGN, f"# Layers\n{BEGIN}\n{markdown()}{END}\n")
        write(root, "injector/include/tremor/inject_config.hpp", '#include "tremor/inject_settings.hpp"\n')
        write(root, "injector/interface/include/tremor/inject_settings.hpp", "int table;\n")
        write(root, "estimators/analysis/include/tremor/analysis/a.hpp", '#include "tremor/analysis/b.hpp"\n')
        write(root, "estimators/analysis/include/tremor/analysis/b.hpp", "struct B {};\n")
        write(root, "estimators/analysis/src/b.cpp", '#include "tremor/analysis/b.hpp"\n')
        write(root, "estimators/cli/cli_config.cpp", '#include "tremor/inject_settings.hpp"\n')
        write(root, "segments/include/tremor/environment.hpp", "struct RunEnvironment {};\n")
        write(root, "segments/include/tremor/run_data.hpp", '#include "tremor/environment.hpp"\n')
        write(root, "segments/src/environment.cpp", '#include "tremor/environment.hpp"\n')
        write(root, "estimators/CMakeLists.txt", "add_executable(tremor cli/main.cpp)  # not test/x.cpp\n")
        if offences(root):
            return "a clean tree was flagged: " + str(offences(root))
        plants = [
            ("estimators/cli/cli_config.cpp", '#include "tremor/inject_config.hpp"\n',
             "estimators/cli/cli_config.cpp:1: cli includes injector/include/tremor/inject_config.hpp of injector, "
             "which it may not use (docs/design.md#layers)"),
            ("estimators/cli/cli_config.cpp", '#if __has_include("x.hpp")\n#endif\n',
             "estimators/cli/cli_config.cpp:1: __has_include hides a dependency; link a CMake target instead"),
            ("estimators/analysis/src/b.cpp", '#include "tremor/analysis/a.hpp"\n',
             "include cycle: analysis:a -> analysis:b -> analysis:a"),
            # A source reading a type of a unit whose header includes the source's own (the
            # environment / run_data case): no list of tolerated cycles lets it through.
            ("segments/src/environment.cpp", '#include "tremor/environment.hpp"\n#include "tremor/run_data.hpp"\n',
             "include cycle: segments:environment -> segments:run_data -> segments:environment"),
            ("estimators/loose.hpp", "int loose;\n",
             "estimators/loose.hpp: in no module of the table; move it into one (docs/design.md#layers)"),
            ("estimators/CMakeLists.txt", "add_executable(bench b.cpp ${CMAKE_SOURCE_DIR}/test/analysis/s.cpp)\n",
             "estimators/CMakeLists.txt:1: compiles the test source test/analysis/s.cpp"),
            (str(DESIGN), f"{BEGIN}\n| old | table |\n{END}\n",
             f"{DESIGN}: the layer table differs from check_layers.py --markdown; paste its output between the markers"),
        ]
        for relative, text, expected in plants:
            before = (root / relative).read_text() if (root / relative).exists() else None
            write(root, relative, text)
            if offences(root) != [expected]:
                return f"planting {text!r} in {relative} gave {offences(root)}, not [{expected!r}]"
            if before is None:
                (root / relative).unlink()
            else:
                write(root, relative, before)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root", nargs="?", default=pathlib.Path(__file__).resolve().parents[2])
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--self-test", action="store_true")
    opts = parser.parse_args()
    if opts.markdown:
        print(markdown(), end="")
        return 0
    if opts.self_test:
        failure = self_test()
        print(failure or "self-test passed")
        return 1 if failure else 0
    found = offences(pathlib.Path(opts.root))
    print("\n".join(found) if found else "every include follows the layers of docs/design.md")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
