// The parts of @modelcontextprotocol/sdk (an optional peer dependency) the transport runs on,
// loaded by dynamic import: without the SDK, `import 'proc-leash/mcp'` still loads, warns once
// naming the missing peer, and start() rejects with the same clear error, instead of a
// module-not-found trace pointing into leash's files. No top-level await, so require() and
// CommonJS bundles keep working.
import type { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';

export const SDK_PACKAGE = '@modelcontextprotocol/sdk';
export const SDK_MISSING_CODE = 'LEASH_MCP_SDK_MISSING';

export interface SdkParts {
  getDefaultEnvironment: typeof getDefaultEnvironment;
  ReadBuffer: typeof ReadBuffer;
  serializeMessage: typeof serializeMessage;
}

/** Whether a failed import says that the SDK itself is not installed where this file can find it. */
function isSdkNotFound(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const notFound = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || /cannot find|not found|could not resolve/i.test(String(message));
  return notFound && String(message).includes(SDK_PACKAGE);
}

/** The error a missing SDK becomes: what is missing, why, and the command that fixes it. */
export function sdkMissingError(cause: unknown): Error {
  const error = new Error(
    `proc-leash/mcp needs its optional peer dependency ${SDK_PACKAGE}, which is not installed where proc-leash can find it. ` +
      `Install it next to proc-leash: npm install ${SDK_PACKAGE}`,
    { cause },
  ) as Error & { code: string };
  error.code = SDK_MISSING_CODE;
  return error;
}

let loading: Promise<SdkParts> | undefined;
let loaded: SdkParts | undefined;

/** The SDK's parts once the import has finished, so that a caller can go on without awaiting. */
export function loadedSdk(): SdkParts | undefined {
  return loaded;
}

/** The SDK's parts, imported once; rejects with sdkMissingError when the SDK is not installed. */
export function loadSdk(): Promise<SdkParts> {
  loading ??= Promise.all([import('@modelcontextprotocol/sdk/client/stdio.js'), import('@modelcontextprotocol/sdk/shared/stdio.js')]).then(
    ([client, shared]) => {
      loaded = { getDefaultEnvironment: client.getDefaultEnvironment, ReadBuffer: shared.ReadBuffer, serializeMessage: shared.serializeMessage };
      return loaded;
    },
    (error: unknown) => {
      throw isSdkNotFound(error) ? sdkMissingError(error) : error;
    },
  );
  return loading;
}

// Started at import, so the first start() does not wait for it and a missing SDK is said at once.
loadSdk().catch((error: unknown) => {
  const { code, message } = error as { code?: string; message?: string };
  if (code === SDK_MISSING_CODE) process.emitWarning(message ?? '', { code: SDK_MISSING_CODE });
});
