"""``typing.NamedTuple`` without importing ``typing`` or ``collections`` at run time.

Together they cost a hook start about a third of a bare interpreter start (see
docs/adr/0006-dependency-bootstrap.md). Modules on the hooks' path therefore write::

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        from .records import NamedTuple

mypy checks the real ``NamedTuple``; at run time this one builds an equivalent tuple class
from the annotated fields: construction by position or keyword, defaults, attribute access,
``_replace``, ``_asdict``, ``_fields``, the repr, and the class's own methods and docstring.
"""

_CLASS_ONLY = ("__annotations__", "__module__", "__qualname__", "__dict__", "__weakref__")


class _NamedTupleMeta(type):
    def __new__(mcls, name, bases, namespace):  # type: ignore[no-untyped-def]
        if not bases:  # NamedTuple itself
            return super().__new__(mcls, name, bases, namespace)
        fields = tuple(namespace.get("__annotations__", {}))
        defaults = {field: namespace[field] for field in fields if field in namespace}
        body = {key: value for key, value in namespace.items() if key not in fields and key not in _CLASS_ONLY}
        body.update(__slots__=(), _fields=fields, __new__=_constructor(name, fields, defaults))
        body.update(_replace=_replace, _asdict=_asdict, __repr__=_repr, __getnewargs__=_getnewargs)
        for index, field in enumerate(fields):
            body[field] = property(lambda self, index=index: tuple.__getitem__(self, index), doc=f"field {field}")
        cls = type(name, (tuple,), body)
        cls.__module__ = namespace.get("__module__", cls.__module__)
        cls.__qualname__ = namespace.get("__qualname__", name)
        return cls


def _constructor(name, fields, defaults):  # type: ignore[no-untyped-def]
    def __new__(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        if len(args) > len(fields):
            raise TypeError(f"{name}() takes {len(fields)} arguments but {len(args)} were given")
        values = list(args)
        for field in fields[len(args) :]:
            if field in kwargs:
                values.append(kwargs.pop(field))
            elif field in defaults:
                values.append(defaults[field])
            else:
                raise TypeError(f"{name}() missing required argument: {field!r}")
        if kwargs:
            raise TypeError(f"{name}() got unexpected arguments: {', '.join(sorted(kwargs))}")
        return tuple.__new__(cls, values)

    return __new__


def _replace(self, **changes):  # type: ignore[no-untyped-def]
    return type(self)(**dict(_asdict(self), **changes))


def _asdict(self):  # type: ignore[no-untyped-def]
    return dict(zip(self._fields, self))


def _getnewargs(self):  # type: ignore[no-untyped-def]
    return tuple(self)  # how pickle and copy rebuild it


def _repr(self):  # type: ignore[no-untyped-def]
    inner = ", ".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
    return f"{type(self).__name__}({inner})"


class NamedTuple(metaclass=_NamedTupleMeta):
    """Subclass with annotated fields: ``class Point(NamedTuple): x: int``."""
