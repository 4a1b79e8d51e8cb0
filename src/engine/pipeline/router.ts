// The router: which completion mode completes each request. A host gives the pipeline one mode
// (it completes every request) or the auto router, which reads the syntax tree per request: the
// body mode (Rambo) in an empty method body, else the line mode (CodeRAG).
import { bodyMode, bodyTargetOf, type BodyModeDeps } from './bodyMode';
import { LINE_MODE } from './modes';
import type { CompletionMode, Router } from './types';

/** `given` as a router: itself, or a router that always picks that mode. */
export function routerOf(given: Router | CompletionMode): Router {
  return given.kind === 'router' ? given : { kind: 'router', name: given.name, route: () => given };
}

/** Body mode where the cursor is in an empty method body (read from the syntax tree), line mode elsewhere. */
export function autoRouter(deps: BodyModeDeps): Router {
  const inBody = bodyMode(deps);
  return { kind: 'router', name: 'auto', route: (context) => (bodyTargetOf(context, deps.parsers) ? inBody : LINE_MODE) };
}
