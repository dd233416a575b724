#!/usr/bin/env bash
# The README's commands must not rot: the `readme` stage of scripts/test-all.sh.
#
# Commands are the lines of the README's ```sh blocks (a trailing backslash continues a line,
# `#` starts a comment; `a && b` counts as two commands). Code that is not a command goes in
# ```text, ```c or ```cmake blocks; ```bash, ```console, ```shell and unmarked blocks are refused,
# so that no command hides from this check. Each command must be one of:
#
#   found   written in a file the test command runs: .ci/run, scripts/test-all.sh, the scripts
#           those two name, ctest/CMakeLists.txt, tests/*.rs (comment lines skipped, whitespace
#           normalised);
#   static  a GPU-host or long benchmark command (the LONG table below): the script or program it
#           names exists and knows every --option and leading word the README gives it;
#   run     anything else is run here, in README order, against a throwaway install. `/opt/hyblas`
#           and `$PREFIX` mean a fresh prefix in a temporary directory. Two placeholders are
#           provided: ./my_program (ctest/dropin.c linked with the system -lblas and run as
#           `--expect hyblas`: it fails unless hyblas answers its BLAS calls) and app.c (a CBLAS
#           program that prints hyblas_version; a command that builds `app` runs it too). A
#           command with HYBLAS_TRACE=stderr must print trace lines. `sudo update-alternatives`
#           runs as `update-alternatives --root <temporary root>`, and each `--set` is checked
#           to have taken; any other sudo is refused. Commands that start with scripts/,
#           ./target/ or cargo run in the repository, the others in a scratch directory. A
#           ```cmake block is built into a project with an executable `app` from app.c, and run.
#
# Also: every repository path the README names exists (scripts/..., docs/..., bench/results/...,
# relative links too); every HYBLAS_* variable in the README and docs/configuration.md is read by
# the code (src/, helper/, build.rs, bench/, scripts/); every `hyblas SUBCOMMAND --option` the
# README names in inline code is one src/bin/hyblas.rs knows.
#
# Usage: scripts/check-readme.sh [--no-run] [-v] [README]   (default: README.md of this
#        repository; --no-run: the static checks only, the commands to run are listed; -v: the
#        last lines of each run command's output). Exits 1 naming each offending README line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT
exec python3 - "$@" <<'PYTHON'
import glob, os, re, shlex, shutil, subprocess, sys, tempfile, time

ROOT = os.environ["ROOT"]
SELF = os.path.join(ROOT, "scripts", "check-readme.sh")
args = sys.argv[1:]
RUN = "--no-run" not in args
VERBOSE = "-v" in args
args = [a for a in args if a not in ("--no-run", "-v")]
README = os.path.abspath(args[0]) if args else os.path.join(ROOT, "README.md")
NAME = os.path.relpath(README, ROOT) if README.startswith(ROOT + "/") else README
text = open(README, encoding="utf-8").read()
lines = text.split("\n")
failures = []

def fail(lineno, what, why):
    failures.append(f"{NAME}:{lineno}: {what}\n    {why}")

def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()

# GPU-host and long benchmark commands: checked against their source, not run (regex on the
# script or binary, why it is not run here).
LONG = [
    (r"scripts/gpu-[\w-]+\.sh", "runs on a GPU host"),
    (r"scripts/offload-compare\.sh", "runs on a GPU host"),
    (r"scripts/cpu-peers\.sh", "downloads about 0.3 GB of peer BLAS libraries"),
    (r"(\./)?target/release/blasbench", "a benchmark of minutes"),
    (r"(\./)?target/release/ozakibench", "a benchmark of minutes (and it rewrites bench/results/)"),
    (r"(\./)?(target/release|gpu-stage)/(gpubench|offloadbench|ozakigpubench)", "runs on a GPU host"),
]

# ---------------------------------------------------------------------------------------------
# The README's fenced blocks: sh commands (with their first line number) and cmake blocks.

def strip_comment(line):
    """The line without an unquoted `#` comment (one at the start or after a blank)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line

commands, cmake_blocks = [], []   # (line number, text); (line number, [lines])
i = 0
while i < len(lines):
    m = re.match(r"^(\s*)```(.*)$", lines[i])
    if not m:
        i += 1
        continue
    lang, start, body = m.group(2).strip(), i + 1, []
    i += 1
    while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
        body.append((i + 1, lines[i]))
        i += 1
    i += 1
    if lang in ("", "bash", "console", "shell", "shell-session", "zsh"):
        fail(start, f"```{lang}", "commands go in ```sh blocks, other code in ```text, ```c, ```cmake, ...")
    elif lang == "sh":
        pending, first = "", None
        for n, raw in body:
            part = strip_comment(raw).rstrip()
            if not part.strip() and not pending:
                continue
            first = first or n
            if part.endswith("\\"):
                pending += part[:-1] + " "
                continue
            cmd = " ".join((pending + part).split())
            pending = ""
            for piece in cmd.split(" && "):
                if piece.strip():
                    commands.append((first, piece.strip()))
            first = None
    elif lang == "cmake":
        cmake_blocks.append((start, [strip_comment(l).rstrip() for _, l in body if strip_comment(l).strip()]))

# ---------------------------------------------------------------------------------------------
# Where a command may be found: the files that run things, comment lines left out.

def code_lines(path):
    return [l for l in read(path).split("\n") if not re.match(r"^\s*(#|//)", l)]

def runner_text():
    """The files CI runs: .ci/run, scripts/test-all.sh, the scripts they name, the CTest
    project and the Rust tests; each as one whitespace-normalised string without comments."""
    files = [f"{ROOT}/.ci/run", f"{ROOT}/scripts/test-all.sh"]
    for f in list(files):
        files += [f"{ROOT}/{s}" for s in re.findall(r"scripts/[\w.-]+\.(?:sh|py)", "\n".join(code_lines(f)))]
    files += [f"{ROOT}/ctest/CMakeLists.txt"] + glob.glob(f"{ROOT}/tests/*.rs")
    out = {}
    for f in sorted(set(files)):
        if os.path.abspath(f) == SELF or not os.path.isfile(f):
            continue
        out[os.path.relpath(f, ROOT)] = " ".join(" ".join(code_lines(f)).split())
    return out

RUNNERS = runner_text()

def found_in(cmd):
    pat = re.compile(r"(?<![\w/.$-])" + re.escape(cmd) + r"(?![\w/.-])")
    return [f for f, t in RUNNERS.items() if pat.search(t)]

def words_of(cmd):
    try:
        w = shlex.split(cmd)
    except ValueError:
        w = cmd.split()
    while w and re.match(r"^[A-Za-z_]\w*=", w[0]):   # leading VAR=value
        w = w[1:]
    return w

def bin_source(name):
    """Cargo.toml's [[bin]] path for a binary name."""
    cargo = read(f"{ROOT}/Cargo.toml")
    for m in re.finditer(r'\[\[bin\]\]\s*name\s*=\s*"([^"]+)"\s*path\s*=\s*"([^"]+)"', cargo):
        if m.group(1) == name:
            return m.group(2)
    return None

def static_check(w):
    """A LONG command: its script or program exists and knows each option and leading word."""
    prog, rest = (w[1], w[2:]) if w[0] in ("bash", "sh", "python3") and len(w) > 1 else (w[0], w[1:])
    prog = prog[2:] if prog.startswith("./") else prog
    if prog.startswith(("target/release/", "gpu-stage/")):
        src = bin_source(os.path.basename(prog))
        if not src:
            return f"{os.path.basename(prog)} is not a [[bin]] of Cargo.toml"
    else:
        src = prog
    if not os.path.isfile(os.path.join(ROOT, src)):
        return f"{src} does not exist"
    body = read(os.path.join(ROOT, src))
    leading = True
    for a in rest:
        if a.startswith("--"):
            leading = False
            opt = a.split("=")[0]
            if not re.search(re.escape(opt) + r"(?![\w-])", body):
                return f"{src} has no option {opt}"
        elif leading and re.fullmatch(r"[a-z][\w-]*", a) and not re.search(r"\b" + re.escape(a) + r"\b", body):
            return f"{src} knows no `{a}`"
    return None

to_run = []
for lineno, cmd in commands:
    w = words_of(cmd)
    if not w:
        continue
    target = w[1] if w[0] in ("bash", "sh", "python3") and len(w) > 1 else w[0]
    long_why = next((why for pat, why in LONG if re.fullmatch(pat, target)), None)
    if long_why:
        err = static_check(w)
        if err:
            fail(lineno, cmd, err)
        else:
            print(f"static {NAME}:{lineno}: {cmd}\n       ({long_why}; its options are the script's or program's)")
        continue
    where = found_in(cmd)
    if where:
        print(f"found  {NAME}:{lineno}: {cmd}\n       (in {', '.join(where[:3])})")
        continue
    to_run.append((lineno, cmd))

# ---------------------------------------------------------------------------------------------
# Paths, links, variables, hyblas subcommands.

TOP = r"(?:scripts|docs|bench|src|ctest|tests|kernels|include|cmake|helper|lab|examples|\.ci)"
for n, line in enumerate(lines, 1):
    for m in re.finditer(r"(?<![\w/$.~-])(" + TOP + r"/[\w./{},*?-]*)", line):
        p = m.group(1).rstrip(".,:;")
        alts = [p]
        b = re.search(r"\{([^}]*)\}", p)
        if b:
            alts = [p[:b.start()] + x + p[b.end():] for x in b.group(1).split(",")]
        for a in alts:
            if not glob.glob(os.path.join(ROOT, a)):
                fail(n, a, "no such path in the repository")
    for m in re.finditer(r"\]\(([^)#\s]+)(#[^)]*)?\)", line):
        target = m.group(1)
        if not re.match(r"^[a-z]+:", target) and not os.path.exists(os.path.join(ROOT, target)):
            fail(n, f"link {target}", "no such file")

CODE_DIRS = ["src", "helper", "bench", "scripts"]
code = []
for d in CODE_DIRS:
    for f in glob.glob(f"{ROOT}/{d}/**/*", recursive=True):
        if os.path.isfile(f) and os.path.abspath(f) != SELF and not f.startswith(f"{ROOT}/bench/results/"):
            code.append(read(f))
code.append(read(f"{ROOT}/build.rs"))
code = "\n".join(code)
known = {}
for doc in [README, os.path.join(ROOT, "docs", "configuration.md")]:
    if not os.path.isfile(doc):
        continue
    docname = NAME if doc == README else os.path.relpath(doc, ROOT)
    for n, line in enumerate(read(doc).split("\n"), 1):
        for var in sorted(set(re.findall(r"\bHYBLAS_[A-Z0-9_]*[A-Z0-9]", line))):
            if var not in known:
                known[var] = re.search(re.escape(var) + r"(?![A-Z0-9_])", code) is not None
            if not known[var]:
                failures.append(f"{docname}:{n}: {var}\n    no file under {', '.join(CODE_DIRS)} (or build.rs) reads it")

cli = read(f"{ROOT}/src/bin/hyblas.rs")
for n, line in enumerate(lines, 1):
    for m in re.finditer(r"`hyblas ([^`]+)`", line):
        for a in m.group(1).split():
            if a.startswith("--"):
                a = a.split("=")[0]
            elif not re.fullmatch(r"[a-z]+", a):
                continue
            if f'"{a}"' not in cli:
                fail(n, f"hyblas {m.group(1)}", f"src/bin/hyblas.rs knows no `{a}`")

# ---------------------------------------------------------------------------------------------
# Run what is left, in README order, against a throwaway install.

APP_C = r"""#include <stdio.h>
#include <cblas.h>
#include <hyblas.h>
int main(void) {
    double a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {0, 0, 0, 0};
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0, a, 2, b, 2, 0.0, c, 2);
    for (int i = 0; i < 4; i++)
        if (c[i] != a[i]) { printf("app: wrong result\n"); return 1; }
    printf("app: cblas_dgemm correct, on hyblas %s\n", hyblas_version());
    return 0;
}
"""

def sh(cmd, cwd, env, timeout=900):
    t0 = time.time()
    p = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout, time.time() - t0

def tail(out, k=25):
    return "\n".join("      | " + l for l in out.rstrip().split("\n")[-k:])

if to_run and not RUN:
    for lineno, cmd in to_run:
        print(f"skip   {NAME}:{lineno}: {cmd}\n       (--no-run)")
elif to_run or cmake_blocks:
    tmp = tempfile.mkdtemp(prefix="hyblas-readme-")
    try:
        prefix, work, fsroot = f"{tmp}/opt/hyblas", f"{tmp}/work", f"{tmp}/root"
        os.makedirs(work)
        # update-alternatives --root sees the prefix at the same path inside its root.
        os.makedirs(os.path.dirname(fsroot + prefix), exist_ok=True)
        os.symlink(prefix, fsroot + prefix)
        for d in ("etc/alternatives", "var/lib/dpkg/alternatives", "var/log", "usr/lib/x86_64-linux-gnu",
                  "usr/include/x86_64-linux-gnu"):
            os.makedirs(f"{fsroot}/{d}", exist_ok=True)
        env = dict(os.environ, PREFIX=prefix, HYBLAS_CACHE_DIR=f"{tmp}/cache", HYBLAS_NO_COMPILE="1")
        env.pop("LD_PRELOAD", None)
        env.pop("LD_LIBRARY_PATH", None)
        open(f"{work}/app.c", "w").write(APP_C)
        rc, out, _ = sh(f"cc -std=c11 -O1 -I'{ROOT}/include' -I'{ROOT}/ctest' '{ROOT}/ctest/dropin.c' "
                        f"-o dropin -lblas -ldl -lm", work, env)
        if rc != 0:
            failures.append(f"(setup) ./my_program: ctest/dropin.c does not build against the system "
                            f"-lblas (Debian: libblas-dev)\n{tail(out)}")
        with open(f"{work}/my_program", "w") as f:
            f.write('#!/bin/sh\nexec "$(dirname "$0")/dropin" --expect hyblas\n')
        os.chmod(f"{work}/my_program", 0o755)

        steps = [(n, "sh", c) for n, c in to_run] + [(n, "cmake", b) for n, b in cmake_blocks]
        for lineno, kind, what in sorted(steps, key=lambda s: s[0]):
            if kind == "cmake":
                proj = f"{tmp}/cmake"
                os.makedirs(proj, exist_ok=True)
                shutil.copy(f"{work}/app.c", proj)
                with open(f"{proj}/CMakeLists.txt", "w") as f:
                    f.write("cmake_minimum_required(VERSION 3.16)\nproject(app C)\nadd_executable(app app.c)\n")
                    f.write("\n".join(what) + "\n")
                cmd = (f"cmake -S . -B build -DCMAKE_PREFIX_PATH='{prefix}' >/dev/null && "
                       f"cmake --build build >/dev/null && ./build/app")
                label = "```cmake block: " + " / ".join(what)
                rc, out, dt = sh(cmd, proj, env)
            else:
                label = what
                cmd = what.replace("/opt/hyblas", prefix)
                if cmd.startswith("sudo "):
                    if not cmd.startswith("sudo update-alternatives "):
                        fail(lineno, what, "a sudo command other than update-alternatives is not run here")
                        continue
                    cmd = f"update-alternatives --root '{fsroot}' " + cmd[len("sudo update-alternatives "):]
                if cmd.startswith("update-alternatives ") and not shutil.which("update-alternatives"):
                    print(f"skip   {NAME}:{lineno}: {what}\n       (no update-alternatives on this machine)")
                    continue
                first = words_of(what)[0]
                in_repo = first == "cargo" or first.startswith(("scripts/", "./target/", "target/"))
                rc, out, dt = sh(cmd, ROOT if in_repo else work, env)
                if rc == 0 and "HYBLAS_TRACE=stderr" in cmd and not re.search(r"hyblas: \w+ .*engine=", out):
                    rc, out = 1, out + "\n(HYBLAS_TRACE=stderr printed no trace line)"
                m = re.search(r"--set (\S+) (\S+)", cmd)
                if rc == 0 and m:
                    q = subprocess.run(["bash", "-c", f"update-alternatives --root '{fsroot}' --query {m.group(1)}"],
                                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                    want = os.path.expandvars(m.group(2).replace("$PREFIX", prefix))
                    if f"\nValue: {want}\n" not in "\n" + q.stdout:
                        rc, out = 1, out + q.stdout + f"\n(the alternative's value is not {want})"
                if rc == 0 and re.search(r"(^|\s)-o app(\s|$)", cmd) and os.path.isfile(f"{work}/app"):
                    rc2, out2, _ = sh("./app", work, env)
                    rc, out = rc2, out + out2
            if rc == 0:
                print(f"run    {NAME}:{lineno}: {label}\n       ok in {dt:.1f} s")
                if VERBOSE and out.strip():
                    print(tail(out, 6))
            else:
                fail(lineno, label, f"exit {rc} when run here:\n{tail(out)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

def where(f):   # sort by file, then line
    name, _, rest = f.partition(":")
    return (name != NAME, name, int(rest.split(":")[0]) if rest[:1].isdigit() else 0)

if failures:
    sys.stdout.flush()
    print(f"\ncheck-readme: {len(failures)} problem(s) in {NAME}:", file=sys.stderr)
    for f in sorted(failures, key=where):
        print("  " + f, file=sys.stderr)
    sys.exit(1)
print(f"\ncheck-readme: {NAME}: {len(commands)} commands and {len(cmake_blocks)} cmake block(s) checked; "
      f"every path, variable and hyblas option it names exists")
PYTHON
