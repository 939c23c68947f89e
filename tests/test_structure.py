# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The structure limits of the C sources: no file over 800 lines, no function over 80, no .c
included, at most 12 sources directly in user/lib (the rest in a folder per concern), and no
library file named like a command; and of the BPF programs: the verifier's work on each."""
import re
import shutil
import subprocess
import tempfile

import pytest

from conftest import ROOT

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
MAX_LIB_TOP_SOURCES = 12
# Instructions the verifier may process for one program: what each load costs a replay's start
# (docs/performance.md); the kernel's limit is 1M.
MAX_PROCESSED = 150_000


def c_sources():
    """Every tracked C source and header of the project (not vmlinux.h, which is generated)."""
    out = subprocess.run(["git", "ls-files", "*.c", "*.h"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split()
    return [ROOT / p for p in out if p != "vmlinux.h"]


def code_only(text):
    """The text with comments, string and character literals and preprocessor lines blanked,
    newlines kept, so that braces count and line numbers stay."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'",
                  lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text,
                  flags=re.M)


def functions(text):
    """(name, first line, lines) of each function definition: at file scope, a '{' after a
    parenthesised parameter list with no '=' before it; counted from the line its declaration
    starts on to its closing brace."""
    code = code_only(text)
    depth, head, start, name, found = 0, "", 0, None, []
    for pos, ch in enumerate(code):
        if depth == 0 and ch not in "{};":
            if not head.strip() and not ch.isspace():
                start = code.count("\n", 0, pos) + 1
            head += ch
        if ch == "{":
            if depth == 0:
                m = re.search(r"(\w+)\s*\([^;]*\)\s*(?:__attribute__\s*\(\(.*\)\)\s*)?$", head, re.S)
                name = m.group(1) if m and "=" not in head else None
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if name:
                    found.append((name, start, code.count("\n", 0, pos) + 1 - start + 1))
                head, name = "", None
        elif ch == ";" and depth == 0:
            head = ""
    return found


def test_no_file_over_the_limit():
    long = [f"{p.relative_to(ROOT)}: {n}" for p in c_sources()
            if (n := p.read_text().count("\n")) > MAX_FILE_LINES]
    assert not long, f"over {MAX_FILE_LINES} lines: {long}"


def test_no_function_over_the_limit():
    long = [f"{p.relative_to(ROOT)}:{line} {name}(): {n}" for p in c_sources()
            for name, line, n in functions(p.read_text()) if n > MAX_FUNCTION_LINES]
    assert not long, f"over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_scan_finds_functions():
    """The scan sees a function whatever its signature's shape, and nothing that only looks like one."""
    text = ("static const struct x t[] = {\n\t{ f(1) },\n};\n"
            "#define M(a) { a }\n"
            "static __always_inline int\nsplit(int a,\n      int b)\n{\n\tif (a) {\n\t\treturn \"}\";\n\t}\n"
            "\treturn b;\n}\n"
            "struct s {\n\tint a;\n};\n"
            "void g(void) __attribute__((cold))\n{\n}\n")
    assert functions(text) == [("split", 5, 9), ("g", 17, 3)]


def test_no_c_file_included():
    included = [f"{p.relative_to(ROOT)}: {m}" for p in c_sources()
                for m in re.findall(r'^\s*#\s*include\s*[<"]([^>"]+\.c)[>"]', p.read_text(), re.M)]
    assert not included


def test_library_grouped_by_concern():
    top = sorted(p.name for p in (ROOT / "user" / "lib").glob("*.c"))
    assert len(top) <= MAX_LIB_TOP_SOURCES, top


def test_no_library_file_named_like_a_command():
    """lib/config.c was the daemon's configuration file, not the config command: no more."""
    commands = {p.stem for p in (ROOT / "user" / "cmd").glob("*.c")}
    lib = {p.stem for p in (ROOT / "user" / "lib").rglob("*.[ch]")}
    assert not commands & lib


@pytest.mark.parametrize("folder", ["live", "replay", "gen", "report", "daemon", "feed"])
def test_each_folder_has_one_header_for_the_others(folder):
    """Outside a library folder, a file includes that folder's header, not the files behind it."""
    face = {"live": {"live.h", "loader.h"}, "replay": {"offline.h"}, "gen": {"generator.h"},
            "report": {"report.h"}, "daemon": {"service.h"}, "feed": {"feeder.h"}}[folder]
    inside = ROOT / "user" / "lib" / folder
    wrong = []
    for p in c_sources():
        if p.parent == inside:
            continue
        for h in re.findall(rf'^\s*#\s*include\s*"{folder}/([^"]+)"', p.read_text(), re.M):
            if h not in face:
                wrong.append(f"{p.relative_to(ROOT)}: {folder}/{h}")
    assert not wrong


def test_each_program_verifies_within_its_budget():
    """Every program the object loads (bpftool loadall: all but the device-bound one) passes the
    verifier, each within MAX_PROCESSED instructions."""
    if not shutil.which("bpftool"):
        pytest.skip("bpftool is not installed")
    progs, counts, failed = [], [], []
    with tempfile.TemporaryDirectory(dir="/sys/fs/bpf", prefix="roceval-test-verifier-") as pins:
        # -d: the verifier's logs, every instruction of them (hundreds of MB): read as they come.
        # Pinning stops at the device-bound program, not loaded; the logs have the rest.
        with subprocess.Popen(["bpftool", "-d", "prog", "loadall", ROOT / ".output" / "roceval_plain.bpf.o",
                               f"{pins}/p"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, errors="replace") as proc:
            for line in proc.stderr:
                if m := re.match(r"libbpf: prog '(\w+)': -- BEGIN PROG LOAD LOG --", line):
                    progs.append(m.group(1))
                elif m := re.match(r"processed (\d+) insns", line):
                    counts.append(int(m.group(1)))
                elif "failed to load object" in line or "Too large" in line:
                    failed.append(line.strip())
    assert not failed, failed
    assert sorted(progs) == ["roceval_replay", "roceval_replay_end", "roceval_tc", "roceval_xdp"], progs
    assert len(counts) == len(progs)
    over = {p: n for p, n in zip(progs, counts) if n > MAX_PROCESSED}
    assert not over, over
