// The `signet` command: one file per command group under ./commands, each exporting
// `register(program)`. Only the module of the command being run is imported: the groups pull in
// very different stacks (serve: fastify, the database and the queue; codesign: the Mach-O
// engine), and importing all of them made every invocation, even `signet --help`, pay seconds
// of start-up and ~80 MB of memory for code it never ran.
import { Command } from 'commander';
import { errorCodeOf } from '../errors.ts';

interface CommandGroup {
  /** One line for `signet --help`; the module's own description shows in `signet NAME --help`. */
  readonly summary: string;
  readonly load: () => Promise<{ register(program: Command): void }>;
}

// Command groups: add one line per file under ./commands (name as typed on the command line).
const COMMANDS: Record<string, CommandGroup> = {
  codesign: { summary: 'Sign a Mach-O binary ad-hoc or with a .p12 identity', load: () => import('./commands/codesign.ts') },
  inspect: { summary: 'Show what an .ipa or .apk is', load: () => import('./commands/inspect.ts') },
  keys: { summary: 'Manage API keys', load: () => import('./commands/keys.ts') },
  serve: { summary: 'Run the API server and signing workers', load: () => import('./commands/serve.ts') },
  users: { summary: 'Manage console users (headless installs, password resets)', load: () => import('./commands/users.ts') },
  sign: { summary: 'Re-sign an .apk or .ipa with your key', load: () => import('./commands/sign.ts') },
  verify: { summary: 'Check the signatures of an .apk or .ipa', load: () => import('./commands/verify.ts') },
  worker: { summary: 'Run only the signing worker (no HTTP; share the database and storage with `signet serve`)', load: () => import('./commands/worker.ts') },
  webhooks: { summary: "Show or rotate an account's webhook signing secret", load: () => import('./commands/webhooks.ts') },
};

// `signet … | head`: once the reader has gone, the rest of the output has nowhere to go. The
// command's work (a signed file, say) is already done or still completes; stop writing quietly
// instead of dying with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.stdout.destroy();
});

const program = new Command('signet')
  .description('Sign and distribute iOS and Android apps')
  .showHelpAfterError()
  .exitOverride((error) => process.exit(error.exitCode));

// The command named on the command line (`signet help NAME` asks for NAME's help): the first
// argument that is not an option, since the program itself takes none but --help.
const args = process.argv.slice(2);
const first = args.find((arg) => !arg.startsWith('-'));
const named = first === 'help' ? args[args.indexOf(first) + 1] : first;
const group = named === undefined || !Object.hasOwn(COMMANDS, named) ? undefined : COMMANDS[named];

try {
  if (group !== undefined) {
    (await group.load()).register(program);
  } else {
    // No (known) command: list them all for the help text or commander's "unknown command"
    // message with its suggestions. These entries only describe; none of them runs.
    for (const [name, { summary }] of Object.entries(COMMANDS)) program.command(name).description(summary);
  }
  await program.parseAsync(process.argv);
} catch (error) {
  // Catalogue errors (bad input, missing account…) are the user's to fix: one line, no stack.
  const code = errorCodeOf(error) ?? (error instanceof Error && 'code' in error && error.code === 'config_invalid' ? 'config_invalid' : null);
  if (code === null) throw error;
  process.stderr.write(`signet: ${(error as Error).message} (${code})\n`);
  process.exit(1);
}
