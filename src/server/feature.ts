// A server component (Tabby-agent style): it registers its handlers and returns the capabilities
// it adds; collaborators arrive by constructor; the Server calls these in order.
import type { ClientCapabilities, Connection, ServerCapabilities } from 'vscode-languageserver/node';
import type { ServerConfig } from './config';

export interface Feature {
  /** Register handlers; return the capabilities this feature adds. */
  initialize(connection: Connection, clientCapabilities: ClientCapabilities, config: ServerConfig): Partial<ServerCapabilities>;
  /** After the client's `initialized`: start background work. */
  initialized?(): Promise<void>;
  /** A new merged configuration (settings changed). */
  updateConfig?(config: ServerConfig): void;
  shutdown?(): Promise<void> | void;
}
