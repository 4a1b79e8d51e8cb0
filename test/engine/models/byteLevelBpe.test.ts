// The cached byte-level BPE gives tokenizers.js's ids, and the encoder's prefix tokenisation gives
// the head of the whole text's tokens, on real source files of the fixtures and odd texts.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ByteLevelBpe } from '../../../src/engine/models/byteLevelBpe';
import { loadTokenizers, readJsonFile } from '../../../src/engine/models/tokenizer';
import { ModelRegistry } from '../../../src/engine/models';
import { OnnxEncoder, safeCut } from '../../../src/engine/models/OnnxEncoder';
import { repoRoot } from '../../helpers/paths';

const encoderDir = join(repoRoot, 'models', 'coderag-encoder');

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.(py|java)$/.test(name)) out.push(readFileSync(p, 'utf8'));
  }
  return out;
}

const ODD = [
  '',
  ' ',
  '\n\n\t  x',
  'héllo wörld 日本語 \u00a0x  \t\n\n  y',
  "it's we'll they'd",
  '😀 emoji\r\n',
  '    '.repeat(40) + 'deep',
  'a'.repeat(3000),
];

test('ByteLevelBpe encodes as tokenizers.js on real files, lines and odd texts', async () => {
  const json = await readJsonFile(join(encoderDir, 'tokenizer.json'), 'coderag-encoder');
  const config = await readJsonFile(join(encoderDir, 'tokenizer_config.json'), 'coderag-encoder');
  const bpe = ByteLevelBpe.fromJson(json);
  assert.ok(bpe, 'the shipped tokenizer has the GPT-2 layout');
  const { Tokenizer } = await loadTokenizers();
  const library = new Tokenizer(json, config);
  const files = sources(join(repoRoot, 'test', 'fixtures'));
  const texts = [...files, ...files.flatMap((f) => f.split('\n').slice(0, 50)), ...ODD];
  for (const text of texts)
    assert.deepEqual(bpe.encode(text), library.encode(text, { add_special_tokens: false }).ids, JSON.stringify(text.slice(0, 60)));
  assert.equal(bpe.handles('x <|endoftext|> y'), false);
});

test('the encoder tokenises a long text from a prefix exactly', async () => {
  const encoder = await new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 1 }).encoder(
    undefined,
    new AbortController().signal,
  );
  assert.ok(encoder instanceof OnnxEncoder);
  const json = await readJsonFile(join(encoderDir, 'tokenizer.json'), 'coderag-encoder');
  const bpe = ByteLevelBpe.fromJson(json)!;
  const texts = [...sources(join(repoRoot, 'test', 'fixtures')), ...ODD, 'x = 1\n'.repeat(2000), '\u00a0 '.repeat(2000)];
  for (const text of texts) {
    const full = bpe.encode(text).slice(0, encoder.maxLength);
    assert.deepEqual(encoder.tokenize(text), full.length ? full : encoder.tokenize(''), JSON.stringify(text.slice(0, 60)));
  }
  assert.equal(safeCut('abc def', 1), 3);
  assert.equal(safeCut('abc  def', 4), 8);
  await encoder.dispose();
});
