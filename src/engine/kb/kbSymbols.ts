// The symbol table of one knowledge base, shared by dataflow retrieval and receiver typing: built
// on first use, dropped at every change and built again soon after (tens of ms on a 500-file
// repository), not in the next request.
import { ChangeScheduler } from './changeScheduler';
import type { KbChangeEvent } from './types';
import type { Disposable, Listener } from '../util/disposable';
import { errorMessage } from '../util/errors';
import { getLogger } from '../util/logger';
import { SymbolTable, type SymbolSource } from './symbolTable';

const log = getLogger('symbols');

export class KbSymbols implements Disposable {
  private built: SymbolTable | undefined;
  private readonly scheduler: ChangeScheduler;

  constructor(private readonly source: SymbolSource & { onDidChange: (listener: Listener<KbChangeEvent>) => Disposable }) {
    this.scheduler = new ChangeScheduler(source, {
      built: () => true,
      onChange: () => (this.built = undefined),
      refresh: () => {
        this.scheduler.take();
        this.table();
        return Promise.resolve();
      },
      onError: (e) => log.warn(`symbol table rebuild failed: ${errorMessage(e)}`),
    });
  }

  /** The table as the knowledge base is now. */
  table(): SymbolTable {
    return (this.built ??= new SymbolTable(this.source));
  }

  dispose(): void {
    this.scheduler.dispose();
  }
}
