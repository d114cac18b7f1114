// Runs before any TypeScript source is loaded (bin/signet imports it first; `npm test` runs it
// before scripts/test.ts): Node older than 22.18 cannot strip types and would die with
// ERR_UNKNOWN_FILE_EXTENSION and a stack trace. Plain JavaScript on purpose, so it runs on any
// Node that can run ES modules. Keep in step with package.json "engines".
const NEEDED = [22, 18];
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < NEEDED[0] || (major === NEEDED[0] && minor < NEEDED[1])) {
  process.stderr.write(
    `signet: Node.js ${NEEDED.join('.')} or newer is needed (this is ${process.version}); install Node 24 LTS from https://nodejs.org/en/download or with \`nvm install 24\`.\n`,
  );
  process.exit(1);
}
