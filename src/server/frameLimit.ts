// A guard in front of the LSP reader on stdio: vscode-jsonrpc's stream reader buffers a frame's
// whole body before it parses it, whatever Content-Length says, and has no limit of its own (a
// 2 GB frame grew the server past 1.4 GB). This filter reads each frame's header itself and passes
// the bytes through untouched; a frame declared larger than the limit ends the connection before
// any of its body is held, and a header that never ends is refused the same way. Hand-written
// because no maintained package frames LSP with a limit; it only counts bytes, it never copies a body.
import { Transform, type TransformCallback } from 'node:stream';

/**
 * The largest frame read: VS Code hands an extension no document over 50 MB, and a full-text
 * didOpen or didChange of one (JSON-escaped) fits in 64 MiB; nothing else the protocol sends comes near.
 */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** A header block longer than this is not one (real ones are under 100 bytes). */
const MAX_HEADER_BYTES = 8 * 1024;

const HEADER_END = Buffer.from('\r\n\r\n', 'ascii');

/** Why the connection was refused, for the log. */
class FrameTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FrameTooLargeError';
  }
}

/**
 * A pass-through stream of LSP frames that fails (with a FrameTooLargeError) at the first frame whose
 * declared Content-Length is over `maxBytes`, or whose header is over 8 KiB, before reading its body.
 */
export class FrameLimit extends Transform {
  /** Bytes of the current frame's body still to pass; 0 while a header is read. */
  private bodyLeft = 0;
  /** The part of a header read so far (at most 8 KiB). */
  private header: Buffer = Buffer.alloc(0);

  constructor(private readonly maxBytes: number = MAX_FRAME_BYTES) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.bodyLeft > 0) {
        const n = Math.min(this.bodyLeft, chunk.length - at);
        this.push(chunk.subarray(at, at + n));
        this.bodyLeft -= n;
        at += n;
        continue;
      }
      // Only the tail of the header read so far can hold the start of a split "\r\n\r\n".
      const from = Math.max(0, this.header.length - 3);
      const joined = Buffer.concat([this.header, chunk.subarray(at, Math.min(chunk.length, at + MAX_HEADER_BYTES + 4))]);
      const end = joined.indexOf(HEADER_END, from);
      if (end < 0) {
        if (joined.length > MAX_HEADER_BYTES) return done(new FrameTooLargeError(`an LSP header of more than ${MAX_HEADER_BYTES} bytes`));
        this.header = joined;
        break;
      }
      const headerBytes = joined.subarray(0, end + HEADER_END.length);
      const length = contentLength(headerBytes.toString('ascii'));
      if (length !== undefined && length > this.maxBytes)
        return done(new FrameTooLargeError(`an LSP message of ${length} bytes (Content-Length), more than the ${this.maxBytes} read`));
      this.push(headerBytes);
      at += headerBytes.length - this.header.length;
      this.header = Buffer.alloc(0);
      // A header without a valid length is passed on for the reader to report.
      this.bodyLeft = length ?? 0;
    }
    done();
  }
}

/** The Content-Length of a header block, or undefined when it has none that is a number. */
function contentLength(header: string): number | undefined {
  const m = /(?:^|\r\n)content-length:[ \t]*(\d+)[ \t]*(?:\r\n|$)/i.exec(header);
  return m ? Number(m[1]) : undefined;
}
