import test from 'node:test';
import assert from 'node:assert/strict';
import { midLineCases } from '../../src/bench/midLine';
import type { BenchCase } from '../../src/bench/cases';

function lineCase(id: string, groundtruth: string, names: string[]): BenchCase {
  return {
    prompt: 'from jinja2.loaders import ModuleLoader\n\ndef compile(name):\n    ',
    groundtruth,
    metadata: {
      task_id: id,
      repository: 'r',
      file: 'a.py',
      crossfile_defs: names.map((name) => ({ name, kind: 'function', file: 'jinja2/loaders.py', line: 1 })),
    },
  };
}

void test('midLineCases puts the cursor half-way into the first cross-file name of the ground-truth line', () => {
  const cases = [
    lineCase('r/0', 'filename = ModuleLoader.get_module_filename(name)\n', ['get_module_filename', 'ModuleLoader']),
    // Only a longer identifier contains the name: no use of it on the line.
    lineCase('r/1', 'x = ModuleLoaderFactory()\n', ['ModuleLoader']),
    // A one-letter name: one character typed.
    lineCase('r/2', 'y = f(2)\n', ['f']),
    lineCase('r/3', 'return $helper.run()\n', ['$helper']),
  ];
  const mid = midLineCases(cases);
  assert.deepEqual(
    mid.map((c) => c.metadata.task_id),
    ['r/0/mid', 'r/2/mid', 'r/3/mid'],
  );
  const [first, second, third] = mid;
  assert.ok(first?.prompt.endsWith('    filename = Module'), first?.prompt);
  assert.equal(first?.groundtruth, 'Loader.get_module_filename(name)\n');
  assert.equal(first!.prompt + first!.groundtruth, cases[0]!.prompt + cases[0]!.groundtruth, 'the text is only split elsewhere');
  assert.deepEqual(first?.metadata.crossfile_defs, cases[0]?.metadata.crossfile_defs);
  assert.ok(second?.prompt.endsWith('y = f'));
  assert.ok(third?.prompt.endsWith('return $he'), third?.prompt);
  assert.equal(cases[0]?.metadata.task_id, 'r/0', 'the input cases are not changed');
});
