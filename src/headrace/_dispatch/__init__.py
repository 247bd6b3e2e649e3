"""Operator declaration and dispatch, below every operator module.

- :mod:`.args`: argument declarations (:class:`~.args.Arg`), converters, per-sample values.
- :mod:`.schema`: :class:`~.schema.OpSchema` (one per operator), the registry, kernels found by
  name in ``headrace.backends.<backend>.<family>``.
- :mod:`.planned`: the planned-kernel mechanism (per-sample plans, one pixel kernel per backend).
- :mod:`.call`: dispatch of one call (bind inputs and arguments, pick the device, launch).
- :mod:`.kernel_context`: what a kernel receives besides its inputs.
- :mod:`.hooks`: where capture mode attaches.

``docs/adding-an-operator.md`` shows how to add an operator.
"""
