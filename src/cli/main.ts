// `leash` command dispatch. Each subcommand lives in its own module, loaded only when named,
// so `leash supervise` stays as light as the supervisor must be.

export const EXIT_USAGE = 64;

const USAGE = `usage: leash <command> [options]

commands:
  supervise --parent-pgid PGID [--grace-ms MS] [--owner-token TOKEN] [--max-groups N]
                                                 the per-owner death supervisor (started by the library)
  run [--grace S] [--state FILE] [--die-with-parent] -- COMMAND [ARG...]
                                                 run COMMAND and own its whole process tree
  status [FILE] [--json]                         show the state document of a \`leash run\`
  check [options] [PATH...]                      find detached spawns in Python and JS/TS code
                                                 (leash check --help for its options)
  help                                           this text
`;

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  supervise: async () => (await import('../supervisor/main.js')).supervisorMain,
  run: async () => (await import('../run/main.js')).runMain,
  status: async () => (await import('../run/status.js')).statusMain,
  check: async () => (await import('../check/main.js')).checkMain,
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    (name === undefined ? process.stderr : process.stdout).write(USAGE);
    return name === undefined ? EXIT_USAGE : 0;
  }
  const load = commands[name];
  if (!load) {
    process.stderr.write(`leash: unknown command '${name}'\n${USAGE}`);
    return EXIT_USAGE;
  }
  return (await load())(rest);
}
