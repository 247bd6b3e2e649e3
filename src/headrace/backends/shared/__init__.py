"""Backend-neutral code that both backends (``backends/cpu``, ``backends/torch``) import; they
never import each other.

- :mod:`.common`: host-side math of the kernels (window overlaps, resampling coefficients,
  border indices, noise fields, reduction constants, histogram tables).
- :mod:`.misc`, :mod:`.arithmetic`, :mod:`.utilities`: batch kernels written once over an array
  namespace (numpy or torch); each backend binds them by name.
- :mod:`.host`, :mod:`.host_pixels`: kernels that run on the host for every device (random
  generators, decoders, OpenCV-only pixel ops); the torch backend uploads their outputs.
"""
