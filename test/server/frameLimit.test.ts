// The stdio frame limit passes LSP frames through byte for byte, however the stream splits them,
// and fails at a frame declared over the limit or a header that never ends.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { FrameLimit } from '../../src/server/frameLimit';

function frame(body: string): Buffer {
  return Buffer.from(
    `Content-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n${body}`,
  );
}

async function through(chunks: Buffer[], max?: number): Promise<{ out: Buffer; error?: Error }> {
  const limit = new FrameLimit(max);
  const parts: Buffer[] = [];
  limit.on('data', (d: Buffer) => parts.push(d));
  return new Promise((resolve) => {
    limit.once('error', (error) => resolve({ out: Buffer.concat(parts), error }));
    limit.once('end', () => resolve({ out: Buffer.concat(parts) }));
    Readable.from(chunks).pipe(limit);
  });
}

void test('frames split at every byte boundary pass through unchanged', async () => {
  const all = Buffer.concat([frame('{"jsonrpc":"2.0","id":1,"method":"a"}'), frame('{"x":"é\\r\\n\\r\\n"}'), frame('')]);
  for (let size = 1; size <= all.length; size += 3) {
    const chunks: Buffer[] = [];
    for (let i = 0; i < all.length; i += size) chunks.push(all.subarray(i, i + size));
    const { out, error } = await through(chunks);
    assert.equal(error, undefined);
    assert.ok(out.equals(all), `chunks of ${size}`);
  }
});

void test('a frame declared over the limit fails before its body; the frames before it passed', async () => {
  const first = frame('{"ok":1}');
  const { out, error } = await through([first, Buffer.from('Content-Length: 101\r\n\r\n'), Buffer.alloc(101, 0x20)], 100);
  assert.match(String(error?.message), /an LSP message of 101 bytes \(Content-Length\), more than the 100 read/);
  assert.ok(out.equals(first));
});

void test('a header that never ends fails past 8 KiB', async () => {
  const { error } = await through([Buffer.alloc(20_000, 0x41)]);
  assert.match(String(error?.message), /an LSP header of more than 8192 bytes/);
});
