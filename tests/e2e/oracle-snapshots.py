#!/usr/bin/env python3
"""(Re)generate the insta snapshots of the `// @oracle` e2e programs from Node.

Usage (from anywhere):
    tests/e2e/oracle-snapshots.py                 # every @oracle program
    tests/e2e/oracle-snapshots.py strings arrays  # only paths containing one of these
    tests/e2e/oracle-snapshots.py --check         # report differences, write nothing

For each program `tests/e2e/<area>/<name>.raya` (and `examples/<name>.raya`)
whose first line is `// @oracle`, runs `../shared/tools/js-oracle` from the
workspace root with the program's `// @args` and `// @env` directives, and
writes `<dir>/snapshots/<name>.snap` in exactly the layout insta writes for
crates/raya-cli/tests/e2e.rs (so insta accepts it unchanged):

    ---
    source: crates/raya-cli/tests/e2e.rs
    input_file: tests/e2e/<area>/<name>.raya
    ---
    exit: <code>
    --- stdout
    <stdout>--- stderr
    <stderr, trailing whitespace trimmed as insta does>

Keep this in sync with `snapshot_content` in crates/raya-cli/tests/e2e.rs.
"""

import concurrent.futures
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ORACLE = os.path.abspath(os.path.join(ROOT, "..", "shared", "tools", "js-oracle"))
SOURCE = "crates/raya-cli/tests/e2e.rs"
TIMEOUT = 60

# Rust's str::trim_end (Unicode White_Space), which insta applies to contents.
_RUST_WS = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B)) + \
    "\u2028\u2029\u202f\u205f\u3000"


def directives(src):
    d = {"oracle": False, "args": [], "env": {}}
    for i, line in enumerate(src.splitlines()):
        line = line.strip()
        if not line.startswith("//"):
            break
        words = line[2:].strip().split(None, 1)
        if not words:
            continue
        key, rest = words[0], (words[1].strip() if len(words) > 1 else "")
        if key == "@oracle" and i == 0:
            d["oracle"] = True
        elif key == "@args":
            d["args"].extend(rest.split())
        elif key == "@env":
            k, v = rest.split("=", 1)
            d["env"][k] = v
    return d


def programs(filters):
    found = []
    base = os.path.join(ROOT, "tests", "e2e")
    for area in sorted(os.listdir(base)):
        adir = os.path.join(base, area)
        if not os.path.isdir(adir) or area == "snapshots":
            continue
        for name in sorted(os.listdir(adir)):
            if name.endswith(".raya") and os.path.isfile(os.path.join(adir, name)):
                found.append(f"tests/e2e/{area}/{name}")
    ex = os.path.join(ROOT, "examples")
    if os.path.isdir(ex):
        for name in sorted(os.listdir(ex)):
            if name.endswith(".raya"):
                found.append(f"examples/{name}")
    out = []
    for rel in found:
        if filters and not any(f in rel for f in filters):
            continue
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            if directives(f.read())["oracle"]:
                out.append(rel)
    return out


def snapshot_text(rel, code, stdout, stderr):
    if stdout and not stdout.endswith("\n"):
        stdout += "\n\\ no newline at end of stdout\n"
    content = f"exit: {code}\n--- stdout\n{stdout}--- stderr\n{stderr}"
    content = content.rstrip(_RUST_WS).replace("\r\n", "\n")
    return f"---\nsource: {SOURCE}\ninput_file: {rel}\n---\n{content}\n"


def snap_path(rel):
    d, name = os.path.split(rel)
    return os.path.join(ROOT, d, "snapshots", name[: -len(".raya")] + ".snap")


def run_oracle(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        d = directives(f.read())
    env = dict(os.environ)
    env.update(d["env"])
    p = subprocess.run([ORACLE, rel, *d["args"]], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=TIMEOUT)
    code = str(p.returncode) if p.returncode >= 0 else f"signal {-p.returncode}"
    out = p.stdout.decode("utf-8", errors="replace")
    err = p.stderr.decode("utf-8", errors="replace")
    return rel, snapshot_text(rel, code, out, err)


def main(argv):
    check = "--check" in argv
    filters = [a for a in argv if a != "--check"]
    if not os.access(ORACLE, os.X_OK):
        sys.exit(f"js-oracle not found at {ORACLE}")
    todo = programs(filters)
    changed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        for rel, text in pool.map(run_oracle, todo):
            path = snap_path(rel)
            old = None
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    old = f.read()
            if old == text:
                continue
            changed += 1
            if check:
                print(f"differs: {rel}")
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            print(f"wrote {os.path.relpath(path, ROOT)}")
    verb = "differ" if check else "written"
    print(f"{len(todo)} @oracle programs, {changed} snapshots {verb}")
    return 1 if (check and changed) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
