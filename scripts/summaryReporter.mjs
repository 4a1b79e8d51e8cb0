// node:test reporter that ends the run with the project's closing line: "N passed, N failed, N skipped".
export default async function* summaryReporter(source) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    // Count leaf tests only: suites report their own pass/fail too.
    if (event.data.details?.type === 'suite') continue;
    if (event.type === 'test:fail') failed++;
    else if (event.data.skip || event.data.todo) skipped++;
    else passed++;
  }
  yield `\n${passed} passed, ${failed} failed, ${skipped} skipped\n`;
}
