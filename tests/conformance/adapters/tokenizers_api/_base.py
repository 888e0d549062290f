"""The shared part of the ``tokenizers`` component adapters: each adapter object holds the
arguments of its HF constructor as the component's tokenizer.json object, and the tokviz
component is built from that object by the engine's ``*_from_json`` registry whenever it is used.
Attributes read and write the object's fields (HF's getters and setters); pickling goes through
the tokviz component's ``to_json`` (what tokviz offers), never through the real library."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from tokviz.engine.decoders import decoder_from_json
from tokviz.engine.models import model_from_json
from tokviz.engine.normalizers import normalizer_from_json
from tokviz.engine.pre_tokenizers import pre_tokenizer_from_json
from tokviz.engine.processors import post_processor_from_json

BUILDERS = {
    "model": model_from_json,
    "normalizer": normalizer_from_json,
    "pre_tokenizer": pre_tokenizer_from_json,
    "post_processor": post_processor_from_json,
    "decoder": decoder_from_json,
}


# family -> tokenizer.json type -> adapter class
CLASSES: dict[str, dict[str, type[Component]]] = {}


def to_json(value: Any) -> Any:
    """An argument as tokenizer.json: components by their objects, lists item by item."""
    if isinstance(value, Component):
        return value._json()
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value


class Component:
    """One HF component over the tokviz component of the same tokenizer.json ``"type"``."""

    family: ClassVar[str]
    type_name: ClassVar[str]
    #: python attribute -> tokenizer.json field, where HF's names differ
    aliases: ClassVar[dict[str, str]] = {}
    #: fields HF's Python API has no getter or setter for
    hidden: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "type_name" in cls.__dict__:
            CLASSES.setdefault(cls.family, {})[cls.type_name] = cls

    def __init__(self, **fields: Any) -> None:
        object.__setattr__(self, "_fields", dict(fields))

    def _json(self) -> dict[str, Any]:
        return {"type": self.type_name, **{k: to_json(v) for k, v in self._fields.items()}}

    def _engine(self) -> Any:
        """The tokviz component (built anew: the fields may have been set since)."""
        return BUILDERS[self.family](self._json(), where=self.family)

    def __getattr__(self, name: str) -> Any:
        fields = self.__dict__.get("_fields", {})
        key = self.aliases.get(name, name)
        if key in fields and key not in self.hidden:
            return fields[key]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        key = self.aliases.get(name, name)
        if key not in self._fields or key in self.hidden:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        self._fields[key] = value

    def __getstate__(self) -> str:
        return json.dumps(self._engine().to_json())

    def __reduce__(self) -> tuple:
        return (rebuild, (type(self), self._engine().to_json()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Component) and self._json() == other._json()

    __hash__ = object.__hash__


def without_arguments(base: type[Component], name: str, module: str) -> type[Component]:
    """The component ``name`` of ``base``'s family that takes no arguments (``NFC()``, ``Whitespace()``)."""
    return type(name, (base,), {"type_name": name, "__init__": lambda self: base.__init__(self), "__module__": module})


def rebuild(cls: type[Component], obj: dict[str, Any]) -> Component:
    """The adapter object of a tokenizer.json component object (unpickling)."""
    out = cls.__new__(cls)
    fields = {k: v for k, v in obj.items() if k != "type"}
    key = getattr(cls, "key", None)
    if key is not None:
        fields[key] = [rebuild(CLASSES[cls.family][item["type"]], item) for item in fields[key]]
    object.__setattr__(out, "_fields", fields)
    return out


def from_file_json(obj: dict[str, Any] | None, family: str) -> Component | None:
    """The adapter object of a component object read from a file (None stays None)."""
    return None if obj is None else rebuild(CLASSES[family][obj["type"]], obj)


class SequenceOf(Component):
    """A Sequence component: its items are adapter objects (HF's item getters return views that
    write through, so the items are kept as objects and serialized on use)."""

    key: ClassVar[str]

    def __init__(self, items: list[Component]) -> None:
        super().__init__(**{self.key: list(items)})

    def __getitem__(self, i: int) -> Component:
        return self._fields[self.key][i]

    def __setitem__(self, i: int, value: Component) -> None:
        self._fields[self.key][i] = value

    def __len__(self) -> int:
        return len(self._fields[self.key])
