"""``tf.train.Example`` messages for ``readers.TFRecord``, built at run time with ``protobuf``.

The schema (``tensorflow/core/example/{example,feature}.proto``: ``Example`` → ``Features`` →
``map<string, Feature>``, each ``Feature`` one of ``BytesList`` / ``FloatList`` /
``Int64List``) is declared here as a ``FileDescriptorProto`` in a private descriptor pool, so
neither generated code nor TensorFlow is needed, and a TensorFlow in the same process (which
registers the same names in the default pool) does not clash.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from headrace._core.errors import BackendUnavailableError

EXTRA_HINT = "pip install headrace[tfrecord]"


def _missing(what: str) -> BackendUnavailableError:
    return BackendUnavailableError(
        f"readers.TFRecord needs the {what} package, which is not installed: run `{EXTRA_HINT}`."
    )


def crc32c_module() -> Any:
    """``google_crc32c``, or a clear error naming the extra to install."""
    try:
        import google_crc32c
    except ImportError:
        raise _missing("google-crc32c") from None
    return google_crc32c


@cache
def example_class() -> Any:
    """The ``tensorflow.Example`` message class (protobuf), made once.

    Examples
    --------
    >>> Example = example_class()
    >>> ex = Example()
    >>> ex.features.feature["label"].int64_list.value.append(3)
    >>> Example.FromString(ex.SerializeToString()).features.feature["label"].int64_list.value[0]
    3
    """
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        raise _missing("protobuf") from None
    fd = descriptor_pb2.FileDescriptorProto(
        name="headrace/tfrecord_example.proto", package="tensorflow", syntax="proto3"
    )
    F = descriptor_pb2.FieldDescriptorProto
    repeated, optional = F.LABEL_REPEATED, F.LABEL_OPTIONAL

    def message(name: str, *fields: tuple[str, int, int, int, str | None, int | None]) -> Any:
        m = fd.message_type.add(name=name)
        for fname, number, label, ftype, type_name, oneof in fields:
            f = m.field.add(name=fname, number=number, label=label, type=ftype)
            if type_name:
                f.type_name = type_name
            if oneof is not None:
                f.oneof_index = oneof
        return m

    message("BytesList", ("value", 1, repeated, F.TYPE_BYTES, None, None))
    message("FloatList", ("value", 1, repeated, F.TYPE_FLOAT, None, None))
    message("Int64List", ("value", 1, repeated, F.TYPE_INT64, None, None))
    feature = message(
        "Feature",
        ("bytes_list", 1, optional, F.TYPE_MESSAGE, ".tensorflow.BytesList", 0),
        ("float_list", 2, optional, F.TYPE_MESSAGE, ".tensorflow.FloatList", 0),
        ("int64_list", 3, optional, F.TYPE_MESSAGE, ".tensorflow.Int64List", 0),
    )
    feature.oneof_decl.add(name="kind")
    features = message(
        "Features",
        ("feature", 1, repeated, F.TYPE_MESSAGE, ".tensorflow.Features.FeatureEntry", None),
    )
    entry = features.nested_type.add(name="FeatureEntry")
    entry.field.add(name="key", number=1, label=optional, type=F.TYPE_STRING)
    entry.field.add(
        name="value", number=2, label=optional, type=F.TYPE_MESSAGE, type_name=".tensorflow.Feature"
    )
    entry.options.map_entry = True
    message("Example", ("features", 1, optional, F.TYPE_MESSAGE, ".tensorflow.Features", None))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorflow.Example"))


def examples_class() -> Any:
    """A message of one repeated field, ``Example examples = 1``: several serialized examples,
    each framed as that field, parse in one call (with the same result as one by one).

    Examples
    --------
    >>> ex = example_class()()
    >>> ex.features.feature["label"].int64_list.value.append(3)
    >>> data = ex.SerializeToString()
    >>> framed = (b"\\x0a" + bytes([len(data)]) + data) * 2
    >>> [e == ex for e in examples_class().FromString(framed).examples]
    [True, True]
    """
    return _examples_class(example_class())


@cache
def _examples_class(example_cls: Any) -> Any:
    """The ``Examples`` message next to ``example_cls`` in its descriptor pool (made once per
    pool: :func:`example_class` makes a new one when its cache is cleared)."""
    from google.protobuf import descriptor_pb2, message_factory

    example = example_cls.DESCRIPTOR
    fd = descriptor_pb2.FileDescriptorProto(
        name="headrace/tfrecord_examples.proto",
        package="headrace",
        syntax="proto3",
        dependency=[example.file.name],
    )
    F = descriptor_pb2.FieldDescriptorProto
    fd.message_type.add(name="Examples").field.add(
        name="examples",
        number=1,
        label=F.LABEL_REPEATED,
        type=F.TYPE_MESSAGE,
        type_name=".tensorflow.Example",
    )
    pool = example.file.pool
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("headrace.Examples"))


__all__ = ["EXTRA_HINT", "crc32c_module", "example_class", "examples_class"]
