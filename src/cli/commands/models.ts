// `coderag models [--json] [--device D]`: the shipped models, their files, and the onnxruntime
// execution provider each one loads on for the chosen device (docs/ARCHITECTURE.md "Local models on CPU or GPU").
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CliCommand } from '../command';
import { parseCommandArgs, UsageError } from '../command';
import { assetsDir, modelDevice } from '../context';
import { ModelRegistry } from '../../engine/models';
import { loadOrt } from '../../engine/models/onnxSession';
import {
  probeProviders,
  providerUnavailable,
  type ExecutionProvider,
  type ModelDevice,
  type ModelPlacement,
} from '../../engine/models/device';
import { loadDistilledReranker } from '../../engine/rerank/DistilledReranker';
import { errorMessage } from '../../engine/util/errors';

/** What the shipped models' manifest (models/manifest.json) says of one model. */
interface ManifestModel {
  name: string;
  role: string;
  files: string[];
}

interface ModelReport {
  name: string;
  role: string;
  /** What the engine uses it for. */
  usedFor: string;
  dir: string;
  files: Array<{ path: string; bytes: number }>;
  /** Where it runs; absent when it did not load. */
  placement?: ModelPlacement;
  loadMs?: number;
  /** Why it did not load. */
  loadError?: string;
}

interface ModelsReport {
  device: ModelDevice;
  platform: string;
  /** Each execution provider of this onnxruntime-node build and why it cannot be used here (absent: usable). */
  providers: Array<{ provider: ExecutionProvider; available: boolean; reason?: string }>;
  models: ModelReport[];
}

const USED_FOR: Record<string, string> = {
  causalLM: 'probing LM (CodeRAG query) and embedded generator',
  encoder: 'code encoder (dense retrieval)',
  reranker: 'distilled reranker (BestFit)',
};

export async function modelsReport(modelsDir: string, device: ModelDevice, signal: AbortSignal): Promise<ModelsReport> {
  const manifestPath = join(modelsDir, 'manifest.json');
  if (!existsSync(manifestPath)) throw new UsageError(`no shipped models: ${manifestPath} is missing`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { models?: ManifestModel[] };
  const probe = probeProviders(await loadOrt());
  const providers = (['cpu', 'cuda', 'dml', 'coreml'] as const).map((provider) => {
    const reason = providerUnavailable(provider, probe);
    return { provider, available: reason === undefined, ...(reason ? { reason } : {}) };
  });
  const registry = new ModelRegistry({ modelsDir, threads: 1, warmup: false, device });
  const models: ModelReport[] = [];
  try {
    for (const m of manifest.models ?? []) {
      const dir = join(modelsDir, m.name);
      const report: ModelReport = {
        name: m.name,
        role: m.role,
        usedFor: USED_FOR[m.role] ?? m.role,
        dir,
        files: m.files.map((f) => ({ path: f, bytes: existsSync(join(dir, f)) ? statSync(join(dir, f)).size : 0 })),
      };
      try {
        if (m.role === 'causalLM' || m.role === 'encoder') {
          const model = m.role === 'causalLM' ? await registry.causalLM(m.name, signal) : await registry.encoder(m.name, signal);
          report.placement = model.placement;
          report.loadMs = Math.round(model.timings.loadMs);
        } else if (m.role === 'reranker') {
          const { scorer } = await loadDistilledReranker(dir, m.name, { threads: 1, device });
          report.placement = scorer.placement;
          report.loadMs = Math.round(scorer.timings.loadMs);
          await scorer.dispose();
        }
      } catch (e) {
        report.loadError = errorMessage(e);
      }
      models.push(report);
    }
  } finally {
    await registry.dispose().catch(() => undefined);
  }
  return { device, platform: `${process.platform}-${process.arch}`, providers, models };
}

export function formatModelsReport(r: ModelsReport): string {
  const mb = (n: number): string => `${(n / 1048576).toFixed(1)} MB`;
  const out = [`Shipped models, device ${r.device} (${r.platform}):`];
  for (const m of r.models) {
    const where = m.placement
      ? `runs on ${m.placement.provider}${m.loadMs !== undefined ? ` (loaded in ${m.loadMs} ms)` : ''}`
      : `did not load: ${m.loadError ?? 'unknown error'}`;
    out.push('', `${m.name} — ${m.usedFor}: ${where}`);
    if (m.placement?.error) out.push(`  error: ${m.placement.error}`);
    if (m.placement?.note) out.push(`  note: ${m.placement.note}`);
    for (const f of m.files) out.push(`  ${f.path}  ${mb(f.bytes)}`);
  }
  out.push('', 'Execution providers of this onnxruntime-node:');
  for (const p of r.providers) out.push(`  ${p.provider}: ${p.available ? 'available' : `unavailable (${p.reason})`}`);
  return out.join('\n');
}

export const modelsCommand: CliCommand = {
  name: 'models',
  usage: 'models [--json] [--device auto|cpu|cuda|dml|coreml]  (the shipped models, their files and the execution provider each loads on)',
  async run(argv, signal) {
    const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' } });
    if (positionals.length > 0) throw new UsageError('models takes no positional arguments');
    const report = await modelsReport(join(assetsDir(), 'models'), modelDevice(), signal);
    process.stdout.write((values.json ? JSON.stringify(report, null, 2) : formatModelsReport(report)) + '\n');
    return report.models.every((m) => m.placement) ? 0 : 1;
  },
};
