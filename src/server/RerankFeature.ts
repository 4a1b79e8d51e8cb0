// Which reranker the next request uses (CodeRAG 2.3): LLM through Ollama or the distilled ONNX
// model; switched at run time by `coderag/setReranker` (the client's toggle) or the settings.
import type { ClientCapabilities, Connection, ServerCapabilities } from 'vscode-languageserver/node';
import { ollamaReranker } from '../engine/rerank/LlmReranker';
import { RerankerSwitch } from '../engine/rerank/RerankerSwitch';
import type { Reranker } from '../engine/rerank/types';
import { SetRerankerRequest, type RerankerChoice } from '../protocol/protocol';
import type { ServerConfig } from './config';
import type { Feature } from './feature';
import type { StatusReporter } from './StatusReporter';

/** The distilled reranker with what releases its ONNX session. */
interface LoadedReranker {
  reranker: Reranker;
  dispose(): Promise<void>;
}

export class RerankFeature implements Feature {
  readonly switcher = new RerankerSwitch('none');
  private llmKey = '';
  /** The distilled reranker once the shipped model loaded; this feature releases its session at shutdown. */
  private loaded: LoadedReranker | undefined;
  private shutDown = false;

  constructor(private readonly status: StatusReporter) {
    this.switcher.onDidChange(() => this.publish());
  }

  private distilled(): Reranker | undefined {
    return this.loaded?.reranker;
  }

  /** The distilled model finished loading: offer it (or release it at once when the server is shutting down). */
  async setDistilled(loaded: LoadedReranker): Promise<void> {
    if (this.shutDown) return loaded.dispose();
    this.loaded = loaded;
    this.refresh();
  }

  initialize(connection: Connection, _caps: ClientCapabilities, config: ServerConfig): Partial<ServerCapabilities> {
    this.apply(config, true);
    connection.onRequest(SetRerankerRequest.type, (params) => {
      this.switcher.set(params.reranker);
      this.publish();
      return { reranker: this.switcher.current, available: this.available() };
    });
    return {};
  }

  updateConfig(config: ServerConfig): void {
    this.apply(config, false);
  }

  private apply(config: ServerConfig, first: boolean): void {
    const key = JSON.stringify([config.ollama.host, config.rerank.llmModel, config.rerank.timeoutMs]);
    if (key !== this.llmKey) {
      this.llmKey = key;
      this.switcher.register(
        'llm',
        ollamaReranker({ host: config.ollama.host, model: config.rerank.llmModel, timeoutMs: config.rerank.timeoutMs }),
      );
    }
    this.switcher.register('distilled', this.distilled());
    // The setting chooses at start and when it changes; the toggle command overrides until then.
    if (first || config.rerank.kind !== this.lastSetting) this.switcher.set(config.rerank.kind);
    this.lastSetting = config.rerank.kind;
    this.publish();
  }

  private lastSetting: RerankerChoice | undefined;

  available(): RerankerChoice[] {
    this.switcher.register('distilled', this.distilled());
    return [...this.switcher.available, 'none'];
  }

  /** Offer what is loaded and show what is available. */
  refresh(): void {
    this.switcher.register('distilled', this.distilled());
    this.publish();
  }

  private publish(): void {
    this.status.update({ reranker: { current: this.switcher.current, available: this.available() } });
  }

  async shutdown(): Promise<void> {
    this.shutDown = true;
    this.switcher.dispose();
    const loaded = this.loaded;
    this.loaded = undefined;
    await loaded?.dispose();
  }
}
