// `node --import tsx scripts/benchTokenize.ts DIR [--passes N]`: the shipped tokenizer's encode
// through the project's cached byte-level BPE (models/byteLevelBpe.ts) against tokenizers.js's own
// encode (with its own BPE cache), on the Java and Python sources under DIR (java.base: unzip the
// JDK's lib/src.zip). Texts as the engine encodes them: item-sized pieces (40 lines, what the dense
// path embeds) and whole files cut at 8,000 characters (prompt-sized). Each pass encodes every text
// once; the first pass finds both caches empty. Prints each pass's time. Not a test.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ByteLevelBpe } from '../src/engine/models/byteLevelBpe';
import { loadTokenizers, readJsonFile } from '../src/engine/models/tokenizer';
import { repoRoot } from '../test/helpers/paths';
import { sourcePaths } from './sourceTree';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { passes: { type: 'string', default: '3' }, model: { type: 'string', default: 'coderag-encoder' } } });
const root = positionals[0];
if (!root) throw new Error('usage: benchTokenize.ts DIR [--passes N] [--model coderag-encoder|coderag-lm]');
const passes = Math.max(2, Number(values.passes));


async function main(): Promise<void> {
  const files = sourcePaths(root!).map((f) => readFileSync(f, 'utf8'));
  const pieces: string[] = [];
  for (const f of files) {
    const lines = f.split('\n');
    for (let i = 0; i < lines.length; i += 40) pieces.push(lines.slice(i, i + 40).join('\n'));
  }
  const prompts = files.map((f) => f.slice(0, 8000));
  const dir = join(repoRoot, 'models', values.model!);
  const json = await readJsonFile(join(dir, 'tokenizer.json'), values.model!);
  const config = await readJsonFile(join(dir, 'tokenizer_config.json'), values.model!);
  const { Tokenizer } = await loadTokenizers();
  console.log(`${values.model}: ${pieces.length} item-sized pieces, ${prompts.length} prompt-sized texts (${(files.reduce((n, f) => n + f.length, 0) / 1e6).toFixed(1)} M characters in ${files.length} files)`);
  for (const [label, texts] of [['item-sized', pieces], ['prompt-sized', prompts]] as const) {
    // Fresh instances per text set: the first pass starts with empty caches.
    const library = new Tokenizer(json, config);
    const bpe = ByteLevelBpe.fromJson(json)!;
    const encoders: Record<string, (t: string) => number[]> = {
      'tokenizers.js': (t) => library.encode(t, { add_special_tokens: false }).ids,
      'byteLevelBpe.ts': (t) => bpe.encode(t),
    };
    for (let pass = 1; pass <= passes; pass++) {
      const row: string[] = [];
      let tokens = 0;
      for (const [name, encode] of Object.entries(encoders)) {
        const start = performance.now();
        let n = 0;
        for (const t of texts) n += encode(t).length;
        row.push(`${name} ${(performance.now() - start).toFixed(0)} ms`);
        if (tokens && tokens !== n) throw new Error(`token counts differ: ${tokens} / ${n}`);
        tokens = n;
      }
      console.log(`${label}, pass ${pass} (${tokens} tokens): ${row.join(', ')}`);
    }
  }
}

void main();
