// The LSP lifecycle, enforced on every message before any handler sees it (the connection's
// message strategy), so that it holds for every request and notification whoever registers them:
// before `initialize` requests answer ServerNotInitialized and notifications but `exit` are
// dropped; a second `initialize` is refused and reaches nothing; after `shutdown` requests answer
// InvalidRequest and notifications but `exit` are dropped, so no work starts once stopping began.
import {
  ErrorCodes,
  Message,
  ResponseError,
  type Connection,
  type MessageStrategy,
  type NotificationMessage,
  type RequestMessage,
} from 'vscode-languageserver/node';
import { getLogger } from '../engine/util/logger';

const log = getLogger('lifecycle');

type LifecyclePhase = 'awaitingInitialize' | 'running' | 'shutDown';

interface Refusal {
  code: number;
  message: string;
}

/** A refused request is dispatched to this method instead, whose handler answers the refusal. */
const REFUSED_METHOD = 'coderag/$refused';

export class LifecycleGuard implements MessageStrategy {
  private current: LifecyclePhase = 'awaitingInitialize';
  private initializedSeen = false;

  get phase(): LifecyclePhase {
    return this.current;
  }

  handleMessage(message: Message, next: (message: Message) => void): void {
    if (Message.isRequest(message)) return next(this.admitRequest(message));
    if (Message.isNotification(message)) {
      if (this.admitsNotification(message)) next(message);
      return;
    }
    // Responses to the server's own requests.
    next(message);
  }

  /** Answer the refused requests; call before the connection listens. */
  attach(connection: Connection): void {
    connection.onRequest(REFUSED_METHOD, (refusal: Refusal) => new ResponseError(refusal.code, refusal.message));
  }

  private admitRequest(request: RequestMessage): RequestMessage {
    const refusal = this.refusal(request.method);
    if (refusal) {
      log.debug(`refused ${request.method}: ${refusal.message}`);
      return { jsonrpc: request.jsonrpc, id: request.id, method: REFUSED_METHOD, params: refusal };
    }
    // The phase moves when the request is admitted: whatever arrives after it sees the new phase.
    if (request.method === 'initialize') this.current = 'running';
    else if (request.method === 'shutdown') this.current = 'shutDown';
    return request;
  }

  private refusal(method: string): Refusal | undefined {
    switch (this.current) {
      case 'awaitingInitialize':
        return method === 'initialize'
          ? undefined
          : { code: ErrorCodes.ServerNotInitialized, message: `the server is not initialized yet (${method} before initialize)` };
      case 'running':
        return method === 'initialize'
          ? { code: ErrorCodes.InvalidRequest, message: 'the server is already initialized (a second initialize)' }
          : undefined;
      case 'shutDown':
        return { code: ErrorCodes.InvalidRequest, message: `the server is shutting down (${method} after shutdown)` };
    }
  }

  private admitsNotification(notification: NotificationMessage): boolean {
    const method = notification.method;
    if (method === 'exit') return true;
    let admitted = this.current === 'running';
    // `initialized` starts the background work: once.
    if (admitted && method === 'initialized') {
      admitted = !this.initializedSeen;
      this.initializedSeen = true;
    }
    if (!admitted)
      log.debug(
        `dropped ${method} ` +
          `(${this.current === 'running' ? 'a second initialized' : this.current === 'shutDown' ? 'after shutdown' : 'before initialize'})`,
      );
    return admitted;
  }
}
