"""Reading YAML configs safely: bounded size, bounded alias expansion, no duplicate keys."""

from __future__ import annotations

import os
from typing import Any

import yaml

from zerochess.errors import ConfigError, UserError, quote
from zerochess.user_files import MAX_CONFIG_BYTES, decode_text, read_user_bytes

MAX_YAML_VALUES = 1_000_000  # scalars, lists and mappings, aliases expanded
MAX_YAML_DEPTH = 200  # nesting of lists and mappings


class YamlLimitError(yaml.YAMLError):
    """A document beyond the loader's limits (size after aliases, depth, duplicates)."""


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """Values under ``root`` with aliases expanded, counted once per distinct node (an
    alias shares its anchor's node); stops past ``limit``. Raises ``YamlLimitError`` for
    a recursive alias or nesting deeper than ``MAX_YAML_DEPTH``."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    # iterative post-order walk: (node, children pushed?)
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        key = id(node)
        if expanded:
            active.discard(key)
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            sizes[key] = min(total, limit + 1)
            continue
        if key in sizes:
            continue
        if key in active:
            raise YamlLimitError("a recursive alias (a value that contains itself)")
        if len(active) >= MAX_YAML_DEPTH:
            raise YamlLimitError(f"nested more than {MAX_YAML_DEPTH} levels deep")
        children = _children(node)
        if not children:
            sizes[key] = 1
            continue
        active.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


class SafeConfigLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with an alias-expansion budget and duplicate keys refused."""

    max_values = MAX_YAML_VALUES

    def compose_document(self) -> yaml.Node | None:
        node = super().compose_document()
        if node is not None:
            size = _expanded_size(node, self.max_values)
            if size > self.max_values:
                raise YamlLimitError(
                    f"the document holds more than {self.max_values:,} values once its "
                    "aliases are expanded (a 'billion laughs' document?)")
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, str] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                mark = key_node.start_mark
                line = f"line {mark.line + 1}, column {mark.column + 1}"
                try:
                    first = seen.get(key)
                except TypeError:
                    continue  # an unhashable key: the constructor reports it
                if first is not None:
                    raise YamlLimitError(
                        f"duplicate key {quote(key)} ({first} and {line}): the "
                        "second would silently replace the first")
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


def load_yaml_text(text: str, where: str, error: type[UserError] = ConfigError) -> Any:
    """The document in ``text`` (``where`` names it in errors); ``error`` on bad YAML or
    a document beyond the loader's limits."""
    try:
        return yaml.load(text, Loader=SafeConfigLoader)  # noqa: S506 (a SafeLoader)
    except YamlLimitError as err:
        raise error(f"{where}: {err}") from None
    except yaml.YAMLError as err:
        problem = getattr(err, "problem", None) or getattr(err, "context", None)
        first = problem or (str(err).splitlines() or [type(err).__name__])[0]
        mark = getattr(err, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise error(f"{where}: invalid YAML: {first}{at}") from None
    except RecursionError:
        raise error(f"{where}: invalid YAML: nested too deeply") from None


def load_yaml_file(path: object, what: str = "config file",
                   error: type[UserError] = ConfigError) -> Any:
    """The YAML document of a user's file: a regular file of at most ``MAX_CONFIG_BYTES``
    bytes of UTF-8 (``zerochess.user_files``), loaded by ``SafeConfigLoader``."""
    data = read_user_bytes(path, what, MAX_CONFIG_BYTES, error)
    where = os.fspath(path)  # type: ignore[arg-type]
    return load_yaml_text(decode_text(data, what, where, error), where, error)


__all__ = ["MAX_YAML_DEPTH", "MAX_YAML_VALUES", "SafeConfigLoader", "YamlLimitError",
           "load_yaml_file", "load_yaml_text"]
