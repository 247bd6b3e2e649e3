"""``headrace bench --scaling``: throughput over thread and worker-process counts.

Each configuration runs in its own process (``headrace bench --result-line``), so that CPU
time and peak memory are its own, and prints one parseable line per run::

    RESULT <configuration> <pipeline> <img/s> <cores used>
    PEAK <configuration> <pipeline> <MiB: peak resident memory, main process + workers>

Configurations on a machine with C usable CPUs: ``headrace-t<T>`` (one process, T threads: 2, 4,
8, ... up to C), ``headrace-w<N>x<T>`` (N worker processes of T threads: N = 2, 4, ... C/2 with
T = 2, and N = C with T = 1), ``ceiling-t<C>`` (the same libraries called directly on a pool of
C threads, no framework: :mod:`headrace._ceiling`) and ``dataloader-w<C>`` (PyTorch DataLoader +
Pillow with C workers). The table at the end gives each configuration's ratio to the DataLoader.

Examples
--------
>>> [c.name for c in configurations(8)]  # doctest: +NORMALIZE_WHITESPACE
['headrace-t2', 'headrace-t4', 'headrace-t8', 'headrace-w2x2', 'headrace-w4x2', 'headrace-w8x1',
 'ceiling-t8', 'dataloader-w8']
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass

PROG = "headrace"


@dataclass(frozen=True)
class Config:
    """One row of the scaling table: threads per process, worker processes, which loader."""

    threads: int
    workers: int
    baseline: bool = False
    ceiling: bool = False

    @property
    def name(self) -> str:
        if self.baseline:
            return f"dataloader-w{self.workers}"
        if self.ceiling:
            return f"ceiling-t{self.threads}"
        if self.workers:
            return f"headrace-w{self.workers}x{self.threads}"
        return f"headrace-t{self.threads}"


def _powers(lo: int, hi: int) -> list[int]:
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return out


def configurations(cpus: int) -> list[Config]:
    """The configurations measured on a machine with ``cpus`` usable CPUs."""
    threads = _powers(2, cpus)
    if cpus not in threads:
        threads.append(cpus)
    rows = [Config(t, 0) for t in threads]
    rows += [Config(2, n) for n in _powers(2, cpus // 2)]
    if cpus >= 2:
        rows.append(Config(1, cpus))
    rows.append(Config(max(cpus, 1), 0, ceiling=True))
    rows.append(Config(1, max(cpus, 1), baseline=True))
    return rows


def _name(args: argparse.Namespace) -> str:
    workers = args.workers or 0
    return Config(args.threads or 1, workers, args.baseline_only, args.ceiling_only).name


def result_line(args: argparse.Namespace) -> int:
    """One configuration in this process: print its ``RESULT`` and ``PEAK`` lines."""
    import headrace as ndd
    from headrace import _benchmark as bm
    from headrace._cli_support import bench_images as _images

    pipeline = str(args.pipeline or "eval")
    images = _images(args.dir, args.limit, progress=False)
    workers = args.workers or 0
    if args.baseline_only:
        loader = bm.baseline_loader(
            images, pipeline, batch_size=args.batch_size, workers=workers, seed=args.seed,
            persistent=True,
        )  # fmt: skip
        count = lambda b: len(b[1])  # noqa: E731
    elif args.ceiling_only:
        from headrace._ceiling import CeilingLoader

        loader = CeilingLoader(
            images, pipeline, batch_size=args.batch_size, threads=args.threads or 1,
            seed=args.seed,
        )  # fmt: skip
        count = lambda b: len(b[1])  # noqa: E731
    else:
        threads = args.threads or ndd.get_num_threads()
        ndd.set_num_threads(threads)
        loader = bm.headrace_loader(
            images, pipeline, batch_size=args.batch_size, seed=args.seed,
            num_workers=workers, worker_threads=threads,
        )  # fmt: skip
        count = lambda b: b[0].shape[0]  # noqa: E731
    res = bm.run_epochs(
        lambda: loader, args.epochs, count=count, progress=False, children=workers > 0
    )
    peak = bm.tree_peak_rss_mib()
    r = bm.summarize(res)
    name = _name(args)
    print(f"RESULT {name} {pipeline} {r.img_per_s:.1f} {r.cores:.2f}", flush=True)
    print(f"PEAK {name} {pipeline} {peak:.0f}", flush=True)
    return 0


def run_scaling(args: argparse.Namespace) -> int:
    """``headrace bench --scaling``: every configuration, each in its own process."""
    from headrace._cli_support import DefaultStr
    from headrace._cli_support import bench_images as _images
    from headrace._exec.workers import usable_cpus as _usable_cpus

    images = _images(args.dir, args.limit, progress=not args.no_progress)
    root = str(images.root) if args.dir is None else args.dir
    limit = len(images.paths)
    cpus = _usable_cpus()
    explicit = args.pipeline and not isinstance(args.pipeline, DefaultStr)
    pipelines = [str(args.pipeline)] if explicit else ["eval", "train"]
    print(
        f"{PROG} bench --scaling: {limit} images from {images.root}, batch {args.batch_size}, "
        f"{args.epochs} epochs (the first is warm-up), {cpus} CPUs",
        flush=True,
    )
    table: dict[tuple[str, str], tuple[float, float, float]] = {}
    for pipeline in pipelines:
        for c in configurations(cpus):
            cmd = [
                sys.executable, "-m", "headrace.cli", "bench", root, "--result-line",
                "--pipeline", pipeline, "--threads", str(c.threads), "--workers", str(c.workers),
                "--epochs", str(args.epochs), "--limit", str(limit),
                "--batch-size", str(args.batch_size), "--seed", str(args.seed), "--no-progress",
            ]  # fmt: skip
            if c.baseline:
                cmd.append("--baseline-only")
            if c.ceiling:
                cmd.append("--ceiling-only")
            proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
            fields: dict[str, list[str]] = {}
            for line in proc.stdout.splitlines():
                if line.startswith(("RESULT ", "PEAK ")):
                    print(line, flush=True)
                    fields[line.split()[0]] = line.split()
            if proc.returncode != 0 or "RESULT" not in fields:
                tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
                print(f"FAILED {c.name} {pipeline}: {tail}", flush=True)
                continue
            res, peak = fields["RESULT"], fields.get("PEAK", ["", "", "", "nan"])
            table[(c.name, pipeline)] = (float(res[3]), float(res[4]), float(peak[3]))
    print()
    print(format_scaling(table, pipelines, configurations(cpus)))
    return 0


def format_scaling(
    table: dict[tuple[str, str], tuple[float, float, float]],
    pipelines: list[str],
    configs: list[Config],
) -> str:
    """The table: per configuration and pipeline, img/s, cores, peak MiB, ratio to the
    DataLoader.

    Examples
    --------
    >>> cs = [Config(2, 0), Config(1, 2, baseline=True)]
    >>> t = {("headrace-t2", "eval"): (300.0, 2.0, 400.0),
    ...      ("dataloader-w2", "eval"): (200.0, 2.0, 500.0)}
    >>> print(format_scaling(t, ["eval"], cs))  # doctest: +NORMALIZE_WHITESPACE
    configuration  eval img/s  cores  peak MiB  vs DataLoader
    headrace-t2         300.0   2.00       400          1.50x
    dataloader-w2       200.0   2.00       500          1.00x
    """
    base_name = next((c.name for c in configs if c.baseline), None)
    head = ["configuration"]
    for p in pipelines:
        head.append(f"{p} img/s  cores  peak MiB  vs DataLoader")
    lines = [f"{head[0]:<14} " + "  ".join(head[1:])]
    for c in configs:
        cells = [f"{c.name:<14}"]
        for p in pipelines:
            row = table.get((c.name, p))
            base = table.get((base_name, p)) if base_name else None
            if row is None:
                cells.append(f"{'-':>{len(p) + 6}}  {'-':>5}  {'-':>8}  {'-':>13}")
                continue
            ratio = f"{row[0] / base[0]:.2f}x" if base and base[0] > 0 else "-"
            cells.append(f"{row[0]:>{len(p) + 6}.1f}  {row[1]:5.2f}  {row[2]:8.0f}  {ratio:>13}")
        lines.append(" ".join(cells[:1]) + " " + "  ".join(cells[1:]))
    return "\n".join(lines)


__all__ = ["Config", "configurations", "format_scaling", "result_line", "run_scaling"]
