// A model server's own constraint mechanism for the member after a dereference at the cursor:
// vLLM (models owned by "vllm": `guided_regex`) and llama.cpp (`/props`: a GBNF `grammar`) are
// asked to finish one of the receiver's members; a server with neither gets no extra parameter
// and its answer is checked afterwards. Real HTTP servers speaking the OpenAI API, each honouring
// its constraint the way the real one does (the answer must match it).
import test from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { memberConstraintParam, OpenAICompatibleClient } from '../../../src/engine/generate/OpenAICompatibleClient';
import { ReceiverTyper } from '../../../src/engine/check/receiverMembers';
import { createPipeline } from '../../../src/engine/pipeline/createPipeline';
import { resolveOptions } from '../../../src/engine/pipeline/resolveOptions';
import { fixturesDir } from '../../helpers/paths';
import { fixtureKb, parsers } from '../retrieve/retrieveFixtures';

type Flavor = 'vllm' | 'llama.cpp' | 'plain';

/** The model "wants" to write a member Cart does not have; a constraint makes it pick an allowed one. */
const UNCONSTRAINED = 'add_items(p)';

async function serve(flavor: Flavor): Promise<{ url: string; bodies: Array<Record<string, unknown>>; close: () => Promise<void> }> {
  const bodies: Array<Record<string, unknown>> = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const send = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/v1/models')
        return send(200, {
          object: 'list',
          data: [{ id: 'coder', object: 'model', owned_by: flavor === 'vllm' ? 'vllm' : 'organization' }],
        });
      if (path === '/props' && flavor === 'llama.cpp') return send(200, { default_generation_settings: { n_ctx: 4096 }, total_slots: 1 });
      if (path === '/v1/completions') {
        const body = JSON.parse(raw) as Record<string, unknown>;
        bodies.push(body);
        let text = UNCONSTRAINED;
        // As a constrained server would: the model's own choice where allowed, else the longest allowed
        // name that starts what it wanted to write (`add` for `add_items`), then the rest of its call.
        const honour = (names: string[], accepts: (t: string) => boolean): void => {
          if (accepts(text)) return;
          const fit = names.filter((n) => UNCONSTRAINED.startsWith(n)).sort((a, b) => b.length - a.length)[0] ?? names[0]!;
          text = `${fit}(p)`;
        };
        if (typeof body.guided_regex === 'string') {
          const names = /^\(\?:([^)]*)\)/.exec(body.guided_regex)![1]!.split('|');
          honour(names, (t) => new RegExp(`^${body.guided_regex as string}$`).test(t));
        }
        if (typeof body.grammar === 'string') {
          const names = [.../"([^"]*)"/g[Symbol.matchAll](/^name ::= (.*)$/m.exec(body.grammar)![1]!)].map((m) => m[1]!);
          honour(names, (t) => names.some((n) => t.startsWith(n) && !/^[\w$]/.test(t.slice(n.length))));
        }
        return send(200, { choices: [{ text, finish_reason: 'stop' }], usage: { completion_tokens: 3 } });
      }
      send(404, { error: 'not found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, bodies, close: () => new Promise((r) => server.close(() => r())) };
}

void test('the constraint parameters: the rest of each member after the typed part, longest first', () => {
  assert.deepEqual(memberConstraintParam('guided_regex', ['add', 'apply_discount', 'total'], 'a'), {
    guided_regex: '(?:pply_discount|dd)(?:[^A-Za-z0-9_$][\\s\\S]*)?',
  });
  const g = memberConstraintParam('grammar', ['add', 'apply_discount', 'a'], 'a')!.grammar!;
  assert.match(g, /^root ::= name\? rest$/m, 'a complete name makes the rest optional');
  assert.match(g, /^name ::= "pply_discount" \| "dd"$/m);
  assert.equal(memberConstraintParam('guided_regex', ['total'], 'x'), undefined);
  assert.equal(new RegExp(`^${memberConstraintParam('guided_regex', ['add', 'apply_discount'], '')!.guided_regex}$`).test('add(p)'), true);
  assert.equal(
    new RegExp(`^${memberConstraintParam('guided_regex', ['add', 'apply_discount'], '')!.guided_regex}$`).test('add_items(p)'),
    false,
  );
});

async function completeCartDot(url: string): Promise<{ text: string; check: Record<string, unknown> | undefined }> {
  const kb = await fixtureKb('pyshop');
  const typer = new ReceiverTyper(kb, await parsers());
  try {
    const model = new OpenAICompatibleClient({ baseUrl: url, model: 'coder', family: 'plain' });
    const pipeline = createPipeline(resolveOptions({ query: { strategy: 'last10' }, check: { mode: 'constrain' } }), {
      env: { repo: { retrievers: [], receivers: typer }, model: model },
    });
    const lines = readFileSync(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'utf8').split('\n');
    const { items, trace } = await pipeline.complete(
      { filePath: 'app/main.py', lang: 'python', prefix: `${lines.slice(0, 18).join('\n')}\n    cart.`, suffix: '\n' },
      new AbortController().signal,
    );
    return { text: items[0]?.text ?? '', check: trace.check as Record<string, unknown> | undefined };
  } finally {
    typer.dispose();
  }
}

for (const flavor of ['vllm', 'llama.cpp'] as const) {
  void test(`${flavor}: the request asks the server to finish a member of Cart; the suggestion starts with one`, async () => {
    const server = await serve(flavor);
    try {
      const { text, check } = await completeCartDot(server.url);
      const param = flavor === 'vllm' ? 'guided_regex' : 'grammar';
      const sent = server.bodies[0]?.[param];
      assert.equal(typeof sent, 'string', `the request carries ${param}`);
      for (const member of ['add', 'apply_discount', 'total']) assert.ok((sent as string).includes(member), `${member} allowed`);
      assert.ok(!(sent as string).includes('add_items'));
      assert.equal(text, 'add(p)', 'the allowed member the model was writing');
      assert.equal(check?.server, param, 'the trace names the server constraint');
    } finally {
      await server.close();
    }
  });
}

void test('a server with no constraint mechanism gets no extra parameter; its answer is checked after (cut)', async () => {
  const server = await serve('plain');
  try {
    const { text, check } = await completeCartDot(server.url);
    assert.equal(server.bodies[0]?.guided_regex, undefined);
    assert.equal(server.bodies[0]?.grammar, undefined);
    assert.equal(text, '', 'add_items is not a member of Cart: the suggestion is cut before it');
    assert.equal(check?.server, undefined);
    assert.deepEqual(
      (check?.fixes as Array<{ action: string }>).map((f) => f.action),
      ['cut'],
    );
  } finally {
    await server.close();
  }
});
