"""records.NamedTuple behaves like typing.NamedTuple for everything the library uses."""

import pickle
import typing

import pytest

from blackboard import records


def _point_class(base: type) -> type:
    class Point(base):  # type: ignore[misc, valid-type]
        """A point."""

        x: int
        y: int
        label: str = "origin"

        def norm1(self) -> int:
            return abs(self.x) + abs(self.y)

    return Point


Ours, Theirs = _point_class(records.NamedTuple), _point_class(typing.NamedTuple)


@pytest.mark.parametrize("Point", [Ours, Theirs], ids=["records", "typing"])
def test_behaves_like_a_named_tuple(Point: type) -> None:
    p = Point(1, y=-2)
    assert p == (1, -2, "origin") and tuple(p) == (1, -2, "origin")
    assert (p.x, p.y, p.label) == (1, -2, "origin")
    x, y, label = p
    assert (x, y, label) == (1, -2, "origin")
    assert p.norm1() == 3 and Point.__doc__ == "A point."
    assert p._replace(label="moved") == Point(1, -2, "moved")
    assert p._asdict() == {"x": 1, "y": -2, "label": "origin"}
    assert Point._fields == ("x", "y", "label")
    assert repr(p) == "Point(x=1, y=-2, label='origin')"
    assert isinstance(p, tuple) and hash(p) == hash((1, -2, "origin"))
    with pytest.raises(AttributeError):
        p.x = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        pytest.param((1,), {}, id="missing"),
        pytest.param((1, 2, "a", "extra"), {}, id="too-many"),
        pytest.param((1, 2), {"z": 3}, id="unknown-keyword"),
    ],
)
@pytest.mark.parametrize("Point", [Ours, Theirs], ids=["records", "typing"])
def test_bad_arguments_raise_type_error(Point: type, args: tuple, kwargs: dict) -> None:
    with pytest.raises(TypeError):
        Point(*args, **kwargs)


def test_records_are_module_level_classes_that_pickle() -> None:
    from blackboard.paths import Project

    project = Project("acme", "widget", "main", "test")
    assert Project.__module__ == "blackboard.paths" and Project.__qualname__ == "Project"
    assert pickle.loads(pickle.dumps(project)) == project
