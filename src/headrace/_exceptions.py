"""The reference's ``_exceptions`` module path for its displaced-error types.

``ndd._exceptions.DisplacedEvaluationError`` (and its two kinds) are the classes of
:mod:`headrace._core.displaced`: an error an operator raised in ``eager`` or ``deferred`` mode
is re-raised where its result is consumed as an instance of both its own type and one of these.

Examples
--------
>>> import headrace as ndd
>>> issubclass(ndd._exceptions.DeferredEvaluationError, ndd._exceptions.DisplacedEvaluationError)
True
"""

from headrace._core.displaced import (
    AsynchronousExecutionError,
    DeferredEvaluationError,
    DisplacedEvaluationError,
)

__all__ = ["AsynchronousExecutionError", "DeferredEvaluationError", "DisplacedEvaluationError"]
