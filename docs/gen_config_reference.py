"""The configuration reference, generated from the config models each time the site is built.

An mkdocs hook (``hooks:`` in ``mkdocs.yml``): ``on_files`` adds ``reference/configuration.md``,
rendered from the pydantic models of ``msagent/config`` (``TrainConfig`` for ``msagent train``,
``GatewayConfig`` for ``msagent serve``), so the reference cannot drift from the code. A key's
type and default come from the model; its meaning from the docstring that documents it: an
attribute docstring under the field, an ``Attributes:`` entry of its class (or of a base class),
else the field's ``description``. The docstrings are read with griffe (mkdocstrings' parser)
rather than by hand. ``python docs/gen_config_reference.py`` prints the page.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Iterator
from functools import cache
from typing import Any, Literal

import griffe
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from msagent.algorithm_config import PPOConfig
from msagent.config import ResourcesSection, TrainConfig
from msagent.config.algorithm import AlgorithmSection
from msagent.config.base import Section
from msagent.config.gateway import GameSection, GatewayConfig
from msagent.config.league import (LeagueExploiterRoleSection, MainExploiterRoleSection,
                                   MainRoleSection)
from msagent.experience.schema import GameSchema
from msagent.league.settings import (LeagueExploiterSettings, MainExploiterSettings,
                                     MainSettings)
from msagent.runtime.backend import Resources

PAGE = "reference/configuration.md"
DOCS_FROM: dict[type, type] = {
    AlgorithmSection: PPOConfig, ResourcesSection: Resources, GameSection: GameSchema,
    MainRoleSection: MainSettings, MainExploiterRoleSection: MainExploiterSettings,
    LeagueExploiterRoleSection: LeagueExploiterSettings,
}
"""Sections that mirror the class they are built into (as their modules say): a key that the
section leaves undocumented takes that class's docstring (its bases' too)."""
DEFAULTS_FROM: dict[type, type] = {AlgorithmSection: PPOConfig}
"""Sections whose keys are unset unless given, the dataclass's own defaults applying."""
ROOTS = (("`msagent train CONFIG.toml`", TrainConfig),
         ("`msagent serve GATEWAY.toml` (and `msagent ingest`, `msagent tokens`)", GatewayConfig))
INTRO = """# Configuration reference

Generated from the config models in `msagent/config/` each time this site is built, so it
lists exactly the keys the code accepts: each key's type, its default and the docstring that
documents it. Every table is strict ({rules}). `--set a.b=value` on the command line parses
`value` as a TOML literal (`3`, `0.5`, `true`, `"text"`, `[1, 2]`). Only `[scripts]` of a
training config and `[gateway]` with one `[[gateway.games]]` of a gateway config are required.
The [configuration guide](../guides/configuration.md) explains the keys by topic.
"""


def on_files(files: Any, config: Any) -> Any:
    """mkdocs hook: add the generated reference page to the site's files."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=render()))
    return files


def render() -> str:
    """The whole reference page as Markdown."""
    rules = _text(Section.__doc__ or "").removeprefix("A strict TOML table: ").rstrip(".")
    parts = [INTRO.format(rules=rules)]
    for title, root in ROOTS:
        parts.append(f"## {title}\n")
        parts.extend(_section(model, key, many) for model, key, many in _sections(root))
    return "\n".join(parts)


def _sections(model: type[BaseModel], key: str = "",
              many: bool = False) -> Iterator[tuple[type[BaseModel], str, bool]]:
    """The model and every nested section under it, depth first: (model, dotted key, array)."""
    yield model, key, many
    for name, field in model.model_fields.items():
        for sub, is_list in _nested(field.annotation):
            yield from _sections(sub, f"{key}.{name}" if key else name, is_list)


def _section(model: type[BaseModel], key: str, many: bool) -> str:
    """One table's heading, summary and its keys as a Markdown table."""
    header = f"[[{key}]]" if many else f"[{key}]" if key else "top level"
    lines = [f"### `{header}` {{#{key or model.__name__}}}\n", _summary(model), "",
             "| key | type | default | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        full = f"{key}.{name}" if key else name
        kind = _type(_annotation(model, name, field))
        if model in DEFAULTS_FROM:  # TOML has no null: these sections spell None "none"
            kind = kind.replace("unset", '`"none"`')
        lines.append(f"| `{full}` | {kind} | {_default(model, name, field)} "
                     f"| {_doc(model, name, field)}{_see(field, full)} |")
    return "\n".join(lines) + "\n"


def _nested(annotation: Any) -> list[tuple[type[BaseModel], bool]]:
    """The sections an annotation holds, each with whether it is an array of tables."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, False)]
    inner = [m for arg in typing.get_args(annotation) for m in _nested(arg)]
    many = typing.get_origin(annotation) is list
    return [(m, many or is_list) for m, is_list in inner]


def _see(field: FieldInfo, full: str) -> str:
    """A link to a nested section's own table."""
    return f" See [below](#{full})." if _nested(field.annotation) else ""


def _type(annotation: Any) -> str:
    """A key's type in TOML's words (``or`` instead of ``|``, which would split the cell)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return " or ".join(f"`{json.dumps(a)}`" for a in args)
    if origin is typing.Annotated:
        return _type(args[0])
    if origin in (typing.Union, type(int | None)):
        return " or ".join(_type(a) for a in args)
    if annotation is type(None):
        return "unset"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"
    if origin is list:
        inner = _type(args[0])
        return "array of tables" if inner == "table" else f"array of {inner}"
    if origin is dict:
        return f"table of {_type(args[1])}" if args[1] is not Any else "table"
    return f"`{getattr(annotation, '__name__', str(annotation))}`"


def _annotation(model: type[BaseModel], name: str, field: FieldInfo) -> Any:
    """A key's type: the dataclass's own where the section only makes its keys optional."""
    mirror = DEFAULTS_FROM.get(model)
    hints = typing.get_type_hints(mirror) if mirror is not None else {}
    return hints.get(name, field.annotation)


def _default(model: type[BaseModel], name: str, field: FieldInfo) -> str:
    """A key's default as TOML would write it (a mirrored field's from its dataclass)."""
    mirror = DEFAULTS_FROM.get(model)
    if mirror is not None and name in _dataclass_defaults(mirror):
        return _literal(_dataclass_defaults(mirror)[name])
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "(table)"
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        return _literal([v.model_dump(exclude_defaults=True) for v in value])
    return _literal(value)


def _literal(value: Any) -> str:
    """A value as a TOML literal in a code span; None (no TOML null) as "unset"."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float):
        return f"`{value!r}`"
    return f"`{json.dumps(value)}`".replace(": ", " = ")


@cache
def _dataclass_defaults(cls: type) -> dict[str, Any]:
    """A dataclass's field defaults by name."""
    return {f.name: f.default for f in dataclasses.fields(cls)}


def _doc(model: type[BaseModel], name: str, field: FieldInfo) -> str:
    """What documents a key: its docstring in the model (or a base, or the class the section
    mirrors), else its ``description``, else its table's own summary; a dash when none."""
    for cls in _doc_classes(model):
        text = _class_docs(cls).get(name)
        if text:
            return _text(text)
    nested = [_summary(sub) for sub, _ in _nested(field.annotation)]
    return _text(field.description or "") or " ".join(nested) or "—"


def _doc_classes(model: type) -> Iterator[type]:
    """The classes whose docstrings may document a model's keys, nearest first."""
    for cls in model.__mro__:
        yield cls
        if cls in DOCS_FROM:
            yield from DOCS_FROM[cls].__mro__


@cache
def _class_docs(cls: type) -> dict[str, str]:
    """A class's docs by attribute: its ``Attributes:`` entries, then attribute docstrings."""
    found = _griffe_class(cls)
    if found is None:
        return {}
    docs: dict[str, str] = {}
    if found.docstring is not None:
        for part in griffe.parse_google(found.docstring, warnings=False):
            if part.kind is griffe.DocstringSectionKind.attributes:
                docs.update({a.name: a.description for a in part.value})
    for name, member in found.members.items():
        if member.is_attribute and member.docstring is not None:
            docs[name] = member.docstring.value
    return docs


def _griffe_class(cls: type) -> griffe.Class | None:
    """griffe's view of a class of msagent's (None: not a class of a module griffe reads)."""
    if not cls.__module__.startswith("msagent."):
        return None
    try:
        found = _griffe_module(cls.__module__)[cls.__qualname__]
    except KeyError:
        return None
    return found if isinstance(found, griffe.Class) else None


def _griffe_module(name: str) -> griffe.Module:
    """A module of msagent as griffe reads it (statically, from its source)."""
    return _loader().modules_collection.get_member(name)


@cache
def _loader() -> griffe.GriffeLoader:
    """One griffe loader for the whole build, holding the whole package read once (loading
    each module by name re-read the package every time: 14 loads took 28 of the build's 31 s)."""
    loader = griffe.GriffeLoader(docstring_parser=griffe.Parser.google)
    loader.load("msagent")
    return loader


def _summary(model: type[BaseModel]) -> str:
    """A model's docstring up to its ``Attributes:`` block, as one Markdown paragraph."""
    doc = (model.__doc__ or "").split("Attributes:")[0]
    return _text(doc)


def _text(doc: str) -> str:
    """Docstring text as one Markdown line: RST's double backticks single, pipes escaped."""
    return " ".join(doc.split()).replace("``", "`").replace("|", "\\|")


if __name__ == "__main__":
    print(render())
