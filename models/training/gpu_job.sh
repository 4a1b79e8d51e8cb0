#!/usr/bin/env bash
# Train the LM on a GPU machine lent by the `device` tool, from the repository root there:
#   MINUTES=7 SIZE=large bash models/training/gpu_job.sh
# Reads models/training/.gpu-carry/corpus.tar.xz (gpu_carry.sh), tokenises with every core,
# trains with bf16 autocast, checkpoints every minute, and writes fp16 weight shards (each under
# the 16 MiB a returned file may have) and the training log to $OUT. Rehearsed on CPU by the
# tests with DEVICE=cpu SIZE=tiny.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CARRY="${CARRY:-$here/.gpu-carry}"
OUT="${OUT:?set OUT to the folder that comes back}"
MINUTES="${MINUTES:-7}"
SIZE="${SIZE:-large}"
DEVICE="${DEVICE:-cuda}"
BATCH="${BATCH:-64}"
LR="${LR:-6e-4}"
CTX="${CTX:-512}"
# Half of each batch from retrieval-augmented examples (rag_examples.py), as the shipped model's last run; 0: none.
RAG_FRAC="${RAG_FRAC:-0.5}"
RAG_SPLIT="${RAG_SPLIT:-train=40000,val=600}"
RAG_FRAG_SHARE="${RAG_FRAG_SHARE:-0.4}"
W="${GPU_WORK:-/tmp/coderag-lm-gpu}"
PY="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1
rm -rf "$W" && mkdir -p "$W"
t0=$(date +%s)
xz -dc "$CARRY/corpus.tar.xz" | tar -x -C "$W"
cd "$here"
"$PY" encode_corpus.py --work "$W" --procs "$(nproc)"
rag=()
if [ "$RAG_FRAC" != 0 ]; then
  "$PY" rag_examples.py --work "$W" --procs "$(nproc)" --ctx "$CTX" --per-split "$RAG_SPLIT" --frag-share "$RAG_FRAG_SHARE"
  rag=(--rag-frac "$RAG_FRAC")
fi
echo "gpu_job: corpus ready in $(( $(date +%s) - t0 )) s"
"$PY" train_lm.py --work "$W" --out "$W/lm" --device "$DEVICE" --size "$SIZE" --minutes "$MINUTES" --batch "$BATCH" --lr "$LR" --ctx "$CTX" "${rag[@]}" \
  --warmup 200 --eval-minutes 1 --eval-tokens 262144 --ckpt-minutes 1 --threads "$(nproc)" ${EXTRA:-} 2>&1 | tee "$OUT/train.log"
"$PY" shard_weights.py split --ckpt "$W/lm/best.pt" --out "$OUT" --max-mib 15
cp "$W/tokens/stats.json" "$OUT/token-stats.json"
echo "gpu_job: done in $(( $(date +%s) - t0 )) s"
