// Windows Job Objects through koffi (kernel32): the Windows side of the platform seam. A job with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE ends every process in it when its last handle closes, which
// the kernel does when the process holding it dies, however it dies: on Windows the kernel is the
// death supervisor. koffi is loaded on first use (synchronously, as spawn is synchronous) and only
// on win32; elsewhere every call throws 'unsupported'.
import { createRequire } from 'node:module';

/** An opaque kernel handle (koffi's pointer object). */
export type Handle = object;

/** A failed kernel32 call, with GetLastError's number. */
export class WindowsCallError extends Error {
  constructor(readonly call: string, readonly lastError: number) {
    super(`${call} failed: Windows error ${lastError}`);
  }
}

const JOB_OBJECT_BASIC_ACCOUNTING_INFORMATION = 1;
const JOB_OBJECT_BASIC_PROCESS_ID_LIST = 3;
const JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9;
const JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000;
/** sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION) on x64; LimitFlags sits at offset 16. */
const EXTENDED_LIMIT_SIZE = 144;
const LIMIT_FLAGS_OFFSET = 16;
/** JOBOBJECT_BASIC_ACCOUNTING_INFORMATION: 48 bytes, ActiveProcesses at offset 40. */
const ACCOUNTING_SIZE = 48;
const ACTIVE_PROCESSES_OFFSET = 40;

const PROCESS_TERMINATE = 0x0001;
const PROCESS_SET_QUOTA = 0x0100;
const PROCESS_QUERY_INFORMATION = 0x0400;
const PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;
const SYNCHRONIZE = 0x00100000;
const WAIT_OBJECT_0 = 0;
const WAIT_TIMEOUT = 0x102;

interface Kernel32 {
  GetLastError: () => number;
  CloseHandle: (handle: Handle) => number;
  GetCurrentProcess: () => Handle;
  CreateJobObjectW: (attributes: null, name: null) => Handle | null;
  SetInformationJobObject: (job: Handle, infoClass: number, info: Buffer, length: number) => number;
  QueryInformationJobObject: (job: Handle, infoClass: number, info: Buffer, length: number, returned: null) => number;
  AssignProcessToJobObject: (job: Handle, process: Handle) => number;
  TerminateJobObject: (job: Handle, exitCode: number) => number;
  IsProcessInJob: (process: Handle, job: Handle | null, result: number[]) => number;
  OpenProcess: (access: number, inherit: number, pid: number) => Handle | null;
  WaitForSingleObject: ((handle: Handle, ms: number) => number) & {
    async: (handle: Handle, ms: number, done: (error: unknown, result: number) => void) => void;
  };
  CreateProcessW: (
    application: null, commandLine: Buffer, processAttributes: null, threadAttributes: null,
    inherit: number, flags: number, environment: null, directory: null, startup: Buffer,
    info: { hProcess?: Handle | null; hThread?: Handle | null; dwProcessId?: number },
  ) => number;
}

let kernel32: Kernel32 | undefined;

function api(call: string): Kernel32 {
  if (kernel32) return kernel32;
  if (process.platform !== 'win32') throw new WindowsCallError(`${call} (unsupported on ${process.platform})`, 0);
  type Koffi = typeof import('koffi');
  const koffi = createRequire(import.meta.url)('koffi') as Koffi;
  const lib = koffi.load('kernel32.dll');
  koffi.opaque('LEASH_HANDLE');
  koffi.struct('LEASH_PROCESS_INFORMATION', {
    hProcess: 'LEASH_HANDLE *',
    hThread: 'LEASH_HANDLE *',
    dwProcessId: 'uint32_t',
    dwThreadId: 'uint32_t',
  });
  const f = (signature: string) => lib.func(signature.replaceAll('HANDLE', 'LEASH_HANDLE *'));
  kernel32 = {
    GetLastError: f('uint32_t __stdcall GetLastError()'),
    CloseHandle: f('int __stdcall CloseHandle(HANDLE h)'),
    GetCurrentProcess: f('HANDLE __stdcall GetCurrentProcess()'),
    CreateJobObjectW: f('HANDLE __stdcall CreateJobObjectW(void *attributes, const char16_t *name)'),
    SetInformationJobObject: f('int __stdcall SetInformationJobObject(HANDLE job, int infoClass, void *info, uint32_t length)'),
    QueryInformationJobObject: f('int __stdcall QueryInformationJobObject(HANDLE job, int infoClass, _Out_ void *info, uint32_t length, void *returned)'),
    AssignProcessToJobObject: f('int __stdcall AssignProcessToJobObject(HANDLE job, HANDLE process)'),
    TerminateJobObject: f('int __stdcall TerminateJobObject(HANDLE job, uint32_t exitCode)'),
    IsProcessInJob: f('int __stdcall IsProcessInJob(HANDLE process, HANDLE job, _Out_ int *result)'),
    OpenProcess: f('HANDLE __stdcall OpenProcess(uint32_t access, int inherit, uint32_t pid)'),
    WaitForSingleObject: f('uint32_t __stdcall WaitForSingleObject(HANDLE handle, uint32_t ms)'),
    CreateProcessW: f(
      'int __stdcall CreateProcessW(void *application, _Inout_ void *commandLine, void *pa, void *ta, int inherit, ' +
        'uint32_t flags, void *environment, void *directory, void *startup, _Out_ LEASH_PROCESS_INFORMATION *info)',
    ),
  } as unknown as Kernel32;
  return kernel32;
}

function fail(call: string): never {
  throw new WindowsCallError(call, kernel32?.GetLastError() ?? 0);
}

/** A new anonymous job whose processes all end when its last handle closes. */
export function createKillOnCloseJob(): Handle {
  const k = api('CreateJobObjectW');
  const job = k.CreateJobObjectW(null, null);
  if (!job) fail('CreateJobObjectW');
  setKillOnClose(job, true);
  return job;
}

/** Sets or clears JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE (clearing lets a job's processes outlive it). */
export function setKillOnClose(job: Handle, on: boolean): void {
  const info = Buffer.alloc(EXTENDED_LIMIT_SIZE);
  info.writeUInt32LE(on ? JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE : 0, LIMIT_FLAGS_OFFSET);
  if (!api('SetInformationJobObject').SetInformationJobObject(job, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION, info, info.length)) {
    fail('SetInformationJobObject');
  }
}

/** The pseudo-handle of this process (never closed). */
export function currentProcess(): Handle {
  return api('GetCurrentProcess').GetCurrentProcess();
}

/**
 * A real handle to the process `pid`, able to put it in a job, end it and wait on it, or
 * undefined when it is gone or not ours. While we hold it, the pid cannot be recycled.
 */
export function openProcess(pid: number): Handle | undefined {
  const k = api('OpenProcess');
  const access = PROCESS_SET_QUOTA | PROCESS_TERMINATE | PROCESS_QUERY_INFORMATION | PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE;
  return k.OpenProcess(access, 0, pid) ?? undefined;
}

/** A handle that can only be waited on and asked for its exit code (enough for a parent). */
export function openProcessForWaiting(pid: number): Handle | undefined {
  return api('OpenProcess').OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) ?? undefined;
}

export function closeHandle(handle: Handle): void {
  api('CloseHandle').CloseHandle(handle);
}

/** Puts a process into a job (nesting it under the jobs it is already in). */
export function assignToJob(job: Handle, processHandle: Handle): void {
  if (!api('AssignProcessToJobObject').AssignProcessToJobObject(job, processHandle)) fail('AssignProcessToJobObject');
}

/** Whether the process is in `job` (or, with no job, in any job). */
export function isProcessInJob(processHandle: Handle, job?: Handle): boolean {
  const result = [0];
  if (!api('IsProcessInJob').IsProcessInJob(processHandle, job ?? null, result)) fail('IsProcessInJob');
  return result[0] !== 0;
}

/** How many processes run in the job now. */
export function activeProcessCount(job: Handle): number {
  const info = Buffer.alloc(ACCOUNTING_SIZE);
  if (!api('QueryInformationJobObject').QueryInformationJobObject(job, JOB_OBJECT_BASIC_ACCOUNTING_INFORMATION, info, info.length, null)) {
    fail('QueryInformationJobObject');
  }
  return info.readUInt32LE(ACTIVE_PROCESSES_OFFSET);
}

/** The pids of the processes in the job (at most 1024 listed). */
export function jobProcessIds(job: Handle): number[] {
  const capacity = 1024;
  const info = Buffer.alloc(8 + 8 * capacity);
  if (!api('QueryInformationJobObject').QueryInformationJobObject(job, JOB_OBJECT_BASIC_PROCESS_ID_LIST, info, info.length, null)) {
    fail('QueryInformationJobObject');
  }
  const listed = info.readUInt32LE(4);
  const pids: number[] = [];
  for (let i = 0; i < listed; i += 1) pids.push(Number(info.readBigUInt64LE(8 + 8 * i)));
  return pids;
}

/** Ends every process in the job at once with `exitCode`. */
export function terminateJob(job: Handle, exitCode: number): void {
  if (!api('TerminateJobObject').TerminateJobObject(job, exitCode)) fail('TerminateJobObject');
}

/**
 * Resolves once the process behind the handle has ended. The wait runs on libuv's thread pool in
 * slices, so it never holds a pool thread for long and can be abandoned with `abort`.
 */
export async function waitForProcessEnd(processHandle: Handle, abort?: AbortSignal, sliceMs = 250): Promise<boolean> {
  const k = api('WaitForSingleObject');
  while (!abort?.aborted) {
    const result = await new Promise<number>((resolve, reject) => {
      k.WaitForSingleObject.async(processHandle, sliceMs, (error, value) => (error ? reject(error) : resolve(value)));
    });
    if (result === WAIT_OBJECT_0) return true;
    if (result !== WAIT_TIMEOUT) fail('WaitForSingleObject');
  }
  return false;
}

/**
 * CreateProcessW with a raw command line and creation flags: a process Node's spawn knows
 * nothing about (no libuv job). Returns its pid; the handles are closed.
 */
export function createProcessRaw(commandLine: string, flags = 0): number {
  const k = api('CreateProcessW');
  const line = Buffer.from(`${commandLine}\0`, 'utf16le');
  const startup = Buffer.alloc(104); // STARTUPINFOW on x64
  startup.writeUInt32LE(startup.length, 0);
  const info: { hProcess?: Handle | null; hThread?: Handle | null; dwProcessId?: number } = {};
  if (!k.CreateProcessW(null, line, null, null, 0, flags, null, null, startup, info)) fail('CreateProcessW');
  if (info.hProcess) k.CloseHandle(info.hProcess);
  if (info.hThread) k.CloseHandle(info.hThread);
  return info.dwProcessId ?? 0;
}

