// Writes MCP messages to a server's stdin at the pace the server reads them. Once a write is not
// taken at once (write() returned false), every later message waits, in order and not yet
// serialized, for 'drain': the stream then never holds more than its high-water mark plus one
// message, however many sends are made without awaiting them (the SDK's Client fires its requests
// that way), and a server that stops reading costs the client no growing buffer.
import type { Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

interface PendingSend {
  /** The message, until it is handed to the stream. */
  message: JSONRPCMessage | undefined;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class PacedWriter {
  /** Sends not yet settled, oldest first; only the first may have been written (awaiting 'drain'). */
  private readonly pending: PendingSend[] = [];
  private failure: Error | undefined;

  /** `serialize` is the SDK's framing (serializeMessage), handed in once the SDK is loaded. */
  constructor(
    private readonly stdin: Writable,
    private readonly serialize: (message: JSONRPCMessage) => string,
  ) {
    // One listener of each for the stream's life, whatever the number of waiting sends.
    stdin.on('drain', () => this.pump());
    // Ended by close(): what was written is flushed to the pipe, so it was delivered.
    stdin.once('finish', () => this.settleWritten());
    stdin.once('close', () => this.fail(new Error("Not connected: the server's stdin closed before the message was written")));
  }

  /** Resolves once the message is handed to the pipe; rejects if stdin closes before that. */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.failure || this.stdin.destroyed || this.stdin.writableEnded) return Promise.reject(new Error('Not connected'));
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ message, resolve, reject });
      if (this.pending.length === 1) this.pump();
    });
  }

  /** Before stdin is ended: the sends not yet written will never be, and reject now. */
  dropUnwritten(): void {
    const unwritten = this.pending.filter((send) => send.message !== undefined);
    this.pending.splice(0, this.pending.length, ...this.pending.filter((send) => send.message === undefined));
    for (const send of unwritten) send.reject(new Error('Not connected: the transport closed before the message was written'));
  }

  /** Writes waiting messages, in order, until the stream asks to wait for 'drain'. */
  private pump(): void {
    while (this.pending.length > 0) {
      const head = this.pending[0]!;
      if (head.message !== undefined) {
        if (this.stdin.destroyed || this.stdin.writableEnded) {
          this.fail(new Error('Not connected'));
          return;
        }
        const line = this.serialize(head.message);
        head.message = undefined;
        if (!this.stdin.write(line)) return;
      } else if (this.stdin.writableNeedDrain) {
        return;
      }
      this.pending.shift();
      head.resolve();
    }
  }

  private settleWritten(): void {
    // Only the oldest send can have been written; the others were dropped before the end.
    if (this.pending.length > 0 && this.pending[0]!.message === undefined) this.pending.shift()!.resolve();
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const send of this.pending.splice(0)) send.reject(error);
  }
}
