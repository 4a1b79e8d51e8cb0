// The server's pipelines are built once per workspace folder and settings, not per
// request; and a request waiting for the model settings to be applied stops when it is
// superseded.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPipeline, LINE_MODE, resolveOptions, type Pipeline } from '../../src/engine/pipeline';
import { CancellationError } from '../../src/engine/util/errors';
import { mergeConfig } from '../../src/server/config';
import { FolderPipelines } from '../../src/server/FolderPipelines';
import { ModelFeature } from '../../src/server/ModelFeature';
import { StatusReporter } from '../../src/server/StatusReporter';

void test("one pipeline per folder: kept across requests, built again when the folder's readiness or the settings change", () => {
  const built: Array<{ folder: string | undefined; ready: boolean }> = [];
  const pipelines = new FolderPipelines<{ name: string; state: string }>((folder, ready) => {
    built.push({ folder: folder?.name, ready });
    return createPipeline(resolveOptions(), { env: { repo: { retrievers: [] } } }, LINE_MODE);
  });
  const a = { name: 'a', state: 'indexing' };
  const b = { name: 'b', state: 'ready' };
  const early = pipelines.for(a);
  assert.equal(pipelines.for(a), early, 'the same pipeline for the next request');
  a.state = 'ready';
  const ready = pipelines.for(a);
  assert.notEqual(ready, early, 'built again once the folder is ready');
  const inB: Pipeline = pipelines.for(b);
  assert.notEqual(inB, ready, 'each folder its own');
  const outside = pipelines.for(undefined);
  for (let i = 0; i < 5; i++) {
    assert.equal(pipelines.for(a), ready);
    assert.equal(pipelines.for(b), inB);
    assert.equal(pipelines.for(undefined), outside);
  }
  assert.deepEqual(built, [
    { folder: 'a', ready: false },
    { folder: 'a', ready: true },
    { folder: 'b', ready: true },
    { folder: undefined, ready: false },
  ]);
  pipelines.clear();
  assert.notEqual(pipelines.for(a), ready, 'a settings change builds it again');
  assert.equal(pipelines.built, 5);
});

void test('a request waiting for the model settings to be applied is cancelled by its signal', async () => {
  // A model server that never answers: choosing it (its start-up check) keeps the settings change pending.
  const held: Array<() => void> = [];
  const server = createServer((_req, res) => held.push(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const models = new ModelFeature(() => Promise.reject(new Error('no embedded model here')), new StatusReporter());
  try {
    models.updateConfig(
      mergeConfig({ model: { provider: 'openai' }, openai: { baseUrl: `http://127.0.0.1:${port}`, model: 'coder' } }).config,
    );
    const controller = new AbortController();
    const waiting = models.ready(controller.signal);
    setTimeout(() => controller.abort(), 50);
    const t0 = performance.now();
    await assert.rejects(waiting, (e) => e instanceof CancellationError);
    assert.ok(performance.now() - t0 < 2000, 'it stops when superseded, not when the check gives up');
  } finally {
    models.shutdown();
    for (const close of held) close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
