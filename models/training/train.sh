#!/usr/bin/env bash
# One command for the shipped models (npm run models:train): installs the Debian packages it
# needs, builds the corpus allowed by bench/lists/train.txt, trains the BPE tokenizer, the
# causal LM and the code encoder under wall-clock budgets, exports ONNX into models/, writes the
# Node test fixtures, then validates with the Node tests and prints latency.
#   LM_MINUTES=60 LM2_MINUTES=45 ENC_MINUTES=25 bash models/training/train.sh   # the defaults: the shipped model's two runs
#   FROM=encoder bash models/training/train.sh      # resume at a stage (see pipeline.py)
#   LM_INIT=none LM_SIZE=medium bash models/training/train.sh   # the LM from scratch, another size
#   DEVICE=cuda LM_INIT=none LM_SIZE=large bash models/training/train.sh   # on a GPU machine
#   DEV_REPOS=DIR: the dev repositories checked out as DIR/python/* and DIR/java/* (default: fetched
#   into .work/dev-repos); the corpus drops near copies of their files.
# By default the LM continues from the shipped model (models/coderag-lm) on the larger corpus
# and keeps its tokenizer, so the encoder and reranker stay compatible.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
LM_MINUTES="${LM_MINUTES:-60}"
LM2_MINUTES="${LM2_MINUTES:-45}"
LM_INIT="${LM_INIT:-$root/models/coderag-lm}"
LM_SIZE="${LM_SIZE:-small}"
DEVICE="${DEVICE:-cpu}"
ENC_MINUTES="${ENC_MINUTES:-25}"
FROM="${FROM:-corpus}"
PY=/usr/bin/python3   # Debian's python3 (torch comes from apt); another python3 may shadow it on PATH

if [ -z "${SKIP_APT:-}" ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y python3-torch python3-onnx python3-regex python3-numpy \
    python3-sympy python3-toml libopenblas0-pthread openjdk-17-source
fi

bash "$here/fetch_debian.sh" "$here/.work/debian"
# The dev repositories themselves, so that the corpus drops near copies of their files (vendored
# or repackaged code inside allowed packages); without them only files on a dev path are dropped.
DEV_REPOS="${DEV_REPOS:-$here/.work/dev-repos}"
for lang in python java; do
  [ -d "$DEV_REPOS/$lang" ] && [ -n "$(ls -A "$DEV_REPOS/$lang")" ] || node "$root/bin/coderag.js" bench fetch "$root/bench/lists/dev-$lang.txt" "$DEV_REPOS/$lang"
done
dev_repos=("$DEV_REPOS"/python/* "$DEV_REPOS"/java/*)
[ -d "${dev_repos[0]}" ] || { echo "train.sh: no dev repositories under $DEV_REPOS (needed to drop their near copies from the corpus)" >&2; exit 2; }
init=()
if [ "$LM_INIT" != none ]; then
  # The warm start reads the shipped model; keep a copy, since export-lm overwrites models/coderag-lm.
  rm -rf "$here/.work/init-lm" && cp -r "$LM_INIT" "$here/.work/init-lm"
  init=(--lm-init-onnx "$here/.work/init-lm" --tokenizer-from "$here/.work/init-lm")
fi

# Shared CPU: low priority; OpenMP threads sleep instead of spinning when the other core is busy.
export OMP_WAIT_POLICY=PASSIVE
cd "$here"
nice -n 10 "$PY" pipeline.py --work "$here/.work" --models "$root/models" \
  --fixtures "$root/test/engine/models/fixtures/tokenizer_parity.json" \
  --lm-minutes "$LM_MINUTES" --lm2-minutes "$LM2_MINUTES" --enc-minutes "$ENC_MINUTES" --from "$FROM" \
  --device "$DEVICE" --lm-size "$LM_SIZE" "${init[@]}" --dev-repos "${dev_repos[@]}"
cp "$here/.work/lm_reference.json" "$root/test/engine/models/fixtures/lm_reference.json"
nice -n 10 "$PY" report.py --work "$here/.work" --models "$root/models"

cd "$root"
npx tsx models/training/bench_latency.ts 2 | tee "$here/.work/latency.txt"
"$PY" "$here/cards.py" --models "$root/models" --latency "$here/.work/latency.txt"
# The distilled reranker needs the LM and encoder above (its data runs the real retrieval).
[ -n "${SKIP_RERANKER:-}" ] || bash "$here/train_reranker.sh"
node scripts/runTests.mjs test/engine/models test/engine/rerank
du -sh --exclude=training models
