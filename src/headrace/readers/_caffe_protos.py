"""The Caffe ``Datum`` and Caffe2 ``TensorProtos`` messages, declared in code for ``protobuf``.

The two LMDB readers parse records with the ``protobuf`` runtime; the message schemas are
built here from ``descriptor_pb2`` (no generated ``_pb2`` files) in a private descriptor pool,
so they never clash with other copies of these schemas a program may load. Field numbers and
types are those of Caffe's ``caffe.proto`` and Caffe2's ``caffe2.proto`` (only the fields the
readers use, plus the ones writers commonly set; other fields are kept as unknown fields).

``messages()`` returns the classes (``Datum``, ``TensorProto``, ``TensorProtos``); tests and the
example use them to write databases.

Examples
--------
>>> import pytest
>>> _ = pytest.importorskip("google.protobuf")
>>> m = messages()
>>> d = m.Datum(channels=1, height=1, width=2, data=b"ab", label=3, encoded=False)
>>> m.Datum.FromString(d.SerializeToString()).label
3
>>> t = m.TensorProto(dims=[1], data_type=m.TensorProto.INT32, int32_data=[7])
>>> m.TensorProtos(protos=[t]).protos[0].int32_data[0]
7
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

from headrace._core.errors import BackendUnavailableError

#: The Caffe2 ``TensorProto.DataType`` values the readers use.
FLOAT, INT32, BYTE, STRING, INT64 = 1, 2, 3, 4, 10
_DATA_TYPES = (
    ("UNDEFINED", 0), ("FLOAT", 1), ("INT32", 2), ("BYTE", 3), ("STRING", 4), ("BOOL", 5),
    ("UINT8", 6), ("INT8", 7), ("UINT16", 8), ("INT16", 9), ("INT64", 10), ("FLOAT16", 12),
    ("DOUBLE", 13),
)  # fmt: skip


def require_protobuf() -> Any:
    """Import ``google.protobuf`` or raise an error naming the extra to install."""
    try:
        from google.protobuf import descriptor_pb2
    except ImportError as e:
        raise BackendUnavailableError(
            "readers.Caffe/readers.Caffe2 need the 'protobuf' package to parse records: "
            "pip install headrace[lmdb]"
        ) from e
    return descriptor_pb2


def _field(msg: Any, name: str, number: int, ftype: str, label: str = "optional", **kw: Any) -> Any:
    from google.protobuf import descriptor_pb2 as d

    f = msg.field.add(name=name, number=number)
    f.type = getattr(d.FieldDescriptorProto, f"TYPE_{ftype.upper()}")
    f.label = getattr(d.FieldDescriptorProto, f"LABEL_{label.upper()}")
    for k, v in kw.items():
        if k == "packed":
            f.options.packed = v
        else:
            setattr(f, k, v)
    return f


def _file(d: Any, name: str, package: str) -> Any:
    fp = d.FileDescriptorProto(name=name, package=package)
    fp.syntax = "proto2"
    return fp


@functools.cache
def messages() -> SimpleNamespace:
    """The message classes ``Datum`` (Caffe), ``TensorProto`` and ``TensorProtos`` (Caffe2)."""
    d = require_protobuf()
    from google.protobuf import descriptor_pool, message_factory

    caffe = _file(d, "headrace_caffe.proto", "caffe")
    datum = caffe.message_type.add(name="Datum")
    _field(datum, "channels", 1, "int32")
    _field(datum, "height", 2, "int32")
    _field(datum, "width", 3, "int32")
    _field(datum, "data", 4, "bytes")
    _field(datum, "label", 5, "int32")
    _field(datum, "float_data", 6, "float", "repeated")
    _field(datum, "encoded", 7, "bool", default_value="false")

    caffe2 = _file(d, "headrace_caffe2.proto", "caffe2")
    tp = caffe2.message_type.add(name="TensorProto")
    dt = tp.enum_type.add(name="DataType")
    for name, number in _DATA_TYPES:
        dt.value.add(name=name, number=number)
    _field(tp, "dims", 1, "int64", "repeated")
    _field(tp, "data_type", 2, "enum", type_name=".caffe2.TensorProto.DataType",
           default_value="FLOAT")  # fmt: skip
    _field(tp, "float_data", 3, "float", "repeated", packed=True)
    _field(tp, "int32_data", 4, "int32", "repeated", packed=True)
    _field(tp, "byte_data", 5, "bytes")
    _field(tp, "string_data", 6, "bytes", "repeated")
    _field(tp, "name", 7, "string")
    _field(tp, "double_data", 9, "double", "repeated", packed=True)
    _field(tp, "int64_data", 10, "int64", "repeated", packed=True)
    _field(tp, "raw_data", 13, "bytes")
    tps = caffe2.message_type.add(name="TensorProtos")
    _field(tps, "protos", 1, "message", "repeated", type_name=".caffe2.TensorProto")

    pool = descriptor_pool.DescriptorPool()
    pool.Add(caffe)
    pool.Add(caffe2)

    def cls(full_name: str) -> Any:
        desc = pool.FindMessageTypeByName(full_name)
        get = getattr(message_factory, "GetMessageClass", None)
        if get is not None:
            return get(desc)
        return message_factory.MessageFactory(pool).GetPrototype(desc)  # protobuf < 4.22

    return SimpleNamespace(
        Datum=cls("caffe.Datum"),
        TensorProto=cls("caffe2.TensorProto"),
        TensorProtos=cls("caffe2.TensorProtos"),
    )


__all__ = ["BYTE", "FLOAT", "INT32", "INT64", "STRING", "messages", "require_protobuf"]
