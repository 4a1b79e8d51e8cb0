"""Build the training corpus allowed by ../shared/bench/train.txt.

Sources: the Python standard library of the machine's interpreter, Debian's python3-sympy and
python3-toml sources (both listed in train.txt), and OpenJDK 17's src.zip (openjdk-17-source).
Never the evaluation repositories. Files are split into train / validation by a hash of their
path, so held-out files are never seen in training. Output: WORK/corpus/{train,val}.jsonl
(one {"path","lang","text"} per file) and WORK/corpus/stats.json.
"""
import argparse, hashlib, io, json, os, re, sys, zipfile

FORBIDDEN = ('jinja2', 'toolz', 'h11', 'mesonbuild', 'ldap3', 'commons/lang3', 'commons/io', 'jsoup')
JAVA_MODULES = ('java.base', 'java.sql', 'java.net.http', 'java.logging', 'java.xml', 'java.desktop',
                'jdk.compiler', 'java.management', 'jdk.jfr', 'java.naming', 'jdk.httpserver',
                'java.compiler', 'jdk.jshell', 'java.prefs', 'java.rmi', 'jdk.javadoc', 'jdk.jdeps')
EMPTY_ZIP = b'PK\x05\x06' + b'\x00' * 18
LICENSE_RE = re.compile(r'\A\s*/\*.*?\*/\s*', re.S)
PY_LICENSE_RE = re.compile(r'\A(#[^\n]*\n)+')


def is_val(path, frac):
    return int(hashlib.sha1(path.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < frac


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


def python_files(max_bytes_sympy):
    stdlib = os.path.dirname(os.__file__)
    for root, dirs, files in os.walk(stdlib):
        dirs[:] = sorted(d for d in dirs if d not in ('site-packages', 'dist-packages', '__pycache__', 'test', 'tests', 'idle_test'))
        for f in sorted(files):
            if f.endswith('.py'):
                yield os.path.join(root, f), 'stdlib/' + os.path.relpath(os.path.join(root, f), stdlib)
    used = 0
    for pkg in ('toml', 'sympy'):
        base = os.path.join('/usr/lib/python3/dist-packages', pkg)
        if not os.path.isdir(base):
            print(f'corpus: {base} missing (apt-get install python3-{pkg})', file=sys.stderr)
            continue
        for root, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in ('__pycache__', 'tests', 'benchmarks'))
            for f in sorted(files):
                if not f.endswith('.py'):
                    continue
                p = os.path.join(root, f)
                size = os.path.getsize(p)
                if pkg == 'sympy':
                    if used + size > max_bytes_sympy:
                        continue
                    used += size
                yield p, pkg + '/' + os.path.relpath(p, base)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--src-zip', default='/usr/lib/jvm/openjdk-17/lib/src.zip')
    ap.add_argument('--val-frac', type=float, default=0.03)
    ap.add_argument('--max-java-mb', type=float, default=24)
    ap.add_argument('--max-module-mb', type=float, default=9)
    ap.add_argument('--max-sympy-mb', type=float, default=14)
    ap.add_argument('--max-file-kb', type=float, default=200)
    ap.add_argument('--max-python-files', type=int, default=10 ** 9, help='for smoke runs')
    args = ap.parse_args(argv)
    out = os.path.join(args.work, 'corpus')
    os.makedirs(out, exist_ok=True)
    stats = {'sources': {}, 'train': {'files': 0, 'bytes': 0}, 'val': {'files': 0, 'bytes': 0}}
    fs = {s: open(os.path.join(out, s + '.jsonl'), 'w') for s in ('train', 'val')}

    def add(source, path, lang, text):
        low = path.lower()
        assert not any(f in low for f in FORBIDDEN), path
        if not text.strip() or len(text) > args.max_file_kb * 1024:
            return
        split = 'val' if is_val(path, args.val_frac) else 'train'
        fs[split].write(json.dumps({'path': path, 'lang': lang, 'text': text}) + '\n')
        s = stats['sources'].setdefault(source, {'files': 0, 'bytes': 0, 'val_files': 0})
        s['files'] += 1
        s['bytes'] += len(text.encode())
        s['val_files'] += split == 'val'
        stats[split]['files'] += 1
        stats[split]['bytes'] += len(text.encode())

    for n, (p, rel) in enumerate(python_files(args.max_sympy_mb * 1e6)):
        if n >= args.max_python_files:
            break
        try:
            text = open(p, encoding='utf-8').read()
        except (UnicodeDecodeError, OSError):
            continue
        src = 'python3.11-stdlib' if rel.startswith('stdlib/') else 'python3-' + rel.split('/')[0] + ' (Debian)'
        add(src, rel, 'python', strip_py_license(text))

    used, per_module = 0, {}
    if not os.path.exists(args.src_zip):
        print(f'corpus: {args.src_zip} missing (apt-get install openjdk-17-source); no Java', file=sys.stderr)
        args.src_zip = None
    with (zipfile.ZipFile(args.src_zip) if args.src_zip else zipfile.ZipFile(io.BytesIO(EMPTY_ZIP))) as z:
        for name in sorted(z.namelist()):
            module = name.split('/')[0]
            if not name.endswith('.java') or module not in JAVA_MODULES:
                continue
            if used > args.max_java_mb * 1e6 or per_module.get(module, 0) > args.max_module_mb * 1e6:
                continue
            text = z.read(name).decode('utf-8', errors='replace')
            text = strip_java_license(text)
            used += len(text)
            per_module[module] = per_module.get(module, 0) + len(text)
            add('openjdk-17-source src.zip (' + name.split('/')[0] + ')', 'jdk/' + name, 'java', text)
    for f in fs.values():
        f.close()
    json.dump(stats, open(os.path.join(out, 'stats.json'), 'w'), indent=1)
    print(json.dumps({k: v for k, v in stats.items() if k != 'sources'}))


if __name__ == '__main__':
    main()
