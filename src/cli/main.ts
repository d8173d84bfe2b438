// `leash` command dispatch. Each subcommand lives in its own module, loaded only when named,
// so `leash supervise` stays as light as the supervisor must be.
import { asksForHelp, HELP, MAIN_HELP, packageInfo } from './help.js';

export const EXIT_USAGE = 64;

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  supervise: async () => (await import('../supervisor/main.js')).supervisorMain,
  run: async () => (await import('../run/main.js')).runMain,
  status: async () => (await import('../run/status.js')).statusMain,
  reap: async () => (await import('../reap/main.js')).reapMain,
  check: async () => (await import('./check.js')).checkCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    const { name: pkg, version } = packageInfo();
    process.stdout.write(`leash ${version} (${pkg})\n`);
    return 0;
  }
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic === 'check' || topic === 'reap') return (await commands[topic]!())(['--help']);
    if (topic !== undefined && !HELP[topic]) {
      process.stderr.write(`leash: no help for unknown command '${topic}'\n${MAIN_HELP}`);
      return EXIT_USAGE;
    }
    (name === undefined ? process.stderr : process.stdout).write(topic ? HELP[topic]! : MAIN_HELP);
    return name === undefined ? EXIT_USAGE : 0;
  }
  const load = commands[name];
  if (!load) {
    process.stderr.write(`leash: unknown command '${name}'\n${MAIN_HELP}`);
    return EXIT_USAGE;
  }
  const help = HELP[name];
  if (help && asksForHelp(rest)) {
    process.stdout.write(help);
    return 0;
  }
  return (await load())(rest);
}
