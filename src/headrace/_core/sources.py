"""Where a batch's samples come from, named only when a message needs it.

A reader knows each sample's dataset index; turning it into text ("file (record 7 at byte
offset 1234)") costs a string format per sample, and the text is read only when a sample fails.
:class:`SampleSources` keeps the indices and the dataset's naming function and formats on access.

Examples
--------
>>> names = SampleSources(lambda i: f"file{i}.jpg", [3, 1, 2])
>>> len(names), names[0], names[-1]
(3, 'file3.jpg', 'file2.jpg')
>>> list(names[1:]) == ["file1.jpg", "file2.jpg"]
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import overload


class SampleSources(Sequence[str | None]):
    """The sources of samples ``indices`` of a dataset whose ``name(index)`` says where sample
    ``index`` comes from; immutable, so batches made from the same read can share it."""

    __slots__ = ("_indices", "_name")

    def __init__(self, name: Callable[[int], str | None], indices: list[int]) -> None:
        self._name = name
        self._indices = indices

    def __len__(self) -> int:
        return len(self._indices)

    @overload
    def __getitem__(self, i: int) -> str | None: ...
    @overload
    def __getitem__(self, i: slice) -> SampleSources: ...
    def __getitem__(self, i: int | slice) -> str | SampleSources | None:
        if isinstance(i, slice):
            return SampleSources(self._name, self._indices[i])
        return self._name(self._indices[i])

    def __iter__(self) -> Iterator[str | None]:
        return map(self._name, self._indices)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self) -> tuple[type, tuple[list[str | None]]]:
        # pickled as the names (a list), never with the data set that names them
        return list, (list(self),)


__all__ = ["SampleSources"]
