#!/usr/bin/env bash
# One command for the shipped models (npm run models:train): installs the Debian packages it
# needs, builds the corpus allowed by ../shared/bench/train.txt, trains the BPE tokenizer, the
# causal LM and the code encoder under wall-clock budgets, exports ONNX into models/, writes the
# Node test fixtures, then validates with the Node tests and prints latency.
#   LM_MINUTES=90 LM2_MINUTES=85 ENC_MINUTES=25 bash models/training/train.sh
#   FROM=encoder bash models/training/train.sh      # resume at a stage (see pipeline.py)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
LM_MINUTES="${LM_MINUTES:-90}"
LM2_MINUTES="${LM2_MINUTES:-85}"
ENC_MINUTES="${ENC_MINUTES:-25}"
FROM="${FROM:-corpus}"
PY=/usr/bin/python3   # Debian's python3 (torch comes from apt); another python3 may shadow it on PATH

if [ -z "${SKIP_APT:-}" ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y python3-torch python3-onnx python3-regex python3-numpy \
    python3-sympy python3-toml libopenblas0-pthread openjdk-17-source
fi

# Shared CPU: low priority; OpenMP threads sleep instead of spinning when the other core is busy.
export OMP_WAIT_POLICY=PASSIVE
cd "$here"
nice -n 10 "$PY" pipeline.py --work "$here/.work" --models "$root/models" \
  --fixtures "$root/test/engine/models/fixtures/tokenizer_parity.json" \
  --lm-minutes "$LM_MINUTES" --lm2-minutes "$LM2_MINUTES" --enc-minutes "$ENC_MINUTES" --from "$FROM"
cp "$here/.work/lm_reference.json" "$root/test/engine/models/fixtures/lm_reference.json"
nice -n 10 "$PY" report.py --work "$here/.work" --models "$root/models"

cd "$root"
npx tsx models/training/bench_latency.ts 2 | tee "$here/.work/latency.txt"
"$PY" "$here/cards.py" --models "$root/models" --latency "$here/.work/latency.txt"
# The distilled reranker needs the LM and encoder above (its data runs the real retrieval).
[ -n "${SKIP_RERANKER:-}" ] || bash "$here/train_reranker.sh"
node scripts/runTests.mjs test/engine/models test/engine/rerank
du -sh --exclude=training models
