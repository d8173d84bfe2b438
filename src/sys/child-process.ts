// The child_process functions as they were when leash loaded. An app that adopts the drop-in
// replaces the module's exports (`cp.spawn = spawnOwned`, then syncBuiltinESMExports() for ESM
// importers): leash's own spawns must not go through that replacement, or spawnOwned would call
// itself. Every internal spawn of leash imports from here, never from node:child_process.
import * as childProcess from 'node:child_process';

export const { spawn, spawnSync, exec, execSync, execFile, execFileSync, fork } = childProcess;
