// The cut rule (the body mode's step f): Java ends at the first unmatched `}` (nested braces, braces in
// strings and comments do not count); Python at the first line indented at or above the signature.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bodyEndFound,
  bodyIndentOf,
  bodyUnfinished,
  cutAtDedent,
  cutAtUnmatchedBrace,
  cutBody,
  dropUnfinishedLine,
} from '../../../src/engine/body/cutBody';

void describe('cutting a generated body where the method ends', () => {
  void test("Java: nested blocks stay, the method's own `}` and what follows go", () => {
    const raw =
      '        for (Line l : lines) {\n            if (l.q > 0) {\n                n += l.q;\n            }\n        }\n        return n;\n    }\n\n    public int other() {\n        return 1;\n    }\n';
    assert.equal(
      cutAtUnmatchedBrace(raw),
      '        for (Line l : lines) {\n            if (l.q > 0) {\n                n += l.q;\n            }\n        }\n        return n;\n    ',
    );
    assert.equal(
      cutBody(raw, 'java', 'class A {\n    int f() {\n', 60),
      '        for (Line l : lines) {\n            if (l.q > 0) {\n                n += l.q;\n            }\n        }\n        return n;',
    );
  });

  void test('Java: braces inside strings, chars and comments do not count', () => {
    const raw =
      '        String s = "}{";\n        char c = \'}\';\n        // } not this one\n        /* nor } this */\n        return s + c;\n    }\n}';
    assert.equal(
      cutBody(raw, 'java', 'class A {\n    String f() {\n', 60),
      '        String s = "}{";\n        char c = \'}\';\n        // } not this one\n        /* nor } this */\n        return s + c;',
    );
  });

  void test("Java: a line left of the body, at or beyond the signature, ends it (the prompt's commented fragments echoed at column 0)", () => {
    // Seen on the validation body cases: the model copies the body prompt's commented fragments and path headers.
    const echo =
      '        super.toStringAppendFields(builder);\n//         builder.append(", maxTotal=");\n//     }\n// }\n// Based on above, complete the method body of the class\n';
    assert.equal(
      cutBody(echo, 'java', 'class A {\n    protected void f(StringBuilder builder) {\n', 60),
      '        super.toStringAppendFields(builder);',
    );
    const header =
      '        return (T) Proxy.newProxyInstance(loader, interfaces,\n                handler);\n*/\n// src/main/java/p/CglibProxySource.java\npublic class CglibProxySource<T> {\n';
    assert.equal(
      cutBody(header, 'java', 'class A {\n    T create() {\n', 60),
      '        return (T) Proxy.newProxyInstance(loader, interfaces,\n                handler);',
    );
    // A method declared at the signature's indentation ends it too; a mis-indented closing brace is the brace count's to judge.
    assert.equal(
      cutBody('        return 1;\n    int g() {\n        return 2;\n', 'java', 'class A {\n    int f() {\n', 60),
      '        return 1;',
    );
    assert.equal(
      cutBody('        if (x) {\n            y();\n    }\n        return 1;\n    }', 'java', 'class A {\n    int f() {\n', 60),
      '        if (x) {\n            y();\n    }\n        return 1;',
    );
    // From the cursor at the body's column, the first line counts from there; a body written at column 0 under a signature at 0 stays.
    assert.equal(cutBody('return x;\n// src/p/B.java\n', 'java', 'class A {\n    int f() {\n        ', 60), 'return x;');
    assert.equal(cutBody('int y = 1;\nreturn y;\n}', 'java', 'int f() {\n', 60), 'int y = 1;\nreturn y;');
    assert.equal(bodyEndFound('        return 1;\n// src/p/B.java\n', 'java', 'class A {\n    int f() {\n'), true);
  });

  void test("Python: the first line at or above the signature's indentation ends the body; deeper blocks stay", () => {
    const raw =
      '        total = 0\n        for line in self.lines:\n            if line.qty:\n                total += line.price\n\n        return total\n\n    def other(self):\n        return 1\n';
    const prefix = 'class Cart:\n    def total(self):\n';
    assert.equal(
      cutBody(raw, 'python', prefix, 60),
      '        total = 0\n        for line in self.lines:\n            if line.qty:\n                total += line.price\n\n        return total',
    );
    // A module-level function ends at the next top-level line.
    assert.equal(cutAtDedent('    return x\nprint(1)\n', 0, 0), '    return x');
    // The first line continues the cursor's column.
    assert.equal(cutAtDedent('return x\n    def g(self):', 4, 8), 'return x');
  });

  void test('empty comment markers are dropped; a body of nothing is empty', () => {
    assert.equal(cutBody('//\n//\n//\n    }', 'java', 'class A {\n    void f() {\n', 60), '');
    assert.equal(cutBody('        #\n        x = 1\n        #\n', 'python', 'def f():\n', 60), '        x = 1');
  });

  void test("at the body's indentation, the first line is not indented again (a BPE model writes ` return` after the spaces)", () => {
    assert.equal(cutBody(' return name;\n    }', 'java', 'class A {\n    String f() {\n        ', 60), 'return name;');
    assert.equal(
      cutBody(' if (x) {\n            y();\n        }\n        return 1;\n    }', 'java', 'class A {\n    int f() {\n        ', 60),
      'if (x) {\n            y();\n        }\n        return 1;',
    );
    // A first line after a dropped blank one brings its own indentation: the cursor's line already has it.
    assert.equal(cutBody('\n        return self.x\n', 'python', 'class A:\n    def f(self):\n        ', 60), 'return self.x');
    // At column 0 the text keeps its indentation.
    assert.equal(cutBody('        return self.x\n', 'python', 'class A:\n    def f(self):\n', 60), '        return self.x');
  });

  void test("the body indentation follows the file's unit", () => {
    assert.equal(bodyIndentOf('class A {\n\tvoid f() {\n', '\t'), '\t\t');
    assert.equal(bodyIndentOf('class A:\n  def f(self):\n', '  '), '    ');
  });

  void test('a body the token limit cut inside the method loses its unfinished last line', () => {
    const javaPrefix = 'class A {\n    int f() {\n';
    assert.equal(bodyEndFound('        return n;\n    }\n', 'java', javaPrefix), true);
    assert.equal(bodyEndFound('        int n = 1;\n        if (o instanceof', 'java', javaPrefix), false);
    const pyPrefix = 'class A:\n    def f(self):\n';
    assert.equal(bodyEndFound('        return 1\n    def g(self):', 'python', pyPrefix), true);
    assert.equal(bodyEndFound('        x = 1\n        self.gcc = sub.get_source_', 'python', pyPrefix), false);
    assert.equal(dropUnfinishedLine('        x = 1\n        self.gcc = sub.get_source_'), '        x = 1');
    assert.equal(dropUnfinishedLine('        self.gcc = sub.get_source_'), '        self.gcc = sub.get_source_', 'a single line stays');
  });

  void test('a body is unfinished until Java closes it or Python writes a statement', () => {
    assert.equal(bodyUnfinished('java', ''), true);
    assert.equal(bodyUnfinished('java', '        if (a) {\n            b();\n        }\n'), true);
    assert.equal(bodyUnfinished('java', '        return n;\n    }'), false);
    assert.equal(bodyUnfinished('java', '        String s = "}"; // }\n'), true);
    assert.equal(bodyUnfinished('python', '\n    # only a comment\n'), true);
    assert.equal(bodyUnfinished('python', '    return x\n'), false);
  });
});
