// The public API of leash: children that die with their owner.
export {
  spawnOwned,
  ownProcessGroup,
  releaseProcessGroup,
  terminateOwned,
  ownedProcessGroups,
  supervisorPid,
  type TerminateOptions,
  type TerminateResult,
} from './owner/owned-groups.js';
export { execFileOwned, execOwned, type ExecCallback, type OwnedExecFileOptions, type OwnedExecOptions } from './owner/owned-exec.js';
export { forkOwned } from './owner/owned-fork.js';
export { OWNER_TOKEN_VARIABLE, DEFAULT_GRACE_MS } from './supervisor/protocol.js';
