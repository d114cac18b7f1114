// The App Store Connect client against the stateful fake (test/support/asc-server.ts), which
// validates every request and response against the OpenAPI subset.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT, importPKCS8 } from 'jose';
import { AppStoreConnect, normalizeSerial, parseAppleDate } from '../../src/apple/app-store-connect.ts';
import { AscClient } from '../../src/apple/client.ts';
import { conditionOf, DETAIL_MATCHERS } from '../../src/apple/errors.ts';
import { deviceClassForProduct, normalizeUdid } from '../../src/apple/udid.ts';
import { AppError } from '../../src/errors.ts';
import { parseProvisioningProfile } from '../../src/signing/ios/profile/index.ts';
import { needsAscSpec, startFakeAsc, type FakeAppStoreConnect, type FakeTeam } from '../support/asc-server.ts';
import { testPki } from '../support/pki.ts';

const spec = needsAscSpec();
const UDID_A = '00008030-001A2B3C4D5E6F70';
const UDID_B = 'a'.repeat(40);

async function rejects(promise: Promise<unknown>, code: string): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof AppError, `expected AppError ${code}, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}`);
}

describe('App Store Connect client', spec, () => {
  let asc: FakeAppStoreConnect;
  let team: FakeTeam;
  let api: AppStoreConnect;
  const delays: number[] = [];

  before(async () => {
    ({ asc, team } = await startFakeAsc());
    api = new AppStoreConnect({ baseUrl: asc.url, key: team.key, sleep: async (ms) => void delays.push(ms), baseDelayMs: 10 });
  });
  after(() => asc.close());

  it('registers a device once, then finds it whatever the UDID spelling', async () => {
    const first = await api.registerDevice({ udid: UDID_A, name: 'iPhone12,1 test' });
    assert.equal(first.created, true);
    assert.equal(first.device.status, 'ENABLED');
    assert.equal(first.device.deviceClass, 'IPHONE');
    assert.ok(first.device.addedDate instanceof Date);
    const again = await api.registerDevice({ udid: UDID_A.toLowerCase(), name: 'other name' });
    assert.equal(again.created, false);
    assert.equal(again.device.id, first.device.id);
    assert.equal(team.devices.length, 1);
    assert.equal(asc.requests.filter((r) => r.method === 'POST' && r.path === '/v1/devices').length, 1, 'no second POST for a known UDID');
    assert.ok(api.client.rateLimit && api.client.rateLimit.limit > 0, 'X-Rate-Limit is read');
    assert.equal(new Set(asc.requests.map((r) => r.token)).size, 1, 'one cached token for all requests');
    assert.deepEqual(asc.violations, []);
  });

  it('treats a "device exists" 409 as success (registered between lookup and POST)', async () => {
    // The fake answers the lookup empty by racing: register directly, then let the client POST.
    const udid = '00008030-0000000000000AAA';
    const original = api.client.getAll.bind(api.client);
    let calls = 0;
    api.client.getAll = async (path, query) => {
      if (path === '/v1/devices' && calls++ === 0) {
        team.seedDevice(udid);
        return [];
      }
      return original(path, query);
    };
    try {
      const result = await api.registerDevice({ udid, name: 'race' });
      assert.equal(result.created, false);
      assert.equal(result.device.udid, udid);
    } finally {
      api.client.getAll = original;
    }
  });

  it('re-enables a DISABLED device instead of registering it again', async () => {
    team.seedDevice(UDID_B, 'IPHONE', 'DISABLED');
    const result = await api.registerDevice({ udid: UDID_B, name: 'disabled' });
    assert.equal(result.device.status, 'ENABLED');
    assert.ok(asc.requests.some((r) => r.method === 'PATCH'));
  });

  it('passes PROCESSING through (Apple reviewing the account)', async () => {
    team.reviewMode = true;
    try {
      const result = await api.registerDevice({ udid: '00008030-0000000000000BBB', name: 'review' });
      assert.equal(result.device.status, 'PROCESSING');
    } finally {
      team.reviewMode = false;
      team.settle('ENABLED');
    }
    assert.deepEqual(asc.violations, [], 'PROCESSING is valid in the relaxed response schema');
  });

  it('maps the device cap and a malformed UDID to catalogue codes', async () => {
    const limit = team.deviceLimit;
    team.deviceLimit = team.devicesOfClass('IPHONE');
    try {
      await rejects(api.registerDevice({ udid: '00008030-0000000000000CCC', name: 'full' }), 'device_slots_exhausted');
    } finally {
      team.deviceLimit = limit;
    }
    await rejects(api.registerDevice({ udid: 'not-a-udid', name: 'bad' }), 'device_udid_invalid');
  });

  it('pages through long device lists (links.next)', async () => {
    const big = asc.addTeam('BIGTEAM001');
    for (let i = 0; i < 230; i++) big.seedDevice(`00008030-${i.toString(16).padStart(16, '0').toUpperCase()}`);
    const client = new AppStoreConnect({ baseUrl: asc.url, key: big.key });
    assert.equal((await client.listDevices()).length, 230);
    assert.ok(asc.requests.some((r) => r.query.cursor === '200'));
  });

  it('finds bundle ids exactly although filter[identifier] matches substrings', async () => {
    await api.ensureBundleId('com.example.app.extra', 'extra');
    assert.equal(await api.findBundleId('com.example.app'), null);
    const created = await api.ensureBundleId('com.example.app', 'app');
    assert.equal(created.identifier, 'com.example.app');
    assert.equal((await api.ensureBundleId('com.example.app', 'app')).id, created.id);
    const other = asc.addTeam('OTHERTEAM1');
    const otherApi = new AppStoreConnect({ baseUrl: asc.url, key: other.key });
    await rejects(otherApi.ensureBundleId('com.example.app', 'taken'), 'bundle_id_unavailable');
  });

  it('lists distribution certificates with normalised serials', async () => {
    const certificates = await api.listDistributionCertificates();
    assert.equal(certificates.length, 1);
    assert.equal(certificates[0]!.serialNumber, normalizeSerial(new (await import('node:crypto')).X509Certificate(testPki().leaf.certificate).serialNumber));
    assert.ok(certificates[0]!.content?.equals(testPki().leaf.certificate));
  });

  it('creates ad-hoc profiles with the devices, refuses duplicate names, deletes idempotently', async () => {
    const bundle = await api.ensureBundleId('com.example.profiled', 'profiled');
    const [certificate] = await api.listDistributionCertificates();
    const [device] = await api.findDevices(UDID_A);
    const created = await api.createAdHocProfile({ name: 'ss-test-1', bundleIdId: bundle.id, certificateIds: [certificate!.id], deviceIds: [device!.id] });
    const parsed = parseProvisioningProfile(created.content);
    assert.deepEqual(parsed.devices, [UDID_A]);
    assert.equal(parsed.applicationIdentifier, `${team.teamId}.com.example.profiled`);
    assert.equal(parsed.uuid, created.uuid);
    assert.equal(parsed.type, 'ad-hoc');
    await rejects(api.createAdHocProfile({ name: 'ss-test-1', bundleIdId: bundle.id, certificateIds: [certificate!.id], deviceIds: [device!.id] }), 'apple_request_failed');
    await rejects(api.createAdHocProfile({ name: 'ss-test-2', bundleIdId: bundle.id, certificateIds: [certificate!.id], deviceIds: [] }), 'apple_request_failed');
    await api.deleteProfile(created.id);
    await api.deleteProfile(created.id);
    assert.equal(team.profiles.length, 0);
    assert.deepEqual(asc.violations, []);
  });

  it('backs off on 429 and 5xx, then gives up with apple_rate_limited / apple_unavailable', async () => {
    delays.length = 0;
    asc.failNext.push(429, 500);
    assert.ok((await api.listDevices()).length > 0);
    assert.equal(delays.length, 2);
    asc.failNext.push(429, 429, 429, 429, 429);
    await rejects(api.listDevices(), 'apple_rate_limited');
    asc.failNext.push(503, 503, 503, 503, 503);
    await rejects(api.listDevices(), 'apple_unavailable');
  });

  it('reports a revoked key and missing agreements as account problems', async () => {
    team.keyRevoked = true;
    await rejects(api.listDevices(), 'developer_key_rejected');
    team.keyRevoked = false;
    team.agreementMissing = true;
    await rejects(api.listDevices(), 'developer_agreement_required');
    team.agreementMissing = false;
  });

  it('the fake refuses tokens living longer than 20 minutes (what Apple does)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: team.key.keyId, typ: 'JWT' })
      .setIssuer(team.key.issuerId)
      .setAudience('appstoreconnect-v1')
      .setIssuedAt(now)
      .setExpirationTime(now + 30 * 60)
      .sign(await importPKCS8(team.key.privateKeyPem, 'ES256'));
    const response = await fetch(`${asc.url}/v1/devices`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.status, 401);
  });

  it('serialises requests of one key (one in flight)', async () => {
    let inFlight = 0;
    let peak = 0;
    const client = new AscClient({
      baseUrl: asc.url,
      key: team.key,
      fetch: async (input, init) => {
        peak = Math.max(peak, ++inFlight);
        try {
          return await fetch(input, init);
        } finally {
          inFlight--;
        }
      },
    });
    await Promise.all([client.get('/v1/devices'), client.get('/v1/devices'), client.get('/v1/bundleIds')]);
    assert.equal(peak, 1);
  });
});

describe('App Store Connect helpers', () => {
  it('has one detail matcher per business condition, each matching Apple’s wording', () => {
    const samples: Record<string, string> = {
      device_exists: "A device with number '00008030-001A2B3C4D5E6F70' already exists on this team.",
      device_limit: 'You have already reached the maximum number of registered iPhone devices for this membership year.',
      device_udid_invalid: "An invalid value 'xyz' was provided for the parameter 'udid'.",
      bundle_id_taken: "An App ID with Identifier 'com.example' is not available. Please enter a different string.",
      certificate_not_current: 'There are no current certificates on this team matching the provided certificate IDs.',
      devices_not_current: 'There are no current ios devices on this team matching the provided device IDs.',
      bundle_id_missing: 'There is no App ID with ID ABC on this team.',
      profile_name_taken: 'Multiple profiles found with the name "x".',
    };
    for (const [condition] of DETAIL_MATCHERS) {
      const detail = samples[condition];
      assert.ok(detail, `sample for ${condition}`);
      assert.equal(conditionOf([{ status: '409', code: 'ENTITY_ERROR', title: '', detail }]), condition);
    }
    assert.equal(conditionOf([{ status: '409', code: 'ENTITY_ERROR', title: '', detail: 'Something else.' }]), null);
  });

  it('normalises UDIDs and classes', () => {
    assert.equal(normalizeUdid(' 00008030-001a2b3c4d5e6f70 '), UDID_A);
    assert.equal(normalizeUdid('B'.repeat(40).toLowerCase()), 'B'.repeat(40));
    assert.equal(normalizeUdid('00008030001a2b3c4d5e6f70'), null);
    assert.equal(normalizeUdid('<script>'), null);
    assert.equal(deviceClassForProduct('iPhone12,1'), 'IPHONE');
    assert.equal(deviceClassForProduct('iPad8,6'), 'IPAD');
    assert.equal(deviceClassForProduct('Watch6,1'), null);
  });

  it('parses both of Apple’s date spellings', () => {
    assert.equal(parseAppleDate('2024-01-03T10:22:31.000+00:00')?.toISOString(), '2024-01-03T10:22:31.000Z');
    assert.equal(parseAppleDate('2024-01-03T10:22:31.000+0000')?.toISOString(), '2024-01-03T10:22:31.000Z');
    assert.equal(parseAppleDate('yesterday'), null);
  });
});
