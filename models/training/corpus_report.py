"""Markdown summary of the corpus: WORK/corpus/stats.json and WORK/tokens/stats.json.
  /usr/bin/python3 corpus_report.py --work WORK > CORPUS.md"""
import argparse, json, os


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    args = ap.parse_args(argv)
    c = json.load(open(os.path.join(args.work, 'corpus', 'stats.json')))
    tpath = os.path.join(args.work, 'tokens', 'stats.json')
    t = json.load(open(tpath)) if os.path.exists(tpath) else None
    print('# The training corpus (built by corpus.py)\n')
    print('Everything bench/lists/train.txt allows, fetched by `fetch_debian.sh`; no dev repository. '
          f"Held out for validation, whole repositories: {', '.join(c['val_repos'])}.\n")
    if t:
        print('| split | tokens | Python tokens | Java tokens | files | characters |')
        print('|---|---:|---:|---:|---:|---:|')
        for s in ('train', 'val'):
            print(f"| {s} | {t[s]['tokens']:,} | {t[s]['python_tokens']:,} | {t[s]['java_tokens']:,} | {c[s]['files']:,} | {c[s]['chars']:,} |")
        print()
    d = c['dropped']
    print(f"Dropped: {d['exact']:,} exact duplicates, {d['near']:,} near duplicates (MinHash Jaccard over normalised lines), "
          f"{d['dev_path']:,} files under a dev repository's source folder, {d['dev_near']:,} near copies of dev-repository files "
          f"({c.get('dev_files_checked', 0):,} dev files checked), {d['repo_cap']:,} over the per-repository cap, {d['too_big']:,} too big, "
          f"{d['not_utf8']:,} not UTF-8.\n")
    print('| repository | language | split | files | MB | dropped |')
    print('|---|---|---|---:|---:|---:|')
    for name, s in sorted(c['sources'].items(), key=lambda kv: (kv[1]['split'] != 'val', kv[1]['lang'], kv[0])):
        print(f"| {name} | {s['lang']} | {s['split']} | {s['files']:,} | {s['bytes'] / 1e6:.1f} | {s['dropped']:,} |")


if __name__ == '__main__':
    main()
