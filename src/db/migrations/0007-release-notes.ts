// Release notes (#14): plain text or Markdown (at most 10 KB, checked by the services) given with
// an upload and/or with the task that signs it. The task's notes are the release's: the install
// page, the history, the API and the webhooks show them.
import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema.alterTable('uploads').addColumn('notes', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('notes', 'text').execute();
}
