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
export { OWNER_TOKEN_VARIABLE, DEFAULT_GRACE_MS } from './supervisor/protocol.js';
