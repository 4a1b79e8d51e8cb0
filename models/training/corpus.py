"""Build the training corpus allowed by bench/lists/train.txt.

Sources ("repositories"): the Python standard library of the machine's interpreter, OpenJDK 17's
src.zip (openjdk-17-source; each module is one repository), the upstream tarballs of the Debian
source packages listed in train.txt and the .py files of the python3-* binary packages listed
there (both fetched by fetch_debian.sh into --debian). Never the evaluation repositories: a
file whose path holds a dev package's source folder is refused, and with --dev-repos the files
that nearly duplicate a dev repository's file are dropped too.

Files are deduplicated exactly (whitespace-insensitive hash) and nearly (MinHash over the set
of a file's normalised lines, Jaccard >= --near); the validation split is by repository
(--val-repos), read first, so a training file that nearly copies a held-out file is dropped.
Output: WORK/corpus/{train,val}.jsonl (one {"path","repo","lang","text"} per file) and
WORK/corpus/stats.json.
"""
import argparse, glob, hashlib, io, json, os, re, subprocess, sys, tarfile, zipfile
import numpy as np

# A dev repository's own source folder, wherever it appears (also repackaged copies).
DEV_MARKERS = ('jinja2/', 'toolz/', 'h11/', 'mesonbuild/', 'ldap3/', 'commons/lang3/', 'commons/io/',
               'org/jsoup/', 'antlr/v4/', 'commons/vfs2/', 'commons/codec/', 'util/codec/', 'javax/json/',
               'jakarta/json/', 'glassfish/json/')
DEV_PACKAGES = ('libcommons-lang3-java', 'libcommons-io-java', 'jsoup', 'antlr4', 'libcommons-vfs-java',
                'libcommons-codec-java', 'libjsonp-java', 'jinja2', 'toolz', 'python-h11', 'meson', 'python-ldap3')
PY_SOURCE_PACKAGES = ('markupsafe', 'python-toml', 'python-msgpack', 'sympy')
JAVA_MODULES = ('java.base', 'java.sql', 'java.net.http', 'java.logging', 'java.xml', 'java.desktop',
                'jdk.compiler', 'java.management', 'jdk.jfr', 'java.naming', 'jdk.httpserver',
                'java.compiler', 'jdk.jshell', 'java.prefs', 'java.rmi', 'jdk.javadoc', 'jdk.jdeps')
DEFAULT_VAL = ('python3-click', 'python3-requests', 'python3-flask', 'python3-werkzeug', 'jcommander', 'commons-pool2', 'libcommons-net-java')
PY_SKIP_DIRS = {'__pycache__', 'test', 'tests', 'idle_test', 'benchmarks', 'site-packages', 'dist-packages'}
LICENSE_RE = re.compile(r'\A\s*/\*.*?\*/\s*', re.S)
PY_LICENSE_RE = re.compile(r'\A(#[^\n]*\n)+')
NPERM, BANDS = 64, 16
_P = (1 << 61) - 1
_rng = np.random.default_rng(12345)
_A = _rng.integers(1, _P, NPERM, dtype=np.uint64)
_B = _rng.integers(0, _P, NPERM, dtype=np.uint64)


def strip_java_license(text):
    m = LICENSE_RE.match(text)
    if m and ('Copyright' in m.group(0) or 'LICENSE' in m.group(0).upper()):
        return text[m.end():]
    return text


def strip_py_license(text):
    m = PY_LICENSE_RE.match(text)
    if m and 'Copyright' in m.group(0):
        return text[m.end():]
    return text


def is_dev_path(path):
    p = '/' + path.lower()
    return any('/' + m in p for m in DEV_MARKERS)


def line_set(text):
    """Hashes of the distinct normalised non-trivial lines: the unit of near-duplication."""
    out = set()
    for line in text.splitlines():
        s = ''.join(line.split())
        if len(s) > 3:
            out.add(int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), 'little') & _P)
    return out


def minhash(lines):
    x = np.fromiter(lines, dtype=np.uint64, count=len(lines))
    # (a*x + b) mod p on 61-bit values overflows uint64; fold x to 30 bits first (a hash anyway).
    x = x & np.uint64((1 << 30) - 1)
    h = (np.outer(_A & np.uint64((1 << 31) - 1), x) + _B[:, None]) % np.uint64(_P)
    return h.min(axis=1)


class Dedup:
    def __init__(self, near):
        self.near = near
        self.exact = set()
        self.sigs = []
        self.buckets = {}

    def check(self, text, register=True):
        """'exact', 'near' or None (new); new files are registered."""
        key = hashlib.sha1(re.sub(r'\s+', '', text).encode()).digest()
        if key in self.exact:
            return 'exact'
        lines = line_set(text)
        sig = minhash(lines) if len(lines) >= 5 else None
        if sig is not None:
            r = NPERM // BANDS
            seen = set()
            for b in range(BANDS):
                for j in self.buckets.get((b, sig[b * r:(b + 1) * r].tobytes()), ()):
                    if j not in seen:
                        seen.add(j)
                        if float(np.mean(self.sigs[j] == sig)) >= self.near:
                            return 'near'
        if register:
            self.exact.add(key)
            if sig is not None:
                j = len(self.sigs)
                self.sigs.append(sig)
                r = NPERM // BANDS
                for b in range(BANDS):
                    self.buckets.setdefault((b, sig[b * r:(b + 1) * r].tobytes()), []).append(j)
        return None


def stdlib_files(limit):
    stdlib = os.path.dirname(os.__file__)
    n = 0
    for root, dirs, files in os.walk(stdlib):
        dirs[:] = sorted(d for d in dirs if d not in PY_SKIP_DIRS)
        for f in sorted(files):
            if f.endswith('.py') and n < limit:
                n += 1
                p = os.path.join(root, f)
                try:
                    yield 'stdlib/' + os.path.relpath(p, stdlib), open(p, 'rb').read()
                except OSError:
                    continue


def tar_files(path, ext, skip_dirs=()):
    with tarfile.open(path, 'r:*') as t:
        for m in t:
            if not m.isfile() or not m.name.endswith(ext):
                continue
            parts = m.name.split('/')
            if any(d in skip_dirs for d in parts[:-1]):
                continue
            f = t.extractfile(m)
            if f is not None:
                yield '/'.join(parts[1:]) or m.name, f.read()


def deb_py_files(path):
    """The .py files of a binary package (dpkg-deb --fsys-tarfile, read as a stream)."""
    data = subprocess.run(['dpkg-deb', '--fsys-tarfile', path], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data), mode='r:') as t:
        for m in t:
            if not m.isfile() or not m.name.endswith('.py') or 'dist-packages/' not in m.name:
                continue
            rel = m.name.split('dist-packages/', 1)[1]
            if any(d in PY_SKIP_DIRS for d in rel.split('/')[:-1]):
                continue
            f = t.extractfile(m)
            if f is not None:
                yield rel, f.read()


def jdk_modules(src_zip, limit_mb):
    if not src_zip or not os.path.exists(src_zip):
        print(f'corpus: {src_zip} missing (apt-get install openjdk-17-source); no JDK', file=sys.stderr)
        return
    z = zipfile.ZipFile(src_zip)  # read lazily by the generators below; closed when they are
    if True:
        names = sorted(n for n in z.namelist() if n.endswith('.java') and n.split('/')[0] in JAVA_MODULES)
        budget = [limit_mb * 1e6]

        def read(files):
            for n in files:
                if budget[0] <= 0:
                    return
                data = z.read(n)
                budget[0] -= len(data)
                yield n, data
        for module in JAVA_MODULES:
            yield 'openjdk-17 ' + module, 'java', read([n for n in names if n.split('/')[0] == module])


def repositories(args):
    """(repo, lang, iterator of (path, bytes)) for every allowed source."""
    yield 'python3.11-stdlib', 'python', stdlib_files(args.max_python_files)
    deb = args.debian
    if deb:
        for p in sorted(glob.glob(os.path.join(deb, 'src', '*.orig.tar.*'))):
            pkg = os.path.basename(p).split('_')[0]
            assert pkg not in DEV_PACKAGES, p
            if pkg in PY_SOURCE_PACKAGES:
                yield pkg, 'python', tar_files(p, '.py', PY_SKIP_DIRS)
            else:
                yield pkg, 'java', tar_files(p, '.java')
        for p in sorted(glob.glob(os.path.join(deb, 'bin', 'python3-*.deb'))):
            pkg = os.path.basename(p).split('_')[0]
            assert pkg not in DEV_PACKAGES, p
            yield pkg, 'python', deb_py_files(p)
    yield from jdk_modules(args.src_zip, args.max_java_mb)


def dev_signatures(dev_dirs, dedup):
    n = 0
    for d in dev_dirs:
        for root, dirs, files in os.walk(d):
            dirs[:] = [x for x in dirs if not x.startswith('.')]
            for f in files:
                if f.endswith(('.py', '.java')):
                    try:
                        text = open(os.path.join(root, f), encoding='utf-8', errors='replace').read()
                    except OSError:
                        continue
                    dedup.check(text)
                    n += 1
    return n


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--debian', default=None, help='folder filled by fetch_debian.sh (src/*.orig.tar.*, bin/python3-*.deb)')
    ap.add_argument('--src-zip', default='/usr/lib/jvm/openjdk-17/lib/src.zip')
    ap.add_argument('--val-repos', default=','.join(DEFAULT_VAL), help='repositories held out for validation')
    ap.add_argument('--dev-repos', nargs='*', default=[], help='checked-out dev repositories: near-copies of their files are dropped')
    ap.add_argument('--near', type=float, default=0.7, help='MinHash Jaccard over normalised lines that counts as a near duplicate')
    ap.add_argument('--max-repo-mb', type=float, default=20, help='at most this much text from one repository')
    ap.add_argument('--max-java-mb', type=float, default=1e9, help='at most this much of the JDK in all (smoke runs)')
    ap.add_argument('--max-file-kb', type=float, default=200)
    ap.add_argument('--max-python-files', type=int, default=10 ** 9, help='for smoke runs')
    ap.add_argument('--val-frac', type=float, default=0.0, help='smoke runs without --debian: hold out this fraction of stdlib files by path hash')
    args = ap.parse_args(argv)
    out = os.path.join(args.work, 'corpus')
    os.makedirs(out, exist_ok=True)
    val_repos = {r for r in args.val_repos.split(',') if r}
    stats = {'sources': {}, 'train': {'files': 0, 'bytes': 0, 'chars': 0}, 'val': {'files': 0, 'bytes': 0, 'chars': 0},
             'dropped': {'exact': 0, 'near': 0, 'dev_path': 0, 'dev_near': 0, 'too_big': 0, 'repo_cap': 0, 'not_utf8': 0},
             'val_repos': sorted(val_repos)}
    fs = {s: open(os.path.join(out, s + '.jsonl'), 'w') for s in ('train', 'val')}
    dev = Dedup(args.near)
    stats['dev_files_checked'] = dev_signatures(args.dev_repos, dev)
    dedup = Dedup(args.near)
    repos = list(repositories(args))
    # Held-out repositories first: a training file that nearly copies one of theirs is dropped.
    repos.sort(key=lambda r: r[0] not in val_repos)
    for repo, lang, files in repos:
        s = stats['sources'].setdefault(repo, {'lang': lang, 'files': 0, 'bytes': 0, 'split': 'val' if repo in val_repos else 'train',
                                               'dropped': 0})
        for path, raw in files:
            full = repo + '/' + path
            if is_dev_path(path):
                stats['dropped']['dev_path'] += 1
                s['dropped'] += 1
                continue
            if len(raw) > args.max_file_kb * 1024 or not raw.strip():
                stats['dropped']['too_big'] += bool(raw.strip())
                continue
            try:
                text = raw.decode('utf-8')
            except UnicodeDecodeError:
                stats['dropped']['not_utf8'] += 1
                continue
            if s['bytes'] + len(raw) > args.max_repo_mb * 1e6:
                stats['dropped']['repo_cap'] += 1
                s['dropped'] += 1
                continue
            text = strip_java_license(text) if lang == 'java' else strip_py_license(text)
            if args.dev_repos and dev.check(text, register=False):
                stats['dropped']['dev_near'] += 1
                s['dropped'] += 1
                continue
            why = dedup.check(text)
            if why:
                stats['dropped'][why] += 1
                s['dropped'] += 1
                continue
            split = s['split']
            if args.val_frac and split == 'train' and int(hashlib.sha1(full.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < args.val_frac:
                split = 'val'
            fs[split].write(json.dumps({'path': full, 'repo': repo, 'lang': lang, 'text': text}) + '\n')
            s['files'] += 1
            s['bytes'] += len(raw)
            stats[split]['files'] += 1
            stats[split]['bytes'] += len(raw)
            stats[split]['chars'] += len(text)
            stats[split].setdefault(lang + '_chars', 0)
            stats[split][lang + '_chars'] += len(text)
        print(f"corpus: {repo:32s} {lang:6s} {s['split']:5s} {s['files']:6d} files {s['bytes'] / 1e6:6.1f} MB, {s['dropped']} dropped", flush=True)
    for f in fs.values():
        f.close()
    json.dump(stats, open(os.path.join(out, 'stats.json'), 'w'), indent=1)
    print(json.dumps({k: v for k, v in stats.items() if k != 'sources'}))


if __name__ == '__main__':
    main()
