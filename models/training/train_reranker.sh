#!/usr/bin/env bash
# The distilled reranker, end to end (npm run models:train-reranker; train.sh runs it last):
#  1. fetch training repositories (Debian source packages from bench/lists/train.txt, never the
#     evaluation repositories) and copy a few Python standard library packages as extra repositories;
#  2. mine line-completion cases from them (`coderag bench build`);
#  3. run the pipeline's query and multi-path retrieval on every case and write the distillation
#     data of CodeRAG Alg. 2 with the ground-truth oracle teacher (`coderag eval distill`);
#  4. train the feature scorer and export models/coderag-reranker (train_reranker.py).
# Needs the shipped LM and encoder in models/ (probing query, dense path) and PyTorch (train.sh
# installs it). WORK defaults to models/training/.work/reranker.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
WORK="${WORK:-$here/.work/reranker}"
PY=/usr/bin/python3
PER_REPO_PY="${PER_REPO_PY:-200}"
PER_REPO_JAVA="${PER_REPO_JAVA:-80}"
mkdir -p "$WORK/repos/python" "$WORK/repos/java"
cd "$root"
npm run build --silent
cli() { node "$root/bin/coderag.js" "$@"; }

# 1. Repositories. sympy (its own folder: 300 cases, not 200) brings Python code that imports
# many names from its own modules, which the standard library packages rarely do.
printf 'markupsafe\npython-toml\npython-msgpack\n' > "$WORK/python.txt"
printf 'sympy\n' > "$WORK/sympy.txt"
mkdir -p "$WORK/repos/sympy"
printf 'commons-pool2\njcommander\ncommons-exec\nlibcommons-net-java\npicocli\njline3\nlibcommons-logging-java\njunit4\nlibhamcrest-java\n' > "$WORK/java.txt"
for pkg in $(cat "$WORK/python.txt" "$WORK/sympy.txt" "$WORK/java.txt"); do
  grep -qx "$pkg" "$root/bench/lists/train.txt" || { echo "$pkg is not in bench/lists/train.txt" >&2; exit 1; }
done
cli bench fetch "$WORK/python.txt" "$WORK/repos/python"
cli bench fetch "$WORK/java.txt" "$WORK/repos/java"
cli bench fetch "$WORK/sympy.txt" "$WORK/repos/sympy"
stdlib="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
for m in asyncio concurrent email http importlib json logging multiprocessing tomllib urllib wsgiref xml; do
  [ -d "$stdlib/$m" ] && [ ! -d "$WORK/repos/python/stdlib-$m" ] && mkdir -p "$WORK/repos/python/stdlib-$m" && cp -r "$stdlib/$m" "$WORK/repos/python/stdlib-$m/"
done

# 2. Cases.
cli bench build --repos "$WORK/repos/python" --lang python --task line --per-repo "$PER_REPO_PY" --seed 7 --out "$WORK/cases-python.jsonl"
cli bench build --repos "$WORK/repos/java" --lang java --task line --per-repo "$PER_REPO_JAVA" --seed 7 --out "$WORK/cases-java.jsonl"
cli bench build --repos "$WORK/repos/sympy" --lang python --task line --per-repo 300 --seed 7 --out "$WORK/cases-sympy.jsonl"
# Each case again with the cursor half-way into the first repository name its line uses: the
# half-typed-line features are learned from these (mined cursors sit at the start of a line).
for set in java python sympy; do cli bench midline --cases "$WORK/cases-$set.jsonl" --out "$WORK/cases-$set-mid.jsonl"; done

# 3. Distillation data (the production query: log-probability probing; paths df+s+d).
for mid in '' -mid; do
  cli eval distill --cases "$WORK/cases-java$mid.jsonl" --repos "$WORK/repos/java" --index-dir "$WORK/index" --out "$WORK/data-java$mid.jsonl"
  cli eval distill --cases "$WORK/cases-python$mid.jsonl" --repos "$WORK/repos/python" --index-dir "$WORK/index" --out "$WORK/data-python$mid.jsonl"
  cli eval distill --cases "$WORK/cases-sympy$mid.jsonl" --repos "$WORK/repos/sympy" --index-dir "$WORK/index" --out "$WORK/data-sympy$mid.jsonl"
done

# 4. Train and export.
OMP_WAIT_POLICY=PASSIVE nice -n 10 "$PY" "$here/train_reranker.py" --data "$(for s in java python sympy java-mid python-mid sympy-mid; do printf '%s,' "$WORK/data-$s.jsonl"; done | sed 's/,$//')" --out "$root/models/coderag-reranker"
echo "now measure it on the dev repositories: see models/coderag-reranker/README.md (Evaluation)"
