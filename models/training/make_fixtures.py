"""Write the tokenizer parity fixture for the Node tests: ids from this Python tokenizer for
strings that exercise code, whitespace, unicode and the special token."""
import argparse, json, os
from bpe import Tokenizer

STRINGS = [
    '',
    'def add(a, b):\n    """Add two numbers."""\n    return a + b\n',
    'class Foo(Bar):\n\tdef __init__(self, x=1.5e-3):\n\t\tself._x = x  # comment\n',
    'public static <T extends Comparable<T>> List<T> sort(List<T> xs) {\n        return xs.stream().sorted().toList();\n    }\n',
    '    \n\n\n        if (a != b && c <= d) { i++; }\r\n',
    'naïve café — 日本語 😀 \u00a0x',
    "it's we'll they've I'm he'd 'quoted' \"double\"",
    'x = 0x1F + 1_000_000 - 3.14159 ** 2 // 7 % 4',
    'import numpy as np<|endoftext|>print(np.zeros((3, 4)))',
    '@Override\n    public String toString() { return "Foo[" + id + "]"; }',
    '    ' * 10 + 'deeply_nested_call(arg)\n',
    '~!@#$%^&*()_+`-=[]{}|;:,./<>?',
]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--tokenizer', required=True)
    ap.add_argument('--out', required=True)
    args = ap.parse_args(argv)
    tok = Tokenizer.load(args.tokenizer)
    cases = []
    for s in STRINGS:
        ids = tok.encode(s)
        assert tok.decode(ids) == s, s
        cases.append({'text': s, 'ids': ids})
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    json.dump({'tokenizer_sha_hint': os.path.getsize(args.tokenizer), 'cases': cases}, open(args.out, 'w'), ensure_ascii=False, indent=1)
    print(f'fixtures: {len(cases)} cases -> {args.out}')


if __name__ == '__main__':
    main()
