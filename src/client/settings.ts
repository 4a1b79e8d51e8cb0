// What the client sends the server of the `coderag.*` settings. Pure and free of `vscode`, so the
// tests check it directly.

/** The leaves of `tree` (settings under `prefix`) for which `isSet(dotted key)` holds, as a tree; undefined when none. */
export function explicitOnly(tree: unknown, prefix: string, isSet: (key: string) => boolean): Record<string, unknown> | undefined {
  if (typeof tree !== 'object' || tree === null || Array.isArray(tree)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(tree)) {
    const key = `${prefix}.${k}`;
    const inner = typeof v === 'object' && v !== null && !Array.isArray(v) ? explicitOnly(v, key, isSet) : isSet(key) ? v : undefined;
    if (inner !== undefined) out[k] = inner;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
