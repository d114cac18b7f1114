// The early-reclaim policy (reclaim.ts): which collections dropped buffers ask V8 for, seen
// through a recording `gc` (tests run without --expose-gc, where the policy does nothing).
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { droppedBuffers, droppedYoungBuffers } from '../../src/signing/reclaim.ts';

const MiB = 1024 * 1024;

describe('early reclaim of dropped buffers', () => {
  const asked: string[] = [];
  const global = globalThis as { gc?: (options: { type: string }) => void };
  beforeEach(() => {
    asked.length = 0;
    global.gc = ({ type }) => void asked.push(type);
  });
  afterEach(() => delete global.gc);

  it('collects the young generation every 4 MiB of buffers, and everything every fourth time', () => {
    for (let i = 0; i < 16; i++) droppedBuffers(MiB);
    assert.deepEqual(asked, ['minor', 'minor', 'minor', 'major']);
  });

  it('collects only the young generation for buffers that die young', () => {
    for (let i = 0; i < 32; i++) droppedYoungBuffers(MiB / 2);
    assert.deepEqual(asked, ['minor', 'minor', 'minor', 'minor']);
  });
});
