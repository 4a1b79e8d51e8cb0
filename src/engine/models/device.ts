// Which onnxruntime execution provider a model's session runs on (the `coderag.models.device`
// setting, the CLI's --device). The one place every shipped model (probing LM, encoder, distilled
// reranker, embedded generator) gets its provider: `auto` takes the platform's accelerator when
// its provider is installed, else the CPU with one log line; an explicit provider that cannot load
// falls back to the CPU too, with an error the status tooltip and the trace show.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getLogger } from '../util/logger';

const log = getLogger('models');

export const MODEL_DEVICES = ['auto', 'cpu', 'cuda', 'dml', 'coreml'] as const;
export type ModelDevice = (typeof MODEL_DEVICES)[number];
/** An onnxruntime execution provider a session can run on. */
export type ExecutionProvider = Exclude<ModelDevice, 'auto'>;

export function isModelDevice(value: unknown): value is ModelDevice {
  return typeof value === 'string' && (MODEL_DEVICES as readonly string[]).includes(value);
}

/** The device named by a setting or flag; an unknown name is an error that lists the choices. */
export function parseModelDevice(value: unknown): ModelDevice {
  if (value === undefined || value === '') return 'auto';
  const v = typeof value === 'string' ? value.trim().toLowerCase() : value;
  if (isModelDevice(v)) return v;
  throw new RangeError(`device must be one of ${MODEL_DEVICES.join(', ')} (got ${JSON.stringify(value)})`);
}

/** Where a model's session runs, and why not where it was asked to. */
export interface ModelPlacement {
  /** The device asked for. */
  device: ModelDevice;
  /** The execution provider the session was created with. */
  provider: ExecutionProvider;
  /** An explicit device that could not be used (the model runs on the CPU): shown as an error. */
  error?: string;
  /** Why `auto` chose the CPU (informational). */
  note?: string;
}

const LABEL: Record<ExecutionProvider, string> = { cpu: 'CPU', cuda: 'CUDA', dml: 'DirectML', coreml: 'CoreML' };

/** The accelerator `auto` tries on this platform (onnxruntime-node 1.30's builds). */
export function platformAccelerator(platform: string = process.platform, arch: string = process.arch): ExecutionProvider | undefined {
  if (platform === 'win32') return 'dml';
  if (platform === 'darwin') return 'coreml';
  if (platform === 'linux' && arch === 'x64') return 'cuda';
  return undefined;
}

/** The opt-in install of the CUDA provider (onnxruntime-node's own flag; docs/ARCHITECTURE.md "Local models on CPU or GPU"). */
const CUDA_INSTALL_HINT =
  'node node_modules/onnxruntime-node/script/install --onnxruntime-node-install=cuda12 (in the repository or the ' +
  'extension folder; needs CUDA 12 and cuDNN 9)';

/** What the runtime can tell about its providers. */
export interface ProviderProbe {
  /** onnxruntime-node's listSupportedBackends(): the providers its binary was built with. */
  backends: ReadonlyArray<{ name: string; bundled: boolean }>;
  /** Folder of the native binding (bin/napi-v6/<platform>/<arch>), where add-on providers are installed. */
  bindingDir?: string;
  platform: string;
}

/** Why `provider` cannot be used here (undefined: it can be tried). */
export function providerUnavailable(provider: ExecutionProvider, probe: ProviderProbe): string | undefined {
  if (provider === 'cpu') return undefined;
  const entry = probe.backends.find((b) => b.name === provider);
  if (!entry) {
    const where = provider === 'dml' ? 'Windows' : provider === 'coreml' ? 'macOS' : 'Linux x64 and Windows x64 with an NVIDIA GPU';
    return `the ${LABEL[provider]} execution provider is not part of onnxruntime-node on ${probe.platform} (it is for ${where})`;
  }
  if (entry.bundled || provider !== 'cuda') return undefined;
  // CUDA ships separately (too large for npm): its libraries sit next to the binding once installed.
  const lib = probe.platform === 'win32' ? 'onnxruntime_providers_cuda.dll' : 'libonnxruntime_providers_cuda.so';
  if (probe.bindingDir && existsSync(join(probe.bindingDir, lib))) return undefined;
  return (
    `the CUDA execution provider is not installed (${lib} is ` +
    `missing${probe.bindingDir ? ` in ${probe.bindingDir}` : ''}); install it with: ${CUDA_INSTALL_HINT}`
  );
}

/** The probe of the loaded onnxruntime-node module. */
export function probeProviders(ort: { listSupportedBackends?: () => ReadonlyArray<{ name: string; bundled: boolean }> }): ProviderProbe {
  let bindingDir: string | undefined;
  try {
    const pkg = require.resolve('onnxruntime-node/package.json');
    bindingDir = join(dirname(pkg), 'bin', 'napi-v6', process.platform, process.arch);
  } catch {
    bindingDir = undefined;
  }
  let backends: ReadonlyArray<{ name: string; bundled: boolean }> = [{ name: 'cpu', bundled: true }];
  try {
    backends = ort.listSupportedBackends?.() ?? backends;
  } catch {
    // An older binding without the listing: only the CPU is known to work.
  }
  return { backends, bindingDir, platform: process.platform };
}

/** The providers to try, in order, for a device; the CPU is always the last resort. */
export function providerPlan(device: ModelDevice, probe: ProviderProbe): { tryFirst?: ExecutionProvider; placement: ModelPlacement } {
  if (device === 'cpu') return { placement: { device, provider: 'cpu' } };
  if (device === 'auto') {
    const accelerator = platformAccelerator(probe.platform);
    if (!accelerator)
      return { placement: { device, provider: 'cpu', note: `no accelerator is supported on ${probe.platform}-${process.arch}` } };
    const why = providerUnavailable(accelerator, probe);
    if (why) return { placement: { device, provider: 'cpu', note: why } };
    return { tryFirst: accelerator, placement: { device, provider: 'cpu' } };
  }
  const why = providerUnavailable(device, probe);
  if (why)
    return {
      placement: { device, provider: 'cpu', error: `${LABEL[device]} was asked for (device "${device}") but ${why}; running on the CPU` },
    };
  return { tryFirst: device, placement: { device, provider: 'cpu' } };
}

/** The placement after trying `provider` failed with `reason`. */
export function fallbackPlacement(device: ModelDevice, provider: ExecutionProvider, reason: string): ModelPlacement {
  const message = `the ${LABEL[provider]} execution provider did not load (${reason}); running on the CPU`;
  return device === 'auto'
    ? { device, provider: 'cpu', note: message }
    : { device, provider: 'cpu', error: `${LABEL[provider]} was asked for (device "${device}") but ${message}` };
}

const logged = new Set<string>();

/** One log line per distinct fallback reason and process (every model would repeat it). */
export function logPlacement(modelName: string, placement: ModelPlacement): void {
  const reason = placement.error ?? placement.note;
  if (!reason) {
    if (placement.provider !== 'cpu') log.info(`${modelName} runs on ${LABEL[placement.provider]}`);
    return;
  }
  if (logged.has(reason)) return;
  logged.add(reason);
  if (placement.error) log.error(`models run on the CPU: ${reason}`);
  else log.info(`models run on the CPU (device auto: ${reason})`);
}

/** One model's provider as the status and a completion's trace report it. */
export interface ModelRunsOn {
  model: string;
  device: ModelDevice;
  provider: ExecutionProvider;
  /** The explicit device that could not be used. */
  error?: string;
}

export function runsOn(model: string, placement: ModelPlacement): ModelRunsOn {
  return { model, device: placement.device, provider: placement.provider, ...(placement.error ? { error: placement.error } : {}) };
}

/** `coderag-lm: CPU (device cuda; error: ...)`, for the trace and the status tooltip. */
export function formatRunsOn(r: ModelRunsOn): string {
  const asked = r.device === r.provider ? '' : ` (device ${r.device}${r.error ? `; **error:** ${r.error}` : ''})`;
  return `${r.model}: ${LABEL[r.provider]}${asked}`;
}
