// An MCP stdio client transport whose server process group is owned by leash: the server, any
// wrapper in front of it (npx, uvx, sh -c) and everything they start leave with the client,
// whether the client closes cleanly or is SIGKILLed. It mirrors the SDK's StdioClientTransport
// so a Client cannot tell the two apart; framing is the SDK's own (ReadBuffer, serializeMessage).
import type { ChildProcess } from 'node:child_process';
import { PassThrough, type Stream } from 'node:stream';
import type { StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ownedGroupEscapees, ownedGroupIsEmptySoon, spawnOwned, terminateOwned, terminateOwnedWithEscapees, waitForOwnedGroupEmpty } from '../owner/owned-groups.js';
import { clampedGrace } from '../owner/validation.js';
import { PacedWriter } from './paced-writer.js';
import { loadedSdk, loadSdk } from './sdk.js';

/** How long close() lets the server leave on its own after stdin ends; the SDK waits as long. */
export const DEFAULT_EOF_GRACE_MS = 2000;
/**
 * How long close() gives the group after SIGTERM before SIGKILL: the SDK's 2 s, so that a server
 * ignoring both its stdin's end and SIGTERM is gone, whole tree, in about 4 s as with the SDK.
 */
export const DEFAULT_TERM_GRACE_MS = 2000;

/** The SDK's server parameters, plus how patient close() is. */
export interface OwnedStdioServerParameters extends StdioServerParameters {
  /** close(): how long the group may take to exit after stdin ends, before SIGTERM (default 2000 ms; clamped to 0..600000, NaN is the default). */
  eofGraceMs?: number;
  /** close(): how long the group has after SIGTERM before SIGKILL (default 2000 ms, as the SDK waits; the same rule). */
  graceMs?: number;
}

/**
 * Drop-in for the SDK's `StdioClientTransport`: same parameters, same events, same `stderr`
 * and `pid`. The server leads its own process group, guarded by leash's death supervisor;
 * `close()` ends stdin, gives the group `eofGraceMs` to leave, then TERMs it, KILLs what is
 * left after `graceMs`, and resolves only once no process of the group runs.
 */
export class OwnedStdioClientTransport implements Transport {
  private child: ChildProcess | undefined;
  /** The SDK's framing of what the server writes; made by start(), once the SDK is loaded. */
  private readBuffer: ReadBuffer | undefined;
  private readonly params: OwnedStdioServerParameters;
  private readonly stderrStream: PassThrough | null = null;
  /** Cleanup of what a server that went away by itself left in its group. */
  private leftoverCleanup: Promise<unknown> | undefined;
  /** Settles on the child's 'close' event (exited, and all its stdio streams shut). */
  private childClosed: Promise<void> = Promise.resolve();
  /** The close() in progress: a second call shares it rather than resolving before the group is gone. */
  private closing: Promise<void> | undefined;
  /** Writes to the current server's stdin, at the pace it reads. */
  private writer: PacedWriter | undefined;

  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(server: OwnedStdioServerParameters) {
    this.params = server;
    // Handed out before start() so that callers miss none of the server's early output.
    if (server.stderr === 'pipe' || server.stderr === 'overlapped') this.stderrStream = new PassThrough();
  }

  /** Spawns the server in an owned process group; resolves once it runs. */
  async start(): Promise<void> {
    this.refuseSecondStart();
    // The SDK is an optional peer, loaded at import: without it this rejects with an error naming
    // it. Once loaded, the spawn happens within this call, as with the SDK's transport.
    const sdk = loadedSdk() ?? (await loadSdk());
    this.refuseSecondStart();
    const readBuffer = new sdk.ReadBuffer({ maxBufferSize: this.params.maxBufferSize });
    this.readBuffer = readBuffer;
    return new Promise((resolve, reject) => {
      const child = spawnOwned(this.params.command, this.params.args ?? [], {
        env: { ...sdk.getDefaultEnvironment(), ...this.params.env },
        stdio: ['pipe', 'pipe', this.params.stderr ?? 'inherit'],
        shell: false,
        windowsHide: process.platform === 'win32', // as the SDK does
        cwd: this.params.cwd,
      });
      this.child = child;
      this.childClosed = new Promise((resolveClosed) => child.once('close', () => resolveClosed()));
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.once('exit', () => void this.releasePipesOnceGroupEmpty(child).catch((error: unknown) => this.onerror?.(error as Error)));
      child.on('close', () => {
        if (this.child === child) {
          // The server went away on its own; whatever it left behind in its group goes too.
          this.child = undefined;
          if (child.pid !== undefined) this.leftoverCleanup = terminateOwned(child.pid, { graceMs: this.graceMs });
        }
        this.onclose?.();
      });
      this.writer = child.stdin ? new PacedWriter(child.stdin, sdk.serializeMessage) : undefined;
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          readBuffer.append(chunk);
          this.drainReadBuffer(readBuffer);
        } catch (error) {
          this.onerror?.(error as Error);
          this.close().catch(() => {});
        }
      });
      child.stdout?.on('error', (error) => this.onerror?.(error));
      if (this.stderrStream && child.stderr) child.stderr.pipe(this.stderrStream);
    });
  }

  private refuseSecondStart(): void {
    if (this.child) {
      throw new Error(
        'OwnedStdioClientTransport already started! If using Client class, note that connect() calls start() automatically.',
      );
    }
  }

  /**
   * After the server exits by itself: once its whole group is gone, a holder of its pipes left is
   * a process that left the group (setsid). Without this 'close', and so onclose and the cleanup,
   * would wait for that escapee. Never while a member of the group runs: it may still be talking.
   */
  private async releasePipesOnceGroupEmpty(child: ChildProcess): Promise<void> {
    const pgid = child.pid;
    if (pgid === undefined) return;
    let closed = false;
    child.once('close', () => {
      closed = true;
    });
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
    // A group whose leader is gone costs a (sliced) scan of /proc per check: back off to one per 5 s.
    for (let wait = 250; !closed && this.child === child; wait = Math.min(wait * 2, 5000)) {
      if (await ownedGroupIsEmptySoon(pgid)) {
        // A moment to read what the group wrote last, then the pipes go.
        await pause(1000);
        if (!closed && this.child === child) this.letGoOfPipes(child);
        return;
      }
      await pause(wait);
    }
  }

  /** Closes our ends of the server's pipes; the stderr stream handed out ends as at a real EOF. */
  private letGoOfPipes(child: ChildProcess): void {
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
    if (this.stderrStream && child.stderr) {
      child.stderr.unpipe(this.stderrStream);
      this.stderrStream.end();
    }
  }

  /** The server's stderr when `stderr` was 'pipe' or 'overlapped' (available before start()). */
  get stderr(): Stream | null {
    return this.stderrStream ?? this.child?.stderr ?? null;
  }

  /** The pid of the spawned command, which is also the pgid of the owned group. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  private get graceMs(): number {
    return clampedGrace(this.params.graceMs, DEFAULT_TERM_GRACE_MS);
  }

  private drainReadBuffer(readBuffer: ReadBuffer): void {
    for (;;) {
      try {
        const message = readBuffer.readMessage();
        if (message === null) break;
        this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error as Error);
      }
    }
  }

  /** Ends stdin, then the whole group (TERM, grace, KILL); resolves once the group is empty. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce().finally(() => {
      this.closing = undefined;
    });
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    const child = this.child;
    if (child) {
      this.child = undefined;
      const closed = this.childClosed;
      // Messages still waiting their turn would only be written into a closing pipe.
      this.writer?.dropUnwritten();
      const pgid = child.pid;
      // What left the server's group (a browser it started detached, a setsid helper) is found
      // while the server still runs: once it leaves on EOF, that no longer descends from it.
      const escapees = pgid !== undefined ? await ownedGroupEscapees(pgid) : [];
      try {
        child.stdin?.end();
      } catch {
        // A stdin that is already gone needs no ending.
      }
      if (pgid !== undefined) {
        // A well-behaved server leaves on EOF; give it the chance before any signal.
        // Shared, sliced checks (the group's own, on Windows): closing many at once holds no loop.
        await waitForOwnedGroupEmpty(pgid, clampedGrace(this.params.eofGraceMs, DEFAULT_EOF_GRACE_MS));
        await terminateOwnedWithEscapees(pgid, this.graceMs, escapees);
      }
      // Every holder of the pipes in the group is gone now, so 'close' (and onclose) follows
      // promptly, unless a process that left the group (setsid) inherited them: then the pipes
      // are let go, or they would hold this process's event loop and onclose would never fire.
      // That escapee is the supervisor's to end (it carries the owner token).
      const settled = await Promise.race([closed.then(() => true), new Promise<false>((resolve) => setTimeout(resolve, 1000, false).unref())]);
      if (!settled) {
        this.letGoOfPipes(child);
        await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      }
    }
    await this.leftoverCleanup;
    this.readBuffer?.clear();
  }

  /**
   * Writes one message; resolves once it is handed to the pipe. While the server is not reading,
   * later messages wait their turn unwritten (see PacedWriter), so the client buffers no more than
   * a pipe's worth. Rejects, rather than waiting forever, when stdin closes first: the server is
   * gone or stopped reading, and the message was never delivered.
   */
  send(message: JSONRPCMessage): Promise<void> {
    const writer = this.child ? this.writer : undefined;
    if (!writer) return Promise.reject(new Error('Not connected'));
    return writer.send(message);
  }
}
