"""Readers: stateful sources of samples (``ndd.readers.File`` ...).

Create a reader once and iterate ``reader.next_epoch(batch_size=N)`` once per epoch.

Examples
--------
>>> from headrace import readers
>>> r = readers.File(files=[readers.__file__], labels=[1])
>>> [(d.shape[0] > 0, int(lab.item())) for d, lab in r.next_epoch()]
[(True, 1)]
"""

from __future__ import annotations

from headrace.readers._base import Reader, ReaderState
from headrace.readers.caffe import Caffe, Caffe2
from headrace.readers.coco import COCO
from headrace.readers.file import File
from headrace.readers.mxnet import MXNet
from headrace.readers.nemo_asr import NemoAsr
from headrace.readers.npy import Numpy
from headrace.readers.tfrecord import TFRecord
from headrace.readers.video import Video
from headrace.readers.video_resize import VideoResize
from headrace.readers.webdataset import Webdataset

__all__ = [
    "COCO",
    "Caffe",
    "Caffe2",
    "File",
    "MXNet",
    "NemoAsr",
    "Numpy",
    "Reader",
    "ReaderState",
    "TFRecord",
    "Video",
    "VideoResize",
    "Webdataset",
]
