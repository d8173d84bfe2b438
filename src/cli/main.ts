// `leash` command dispatch. Each subcommand lives in its own module, loaded only when named,
// so `leash supervise` stays as light as the supervisor must be.
import { writeData, writeDiagnostic } from '../sys/safe-output.js';
import { asksForHelp, HELP, MAIN_HELP, packageInfo } from './help.js';

export const EXIT_USAGE = 64;

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  supervise: async () => (await import('../supervisor/main.js')).supervisorMain,
  // One bundled module (scripts/build.mjs): leash run lives as long as its server, and ~20 separate
  // modules cost it 1.7 MB more. The modules themselves where the bundle was not built; a bundle
  // that is there but fails to load is an error to see, not to paper over with the modules.
  run: async () => ((await import('../run/leash-run.mjs' as string).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('leash-run.mjs')) return import('../run/main.js');
    throw error;
  })) as typeof import('../run/main.js')).runMain,
  status: async () => (await import('../run/status.js')).statusMain,
  reap: async () => (await import('../reap/main.js')).reapMain,
  check: async () => (await import('./check.js')).checkCommand,
  mcp: async () => (await import('../mcp-config/command.js')).mcpCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    const { name: pkg, version } = packageInfo();
    writeData(`leash ${version} (${pkg})\n`);
    return 0;
  }
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    // `help` is a command too: `leash help help` (or `help --help`) asks for this very text.
    const asked = name === 'help' ? rest[0] : undefined;
    const topic = asked === 'help' || asked === '--help' || asked === '-h' ? undefined : asked;
    if (topic === 'check' || topic === 'reap' || topic === 'mcp') return (await commands[topic]!())(['--help']);
    if (topic !== undefined && !HELP[topic]) {
      writeDiagnostic(`leash: no help for unknown command '${topic}'\n${MAIN_HELP}`);
      return EXIT_USAGE;
    }
    const text = topic ? HELP[topic]! : MAIN_HELP;
    if (name === undefined) writeDiagnostic(text);
    else writeData(text);
    return name === undefined ? EXIT_USAGE : 0;
  }
  const load = commands[name];
  if (!load) {
    writeDiagnostic(`leash: unknown command '${name}'\n${MAIN_HELP}`);
    return EXIT_USAGE;
  }
  const help = HELP[name];
  if (help && asksForHelp(rest, name === 'run' ? { valueOptions: ['--grace', '--state', '--parent-death-signal'] } : undefined)) {
    writeData(help);
    return 0;
  }
  return (await load())(rest);
}
