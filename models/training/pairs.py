"""Retrieval pairs for the code encoder, shaped like CodeRAG's use of dense retrieval.

- call: query = the code around a call site (the lines before it and the call line up to its
  opening parenthesis), target = the called function's definition stub (class header + the
  definition, as the knowledge base renders items). Callee resolved within the same file,
  unambiguous names only; calls inside the callee itself are skipped.
- doc: query = a definition's signature + docstring/comment, target = its body.
Python definitions come from `ast`; Java methods from a regex + brace matching.
"""
import ast, random, re

CTX_LINES = 4
JAVA_METHOD = re.compile(r'^([ \t]*)(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|protected|private|static|final|abstract|synchronized|native|default)\s+)*'
                         r'(?:<[^>]+>\s+)?[\w.<>\[\], ?]+\s+(\w+)\s*\([^;{)]*\)\s*(?:throws\s+[\w., ]+)?\{', re.M)
JAVA_CLASS = re.compile(r'^[ \t]*(?:(?:public|protected|private|static|final|abstract)\s+)*(?:class|interface|enum|record)\s+(\w+)[^{]*\{', re.M)
CALL = re.compile(r'\b(\w+)\s*\(')
JAVA_KEYWORDS = {'if', 'for', 'while', 'switch', 'catch', 'return', 'new', 'synchronized', 'super', 'this'}


def _py_defs(text):
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    lines = text.split('\n')
    out = []

    def visit(node, cls):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, ast.ClassDef):
                visit(ch, ch)
            elif isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = (ch.decorator_list[0].lineno if ch.decorator_list else ch.lineno) - 1
                end = ch.end_lineno
                body_start = ch.body[0].lineno - 1
                doc = ast.get_docstring(ch)
                if doc and len(ch.body) > 1:
                    body_start = ch.body[1].lineno - 1
                header = lines[cls.lineno - 1] + '\n' if cls is not None else ''
                out.append({'name': ch.name, 'start': start, 'end': end,
                            'stub': header + '\n'.join(lines[start:end]),
                            'sig': header + '\n'.join(lines[start:body_start]),
                            'body': '\n'.join(lines[body_start:end]), 'has_doc': bool(doc)})
    visit(tree, None)
    return out


def _java_defs(text):
    out = []
    lines_at = [0]
    for i, ch in enumerate(text):
        if ch == '\n':
            lines_at.append(i + 1)
    import bisect
    classes = [(m.start(), m.group(0).strip()) for m in JAVA_CLASS.finditer(text)]
    for m in JAVA_METHOD.finditer(text):
        name = m.group(2)
        if name in JAVA_KEYWORDS:
            continue
        depth, i = 0, m.end() - 1
        while i < len(text):
            c = text[i]
            if c == '{':
                depth += 1
            elif c == '}':
                depth -= 1
                if depth == 0:
                    break
            i += 1
        # include a preceding javadoc comment
        pre = text[:m.start()].rstrip()
        doc = ''
        if pre.endswith('*/'):
            j = pre.rfind('/**')
            if j >= 0 and m.start() - j < 4000:
                doc = text[j:m.start()]
        hdr = ''
        for pos, h in classes:
            if pos < m.start():
                hdr = h
        start_line = bisect.bisect_right(lines_at, m.start()) - 1
        end_line = bisect.bisect_right(lines_at, i) - 1 + 1
        sig = doc + text[m.start():m.end()]
        out.append({'name': name, 'start': start_line, 'end': end_line,
                    'stub': (hdr + '\n' if hdr else '') + doc + text[m.start():i + 1],
                    'sig': (hdr + '\n' if hdr else '') + sig, 'body': text[m.end():i + 1], 'has_doc': bool(doc)})
    return out


def definitions(text, lang):
    return _py_defs(text) if lang == 'python' else _java_defs(text)


def call_pairs(text, lang, defs, rng, max_per_file=12):
    """(query, target_index) pairs: query = code before and at a call, cut after '('."""
    by_name = {}
    for k, d in enumerate(defs):
        by_name.setdefault(d['name'], []).append(k)
    lines = text.split('\n')
    cands = []
    for ln, line in enumerate(lines):
        for m in CALL.finditer(line):
            ks = by_name.get(m.group(1))
            if not ks or len(ks) != 1:
                continue
            d = defs[ks[0]]
            if d['start'] <= ln < d['end'] or line.lstrip().startswith(('def ', 'class ')):
                continue
            if lang == 'java' and re.match(r'^\s*(public|private|protected|static)\b', line):
                continue
            ctx = '\n'.join(lines[max(0, ln - CTX_LINES + 1):ln] + [line[:m.end()]])
            cands.append((ctx, ks[0]))
    rng.shuffle(cands)
    return cands[:max_per_file]


def doc_pairs(defs, rng, max_per_file=6):
    ds = [d for d in defs if d['has_doc'] and len(d['body'].strip()) > 20]
    rng.shuffle(ds)
    return [(d['sig'], d['body']) for d in ds[:max_per_file]]
