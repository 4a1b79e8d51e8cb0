// A real HTTP server on 127.0.0.1 serving one file the way a model hub's CDN does (content-length,
// byte ranges), with the faults a download meets: the connection cut mid-body, Range ignored, a
// body that stops and waits. Tests change its behaviour between requests.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FileServerBehaviour {
  /** Answer `Range: bytes=N-` with 206 (true) or send the whole file with 200 (false). */
  honourRange: boolean;
  /** Destroy the connection once this many body bytes are sent. */
  cutAfter?: number;
  /** Send this many body bytes, then wait without ending (until the client gives up). */
  hangAfter?: number;
}

export interface FileServer {
  /** The file's URL (a query string, as signed CDN URLs have). */
  url: string;
  requests: Array<{ method: string; range?: string }>;
  behaviour: FileServerBehaviour;
  close(): Promise<void>;
}

export async function startFileServer(body: Buffer, fileName: string): Promise<FileServer> {
  const requests: FileServer['requests'] = [];
  const behaviour: FileServerBehaviour = { honourRange: true };
  const server = createServer((req: IncomingMessage, res) => {
    const range = req.headers.range;
    requests.push({ method: req.method ?? 'GET', ...(range !== undefined ? { range } : {}) });
    const from = behaviour.honourRange ? Number(/^bytes=(\d+)-$/.exec(range ?? '')?.[1] ?? 0) : 0;
    if (from >= body.length && from > 0) {
      res.writeHead(416, { 'content-range': `bytes */${body.length}` });
      res.end();
      return;
    }
    const rest = body.subarray(from);
    if (from > 0) res.writeHead(206, { 'content-length': rest.length, 'content-range': `bytes ${from}-${body.length - 1}/${body.length}` });
    else res.writeHead(200, { 'content-length': body.length, 'accept-ranges': behaviour.honourRange ? 'bytes' : 'none' });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const stopAt = behaviour.cutAfter ?? behaviour.hangAfter;
    if (stopAt === undefined) {
      res.end(rest);
      return;
    }
    res.write(rest.subarray(0, Math.max(0, stopAt - from)), () => {
      if (behaviour.cutAfter !== undefined) setTimeout(() => res.socket?.destroy(), 20);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/Org/repo/resolve/main/${fileName}?download=true&token=secret-in-query`,
    requests,
    behaviour,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
