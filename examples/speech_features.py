"""Log-mel features of speech-like signals: pre-emphasis → spectrogram → mel → dB → normalize.

What it does
------------
1. Synthesises ``--count`` one-second signals with numpy (a few harmonics of a gliding pitch,
   noise, and silence before and after) and puts them in a ``Batch`` with ``ndd.batch``
   (a decoder would give the same batch from files).
2. Trims the silence: ``nonsilent_region`` gives each signal's (begin, length), ``slice`` cuts
   it.
3. Computes 25 ms / 10 ms log-mel spectrograms (``preemphasis_filter``, ``spectrogram``,
   ``mel_filter_bank``, ``to_decibels``) and normalises every mel band over time
   (``normalize`` with ``axes=[1]``); optionally MFCCs (``mfcc``).
4. Prints the shapes and checks the normalised bands (mean 0, standard deviation 1).

Run it
------
``python examples/speech_features.py [--count 8] [--device cpu|gpu]``.
"""

from __future__ import annotations

import argparse

import numpy as np

import headrace as ndd

SR = 16000


def synth(count: int, seed: int = 0) -> list[np.ndarray]:
    """``count`` signals: 1 s of harmonics of a gliding pitch plus noise, between silences."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        t = np.arange(SR) / SR
        f0 = rng.uniform(100, 220) * (1 + 0.3 * t)
        phase = 2 * np.pi * np.cumsum(f0) / SR
        voice = sum(np.sin(k * phase) / k for k in range(1, 6)) * 0.3
        voice += rng.normal(0, 0.01, SR)
        lead, tail = rng.integers(1000, 4000, 2)
        out.append(np.concatenate([np.zeros(lead), voice, np.zeros(tail)]).astype(np.float32))
    return out


def features(audio: ndd.Batch, mfcc: bool = False) -> tuple[ndd.Batch, ndd.Batch]:
    """Trimmed, normalised log-mel spectrograms (64 bands, "ft") and, with ``mfcc``, 13 MFCCs."""
    begin, length = ndd.nonsilent_region(audio, cutoff_db=-50, window_length=256)
    voiced = ndd.slice(audio, begin, length, axes=[0])
    emphasised = ndd.preemphasis_filter(voiced)
    spec = ndd.spectrogram(emphasised, nfft=512, window_length=400, window_step=160)
    mel = ndd.mel_filter_bank(spec, nfilter=64, sample_rate=SR, freq_high=8000)
    log_mel = ndd.to_decibels(mel, cutoff_db=-80)
    cepstra = ndd.mfcc(log_mel, n_mfcc=13, lifter=22.0) if mfcc else log_mel
    return ndd.normalize(log_mel, axes=[1]), cepstra


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=8)
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    signals = synth(args.count)
    audio = ndd.batch(signals, device=args.device)
    print(f"signals: {args.count}, lengths {[len(s) for s in signals]}")
    feats, mfccs = features(audio, mfcc=True)
    shapes = [t.shape for t in feats.tensors]
    print(f"log-mel: layout {feats.layout}, shapes {shapes}")
    print(f"mfcc: shapes {[t.shape for t in mfccs.tensors]}")
    z = [np.asarray(t.cpu()) for t in feats.tensors]
    mean = max(float(np.abs(a.mean(axis=1)).max()) for a in z)
    std = max(float(np.abs(a.std(axis=1) - 1).max()) for a in z)
    print(f"normalized: max |band mean| {mean:.1e}, max |band std - 1| {std:.1e}")
    frames = [s[1] for s in shapes]
    expected = [(1 + SR // 160) for _ in shapes]
    print(f"voiced frames: {frames} (1 s of voice is about {expected[0]} frames)")


if __name__ == "__main__":
    main()
