// Without an iOS re-signing engine a super task fails loudly with its own code — never a fake
// success or an unsigned build.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { unavailableDeviceSigner } from '../../src/super-signature/device-signer.ts';
import { needsAscSpec } from '../support/asc-server.ts';
import { startSuperHarness, superTask, type SuperHarness } from './harness.ts';

describe('super signature without a re-signing engine', needsAscSpec(), () => {
  let h: SuperHarness;
  before(async () => {
    h = await startSuperHarness('no-engine', { release: false, deviceSigner: unavailableDeviceSigner });
  });
  after(() => h?.close());

  it('fails the super task with super_signing_unavailable', async () => {
    const task = await superTask(h.api, 'no-engine');
    assert.equal(task.status, 'failed');
    assert.equal(task.error.code, 'super_signing_unavailable');
    assert.equal((await h.api.get(`/v1/tasks/${task.task_id}/distribution`)).status, 409);
  });
});
