// Nearest copy: a repository holding two copies of a source tree (a main and an Android or legacy
// flavour, a vendored package, `src/` plus a build copy) defines one qualified name in several
// files. The edited file compiles against the copy in its own tree, so only that copy stays a
// candidate; the others would take places with a definition the code does not use.
import { commonPrefixLength, SECONDARY_TREE } from '../kb/symbolTable';
import type { Snippet } from './types';

/**
 * What makes two snippets copies of one definition: the same kind, qualified name and path tail,
 * the file with its folder (`pkg/mod.py`) or, for Java, with two folders of its package
 * (`acme/util/Strings.java`: `impl/Util.java` in two packages is not a copy); undefined for code
 * windows, which are never dropped.
 */
function copyKey(snippet: Snippet): string | undefined {
  const local = snippet.id.slice(snippet.path.length);
  if (local.startsWith('#window:')) return undefined;
  const parts = snippet.path.split('/');
  const tail = snippet.path.endsWith('.java') ? 3 : 2;
  return `${snippet.kind}\0${snippet.qualifiedName}\0${parts.slice(-tail).join('/')}\0${local}`;
}

/**
 * Keeps, of the snippets in `lists` that are copies of one definition in different files, those
 * in the nearest copy to `editedPath`: the longest shared path prefix, then outside test, build and
 * vendored folders. Copies equally near all stay. Lists keep their order.
 */
export function dropFarCopies<T extends { snippet: Snippet }>(lists: readonly (readonly T[])[], editedPath: string | undefined): T[][] {
  if (editedPath === undefined) return lists.map((l) => [...l]);
  const best = new Map<string, { paths: Set<string>; near: number; primary: number }>();
  // Each snippet's key, computed once for both passes.
  const keys = lists.map((list) => list.map(({ snippet }) => copyKey(snippet)));
  lists.forEach((list, l) => {
    list.forEach(({ snippet }, k) => {
      const key = keys[l]![k];
      if (key === undefined) return;
      const near = commonPrefixLength(snippet.path, editedPath);
      const primary = SECONDARY_TREE.test(snippet.path) ? 0 : 1;
      const b = best.get(key);
      if (!b || near > b.near || (near === b.near && primary > b.primary)) best.set(key, { paths: new Set([snippet.path]), near, primary });
      else if (near === b.near && primary === b.primary) b.paths.add(snippet.path);
    });
  });
  return lists.map((list, l) =>
    list.filter(({ snippet }, k) => {
      const key = keys[l]![k];
      return key === undefined || best.get(key)?.paths.has(snippet.path) !== false;
    }),
  );
}
