#!/usr/bin/env bash
# Pack what a GPU machine (the `device` tool) needs to train the LM: the corpus text and the
# tokenizer, xz-compressed (the working tree plus carried paths must stay under 64 MiB).
#   bash models/training/gpu_carry.sh [WORK] [DEST]     # default WORK models/training/.work, DEST models/training/.gpu-carry
# Then, on the device (carry: ["models/training/.gpu-carry"]):
#   MINUTES=7 SIZE=large bash models/training/gpu_job.sh       # shards come back under $OUT
# and here: python3 models/training/shard_weights.py join --shards FILES_AT --ckpt models/training/.work/lm-gpu/best.pt
#           python3 models/training/export_lm.py --work models/training/.work --ckpt models/training/.work/lm-gpu/best.pt --out models/coderag-lm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
WORK="${1:-$here/.work}"
DEST="${2:-$here/.gpu-carry}"
for f in corpus/train.jsonl corpus/val.jsonl tokenizer/tokenizer.json tokenizer/tokenizer_config.json; do
  [ -f "$WORK/$f" ] || { echo "gpu_carry: $WORK/$f missing (run the corpus and tokenizer stages first)" >&2; exit 2; }
done
mkdir -p "$DEST"
tar -C "$WORK" -cf - corpus/train.jsonl corpus/val.jsonl tokenizer/tokenizer.json tokenizer/tokenizer_config.json | xz -T0 -6 > "$DEST/corpus.tar.xz.tmp"
mv "$DEST/corpus.tar.xz.tmp" "$DEST/corpus.tar.xz"
mib=$(( $(stat -c %s "$DEST/corpus.tar.xz") / 1048576 ))
echo "gpu_carry: $DEST/corpus.tar.xz, $mib MiB"
if [ "$mib" -gt 44 ]; then echo "gpu_carry: over 44 MiB; with the working tree it would pass the device's 64 MiB (lower --max-repo-mb in corpus.py)" >&2; exit 1; fi
