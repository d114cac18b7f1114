// The `signet` command: one file per command group under ./commands, registered here.
import { Command } from 'commander';

const program = new Command('signet')
  .description('Sign and distribute iOS and Android apps')
  .showHelpAfterError()
  .exitOverride((error) => process.exit(error.exitCode));

// Command groups register themselves below (each file exports `register(program)`).

await program.parseAsync(process.argv);
