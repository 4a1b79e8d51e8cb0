// Other files give a model their shape, not their values: a Python module and a Java class that
// plant credentials in every form a hostile tester used (values bound to names of other languages,
// one-word values in assignments, default, keyword and positional arguments, dict values, annotation
// attributes, lambdas and suppliers, URL query values, key material and a wrapped JWT in docstrings and
// comments, credential prose in Chinese, Russian and German), beside values that must stay (a format
// spec, a compared and a returned value, a subscript key, a setting's name, a path, an encoding).
// Indexed into a real knowledge base and shown through every rendering a prompt can hold.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { grammarsDir, repoRoot } from '../../helpers/paths';
import { recordingModel } from '../../helpers/recordingModel';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { loadParsers, type Parsers } from '../../../src/engine/kb/parsers';
import { ModelRegistry } from '../../../src/engine/models';
import { RepoMethods } from '../../../src/engine/body/RepoMethods';
import { bodyMode, createPipeline, LINE_MODE, resolveOptions } from '../../../src/engine/pipeline';
import { createRepositoryIndex } from '../../../src/engine/index/repositoryIndex';
import { snippetOfItem, type Candidate } from '../../../src/engine/retrieve/types';
import { maskCode, renderBrief, renderSnippet, type RenderForm } from '../../../src/engine/prompt/renderKnowledge';
import { BestFitRerankStage } from '../../../src/engine/rerank/rerankCandidates';
import type { RerankDoc, Reranker } from '../../../src/engine/rerank/types';

const WG_KEY = 'yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=';
const WG_PSK = '7Jq2bWx0Lk5mZp8rT3vY6nC1dF4gH9sE2aQ0uI7oP5w=';
const AGE_KEY = 'AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS';
const JWK_D = 'X4cTteJY_gn4FYPsXB8rdXix5vwsg1FLN5E3EaG6RJoVH';
const JWT = ['eyJhbGciOiJIUzI1NiJ9', 'eyJzdWIiOiIxMjM0NTY3ODkwIn0', 'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c'];
const PUTTY = ['AAAAB3NzaC1yc2EAAAADAQABAAABAQC7xqLm', 'AAAAgQDX9lkz'];
const OPENSSH = ['b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW', 'QyNTUxOQAAACDx'];

const PY_MODULE = `import os
import smtplib

clave: str = "mariposa"
пароль = "girasol"
密码 = "tulipan"
kennwort = "apfelbaum"
senha = "laranjeira"
contraseña = "verdemar"
QUIET_WORD = "quietude"
DATE_FORMAT = "%Y-%m-%d"
DATA_DIR = "./data/exports"
ENCODING = "utf-8"
SIGNED_LINK = "https://files.example.com/report.csv?sig=8aQ3kRt7Lm&se=2030"
SHARE_LINK = "https://files.example.com/share?clave=pimiento"
ITEMS_LINK = "https://files.example.com/v1/items?page={page}"


def send_report(host, user="bot@x.io", word="ocelote", mode="zarzamora"):
    """Send the nightly report.

    PrivateKey = ${WG_KEY}
    ${AGE_KEY}
    {"kty": "RSA", "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1Wl", "e": "AQAB", "d": "${JWK_D}"}
    session: ${JWT[0]}.
        ${JWT[1]}.
        ${JWT[2]}
    """
    smtp = smtplib.SMTP(host)
    smtp.login("bot@x.io", "nenufar")
    opts = {"retries": 3, "label": "cerezo"}
    fetch(timeout=30, tag="alcachofa")
    pick = lambda: "membrillo"
    region = opts["region_name"]
    relay = os.environ.get("REPORT_HOST", "castaño")
    with open(DATA_DIR + "/x.csv", "rb") as f, open("log.txt", encoding="latin-1") as g:
        # 密码是 colibri
        # пароль от почты: ежевика
        # Das Kennwort lautet Zitronenbaum
        # PuTTY-User-Key-File-2: ssh-rsa
        # Private-Lines: 2
        # ${PUTTY[0]}
        # ${PUTTY[1]}
        smtp.send(f.read(), g.read(), region, relay, pick)
    if mode == "express":
        return "delivered"
    return DATE_FORMAT


def clave_de_correo():
    return "pimentero"
`;

const JAVA_CLASS = `package com.vault;

/**
 * Sends mail.
 *
 * PresharedKey = ${WG_PSK}
 */
public class Mailer {
    private static final String HASLO = "kolibrik";
    static final String FORMAT = "%s <%s>: %d";
    static final String HOME = "/var/mail/outbox";

    @RequestHeader(defaultValue = "granada")
    private String header;

    public String send(String mode, byte[] bytes) throws Exception {
        Supplier<String> s = () -> "higuera";
        Callable<String> c = () -> { return "almendro"; };
        transport.connect("smtp.x.io", "bot", "castaneda");
        props.put("mail.smtp.user", "nispero");
        String host = System.getProperty("mail.host", "avellano");
        // Пароль от почты: ежевика
        // Das Kennwort lautet Zitronenbaum
        /* -----BEGIN OPENSSH PRIVATE KEY-----
           ${OPENSSH[0]}
           ${OPENSSH[1]}
           -----END OPENSSH PRIVATE KEY----- */
        if ("express".equals(mode)) return "queued";
        switch (mode) {
            case "bulk":
                return "deferred";
        }
        return new String(bytes, "UTF-8") + host + s.get() + c.call();
    }

    String getKennwort() {
        return "pimentero";
    }
}
`;

/** Every value planted: none may reach a model. */
const PLANTED = [
  'mariposa',
  'girasol',
  'tulipan',
  'apfelbaum',
  'laranjeira',
  'verdemar',
  'quietude',
  '8aQ3kRt7Lm',
  'pimiento',
  'ocelote',
  'zarzamora',
  WG_KEY,
  WG_PSK,
  AGE_KEY,
  AGE_KEY.slice(16, 40),
  JWK_D,
  ...JWT,
  ...PUTTY,
  ...OPENSSH,
  'nenufar',
  'cerezo',
  'alcachofa',
  'membrillo',
  'castaño',
  'colibri',
  'ежевика',
  'Zitronenbaum',
  'pimentero',
  'kolibrik',
  'granada',
  'higuera',
  'almendro',
  'castaneda',
  'nispero',
  'avellano',
];

/** Values that stay wherever the code holding them is shown: declarations (compact, brief) and whole code. */
const KEPT_DECLARED = [
  '"%Y-%m-%d"',
  '"./data/exports"',
  '"utf-8"',
  '"https://files.example.com/v1/items?page={page}"',
  '"/var/mail/outbox"',
];
/** Values of bodies: compared, returned, a subscript key, settings' names, file modes and encodings. */
const KEPT_IN_BODIES = [
  'mode == "express"',
  'return "delivered"',
  'opts["region_name"]',
  'os.environ.get("REPORT_HOST", "…")',
  'open(DATA_DIR + "/x.csv", "rb")',
  'encoding="latin-1"',
  '"express".equals(mode)',
  'return "queued"',
  'case "bulk"',
  'return "deferred"',
  'System.getProperty("mail.host", "…")',
  'props.put("mail.smtp.user", "…")',
  'new String(bytes, "UTF-8")',
];

const FILES = { 'vault/report.py': PY_MODULE, 'src/main/java/com/vault/Mailer.java': JAVA_CLASS };

function leaked(text: string): string[] {
  return PLANTED.filter((s) => text.includes(s));
}

function missing(text: string, kept: readonly string[]): string[] {
  return kept.filter((k) => !text.includes(k));
}

void describe("other files' values in every rendering a prompt can show", () => {
  let parsers: Parsers;
  let root: string;
  let kb: KnowledgeBase;
  const signal = new AbortController().signal;
  const registry = new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 1 });

  before(async () => {
    parsers = await loadParsers(grammarsDir);
    root = mkdtempSync(join(tmpdir(), 'shapes-'));
    for (const [rel, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(root, rel)), { recursive: true });
      writeFileSync(join(root, rel), text);
    }
    kb = await KnowledgeBase.open({ repoRoot: root, parsers });
    await kb.index(undefined, signal);
  });
  after(() => {
    kb.dispose();
    void registry.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  const planted = () => kb.items().filter((i) => i.path in FILES);

  for (const form of ['compact', 'body', 'code'] as RenderForm[]) {
    void test(`renderSnippet '${form}': no planted value, the kept ones as written`, () => {
      const items = planted();
      assert.ok(items.length > 10, `${items.length} items`);
      const shown = items.map((i) => renderSnippet(snippetOfItem(i), form).text).join('\n');
      assert.deepEqual(leaked(shown), [], shown);
      assert.deepEqual(missing(shown, form === 'compact' ? KEPT_DECLARED : [...KEPT_DECLARED, ...KEPT_IN_BODIES]), [], shown);
    });
  }

  void test('renderBrief: no planted value, declared values kept', () => {
    const shown = planted()
      .map((i) => renderBrief(snippetOfItem(i)) ?? '')
      .join('\n');
    assert.deepEqual(leaked(shown), [], shown);
    assert.deepEqual(missing(shown, ['"%Y-%m-%d"', '"./data/exports"', '"utf-8"', '"/var/mail/outbox"']), [], shown);
  });

  void test('a code window of either file, wherever it is cut (inside a docstring or a comment too): no planted value', () => {
    for (const [path, text] of Object.entries(FILES)) {
      const lang = path.endsWith('.java') ? 'java' : 'python';
      const lines = text.split('\n');
      for (let start = 0; start < lines.length; start++) {
        const window = lines.slice(start, start + 10).join('\n');
        const shown = maskCode(window, lang);
        assert.deepEqual(leaked(shown), [], `${path} from line ${start}:\n${shown}`);
      }
      assert.deepEqual(missing(maskCode(text, lang), lang === 'java' ? ['"%s <%s>: %d"', 'return "queued"'] : ['"%Y-%m-%d"']), []);
    }
  });

  void test("ProCC's similar-code window in a line prompt and the LLM reranker's windows: no planted value", async () => {
    const encoder = await registry.encoder(undefined, signal);
    const paths = createRepositoryIndex(kb, parsers, { paths: ['sparse', 'dataflow'], similar: { encoder, windowLines: 10 } });
    try {
      await paths.windows!.prepare(signal);
      const windows = paths.windows!.windows().filter((w) => w.path in FILES);
      assert.ok(windows.length >= 4, `${windows.length} windows`);
      // A file that repeats the module's lines: ProCC's lexical perspective brings their window in.
      const target = windows.find((w) => w.text.includes('smtp.login'))!;
      const { client, seen } = recordingModel('x', 'stop', 'ollama');
      const options = resolveOptions({ similar: { mode: 'lexical' }, generate: { maxNewTokens: 8 } });
      const result = await createPipeline(
        options,
        { env: { repo: { retrievers: paths.retrievers, similar: paths.similar }, model: client } },
        LINE_MODE,
      ).complete({ filePath: 'vault/other.py', lang: 'python', prefix: `${target.text}\n`, suffix: '' }, signal);
      assert.ok(
        result.contexts.some((c) => c.origin?.kind === 'similar' && c.snippet.path === 'vault/report.py'),
        'the window is in the prompt',
      );
      // The repository's block: what the prompt shows of other files, before the file being completed.
      const prompt = seen.at(-1)?.prompt ?? '';
      const block = prompt.slice(0, prompt.indexOf('# vault/other.py'));
      assert.match(block, /# Compare this snippet from vault\/report\.py:/, prompt);
      assert.deepEqual(leaked(block), [], block);

      const sent: RerankDoc[][] = [];
      const reranker: Reranker = { kind: 'llm', name: 'rec', pick: (_q, w) => (sent.push([...w]), Promise.resolve({ index: 0 })) };
      const candidates: Candidate[] = planted().map((item) => ({
        snippet: snippetOfItem(item),
        paths: ['sparse'],
        scores: { sparse: 1 },
        ranks: { sparse: 1 },
      }));
      await new BestFitRerankStage(reranker).rerank(
        { file: { path: 'vault/other.py', prefix: 'import vault.report\n' }, candidates, topU: 3 } as never,
        signal,
      );
      const docs = sent
        .flat()
        .map((d) => d.text)
        .join('\n');
      assert.match(docs, /def send_report/);
      assert.deepEqual(leaked(docs), [], docs);
      assert.deepEqual(missing(docs, KEPT_IN_BODIES), [], docs);
    } finally {
      paths.dispose();
    }
  });

  void test("body mode: the sketch's prompt (signature-similar methods) and the body's (usages, definitions) carry no planted value", async () => {
    const repo = new RepoMethods(kb);
    try {
      for (const request of [
        {
          filePath: 'src/main/java/com/vault/Outbox.java',
          lang: 'java' as const,
          prefix:
            'package com.vault;\n\npublic class Outbox {\n    public String send(String mode, byte[] bytes) throws Exception {\n        ',
          suffix: '\n    }\n}\n',
        },
        {
          filePath: 'vault/nightly.py',
          lang: 'python' as const,
          prefix: 'import smtplib\n\n\ndef send_report(host, user, word, mode):\n    ',
          suffix: '\n',
        },
      ]) {
        const { client, seen } = recordingModel('return null;\n    }', 'stop');
        await createPipeline(
          resolveOptions({ body: { maxNewTokens: 16, knowledge: false } }),
          { env: { repo: { retrievers: [], methods: repo }, model: client } },
          bodyMode({ parsers }),
        ).complete(request, signal);
        assert.ok(seen.length >= 2, `a sketch and a body: ${seen.length}`);
        const prompts = seen.map((r) => r.prompt).join('\n');
        assert.match(prompts, request.lang === 'java' ? /class Mailer|Mailer\.java/ : /vault\/report\.py/, prompts);
        assert.deepEqual(leaked(prompts), [], prompts);
      }
    } finally {
      repo.dispose();
    }
  });
});
