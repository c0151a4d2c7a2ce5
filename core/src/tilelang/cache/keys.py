"""Cache keys: stable digests of programs, Python values, targets and the versions that produced a kernel.

Two kinds of key:

- the *program key* hashes the compiled program itself (the PrimFunc's script text and structural hash) with
  the target, pass configs, compile flags and versions. It needs the PrimFunc, hence TVM.
- the *source key* hashes what a ``@tilelang.jit`` function (or a module-level ``@T.prim_func``) was called with
  instead: its source, defaults and annotations, the values of the closure cells and globals it reads, the
  modules it imports in its body (user functions and macros among them fingerprinted recursively, user modules
  and classes by the entries the code may read), the call arguments and the same options
  (`function_fingerprint`). It is computed without TVM, so a new process finds its kernel on disk without
  importing the compiler. A value that has no stable spelling makes the source key unavailable (`Unkeyable`);
  the program key then decides. Library objects (TileLang, the standard library, installed distributions) are
  keyed by name: TileLang's, TVM's and the plugins' versions and source stamps are part of every key, other
  installed packages are taken as fixed.

Both include `sources_digest`: the names, mtimes and sizes of the ``.py`` files (and the ``.cuh`` headers generated
kernels include) of core and of the plugins serving the target kind, read once per process (checked against a
listing kept in the cache, see `_root_stamp`). Versions alone miss edits in an editable install; a pip-installed
package is told by its version.
"""

from __future__ import annotations

import ast
import dis
import enum
import functools
import hashlib
import importlib.util
import inspect
import json
import linecache
import os
import sys
import types
from collections.abc import Mapping
from typing import Any

from tilelang import env
from tilelang._version import __version__

__all__ = ["Unkeyable", "canonical", "digest", "versions", "host_fingerprint", "target_fingerprint",
           "program_text", "function_fingerprint", "package_stamp", "lowering_packages", "sources_digest"]

# Modules whose objects are part of the library, not of the user's program: referenced by name only.
_LIBRARY_ROOTS = {"tilelang", "tvm", "tvm_ffi", "torch", "numpy", "builtins", "math", "operator", "functools",
                  "itertools", "typing", "dataclasses", "collections", "enum"}
_MAX_DEPTH = 8


class Unkeyable(TypeError):
    """A value without a stable, process-independent spelling."""


def digest(*parts: Any) -> str:
    """sha256 hex digest of the canonical JSON of `parts`."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=_json_default)
    return hashlib.sha256(text.encode()).hexdigest()


def _json_default(value: Any) -> Any:
    return canonical(value)


@functools.lru_cache(maxsize=1024)
def _is_library(module_name: str | None) -> bool:
    """Whether module `module_name` is part of the library or of an installed distribution (keyed by name, its
    version tells its code) rather than the user's program (keyed by what it holds): TileLang and its plugins, the
    standard library, and modules installed under ``site-packages``."""
    if not module_name:
        return False
    root = module_name.split(".")[0]
    if root in _LIBRARY_ROOTS or root.startswith("tilelang_") or root in sys.stdlib_module_names:
        return True
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None) or ""
    return any(part in ("site-packages", "dist-packages") for part in os.path.normpath(path).split(os.sep))


def canonical(value: Any, _depth: int = 0) -> Any:
    """A JSON-able spelling of `value` that is the same in every process, or raise `Unkeyable`."""
    if _depth > _MAX_DEPTH:
        raise Unkeyable("value nested too deeply to key")
    if value is None or isinstance(value, (bool, int, str)):
        return value if not isinstance(value, str) or type(value) is str else ["str", type(value).__name__, value]
    if isinstance(value, float):
        return ["float", repr(value)]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [canonical(v, _depth + 1) for v in value]]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted(json.dumps(canonical(v, _depth + 1), sort_keys=True) for v in value)]
    if isinstance(value, Mapping):
        items = [[json.dumps(canonical(k, _depth + 1), sort_keys=True), canonical(v, _depth + 1)]
                 for k, v in value.items()]
        return ["dict", sorted(items)]
    if isinstance(value, enum.Enum):
        return ["enum", type(value).__module__, type(value).__qualname__, value.name,
                canonical(value.value, _depth + 1)]
    if isinstance(value, bytes):
        return ["bytes", hashlib.sha256(value).hexdigest()]
    if isinstance(value, types.ModuleType):
        if not _is_library(value.__name__):  # what a user module holds is keyed where a function reads it
            raise Unkeyable(f"cannot key user module {value.__name__} outside a function's globals")
        return ["module", value.__name__]
    if isinstance(value, type):
        return ["type", value.__module__, value.__qualname__]
    if isinstance(value, functools.partial):
        return ["partial", canonical(value.func, _depth + 1), canonical(value.args, _depth + 1),
                canonical(value.keywords, _depth + 1)]
    module = type(value).__module__
    if module.startswith("tvm_ffi") and type(value).__name__ in ("Array", "List", "Map", "Dict"):
        # TVM containers (e.g. a Target's ``keys``) key like the Python list / dict they hold
        plain = dict(value.items()) if hasattr(value, "items") else list(value)
        return canonical(plain, _depth)
    if module == "torch" and type(value).__name__ in ("dtype", "device"):
        return ["torch", str(value)]
    key = getattr(type(value), "__tilelang_key__", None)  # a library object that says what determines it
    if key is not None:
        return ["key", type(value).__module__, type(value).__qualname__, canonical(key(value), _depth + 1)]
    jit_func = getattr(value, "__tilelang_jit_function__", None)
    if jit_func is not None:
        return ["jit", function_fingerprint(jit_func, _depth + 1)]
    if isinstance(value, (types.FunctionType, types.MethodType)) or inspect.isbuiltin(value):
        if _is_library(getattr(value, "__module__", None)) or inspect.isbuiltin(value):
            return ["callable", getattr(value, "__module__", None), getattr(value, "__qualname__", repr(value))]
        return ["function", function_fingerprint(value, _depth + 1)]
    raise Unkeyable(f"cannot key a value of type {type(value).__module__}.{type(value).__qualname__}")


def _names(code: types.CodeType) -> set[str]:
    """Names `code` (and nested code) may read as globals: a superset (attribute names are included)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _last_line(code: types.CodeType) -> int:
    last = max((line for _, _, line in code.co_lines() if line is not None), default=code.co_firstlineno)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            last = max(last, _last_line(const))
    return last


def _source_of(code: types.CodeType) -> str:
    """The source lines of `code`, decorators included (read through linecache, no tokenizing). The file is
    checked for edits first (one ``stat``): a module edited and reloaded in a long-lived process (a notebook) is
    keyed by its new text, which is also what the front end parses."""
    linecache.checkcache(code.co_filename)
    lines = linecache.getlines(code.co_filename)
    if not lines:
        raise Unkeyable(f"no source for {code.co_name} ({code.co_filename}:{code.co_firstlineno})")
    return "".join(lines[code.co_firstlineno - 1:_last_line(code)])


@functools.lru_cache(maxsize=1024)
def _expr_names(text: str) -> frozenset[str]:
    """Names and attribute names a string annotation (``"T.Tensor((M, N), dtype)"``) reads."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return frozenset()
    return frozenset(n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(tree)
                     if isinstance(n, (ast.Name, ast.Attribute)))


def _annotations(func: Any, _depth: int) -> tuple[dict[str, Any], set[str]]:
    """A function's parameter annotations (evaluated where it was defined, so its code does not read them) and
    the names its string annotations read (they are evaluated when the kernel is parsed). A typing construct
    (``Optional[int]``, ``list[int]``) is keyed by its ``repr``."""
    found: dict[str, Any] = {}
    names: set[str] = set()
    for name, value in (getattr(func, "__annotations__", None) or {}).items():
        if isinstance(value, str):
            names |= _expr_names(value)
        try:
            found[name] = canonical(value, _depth + 1)
        except Unkeyable:
            if type(value).__module__ not in ("typing", "types"):
                raise
            found[name] = ["repr", repr(value)]
    return found, names


def _attributes(namespace: Mapping[str, Any], names: set[str], _depth: int) -> dict[str, Any]:
    """The entries of a user module's or class's `namespace` that a function may read (`names`)."""
    found = {}
    for name in sorted(names):
        if name in namespace and not (name.startswith("__") and name.endswith("__")):
            value = namespace[name]
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            elif isinstance(value, property):
                value = [value.fget, value.fset]
            found[name] = _read_key(value, names, _depth + 1)
    return found


def _is_self(value: Any, func: Any) -> bool:
    """Whether `value` is `func` or its decorated form (a ``@tilelang.jit`` kernel's global names the wrapper, and
    an attribute such as ``T.gemm`` puts that name among those the function may read)."""
    if value is func:
        return True
    if isinstance(value, (types.ModuleType, type)):  # a module's lazy attributes must not be resolved here
        return False
    own = getattr(value, "__dict__", None) or {}
    return own.get("fn") is func or own.get("__wrapped__") is func


def _read_key(value: Any, names: set[str], _depth: int) -> Any:
    """`value` as read by a function whose code names `names`: a user module or class by the entries it holds
    under those names (``helpers.tile(...)``, ``Config.BLOCK``, recursively), anything else by `canonical`."""
    if _depth > _MAX_DEPTH:
        raise Unkeyable("value nested too deeply to key")
    if isinstance(value, types.ModuleType) and not _is_library(value.__name__):
        return ["module", value.__name__, _attributes(vars(value), names, _depth)]
    if isinstance(value, type) and not _is_library(value.__module__) and not issubclass(value, enum.Enum):
        namespace: dict[str, Any] = {}
        for klass in reversed(value.__mro__[:-1]):
            namespace.update(vars(klass))
        return ["type", value.__module__, value.__qualname__, _attributes(namespace, names, _depth)]
    return canonical(value, _depth)


_IMPORT_NAME = dis.opmap["IMPORT_NAME"]


def _local_imports(code: types.CodeType) -> set[tuple[str, int]]:
    """``(module, level)`` of every ``import`` statement in `code` and its nested code (``import helpers`` inside a
    kernel factory: the module is no global, yet what the factory reads from it shapes the kernel)."""
    found: set[tuple[str, int]] = set()
    if _IMPORT_NAME in code.co_code[::2]:  # opcodes sit at even offsets: a cheap test before disassembling
        consts: list[Any] = [0, None]  # an import is LOAD_CONST level, LOAD_CONST fromlist, IMPORT_NAME module
        for ins in dis.get_instructions(code):
            if ins.opname == "LOAD_CONST":
                consts = [consts[-1], ins.argval]
            elif ins.opcode == _IMPORT_NAME:
                found.add((ins.argval, consts[0] if type(consts[0]) is int else 0))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _local_imports(const)
    return found


def _imported_modules(func: Any, code: types.CodeType, names: set[str], _depth: int) -> dict[str, Any]:
    """The user modules `func` imports in its body, imported now (as running it would) and keyed by the entries
    it may read; library modules are skipped by name."""
    found = {}
    for name, level in sorted(_local_imports(code)):
        if level:
            package = getattr(func, "__globals__", {}).get("__package__")
            try:
                name = importlib.util.resolve_name("." * level + name, package)
            except (ImportError, ValueError) as exc:
                raise Unkeyable(f"cannot resolve the relative import in {func.__qualname__}: {exc}") from None
        if name.split(".")[0] in _LIBRARY_ROOTS or name.split(".")[0] in sys.stdlib_module_names:
            continue
        try:
            module = importlib.import_module(name)
        except Exception as exc:
            raise Unkeyable(f"{func.__qualname__} imports {name}, which failed: {exc!r}") from None
        found[name] = _read_key(module, names, _depth + 1)
    return found


def function_fingerprint(func: Any, _depth: int = 0) -> Any:
    """What determines a user function's behaviour: its source, defaults, annotations, closure values and the
    globals it reads (user functions among them fingerprinted recursively, user modules and classes by the
    entries the function may read; library objects by name). Raises `Unkeyable` when one has no stable
    spelling: the caller then takes the path that parses the kernel.

    What the function computes from elsewhere when it runs (a file it reads, an environment variable) is not
    part of it."""
    if not isinstance(func, types.FunctionType):
        func = inspect.unwrap(func)  # a library wrapper (functools.lru_cache, ...); a user wrapper keys its closure
    if isinstance(func, types.MethodType):
        return ["method", canonical(func.__self__, _depth + 1), function_fingerprint(func.__func__, _depth + 1)]
    code = getattr(func, "__code__", None)
    if code is None:
        raise Unkeyable(f"cannot key callable {func!r}")
    annotations, annotation_names = _annotations(func, _depth)
    names = _names(code) | annotation_names
    closure = {}
    for name, cell in zip(code.co_freevars, func.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # empty cell
            closure[name] = ["empty"]
            continue
        closure[name] = ["self"] if _is_self(value, func) else _read_key(value, names, _depth + 1)
    globals_used = {}
    func_globals = getattr(func, "__globals__", {})
    for name in sorted(names):
        if name in func_globals:
            value = func_globals[name]
            globals_used[name] = ["self"] if _is_self(value, func) else _read_key(value, names, _depth + 1)
    return {
        "module": func.__module__, "qualname": func.__qualname__, "source": _source_of(code),
        "defaults": canonical(func.__defaults__, _depth + 1),
        "kwdefaults": canonical(func.__kwdefaults__, _depth + 1),
        "annotations": annotations, "closure": closure, "globals": globals_used,
        "imports": _imported_modules(func, code, names, _depth),
    }


@functools.cache
def versions() -> dict[str, str]:
    """Versions of everything that shapes compiled code: core, TVM, tvm_ffi and every installed backend."""
    from tilelang.cache.environment import snapshot

    snap = snapshot()
    found = {"tilelang-core": __version__, "python": ".".join(map(str, sys.version_info[:2])), **snap["versions"]}
    for _kind, _value, distribution, version in snap["entry_points"]:
        found[distribution] = version
    return found


# Subpackages of core that take no part in turning a program into code (configuration search, timing, test
# kernels, reports and pass observers): editing them leaves compiled kernels valid, so they are not stamped.
_NOT_LOWERING = {"tilelang": frozenset({"autotuner", "carver", "profiler", "testing", "tools"})}
_STAMPS = "stamps"
# the files whose edits change compiled code: modules, and the device headers a plugin ships for its kernels
_STAMPED = (".py", ".cuh")


def _walk(root: str, skip: frozenset[str] = frozenset()) -> tuple[list[Any], list[Any]]:
    """``(dirs, files)`` of the tree at `root`: (relative path, mtime_ns) of every folder searched and
    (relative path, mtime_ns, size) of every ``.py`` / ``.cuh`` file (`_STAMPED`), sorted (``__pycache__`` and the
    `skip`ped top-level folders left out)."""
    dirs: list[Any] = []
    files: list[Any] = []
    base = len(root) + 1
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            dirs.append((folder[base:], os.stat(folder).st_mtime_ns))
            with os.scandir(folder) as entries:
                for entry in entries:
                    name = entry.name
                    if name.endswith(_STAMPED):
                        st = entry.stat()
                        files.append((entry.path[base:], st.st_mtime_ns, st.st_size))
                    elif name != "__pycache__" and "." not in name and entry.is_dir(follow_symlinks=False) and \
                            not (folder == root and name in skip):
                        stack.append(entry.path)
        except OSError:
            files.append((folder[base:], "unreadable", 0))
    dirs.sort()
    files.sort()
    return dirs, files


def _tree_stamp(root: str, skip: frozenset[str] = frozenset()) -> list[Any]:
    """(relative path, mtime_ns, size) of every ``.py`` / ``.cuh`` file under `root`, sorted (see `_walk`)."""
    return _walk(root, skip)[1]


def _unchanged(root: str, record: Any) -> bool:
    """Whether every folder and file `record` lists under `root` still has its recorded time (and size): an
    added, removed or renamed file changes its folder's time, an edit in place the file's. Paths are resolved
    relative to an open descriptor of `root` where the OS allows it (half the time of joined paths)."""
    stat = os.stat
    relative = os.stat in os.supports_dir_fd
    try:
        fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)) if relative else None
    except OSError:
        return False
    at = (lambda rel: stat(rel or ".", dir_fd=fd)) if relative else (lambda rel: stat(os.path.join(root, rel)))
    try:
        for rel, mtime in record["dirs"]:
            if at(rel).st_mtime_ns != mtime:
                return False
        for rel, mtime, size in record["files"]:
            st = at(rel)
            if st.st_mtime_ns != mtime or st.st_size != size:
                return False
    except (OSError, KeyError, TypeError, ValueError):
        return False
    finally:
        if fd is not None:
            os.close(fd)
    return True


def _root_stamp(root: str, skip: frozenset[str]) -> str:
    """The digest of `_tree_stamp(root, skip)`. Its listing is kept as a cache record, so a later process only
    stats the listed folders and files (~0.7 ms for core's ~330 files, against ~2 ms to walk the tree), and walks again
    when one of them changed."""
    from tilelang.cache.store import DiskStore

    if not env.is_cache_enabled():
        return digest(_tree_stamp(root, skip))
    store = DiskStore()
    key = digest(_STAMPS, root, sorted(skip))
    record = store.get_record(_STAMPS, key)
    if isinstance(record, dict) and isinstance(record.get("stamp"), str) and _unchanged(root, record):
        return record["stamp"]
    dirs, files = _walk(root, skip)
    stamp = digest(files)
    try:
        store.put_record(_STAMPS, key, {"dirs": dirs, "files": files, "stamp": stamp})
    except OSError:
        pass
    return stamp


def _installed(root: str) -> bool:
    """Whether `root` was installed by pip (under ``site-packages``): its files change only with its version."""
    parts = os.path.normpath(root).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


@functools.cache
def package_stamp(package: str) -> str:
    """A digest of the source files (names, mtimes, sizes) of import package `package`, found without importing
    it; ``"installed"`` for a package pip installed (its version, in `versions`, tells its files); ``"absent"``
    when it is not installed. Computed once per process (see `_root_stamp`)."""
    module = sys.modules.get(package)
    roots = list(getattr(module, "__path__", None) or []) if module is not None else []
    if not roots:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            return "absent"
        roots = list(spec.submodule_search_locations or []) or [os.path.dirname(spec.origin or "")]
    if all(_installed(r) for r in roots):
        return "installed"
    skip = _NOT_LOWERING.get(package, frozenset())
    return digest([[os.path.realpath(r), _root_stamp(r, skip)] for r in roots])


def lowering_packages(kinds: tuple[str, ...]) -> list[str]:
    """The import packages whose code lowers and builds for target `kinds`: core and those kinds' plugins."""
    from tilelang.cache.environment import snapshot

    plugins = {value.split(":")[0].split(".")[0] for kind, value, _dist, _ver in snapshot()["entry_points"]
               if kind in kinds}
    return ["tilelang", *sorted(plugins)]


@functools.cache
def sources_digest(kinds: tuple[str, ...]) -> str:
    """A digest of the installed source trees of core and the plugins serving `kinds` (see `package_stamp`).

    Part of every cache key, so that editing a pass (in an editable install, where versions do not change)
    invalidates the kernels it lowered.
    """
    return digest({package: package_stamp(package) for package in lowering_packages(kinds)})


@functools.cache
def host_fingerprint() -> str:
    """The host CPU (model and ISA flags), for targets whose code depends on it."""
    model, flags = "", ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "cpu model", "Hardware") and not model:
                    model = value.strip()
                elif key in ("flags", "Features") and not flags:
                    flags = " ".join(sorted(value.split()))
                if not line.strip() and flags:
                    break
    except OSError:
        pass
    uname = os.uname() if hasattr(os, "uname") else None
    text = f"{uname.machine if uname else sys.platform}|{uname.sysname if uname else ''}|{model}|{flags}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _host_dependent(config: Any) -> bool:
    return isinstance(config, Mapping) and config.get("kind") in ("llvm", "c", "cpu") and not config.get("mcpu")


def target_fingerprint(target: Mapping[str, Any], target_host: Any = None) -> Any:
    """The target and host configs, plus the host CPU when the code depends on it (no explicit ``mcpu``)."""
    host = target.get("host", target_host)
    extra = host_fingerprint() if _host_dependent(target) or _host_dependent(host) else None
    return [canonical(dict(target)), canonical(target_host), extra]


def program_text(func: Any) -> list[Any]:
    """A PrimFunc's identity: TVMScript text and structural hash (``tvm.ir.save_json`` crashes on tirx)."""
    import tvm_ffi

    return [func.script(), str(tvm_ffi.structural_hash(func, map_free_vars=True))]
