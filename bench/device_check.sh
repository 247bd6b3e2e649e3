#!/bin/bash
# One prepared run for a session that has the GPU machine (H200 + 16 cores): the project's suite on
# real CUDA, the GPU bench, the 16-core scaling rows, and the GIL figure, each with a time limit so
# the whole run stays under ~8 minutes. Results land in $OUT (or ./device-out).
#
# Wheels the machine lacks travel in .whl/ (git-ignored); fetch them here first (see
# ../shared/bench/README.md): simplejpeg soundfile cffi pycparser nvidia-nvimgcodec-cu13
# "nvidia-nvjpeg>=13" py-spy, for python 3.12 manylinux. Then, with the device tool:
#   run(command="bash bench/device_check.sh", carry=[".whl"], timeout_s=560)
set -u
OUT=${OUT:-device-out}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 3
fi
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH
D=$(python3 -c "from headrace import sample_data as s; print(s.image_folder('/tmp/d', num_images=1024, num_classes=16, progress=False))")
echo "== suite on CUDA (HEADRACE_FAKE_GPU=0)"
HEADRACE_FAKE_GPU=0 timeout 150 python3 -m pytest -q -p no:cacheprovider -n 12 -rfE tests \
  > "$OUT/suite_cuda.log" 2>&1
grep -E "^(FAILED|ERROR)|[0-9]+ (passed|failed)" "$OUT/suite_cuda.log" | tail -60
echo "== GPU bench"
timeout 60 python3 bench/gpu.py --data "$D" --reps 3 --threads 16 2>&1 \
  | grep -E "^(RESULT|RATIO|#)" | tee "$OUT/gpu.log"
echo "== GPU profile (eval: hw_decoder_load=1.0 A/B, then one epoch under torch.profiler)"
timeout 60 python3 bench/gpu.py --data "$D" --reps 2 --threads 16 --rows eval --profile 2>&1 \
  | tee "$OUT/gpu_profile.log" | grep -E "^(RESULT|#)|Self CUDA|cuda" | head -30
echo "== scaling (img/s, cores; PEAK: MiB of all processes)"
for P in eval train; do for C in "2 0" "16 0" "2 8" "1 16" "1 16 b"; do set -- $C
  timeout 20 python3 -m headrace.cli bench "$D" --result-line --pipeline $P --threads $1 \
    --workers $2 --epochs 2 --limit 1024 --batch-size 128 --no-progress ${3:+--baseline-only} 2>&1 \
    | grep -E "^(RESULT|PEAK)"
done; done | tee "$OUT/scaling.log"
echo "== capture-mode loop: eager, captured in one process, captured in 8 worker processes"
timeout 90 python3 bench/capture.py "$D" --steps 64 --batch-size 128 --step-ms 0 --workers 8 2>&1 \
  | tail -6 | tee "$OUT/capture_workers.log"
echo "== GIL per image (2 threads)"
timeout 60 python3 bench/gil.py "$D" --threads 2 --epochs 1 > "$OUT/gil.log" 2>&1
grep -E "^\[|GIL held" "$OUT/gil.log" | head -8
