// Type-checks the console's TypeScript and Vue single-file components with vue-tsc. vue-tsc
// drives the TypeScript 5 compiler API, which TypeScript 7 (the server's compiler) no longer
// has, so it is pointed at the console's own TypeScript 5 (console/node_modules/typescript).
const path = require('node:path');

const consoleDir = path.resolve(__dirname, '..');
process.chdir(consoleDir);
const tsc = require.resolve('typescript/lib/tsc', { paths: [consoleDir] });
process.argv = [process.argv[0], 'vue-tsc', '--noEmit', '-p', 'tsconfig.json'];
require(require.resolve('vue-tsc', { paths: [consoleDir] })).run(tsc);
