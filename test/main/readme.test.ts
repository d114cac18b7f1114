// The README stays true: its configuration and error tables match SETTINGS and the catalogue,
// its quick start is exactly the two commands, and it walks through every API route.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { configTable, errorTable, README, section } from './readme-tables.ts';

const readme = readFileSync(README, 'utf8');

it('lists every setting of src/config.ts (regenerate: node test/main/readme-tables.ts --write)', () => {
  assert.equal(section(readme, 'config'), configTable());
});

it('lists the whole error catalogue with HTTP statuses (regenerate: node test/main/readme-tables.ts --write)', () => {
  assert.equal(section(readme, 'errors'), errorTable());
});

it('has the two-command quick start', () => {
  const quick = section(readme, 'quickstart');
  assert.ok(quick);
  const commands = quick.split('\n').filter((l) => l.startsWith('npm '));
  assert.deepEqual(commands, ['npm ci && npm start', 'npm ci && npm test']);
});

it('shows a curl call for every API route', () => {
  for (const route of [
    'POST /v1/apps/upload', 'GET /v1/apps', 'GET /v1/apps/{app_id}', 'POST /v1/tasks/create', 'GET /v1/tasks', 'GET /v1/tasks/{task_id}',
    'POST /v1/tasks/{task_id}/cancel', 'GET /v1/tasks/{task_id}/artifact', 'POST /v1/certificates', 'GET /v1/certificates',
    'GET /v1/certificates/{id}', 'DELETE /v1/certificates/{id}', 'GET /healthz', 'GET /readyz', 'GET /v1/openapi.json', 'GET /docs',
  ]) {
    assert.ok(readme.includes(`\`${route}\``), `README lacks ${route}`);
  }
});
