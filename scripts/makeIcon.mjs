// Draws the extension's icon, media/icon.png (128x128): lines of code on a blue tile, the last
// line's end in light blue and the line below it faded, as ghost text is. Shapes are sampled 4x4
// per pixel for smooth edges; the PNG is written with node's zlib, so no image tool is needed.
//   node scripts/makeIcon.mjs [OUT]
import { writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const SIZE = 128;
const SUB = 4;
const out = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'media', 'icon.png');

/** Inside a rounded rectangle [x0, x1] x [y0, y1] with corner radius r. */
const roundRect = (x0, y0, x1, y1, r) => (x, y) => {
  if (x < x0 || x > x1 || y < y0 || y > y1) return false;
  const cx = Math.min(Math.max(x, x0 + r), x1 - r);
  const cy = Math.min(Math.max(y, y0 + r), y1 - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
};
const circle = (cx, cy, r) => (x, y) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r;

// Painted in order, each [shape, [r, g, b, alpha]].
const layers = [
  [roundRect(4, 4, 124, 124, 24), [31, 78, 121, 1]],
  [roundRect(22, 26, 78, 37, 5.5), [255, 255, 255, 1]],
  [circle(99, 31.5, 6), [255, 209, 102, 1]],
  [roundRect(34, 45, 102, 56, 5.5), [255, 255, 255, 1]],
  [roundRect(34, 64, 70, 75, 5.5), [255, 255, 255, 1]],
  [roundRect(75, 64, 106, 75, 5.5), [143, 211, 255, 1]],
  [roundRect(34, 83, 62, 94, 5.5), [143, 211, 255, 0.5]],
  [roundRect(67, 83, 96, 94, 5.5), [143, 211, 255, 0.5]],
];

const rgba = Buffer.alloc(SIZE * SIZE * 4);
for (let py = 0; py < SIZE; py++) {
  for (let px = 0; px < SIZE; px++) {
    let [r, g, b, a] = [0, 0, 0, 0];
    for (let sy = 0; sy < SUB; sy++) {
      for (let sx = 0; sx < SUB; sx++) {
        const x = px + (sx + 0.5) / SUB;
        const y = py + (sy + 0.5) / SUB;
        // Composite the layers over transparency for this sample (premultiplied).
        let [cr, cg, cb, ca] = [0, 0, 0, 0];
        for (const [inside, [lr, lg, lb, la]] of layers) {
          if (!inside(x, y)) continue;
          cr = lr * la + cr * (1 - la);
          cg = lg * la + cg * (1 - la);
          cb = lb * la + cb * (1 - la);
          ca = la + ca * (1 - la);
        }
        r += cr;
        g += cg;
        b += cb;
        a += ca;
      }
    }
    const n = SUB * SUB;
    const i = (py * SIZE + px) * 4;
    const alpha = a / n;
    rgba[i] = alpha > 0 ? Math.round(r / n / alpha) : 0;
    rgba[i + 1] = alpha > 0 ? Math.round(g / n / alpha) : 0;
    rgba[i + 2] = alpha > 0 ? Math.round(b / n / alpha) : 0;
    rgba[i + 3] = Math.round(alpha * 255);
  }
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (buf) => {
  let c = 0xffffffff;
  for (const byte of buf) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type, data) => {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
};
const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header[8] = 8; // bit depth
header[9] = 6; // RGBA
const rows = Buffer.alloc(SIZE * (SIZE * 4 + 1));
for (let y = 0; y < SIZE; y++) rgba.copy(rows, y * (SIZE * 4 + 1) + 1, y * SIZE * 4, (y + 1) * SIZE * 4);
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
writeFileSync(out, png);
console.log(`wrote ${out} (${png.length} bytes)`);
