"""lazyarr settings: YAML defaults, a user file, ``LAZYARR_*`` variables, ``set()``.

Precedence, weakest first::

    config.yaml (defaults)  <  user file  <  LAZYARR_* env vars  <  set(...)  <  keywords

The user file is ``platformdirs.user_config_dir("lazyarr")/lazyarr.yaml``, or the
file named by ``LAZYARR_CONFIG``. ``LAZYARR_ARRAY__CHUNK_SIZE=128MiB`` sets
``array.chunk-size`` (double underscore = one level down, as in Dask). Keyword
arguments win over all of it through :func:`resolve`.

Every key is described in ``config-schema.yaml``; every value, from any source,
is checked against it when it is read or set, so a typo fails where it is
written, with a did-you-mean. Keys accept ``-`` or ``_`` (``chunk_size`` is
``chunk-size``).

``with set(...):`` is scoped: its values hold inside the block, in that thread or
asyncio task (and lazyarr's worker threads for it) only, and the block's exit
restores exactly what was there. A plain ``set(...)`` call changes the
process-wide values.

This module is a leaf: it imports nothing of lazyarr and is the only module
that reads ``os.environ``. Storage comes from ``donfig`` (Dask's config code as
a library).
"""

from __future__ import annotations

import copy
import json
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import donfig
import platformdirs
import yaml
from donfig.config_obj import collect_env
from donfig.config_obj import update as _merge_into

from ._scope import SCOPED, Setting, apply_pending
from ._units import parse_bytes, parse_duration

__all__ = [
    "ConfigKeyError",
    "Setting",
    "ConfigWarning",
    "digest",
    "errors",
    "get",
    "parse_bytes",
    "parse_duration",
    "refresh",
    "register_check",
    "resolve",
    "scoped",
    "set",
    "show",
    "user_path",
    "write_user",
]

ENV_PREFIX = "LAZYARR_"
ENV_FILE = "LAZYARR_CONFIG"  # names the user file; not itself a setting
DEFAULTS_FILE = Path(__file__).parent.with_name("config.yaml")
SCHEMA_FILE = Path(__file__).parent.with_name("config-schema.yaml")


class ConfigKeyError(KeyError):
    """An unknown config key. The message suggests the closest known keys."""

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0])


class _NoDefault:
    def __repr__(self) -> str:
        return "<no default>"


_NO_DEFAULT: Any = _NoDefault()


_SCALARS = (str, int, float, bool, type(None))


_FORMATS = {"bytes": parse_bytes, "duration": parse_duration}
_YAML_LOADER = getattr(
    yaml, "CSafeLoader", yaml.SafeLoader
)  # libyaml if built: reads our files ~10x faster


# ---------------------------------------------------------------- schema


def _read_yaml(path: Path, must_exist: bool = False) -> dict:
    """The mapping in a YAML file; {} if it is empty or does not exist (with
    ``must_exist``, a file whose directory is missing too is an error: a typo in
    ``$LAZYARR_CONFIG``; a missing file in an existing directory is one that
    ``lazyarr config set`` will create). Errors name the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if must_exist and not path.parent.is_dir():  # a typo: `config set` could not create it
            raise ValueError(
                f"lazyarr config file {path} (named by ${ENV_FILE}) does not exist, nor does "
                "its directory"
            ) from None
        return {}
    except UnicodeDecodeError as exc:
        raise ValueError(f"lazyarr config file {path} is not UTF-8 text ({exc})") from None
    try:
        data = yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        raise ValueError(f"lazyarr config file {path} is not valid YAML:\n{exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        kind = f"a {type(data).__name__}"  # not the data: a large file would fill every error
        raise ValueError(f"lazyarr config file {path} must hold a mapping of settings, not {kind}")
    return data


def _index(node: Mapping, prefix: str, leaves: dict, sections: dict) -> None:
    for name, spec in node["properties"].items():
        if spec.get("type") == "object":
            sections[prefix + name] = spec
            _index(spec, f"{prefix}{name}.", leaves, sections)
        else:
            leaves[prefix + name] = spec


_DEFAULTS = _read_yaml(DEFAULTS_FILE)
_LEAVES: dict[str, dict] = {}  # "array.chunk-size" -> its schema
_SECTIONS: dict[str, dict] = {}  # "array" -> its schema
_index(_read_yaml(SCHEMA_FILE), "", _LEAVES, _SECTIONS)


def _canonical(key: str) -> str:
    return key.replace("_", "-")


# every spelling of every leaf key -> its path in the nested dict (for a fast get)
_LEAF_PARTS: dict[str, tuple[str, ...]] = {
    spelling: tuple(leaf.split("."))
    for leaf in _LEAVES
    for spelling in (leaf, leaf.replace("-", "_"))
}


def _unknown(key: str) -> ConfigKeyError:
    import difflib  # only on the error path

    known = [*_LEAVES, *_SECTIONS]
    hits = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
    last = key.rsplit(".", 1)[-1]
    hits += [k for k in known if k.rsplit(".", 1)[-1] == last and k not in hits]
    message = f"unknown lazyarr config key {key!r}"
    if hits:
        message += "; did you mean " + " or ".join(repr(h) for h in hits[:3]) + "?"
    else:
        message += "; known keys: " + ", ".join(_LEAVES)
    return ConfigKeyError(message)


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list, tuple),
    "object": (Mapping,),
}


def _types(spec: Mapping) -> list[str]:
    kind = spec["type"]
    return list(kind) if isinstance(kind, list) else [kind]


def _has_type(value: Any, kind: str) -> bool:
    if isinstance(value, bool):
        return kind == "boolean"
    return isinstance(value, _PY_TYPES[kind])


def _expected(spec: Mapping) -> str:
    if "enum" in spec:
        return "one of " + ", ".join(json.dumps(e) for e in spec["enum"])
    text = " or ".join(_types(spec))
    if "format" in spec:
        text += {"bytes": " (a byte size such as '64MiB')", "duration": " (such as '10s')"}.get(
            spec["format"], ""
        )
    if "minimum" in spec:
        text += f" >= {spec['minimum']}"
    return text


def _coerce(value: Any, kinds: list[str]) -> Any:
    """Read text (from env vars, the CLI) as the type a key wants: 'null', 'true', '4'."""
    if not isinstance(value, str):
        return value
    low = value.strip().lower()
    if "null" in kinds and low in ("null", "none", "~"):
        return None
    if "boolean" in kinds and low in ("true", "false"):
        return low == "true"
    if "string" not in kinds:
        try:
            return yaml.safe_load(value)
        except yaml.YAMLError:
            return value
    return value


_CHECKS: dict[str, Callable[[Any], None]] = {}
"""Key -> a check a higher layer registered (the executor names): raises ValueError."""

_SOURCED: dict[str, tuple[str, Any]] = {}
"""Key -> (the file or variable that set it, its value): what a check registered late judges."""


def register_check(key: str, check: Callable[[Any], None]) -> None:
    """Check every later value of ``key`` with ``check`` (which raises ``ValueError``).

    Values the user file or a variable already gave are checked now: a bad one
    warns naming its source, and reading ``key`` raises that message.
    """
    path = _canonical(key)
    if path not in _LEAVES:
        raise _unknown(path)
    _CHECKS[path] = check
    source, value = _SOURCED.get(path, ("", None))
    if not source or value is None or path in _ERRORS:
        return
    try:
        check(value)
    except ValueError as exc:
        message = f"{source}: invalid value {value!r} for lazyarr config key {path!r}: {exc}"
        with _store.config_lock:
            _ERRORS[path] = message
            _put_global(path, _default(path))
        warnings.warn(ConfigWarning(message), stacklevel=2)


def _default(key: str) -> Any:
    node: Any = _DEFAULTS
    for part in key.split("."):
        node = node.get(part, _MISSING) if isinstance(node, dict) else _MISSING
    return copy.deepcopy(node)


def _check(key: str, value: Any) -> Any:
    """Return ``value`` in canonical form, or raise ValueError saying what ``key`` takes."""
    value = _check_schema(key, value)
    check = _CHECKS.get(key)
    if check is not None and value is not None:
        try:
            check(value)
        except ValueError as exc:
            raise ValueError(
                f"invalid value {value!r} for lazyarr config key {key!r}: {exc}"
            ) from None
    return value


def _check_schema(key: str, value: Any) -> Any:
    """``value`` in canonical form if the schema allows it for ``key``, else ValueError."""
    spec = _LEAVES[key]
    kinds = _types(spec)
    value = _coerce(value, kinds)
    bad = ValueError(
        f"invalid value {value!r} for lazyarr config key {key!r}: expected {_expected(spec)}"
    )
    if not any(_has_type(value, kind) for kind in kinds):
        raise bad
    if value is None:
        return None
    if isinstance(value, Mapping):  # string keys, as YAML files and donfig's merge expect
        value = {str(k): v for k, v in value.items()}
    if "enum" in spec:
        for option in spec["enum"]:
            if type(option) is type(value) and (
                option == value or (isinstance(value, str) and option.lower() == value.lower())
            ):
                return option
        raise bad
    if "minimum" in spec and not isinstance(value, str) and value < spec["minimum"]:
        raise bad
    if "items" in spec:
        value = list(value)
        item_kinds = _types(spec["items"])
        if not all(any(_has_type(v, kind) for kind in item_kinds) for v in value):
            raise ValueError(
                f"invalid value {value!r} for lazyarr config key {key!r}: "
                f"expected a list of {' or '.join(item_kinds)}"
            )
    if "format" in spec:
        try:
            parsed = _FORMATS[spec["format"]](value)
        except ValueError:
            raise bad from None
        least = spec.get("min-bytes")
        if least is not None and parsed < parse_bytes(least):
            raise ValueError(
                f"invalid value {value!r} for lazyarr config key {key!r}: at least {least}"
            )
    return value


def _flatten(
    tree: Mapping, prefix: str, out: dict[str, Any], on_unknown: Callable[[str], None]
) -> None:
    """Collect ``{"a": {"b-c": 1}}`` or ``{"a.b_c": 1}`` as ``out["a.b-c"] = 1``."""
    for name, value in tree.items():
        key = prefix + _canonical(str(name))
        if key in _LEAVES:
            out[key] = value
        elif key in _SECTIONS and isinstance(value, Mapping):
            _flatten(value, key + ".", out, on_unknown)
        elif key in _SECTIONS and value is None:  # an empty "dask:" in a YAML file
            continue
        elif key in _SECTIONS:
            raise ValueError(
                f"lazyarr config key {key!r} is a section; set one of its keys instead: "
                + ", ".join(k for k in _LEAVES if k.startswith(key + "."))
            )
        else:
            on_unknown(key)


def _flat_of(tree: Mapping) -> dict[str, Any]:
    """``tree``'s known leaves as ``{"a.b-c": value}`` (unknown keys are dropped)."""
    out: dict[str, Any] = {}
    _flatten(tree, "", out, lambda key: None)
    return out


def _nest(flat: Mapping[str, Any]) -> dict:
    tree: dict = {}
    for key, value in flat.items():
        *parents, last = key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return tree


def _layer(tree: Mapping, source: str, errors: dict[str, str] | None = None) -> dict:
    """Validate one source (file, env); unknown keys warn, bad values raise naming the source.

    ``errors``: collect bad values there (key -> message) instead of raising; the
    key is then left out of the layer.
    """

    def ignore(key: str) -> None:
        warnings.warn(f"{source}: {_unknown(key)} (ignored)", UserWarning, stacklevel=2)

    flat: dict[str, Any] = {}
    try:
        _flatten(tree, "", flat, ignore)
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None
    good: dict[str, Any] = {}
    for key, value in flat.items():
        try:
            good[key] = _check(key, value)
        except ValueError as exc:
            if errors is None:
                raise ValueError(f"{source}: {exc}") from None
            errors[key] = f"{source}: {exc}"
    return _nest(good)


# ---------------------------------------------------------------- the store


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIX) and k != ENV_FILE}


def user_path() -> Path:
    """The user config file: ``$LAZYARR_CONFIG`` if set, else in the platform's config dir.

    A directory in ``LAZYARR_CONFIG`` means ``lazyarr.yaml`` inside it.
    """
    named = os.environ.get(ENV_FILE)
    if named:
        path = Path(named).expanduser()
        return path / "lazyarr.yaml" if path.is_dir() else path
    return Path(platformdirs.user_config_dir("lazyarr")) / "lazyarr.yaml"


class ConfigWarning(UserWarning):
    """A bad setting in the user file or the environment (reported when it is read)."""


_ERRORS: dict[str, str] = {}
"""Bad values of the file and environment, by key ("" for the file as a whole): reading
such a key raises the message; the rest of lazyarr, and its CLI, keep working."""


def _sources_errors() -> None:
    for message in _ERRORS.values():
        warnings.warn(ConfigWarning(message), stacklevel=3)


class _Store(donfig.Config):
    """donfig's store, filled from our sources with every value checked."""

    def refresh(self, **kwargs: Any) -> None:  # donfig.Config.__init__ calls this too
        path = user_path()
        errors: dict[str, str] = {}
        named = bool(os.environ.get(ENV_FILE))
        try:
            tree = _read_yaml(path, must_exist=named)
        except ValueError as exc:
            errors[""] = str(exc)
            tree = {}
        if named and "" not in errors and not path.exists():
            warnings.warn(
                ConfigWarning(
                    f"lazyarr config file {path} (named by ${ENV_FILE}) does not exist: the "
                    "defaults hold (`lazyarr config set` creates it)"
                ),
                stacklevel=3,
            )
        sources = [(f"config file {path}", tree)] + [
            (f"environment variable {name}", collect_env(ENV_PREFIX, {name: value}))
            for name, value in sorted(_environ().items())
        ]
        layers = [_layer(layer, source, errors) for source, layer in sources]
        _SOURCED.clear()
        for (source, _), layer in zip(sources, layers):
            _SOURCED.update((key, (source, value)) for key, value in _flat_of(layer).items())
        _ERRORS.clear()
        _ERRORS.update(errors)
        _sources_errors()
        self.clear()
        _merge_into(self.config, copy.deepcopy(_DEFAULTS))
        for layer in layers:
            _merge_into(self.config, layer)


_store = _Store("lazyarr", defaults=[_DEFAULTS], paths=[], env={})


# ---------------------------------------------------------------- public API


def refresh() -> None:
    """Re-read the defaults, the user file and ``LAZYARR_*`` variables.

    Values from a plain ``set(...)`` call are dropped, as in Dask; those of ``with``
    blocks still running stay until their blocks end.
    """
    apply_pending()  # dropped with the other plain values
    with _store.config_lock:
        _STAMPS.clear()
        _store.refresh()


def get(key: str, default: Any = _NO_DEFAULT) -> Any:
    """The effective value of ``key`` (``"array.chunk-size"``; a section gives a dict).

    An unknown key raises :class:`ConfigKeyError` (a ``KeyError``) with a
    suggestion, unless a ``default`` is given: then the default is returned, so
    plug-ins can read keys of their own.
    """
    apply_pending()
    scoped = SCOPED.get()
    if scoped is not None:  # inside a ``with set(...)`` block of this thread or task
        value = scoped.get(key, _NO_DEFAULT)
        if value is not _NO_DEFAULT:
            return list(value) if isinstance(value, list) else value
    if _ERRORS:
        _raise_source_error(key)
    parts = _LEAF_PARTS.get(key)
    if parts is not None:  # fast path: a known leaf, read straight from donfig's dict
        node: Any = _store.config
        try:
            for part in parts:
                node = node[part]
        except KeyError:
            pass
        else:
            if isinstance(node, list) and all(isinstance(v, _SCALARS) for v in node):
                return list(node)  # a list of scalars: a shallow copy is a full copy
            return copy.deepcopy(node) if isinstance(node, (dict, list)) else node
    path = _canonical(key)
    if path not in _LEAVES and path not in _SECTIONS:
        if default is not _NO_DEFAULT:
            return default
        raise _unknown(path)
    try:
        value = _store.get(path)
    except KeyError:
        if default is _NO_DEFAULT:
            raise
        return default
    # scalars are immutable: only containers need a defensive copy
    value = copy.deepcopy(value) if isinstance(value, (dict, list)) else value
    if scoped and isinstance(value, dict):  # a section: its scoped keys win
        inside = {
            k[len(path) + 1 :]: v for k, v in _scoped_leaves(scoped) if k.startswith(path + ".")
        }
        _merge_into(value, _nest(inside))
    return value


def _scoped_leaves(scoped: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The scoped values by canonical key (the overlay holds every spelling)."""
    return [(k, copy.deepcopy(v)) for k, v in scoped.items() if k in _LEAVES]


def _raise_source_error(key: str) -> None:
    """Reading a key whose file or environment value was bad raises that error (a compute
    never runs with a default the user did not ask for)."""
    path = _canonical(key)
    if "" in _ERRORS:
        raise ValueError(_ERRORS[""])
    for bad, message in _ERRORS.items():
        if bad == path or bad.startswith(path + "."):
            raise ValueError(message)


def scoped() -> dict[str, Any]:
    """The values of the ``with set(...)`` blocks this thread or task is in, by key ({} if
    none): what a task that runs elsewhere (a Dask thread) needs to see the same settings."""
    values = SCOPED.get()
    return dict(_scoped_leaves(values)) if values else {}


def errors() -> dict[str, str]:
    """Bad values found in the user file and ``LAZYARR_*`` variables: key -> message."""
    return dict(_ERRORS)


def set(arg: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Setting:
    """Set values for the process, or (used as ``with``) for the block, in this thread only.

    ``set(executor="numpy")``, ``set(array__chunk_size="1MiB")`` and
    ``set({"array.chunk-size": "1MiB"})`` are the same kind of call; a mapping
    value sets keys inside a section. Unknown keys raise :class:`ConfigKeyError`,
    bad values ``ValueError``, and then nothing is set.

    ``with set(...):`` holds in its thread or asyncio task (and in lazyarr's worker
    threads for it), above the process-wide values, until the block ends; other
    threads never see it, and the exit restores exactly what this context saw
    before. A plain call changes the process-wide values, until :func:`refresh`.
    """

    def reject(key: str) -> None:
        raise _unknown(key)

    flat: dict[str, Any] = {}
    _flatten(arg or {}, "", flat, reject)
    _flatten({k.replace("__", "."): v for k, v in kwargs.items()}, "", flat, reject)
    checked = {key: _check(key, value) for key, value in flat.items()}
    spellings = {s: v for k, v in checked.items() for s in (k, k.replace("-", "_"))}
    apply_pending()  # an earlier plain set of this thread comes first
    return Setting(spellings, checked, lambda: _apply_globally(checked))


_MISSING: Any = _NoDefault()
_STAMPS: dict[str, object] = {}
"""Key -> a token of the last plain ``set`` of it (a ``with`` found late undoes only its own)."""


def _global(key: str) -> Any:
    node: Any = _store.config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _put_global(key: str, value: Any) -> None:
    *parents, last = key.split(".")
    node = _store.config
    for part in parents:
        node = node.setdefault(part, {})
    if value is _MISSING:
        node.pop(last, None)
    else:
        node[last] = value


def _apply_globally(checked: Mapping[str, Any]) -> Callable[[], None]:
    """Set ``checked`` for the process; return a function that takes back what is still ours."""
    stamp = object()
    with _store.config_lock:
        old = {key: _global(key) for key in checked}
        # a value given here replaces a bad one of the file or environment
        replaced = {key: _ERRORS.pop(key) for key in checked if key in _ERRORS}
        for key, value in checked.items():
            _put_global(key, value)
            _STAMPS[key] = stamp

    def undo() -> None:
        with _store.config_lock:
            for key in checked:
                if _STAMPS.get(key) is stamp:  # not set again, nor refreshed, since
                    _put_global(key, old[key])
                    del _STAMPS[key]
                    if key in replaced:
                        _ERRORS.setdefault(key, replaced[key])

    return undo


def resolve(key: str, value: Any) -> Any:
    """``value`` (checked) if it is not None, else ``get(key)``: keywords win over config."""
    path = _canonical(key)
    if path not in _LEAVES:
        raise _unknown(path)
    return get(path) if value is None else _check(path, value)


def show() -> str:
    """The effective configuration as YAML text."""
    apply_pending()
    values = _store.to_dict()
    scoped = SCOPED.get()
    if scoped:
        _merge_into(values, _nest(dict(_scoped_leaves(scoped))))
    return yaml.safe_dump(values, sort_keys=False, default_flow_style=False)


def write_user(key: str, value: Any) -> Path:
    """Check ``value`` and store it under ``key`` in the user file; return the file's path.

    Used by ``lazyarr config set``. Other keys in the file are kept (its comments
    are not). The running process sees the new value after :func:`refresh`.
    """
    path_key = _canonical(key)
    if path_key not in _LEAVES:
        raise _unknown(path_key)
    value = _check(path_key, value)
    path = user_path()
    data = _read_yaml(path)
    others = _nest({k: v for k, v in _flat_of(data).items() if k != path_key})
    _layer(others, f"config file {path}")  # refuse to build on a broken file (but fix this key)
    _merge_into(data, _nest({path_key: value}))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False, default_flow_style=False))
    os.replace(tmp, path)
    return path


def digest(keys: Iterable[str]) -> str:
    """A stable hash of the current values of ``keys`` (for cache keys of generated code).

    Byte sizes and durations are hashed by their meaning, so ``"1KiB"`` and
    ``1024`` give the same digest; key order does not matter.
    """
    import hashlib  # loads OpenSSL; only needed here

    if isinstance(keys, str):
        keys = [keys]
    items = {}
    for key in keys:
        path = _canonical(key)
        if path not in _LEAVES:
            raise _unknown(path)
        value = get(path)
        parse = _FORMATS.get(_LEAVES[path].get("format", ""))
        items[path] = parse(value) if parse and value is not None else value
    text = json.dumps(sorted(items.items()), separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
