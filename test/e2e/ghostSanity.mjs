// Sanity of every ghost text the e2e stage reads: no redaction placeholder, no
// line written more than twice, and on the receivers the fixture types, only members they have
// (and only keyword arguments the called constructor takes). Plain JS: run.mjs imports it in the
// browser-driving process; test/e2eGhostSanity.test.ts unit-tests it.

/** The placeholder in the forms a model copies it (src/engine/generate/postprocess/junk.ts PLACEHOLDER_FORMS). */
const PLACEHOLDER = /<\s*redacted\s*>|&lt;\s*redacted\s*&gt;|\\u003c\s*redacted\s*\\u003e/i;

const JAVA_OBJECT = ['getClass', 'hashCode', 'equals', 'toString', 'notify', 'notifyAll', 'wait'];

/**
 * The receivers the e2e's positions type, with their members as the fixtures declare them
 * (test/fixtures/javashop, test/fixtures/pyshop): `this` in CheckoutService, its parameter `cart`,
 * its field `gateway`; in pyshop/app/main.py the locals `cart`, `service` and `gateway`.
 */
export const FIXTURE_RECEIVERS = {
  java: {
    this: ['gateway', 'receipts', 'checkout', 'getReceipts', 'Receipt', ...JAVA_OBJECT],
    cart: [
      'add',
      'applyDiscount',
      'total',
      'getOwner',
      'getCurrency',
      'getLines',
      'MAX_ITEMS',
      'owner',
      'currency',
      'lines',
      'discount',
      'Line',
      ...JAVA_OBJECT,
    ],
    gateway: ['charge', 'name', 'supports', 'TIMEOUT_SECONDS', 'PaymentException', ...JAVA_OBJECT],
  },
  python: {
    cart: [
      'Line',
      'max_items',
      'owner',
      'currency',
      'lines',
      '_discount',
      'discount_applied',
      'add',
      'apply_discount',
      'total',
      'empty',
      'for_guest',
    ],
    service: ['cart', 'gateway', 'receipts', 'checkout'],
  },
};

/** Constructors the e2e's Python position calls, with their parameters (pyshop/services/checkout.py). */
export const FIXTURE_CALLS = { python: { CheckoutService: ['cart', 'gateway'] } };

/** A line that says something (a run of `}` closing blocks is not a repeat). */
function meaningful(line) {
  return line.length > 3 && /[\p{L}\p{N}]/u.test(line);
}

/**
 * What is wrong with a ghost text shown after `typed` (the text on the cursor's line before it),
 * in `lang`: a list of problems, empty when it is sane.
 */
export function ghostTextProblems(
  ghost,
  { lang, typed = '', receivers = FIXTURE_RECEIVERS[lang] ?? {}, calls = FIXTURE_CALLS[lang] ?? {} } = {},
) {
  const problems = [];
  const text = ghost.replace(/\u00a0/g, ' ');
  const placeholder = PLACEHOLDER.exec(text);
  if (placeholder) problems.push(`the redaction placeholder ${placeholder[0]}`);
  const counts = new Map();
  for (const line of text
    .split('\n')
    .map((l) => l.trim())
    .filter(meaningful))
    counts.set(line, (counts.get(line) ?? 0) + 1);
  for (const [line, n] of counts) if (n > 2) problems.push(`the line ${JSON.stringify(line)} ${n} times`);
  // Members: `receiver.name` where the receiver is a whole name (not itself a member: `x.cart.y` is not `cart`).
  const whole = `${typed}${text}`;
  for (const m of whole.matchAll(/(?<![\p{L}\p{N}_$.])([\p{L}_$][\p{L}\p{N}_$]*)\s*\.\s*([\p{L}_$][\p{L}\p{N}_$]*)/gu)) {
    if (m.index + m[0].length <= typed.length) continue;
    const members = receivers[m[1]];
    if (!members) continue;
    const rest = whole.slice(m.index + m[0].length);
    // Python gives an object an attribute by assigning it; Java must declare it.
    if (lang === 'python' && /^\s*=(?!=)/.test(rest)) continue;
    if (!members.includes(m[2])) problems.push(`\`${m[1]}.${m[2]}\`: ${m[1]} has no member ${m[2]}`);
  }
  // Keyword arguments of the fixture's constructors.
  for (const [callee, params] of Object.entries(calls)) {
    for (const call of whole.matchAll(new RegExp(`(?<![\\p{L}\\p{N}_$.])${callee}\\s*\\(`, 'gu'))) {
      const args = argumentsOf(whole, call.index + call[0].length);
      for (const kw of args.matchAll(/(?:^|,)\s*([\p{L}_][\p{L}\p{N}_]*)\s*=(?!=)/gu))
        if (!params.includes(kw[1])) problems.push(`\`${callee}(${kw[1]}=\`: ${callee} takes no parameter ${kw[1]}`);
    }
  }
  return problems;
}

/** The top-level text of the argument list starting at `from` (after `(`), nested brackets and strings blanked. */
function argumentsOf(text, from) {
  let depth = 0;
  let quote = '';
  let out = '';
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      out += '0';
    } else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0) out += c;
  }
  return out;
}

/** Throws when the ghost text is not sane (every ghost text the e2e stage reads goes through it). */
export function assertSaneGhostText(ghost, options) {
  const problems = ghostTextProblems(ghost, options);
  if (problems.length > 0) throw new Error(`insane ghost text ${JSON.stringify(ghost.slice(0, 200))}: ${problems.join('; ')}`);
}
