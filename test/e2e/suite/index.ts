// The extension-host test entry (VS Code's `extensionTestsPath` contract: export run()). Runs the
// mocha suite inside code-server's extension host and writes results.json beside this bundle for
// test/e2e/run.mjs; a rejected run() gives VS Code a non-zero exit code.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Mocha from 'mocha';

interface TestResult {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  duration?: number;
  error?: string;
}

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false, reporter: 'spec' });
  mocha.addFile(join(__dirname, 'extension.test.js'));
  const tests: TestResult[] = [];
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      writeFileSync(join(__dirname, 'results.json'), JSON.stringify({ failures, tests }, null, 2));
      if (failures > 0) reject(new Error(`${failures} extension-host test(s) failed`));
      else resolve();
    });
    runner.on('pass', (t) => tests.push({ title: t.fullTitle(), state: 'passed', duration: t.duration }));
    runner.on('fail', (t, err: unknown) =>
      tests.push({ title: t.fullTitle(), state: 'failed', duration: t.duration, error: err instanceof Error ? err.message : String(err) }),
    );
    runner.on('pending', (t) => tests.push({ title: t.fullTitle(), state: 'pending' }));
  });
}
