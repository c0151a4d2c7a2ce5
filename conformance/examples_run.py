#!/usr/bin/env python3
"""Run the reference TileLang's example scripts (the kit's examples/) with compilation for each folder's
architecture and count the kernel builds that reach a binary; compare with the reference TileLang's count.

    python conformance/examples_run.py --python .venv/bin/python [--only gemm,flash_attention] [--out DIR]
        [--compare conformance/examples_reference.json] [--floor conformance/examples_floor.txt]
        [--save results.json] [--timeout 600] [--jobs 1] [--subset conformance/examples_ci.txt]

- Every ``*.py`` of the tree that has an ``if __name__ == "__main__":`` block, except tests and what the tree's
  pytest.ini leaves out, runs in its own process under `examples_shim.py` (a simulated GPU of the folder's
  architecture, device tensors as meta tensors, stop at the first launch; its docstring says what counts as a
  build and as reaching a binary) from a temporary copy of the tree.
- Counts are of distinct kernels: a build whose name and device-source digest (the shim's ``source``) repeat an
  earlier build of the same script is the same kernel built again (the reference's JIT compiles a kernel anew
  for a call after `get_kernel_source`) and is not counted again; a build without a digest always counts.
- ARCHS maps scripts to architectures: sm_90a unless a folder or file name says otherwise.
- --save FILE writes every script's builds (the reference side is stored this way: `nox -s examples -- --reference`).
- --compare FILE prints the per-folder table of this run next to FILE's; --floor FILE: build ids
  (``folder/script.py::kernel``) that must reach a binary, exit status 1 when one does not (a ratchet for CI).
- --cpu runs the examples' own tests instead, moved to the CPU (`examples_cpu.py`); with --webgpu their kernels run
  on WebGPU (wgpu, Mesa's lavapipe without a GPU).
- --subset FILE runs only the scripts listed there (one path a line, relative to the tree), e.g. CI's fast subset.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
SHIM = os.path.join(HERE, "examples_shim.py")
DEFAULT_KIT = os.path.abspath(os.environ.get("TILELANG_CONFORMANCE_DIR")
                              or os.path.join(HERE, "..", "..", "shared", "conformance"))

# (glob on the script's path in the tree, architecture); the first match wins, sm_90a otherwise
ARCHS = (
    ("amd/*", "gfx942"),
    ("*gfx950*", "gfx950"),
    ("*_amd*.py", "gfx942"),
    ("*cdna4*", "gfx950"),
    ("*cdna3*", "gfx942"),
    ("gemm_sm120/*", "sm_120"),
    ("*sm120*", "sm_120"),
    ("blockscaled_gemm_sm100/*", "sm_100a"),
    ("flash_attention_sm100/*", "sm_100a"),
    ("gemm_tcgen05/*", "sm_100a"),
    ("*sm100*", "sm_100a"),
    ("*", "sm_90a"),
)
MAIN = re.compile(r"^if __name__ == ['\"]__main__['\"]\s*:", re.MULTILINE)


def arch_of(rel: str) -> str:
    return next(arch for pattern, arch in ARCHS if fnmatch.fnmatch(rel, pattern))


def discover(tree: str) -> list[str]:
    """Example scripts of `tree` (relative paths, sorted)."""
    skip_dirs = set()
    ini = os.path.join(tree, "pytest.ini")
    if os.path.isfile(ini):
        for line in open(ini):
            if line.strip().startswith("norecursedirs"):
                skip_dirs.update(line.split("=", 1)[1].split())
    found = []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d not in skip_dirs and not d.startswith((".", "__")))
        for name in filenames:
            if not name.endswith(".py") or name.startswith("test_") or name == "conftest.py":
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                if MAIN.search(f.read()):
                    found.append(os.path.relpath(path, tree))
    return sorted(found)


_COMMENT = re.compile(r"(?:^|\s)#.*")  # a comment starts a line or follows a space: ids hold "#n" (kernel#2)


def read_list(path: str | None) -> list[str]:
    if not path:
        return []
    with open(path) as f:
        return [_COMMENT.sub("", ln).strip() for ln in f if _COMMENT.sub("", ln).strip()]


def grow_floor(path: str, ids: set[str]) -> None:
    """Add `ids` to the floor file at `path` (it only grows), keeping its header comments."""
    old = set(read_list(path)) if os.path.isfile(path) else set()
    header = [ln for ln in open(path) if ln.startswith("#")] if os.path.isfile(path) else []
    with open(path, "w") as f:
        f.writelines(header)
        f.write("\n".join(sorted(old | ids)) + "\n")
    print(f"floor {path}: {len(old)} -> {len(old | ids)}")


def run_script(python: str, work: str, rel: str, timeout: int, env: dict[str, str]) -> dict:
    """Run one script under the shim; its builds and how it ended."""
    events = tempfile.NamedTemporaryFile(prefix="tl-ex-", suffix=".jsonl", delete=False).name
    arch = arch_of(rel)
    cmd = [python, SHIM, "--device", arch, "--events", events, os.path.basename(rel)]
    start = time.time()
    try:
        proc = subprocess.run(cmd, cwd=os.path.join(work, os.path.dirname(rel)), env=env, capture_output=True,
                              text=True, timeout=timeout, errors="replace")
        crash = None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    except subprocess.TimeoutExpired:
        crash = f"timed out after {timeout} s"
    builds, end, open_build = [], None, None
    with open(events) as f:
        for line in f:
            record = json.loads(line)
            if record["event"] == "begin":
                open_build = record["name"]
            elif record["event"] == "build":
                open_build = None
                build = {k: record.get(k) for k in ("id", "kind", "binary", "ok", "error")}
                if record.get("source"):
                    build["source"] = record["source"]
                builds.append(build)
            elif record["event"] == "end":
                end = record
    os.unlink(events)
    if end is None:
        end = {"status": "crashed", "detail": crash or "no end event"}
        if open_build is not None:  # the build it was in when it timed out or crashed
            n = sum(1 for b in builds if b["id"].split("#")[0] == open_build)
            builds.append({"id": open_build + (f"#{n + 1}" if n else ""), "kind": "build", "binary": False,
                           "ok": False, "error": end["detail"]})
    return {"script": rel, "arch": arch, "status": end["status"], "detail": end["detail"], "builds": builds,
            "seconds": round(time.time() - start, 1)}


def folder_of(rel: str) -> str:
    return rel.split("/", 1)[0] if "/" in rel else "(top)"


_NTH = re.compile(r"#\d+$")


def kernels(builds: list[dict]) -> list[dict]:
    """One build a distinct kernel of a script's `builds`: a later build with the name and ``source`` digest of
    an earlier one is that kernel again (it reaches a binary when any of its builds does); builds without a
    digest are each a kernel of their own."""
    seen: dict[tuple[str, str], int] = {}  # (name, digest) -> its index in `found`
    found: list[dict] = []
    for b in builds:
        key = (_NTH.sub("", b["id"]), b["source"]) if b.get("source") else None
        if key is None or key not in seen:
            if key is not None:
                seen[key] = len(found)
            found.append(b)
        elif b["binary"] and not found[seen[key]]["binary"]:
            found[seen[key]] = b
    return found


def tally(results: dict[str, dict]) -> dict[str, list[int]]:
    """Per folder: [scripts, kernels built, kernels reaching a binary, scripts whose every kernel reached one
    (>= 1)]; kernels as `kernels` tells them apart."""
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for rel, r in results.items():
        row = table[folder_of(rel)]
        distinct = kernels(r["builds"])
        row[0] += 1
        row[1] += len(distinct)
        row[2] += sum(1 for b in distinct if b["binary"])
        row[3] += bool(distinct) and all(b["binary"] for b in distinct)
    return table


def build_ids(results: dict[str, dict], reached: bool = True) -> list[str]:
    """``script::id`` of every build that reached a binary (of every one that did not: `reached` false), rebuilds
    of a kernel included, so that the floor's ids stay those of the builds."""
    return sorted(f"{rel}::{b['id']}" for rel, r in results.items() for b in r["builds"] if b["binary"] == reached)


def print_table(ours: dict[str, dict], theirs: dict[str, dict] | None) -> None:
    a = tally(ours)
    b = tally({k: v for k, v in (theirs or {}).items() if k in ours})
    head = f"{'folder':26s} {'scripts':>7s} {'builds->binary':>15s} {'all built':>9s}"
    if theirs is not None:
        head += f" | {'reference':>10s} {'all built':>9s}  diff"
    print(head)
    total_a, total_b = [0, 0, 0, 0], [0, 0, 0, 0]
    for folder in sorted(set(a) | set(b)):
        ra, rb = a.get(folder, [0, 0, 0, 0]), b.get(folder, [0, 0, 0, 0])
        total_a = [x + y for x, y in zip(total_a, ra)]
        total_b = [x + y for x, y in zip(total_b, rb)]
        line = f"{folder:26s} {ra[0]:7d} {f'{ra[2]}/{ra[1]}':>15s} {ra[3]:9d}"
        if theirs is not None:
            mark = "below" if ra[2] < rb[2] else ("ahead" if ra[2] > rb[2] else "")
            line += f" | {f'{rb[2]}/{rb[1]}':>10s} {rb[3]:9d}  {mark}"
        print(line)
    line = f"{'TOTAL':26s} {total_a[0]:7d} {f'{total_a[2]}/{total_a[1]}':>15s} {total_a[3]:9d}"
    if theirs is not None:
        line += f" | {f'{total_b[2]}/{total_b[1]}':>10s} {total_b[3]:9d}"
    print(line)


def first_errors(results: dict[str, dict], top: int = 25) -> list[tuple[int, str]]:
    """Failed builds and failed scripts grouped by their first error line, biggest groups first."""
    groups: dict[str, int] = defaultdict(int)
    for r in results.values():
        for b in kernels(r["builds"]):
            if not b["binary"]:
                groups[re.sub(r"\d+", "N", b.get("error") or "(no error: built no binary)")] += 1
        if r["status"] in ("error", "crashed") and not any(not b["binary"] for b in r["builds"]):
            groups["script: " + re.sub(r"\(line \d+\)", "", r["detail"]).strip()] += 1
    return sorted(((n, e) for e, n in groups.items()), reverse=True)[:top]


def run_cpu_folder(python: str, work: str, folder: str, paths: list[str], timeout: int, env: dict[str, str],
                   out_dir: str) -> dict[str, tuple[str, str]]:
    """One folder's tests in a pytest process of their own; test id -> (status, first error line)."""
    import xml.etree.ElementTree as ET

    xml_path = os.path.join(out_dir, "junit", f"{folder}.xml")
    os.makedirs(os.path.dirname(xml_path), exist_ok=True)
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "examples_cpu",
           "--continue-on-collection-errors", f"--junitxml={xml_path}", f"--timeout={timeout}", *paths]
    start = time.time()
    try:
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=timeout * 8,
                              errors="replace")
        tail = (proc.stdout.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        tail = "folder timed out"
    print(f"  {folder:26s} {time.time() - start:6.0f}s {tail}", flush=True)
    found: dict[str, tuple[str, str]] = {}
    try:
        root = ET.parse(xml_path).getroot()
    except (ET.ParseError, FileNotFoundError):
        return found
    for tc in root.iter("testcase"):
        status, message = "pass", ""
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                status = "skip" if child.tag == "skipped" else "fail"
                text = (child.get("message") or child.text or "").strip().splitlines()
                message = text[0][:200] if text else ""
                break
        module = tc.get("classname", "").split(".")[-1]
        found[f"{folder}/{module}.py::{tc.get('name')}"] = (status, message)
    return found


def run_cpu_tests(python: str, work: str, targets: dict[str, list[str]], timeout: int, env: dict[str, str],
                  out_dir: str, jobs: int = 1) -> dict[str, tuple[str, str]]:
    """The examples' own tests on the CPU (`examples_cpu.py`), one pytest process per folder, `jobs` folders at a
    time; test id -> (status, first error line)."""
    env = dict(env, PYTHONPATH=os.pathsep.join(filter(None, [HERE, env.get("PYTHONPATH")])))
    env.pop("TILELANG_DISABLE_CACHE", None)
    found: dict[str, tuple[str, str]] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(run_cpu_folder, python, work, folder, paths, timeout, env, out_dir)
                   for folder, paths in targets.items()]
        for future in concurrent.futures.as_completed(futures):
            found.update(future.result())
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable, help="interpreter with a tilelang installed")
    ap.add_argument("--kit", default=DEFAULT_KIT, help="the conformance kit (holds examples/)")
    ap.add_argument("--only", default="", help="comma-separated folders or script globs")
    ap.add_argument("--subset", default=None)
    ap.add_argument("--out", default="examples-out")
    ap.add_argument("--save", default=None)
    ap.add_argument("--compare", default=None)
    ap.add_argument("--floor", default=None)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per script")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--resume", action="store_true", help="skip the scripts OUT/progress.jsonl has results for")
    ap.add_argument("--cpu", action="store_true", help="run the examples' own tests on the CPU instead")
    ap.add_argument("--webgpu", action="store_true", help="with --cpu: run the kernels on WebGPU (lavapipe) instead")
    ap.add_argument("--only-floor", action="store_true", help="with --cpu: only the tests of the floor")
    ap.add_argument("--skip", default=None, help="with --cpu --only-floor: a file of floor tests not to run (slow)")
    ap.add_argument("--update-floor", action="store_true", help="add what reaches a binary / passes to the floor")
    args = ap.parse_args()

    python = os.path.abspath(args.python) if os.sep in args.python else args.python
    tree = os.path.join(args.kit, "examples")
    if not os.path.isdir(tree):
        print(f"no examples/ tree in {args.kit}", file=sys.stderr)
        return 2
    scripts = discover(tree)
    if args.subset:
        wanted = set(read_list(args.subset))
        scripts = [s for s in scripts if s in wanted]
    if args.only:
        pats = [p if any(c in p for c in "*?/") else f"{p}/*" for p in args.only.split(",")]
        scripts = [s for s in scripts if any(fnmatch.fnmatch(s, p) for p in pats)]
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)

    work = tempfile.mkdtemp(prefix="tl-examples-")
    shutil.copytree(tree, os.path.join(work, "examples"), copy_function=shutil.copyfile)
    for dirpath, _, _ in os.walk(work):  # the kit may be laid read-only; scripts write beside themselves
        os.chmod(dirpath, 0o755)
    cache = os.path.join(work, "cache")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", TILELANG_DISABLE_CACHE="1", TILELANG_CACHE_DIR=cache,
               TILELANG_TMP_DIR=os.path.join(work, "tmp"), TILELANG_AUTO_TUNING_CPU_COUNTS="1",
               CUDA_VISIBLE_DEVICES="", MPLBACKEND="Agg")
    env.pop("TILELANG_DEFAULT_TARGET", None)
    if args.cpu:
        return cpu_mode(args, python, work, env, out_dir)
    results: dict[str, dict] = {}
    progress = os.path.join(out_dir, "progress.jsonl")  # one line a script, so that --resume can go on
    if args.resume and os.path.isfile(progress):
        with open(progress) as f:
            results = {r["script"]: r for r in map(json.loads, f) if r["script"] in scripts}
    else:
        open(progress, "w").close()
    started = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_script, python, os.path.join(work, "examples"), rel, args.timeout, env): rel
                   for rel in scripts if rel not in results}
        for future in concurrent.futures.as_completed(futures):
            r = future.result()
            results[r["script"]] = r
            with open(progress, "a") as f:
                f.write(json.dumps(r) + "\n")
            distinct = kernels(r["builds"])
            n_bin = sum(b["binary"] for b in distinct)
            print(f"  {r['script']:64s} {r['arch']:7s} {n_bin}/{len(distinct)} {r['status']:9s} "
                  f"{r['seconds']:6.1f}s {r['detail'][:90]}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    results = dict(sorted(results.items()))
    print(f"\n{len(scripts)} scripts in {time.time() - started:.0f} s\n")

    theirs = None
    if args.compare and os.path.isfile(args.compare):
        with open(args.compare) as f:
            theirs = json.load(f)["scripts"]
    print_table(results, theirs)
    print("\nmost common failures here (builds without a binary, scripts that failed before a launch):")
    for n, err in first_errors(results):
        print(f"  {n:4d}  {err[:160]}")

    payload = {"python": python, "scripts": results}
    for path in filter(None, (args.save, os.path.join(out_dir, "examples.json"))):
        with open(path, "w") as f:
            json.dump(payload, f, indent=1, sort_keys=True)
            f.write("\n")
    with open(os.path.join(out_dir, "reaching.txt"), "w") as f:
        f.write("\n".join(build_ids(results)) + "\n")

    floor = read_list(args.floor)
    ran = set(results)
    reached = set(build_ids(results))
    if args.update_floor and args.floor:
        grow_floor(args.floor, reached)
    missed = [b for b in floor if b.split("::", 1)[0] in ran and b not in reached]
    if missed:
        print(f"\n{len(missed)} build(s) of the floor no longer reach a binary:")
        for b in missed[:20]:
            print(f"  {b}")
        return 1
    return 0


def cpu_mode(args: argparse.Namespace, python: str, work: str, env: dict[str, str], out_dir: str) -> int:
    tree = os.path.join(work, "examples")
    if args.webgpu:  # the same tests, their kernels on WebGPU (examples_cpu.py)
        env = dict(env, TILELANG_EXAMPLES_TARGET="webgpu", TILELANG_DEFAULT_TARGET="webgpu")
    folders = sorted({folder_of(os.path.relpath(os.path.join(d, f), tree))
                      for d, _, files in os.walk(tree) for f in files if f.startswith("test_") and f.endswith(".py")})
    if args.only:
        folders = [f for f in folders if f in args.only.split(",")]
    targets = {f: [f] for f in folders}
    skip = set(read_list(args.skip)) if args.skip else set()
    if args.only_floor:  # CI: only the tests that pass (the floor), by node id, less the slow ones
        targets = defaultdict(list)
        for nid in read_list(args.floor):
            if folder_of(nid) in folders and nid not in skip:
                targets[folder_of(nid)].append(nid)
        folders = sorted(targets)
    found = run_cpu_tests(python, tree, targets, args.timeout, env, out_dir, args.jobs)
    shutil.rmtree(work, ignore_errors=True)
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for nid, (status, _) in found.items():
        table[folder_of(nid)][0] += 1
        table[folder_of(nid)][1] += status == "pass"
    print(f"\n{'folder':26s} {'tests':>6s} {'pass':>6s}")
    for folder, (n, ok) in sorted(table.items()):
        print(f"{folder:26s} {n:6d} {ok:6d}")
    print(f"{'TOTAL':26s} {sum(n for n, _ in table.values()):6d} {sum(ok for _, ok in table.values()):6d}")
    failing = sorted(f"{nid}\t{status}\t{msg}" for nid, (status, msg) in found.items() if status != "pass")
    with open(os.path.join(out_dir, "cpu_failing.txt"), "w") as f:
        f.write("\n".join(failing) + "\n")
    passing = sorted(nid for nid, (status, _) in found.items() if status == "pass")
    with open(os.path.join(out_dir, "cpu_passing.txt"), "w") as f:
        f.write("\n".join(passing) + "\n")
    if args.save:
        with open(args.save, "w") as f:
            json.dump({nid: list(v) for nid, v in sorted(found.items())}, f, indent=1)
    if args.update_floor and args.floor:
        grow_floor(args.floor, set(passing))
    missed = [t for t in read_list(args.floor) if folder_of(t) in folders and t not in passing and t not in skip]
    if missed:
        print(f"\n{len(missed)} test(s) of the floor no longer pass, e.g. {missed[0]}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
