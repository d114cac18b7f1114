// A stateful App Store Connect fake on loopback (distribution-protocols.md §4.3), for the client,
// the developer-account service and the end-to-end super-signature tests. Every request Signet
// makes is validated against the OpenAPI subset in ../shared/asc-openapi (read at test time, never
// copied into the repo), and so is every response the fake sends (with the device status enum
// opened up: live Apple returns PROCESSING and INELIGIBLE). Violations are answered 400 and
// recorded in `violations`, which tests assert empty.
//
// Reproduced pitfalls: ES256 JWT checks (kid, typ, aud, iss, ≤ 20 min lifetime), case-insensitive
// duplicate UDIDs (409 "already exists"), per-class device caps counting every device ever added,
// a review mode that makes new devices PROCESSING, a global bundle id registry shared by teams
// (409 "not available") with a substring filter[identifier], capabilities per App ID (409 when
// already enabled or on a wildcard; new explicit App IDs start with In-App Purchase and Game
// Center, as in the portal), unique profile names, ad-hoc profiles needing ENABLED devices and a
// current certificate, revoked keys and certificates, rate limits (X-Rate-Limit, 429) and
// injected failures. Profiles are real CMS-signed .mobileprovision files made by the test PKI,
// granting what their App ID's capabilities grant (asc-capabilities.ts), so the code under test
// parses them as in production. A request the fake does not implement is a violation as well:
// nothing unknown passes quietly.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { capabilityEntitlements, DEFAULT_CAPABILITIES, type FakeCapability } from './asc-capabilities.ts';
import { AscSpec } from './asc-spec.ts';
import { appleDate, FakeTeam, newId, type BundleIdRecord, type CapabilityRecord, type Device, type ProfileRecord } from './asc-team.ts';
import { testPki } from './pki.ts';

export { needsAscSpec } from './asc-spec.ts';
export { FakeTeam, type BundleIdRecord, type CapabilityRecord, type FakeTeamKey, type ProfileRecord } from './asc-team.ts';

export interface RecordedRequest { method: string; path: string; query: Record<string, string>; body: unknown; team: string | null; token: string | null }

type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

const error = (status: number, code: string, title: string, detail: string): Reply => ({
  status,
  body: { errors: [{ id: randomUUID(), status: String(status), code, title, detail }] },
});

export class FakeAppStoreConnect {
  readonly teams: FakeTeam[] = [];
  readonly bundleIds: BundleIdRecord[] = [];
  readonly requests: RecordedRequest[] = [];
  readonly violations: string[] = [];
  /** Requests per key before 429 RATE_LIMIT_EXCEEDED (Infinity: no limit). */
  hourlyBudget = Infinity;
  /** Statuses to answer the next requests with, in order (500 UNEXPECTED_ERROR, 429…). */
  readonly failNext: number[] = [];
  /** Artificial latency of device registration, to widen race windows in concurrency tests. */
  registrationDelayMs = 0;
  /** Artificial latency of bundle id and capability registration (same purpose). */
  bundleIdDelayMs = 0;
  url = '';
  #server: Server | null = null;
  readonly #spec = new AscSpec();
  readonly #used = new Map<string, number>();
  #dateColon = true;

  addTeam(teamId = testPki().teamId): FakeTeam {
    const team = new FakeTeam(teamId);
    this.teams.push(team);
    return team;
  }

  async start(): Promise<string> {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return this.url;
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  profilesOf(team: FakeTeam): ProfileRecord[] {
    return team.profiles;
  }

  /** The team's App ID with this identifier, if it has one. */
  bundleIdOf(team: FakeTeam, identifier: string): BundleIdRecord | undefined {
    return this.bundleIds.find((b) => b.team === team && b.identifier === identifier);
  }

  /** Registers an App ID for a team directly (as the portal would), e.g. to make it taken. */
  seedBundleId(team: FakeTeam, identifier: string): BundleIdRecord {
    const record: BundleIdRecord = { id: newId('BID'), identifier, name: `seed ${identifier}`, team, capabilities: [] };
    this.bundleIds.push(record);
    return record;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    let body: unknown = undefined;
    const text = Buffer.concat(chunks).toString('utf8');
    const auth = req.headers.authorization;
    const record: RecordedRequest = { method, path: url.pathname, query: Object.fromEntries(url.searchParams), body: undefined, team: null, token: auth?.startsWith('Bearer ') ? auth.slice(7) : null };
    this.requests.push(record);
    let reply: Reply;
    try {
      if (text) body = record.body = JSON.parse(text);
      const team = await this.#authenticate(req);
      if ('status' in team) {
        reply = team;
      } else {
        record.team = team.teamId;
        const used = (this.#used.get(team.key.keyId) ?? 0) + 1;
        this.#used.set(team.key.keyId, used);
        const injected = this.failNext.shift();
        if (used > this.hourlyBudget || injected === 429) {
          reply = { ...error(429, 'RATE_LIMIT_EXCEEDED', 'The request rate limit has been reached.', 'We’ve received too many requests for this API key.'), headers: { 'retry-after': '0' } };
        } else if (injected !== undefined) {
          reply = error(injected, 'UNEXPECTED_ERROR', 'An unexpected error occurred.', 'Injected failure.');
        } else if (team.agreementMissing) {
          reply = error(403, 'FORBIDDEN.REQUIRED_AGREEMENTS_MISSING_OR_EXPIRED', 'A required agreement is missing or has expired.', 'This request requires an in-effect agreement.');
        } else {
          reply = await this.#route(team, method, url, body);
        }
        reply.headers = { ...reply.headers, 'x-rate-limit': `user-hour-lim:${Number.isFinite(this.hourlyBudget) ? this.hourlyBudget : 3600};user-hour-rem:${Math.max(0, (Number.isFinite(this.hourlyBudget) ? this.hourlyBudget : 3600) - used)};` };
      }
    } catch (cause) {
      reply = error(500, 'UNEXPECTED_ERROR', 'Fake failure', cause instanceof Error ? cause.message : String(cause));
    }
    if (reply.body !== undefined && reply.status !== 500) {
      const problem = this.#spec.checkResponse(method, url.pathname, reply.status, reply.body);
      if (problem) this.violations.push(problem);
    }
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  }

  async #authenticate(req: IncomingMessage): Promise<FakeTeam | Reply> {
    const unauthorized = (why: string) =>
      error(401, 'NOT_AUTHORIZED', 'Authentication credentials are missing or invalid.', `Provide a properly configured and signed bearer token, and make sure that it has not expired. (${why})`);
    const auth = req.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ')) return unauthorized('no bearer token');
    const token = auth.slice(7);
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      return unauthorized('malformed token');
    }
    if (header.alg !== 'ES256' || header.typ !== 'JWT' || typeof header.kid !== 'string') return unauthorized('header must be ES256/JWT with kid');
    const team = this.teams.find((t) => t.key.keyId === header.kid);
    if (!team || team.keyRevoked) return unauthorized('unknown or revoked key');
    try {
      const { payload } = await jwtVerify(token, team.publicKey, { audience: 'appstoreconnect-v1', issuer: team.key.issuerId, algorithms: ['ES256'] });
      const now = Math.floor(Date.now() / 1000);
      if (typeof payload.exp !== 'number' || payload.exp - now > 20 * 60) return unauthorized('token lifetime over 20 minutes');
    } catch (cause) {
      return unauthorized(cause instanceof Error ? cause.message : 'invalid token');
    }
    return team;
  }

  async #route(team: FakeTeam, method: string, url: URL, body: any): Promise<Reply> {
    const violation = this.#spec.checkRequest(method, url, body);
    if (violation) {
      this.violations.push(violation);
      return error(400, 'PARAMETER_ERROR.INVALID', 'A parameter has an invalid value', violation);
    }
    const q = url.searchParams;
    const list = (name: string) => q.get(name)?.split(',') ?? null;
    const segments = url.pathname.split('/').filter(Boolean); // v1, collection, id?
    const [, collection, id] = segments;
    const self = (type: string, rid: string) => ({ self: `${this.url}/v1/${type}/${rid}` });

    if (collection === 'devices') {
      const resource = (d: Device) => ({
        type: 'devices', id: d.id, links: self('devices', d.id),
        attributes: { name: d.name, platform: 'IOS', udid: d.udid, deviceClass: d.deviceClass, status: d.status, model: d.deviceClass === 'IPAD' ? 'iPad' : 'iPhone', addedDate: d.addedDate },
      });
      if (method === 'GET' && id === undefined) {
        const udids = list('filter[udid]')?.map((u) => u.toUpperCase());
        const ids = list('filter[id]');
        const rows = team.devices.filter((d) => (!udids || udids.includes(d.udid.toUpperCase())) && (!ids || ids.includes(d.id)));
        return this.#page(rows.map(resource), q, '/v1/devices');
      }
      if (method === 'GET') {
        const d = team.devices.find((x) => x.id === id);
        return d ? { status: 200, body: { data: resource(d), links: self('devices', d.id) } } : this.#notFound('devices', id!);
      }
      if (method === 'POST') {
        const { udid, name } = body.data.attributes as { udid: string; name: string };
        if (this.registrationDelayMs > 0) await new Promise((r) => setTimeout(r, this.registrationDelayMs));
        if (!/^([0-9a-f]{40}|[0-9a-f]{8}-[0-9a-f]{16})$/i.test(udid)) {
          return error(409, 'ENTITY_ERROR.ATTRIBUTE.INVALID', 'An attribute value is invalid.', `An invalid value '${udid}' was provided for the parameter 'udid'.`);
        }
        if (team.devices.some((d) => d.udid.toUpperCase() === udid.toUpperCase())) {
          return error(409, 'ENTITY_ERROR.ATTRIBUTE.INVALID', 'An attribute value is invalid.', `A device with number '${udid}' already exists on this team.`);
        }
        const deviceClass = team.deviceClasses.get(udid.toUpperCase()) ?? 'IPHONE';
        if (team.devicesOfClass(deviceClass) >= team.deviceLimit) {
          const family = deviceClass === 'IPAD' ? 'iPad' : deviceClass === 'IPOD' ? 'iPod' : 'iPhone';
          return error(409, 'ENTITY_ERROR', 'There is a problem with the request entity', `You have already reached the maximum number of registered ${family} devices for this membership year.`);
        }
        const d: Device = { id: newId('DEV'), udid, name, deviceClass, status: team.reviewMode ? 'PROCESSING' : 'ENABLED', addedDate: appleDate(new Date(), (this.#dateColon = !this.#dateColon)) };
        team.devices.push(d);
        return { status: 201, body: { data: resource(d), links: self('devices', d.id) } };
      }
      if (method === 'PATCH') {
        const d = team.devices.find((x) => x.id === id);
        if (!d) return this.#notFound('devices', id!);
        const attributes = body.data.attributes ?? {};
        if (attributes.status) d.status = attributes.status;
        if (attributes.name) d.name = attributes.name;
        return { status: 200, body: { data: resource(d), links: self('devices', d.id) } };
      }
    }

    if (collection === 'bundleIds') {
      const resource = (b: BundleIdRecord) => ({ type: 'bundleIds', id: b.id, links: self('bundleIds', b.id), attributes: { identifier: b.identifier, name: b.name, platform: 'IOS', seedId: team.teamId } });
      const mine = this.bundleIds.filter((b) => b.team === team);
      if (method === 'GET' && id === undefined) {
        // Apple's filter[identifier] is not exact (ittybittyapps/appstoreconnect-cli#249): substring.
        const needle = q.get('filter[identifier]');
        return this.#page(mine.filter((b) => needle === null || b.identifier.includes(needle)).map(resource), q, '/v1/bundleIds');
      }
      const bundle = mine.find((b) => b.id === id);
      if (method === 'GET' && segments[3] === undefined) return bundle ? { status: 200, body: { data: resource(bundle), links: self('bundleIds', bundle.id) } } : this.#notFound('bundleIds', id!);
      if (method === 'GET' && segments[3] === 'bundleIdCapabilities') {
        if (!bundle) return this.#notFound('bundleIds', id!);
        return this.#page(bundle.capabilities.map((c) => this.#capabilityResource(c)), q, url.pathname);
      }
      if (method === 'POST') {
        const { identifier, name } = body.data.attributes as { identifier: string; name: string };
        if (this.bundleIdDelayMs > 0) await new Promise((r) => setTimeout(r, this.bundleIdDelayMs));
        // Explicit App IDs are unique across all teams; wildcards are per team (Xcode's "XC Wildcard" exists in every team).
        if (this.bundleIds.some((b) => b.identifier === identifier && (!identifier.includes('*') || b.team === team))) {
          return error(409, 'ENTITY_ERROR.ATTRIBUTE.INVALID', 'An attribute value is invalid.', `An App ID with Identifier '${identifier}' is not available. Please enter a different string.`);
        }
        const b: BundleIdRecord = { id: newId('BID'), identifier, name, team, capabilities: [] };
        if (!identifier.includes('*')) for (const type of DEFAULT_CAPABILITIES) b.capabilities.push({ id: `${b.id}_${type}`, type, settings: [] });
        this.bundleIds.push(b);
        return { status: 201, body: { data: resource(b), links: self('bundleIds', b.id) } };
      }
    }

    if (collection === 'bundleIdCapabilities' && method === 'POST') {
      const { capabilityType, settings } = body.data.attributes as { capabilityType: string; settings?: FakeCapability['settings'] };
      const bundle = this.bundleIds.find((b) => b.team === team && b.id === body.data.relationships.bundleId.data.id);
      if (this.bundleIdDelayMs > 0) await new Promise((r) => setTimeout(r, this.bundleIdDelayMs));
      if (!bundle) return error(409, 'ENTITY_ERROR.RELATIONSHIP.INVALID', 'There is a problem with the request entity', `There is no App ID with ID '${body.data.relationships.bundleId.data.id}' on this team.`);
      if (bundle.identifier.includes('*')) return error(409, 'ENTITY_ERROR', 'There is a problem with the request entity', `The capability ${capabilityType} cannot be enabled on the wildcard App ID '${bundle.identifier}'.`);
      if (bundle.capabilities.some((c) => c.type === capabilityType)) return error(409, 'ENTITY_ERROR', 'There is a problem with the request entity', `The capability ${capabilityType} is already enabled for this App ID.`);
      const record: CapabilityRecord = { id: `${bundle.id}_${capabilityType}`, type: capabilityType, settings: settings ?? [] };
      bundle.capabilities.push(record);
      return { status: 201, body: { data: this.#capabilityResource(record), links: { self: `${this.url}/v1/bundleIdCapabilities` } } };
    }

    if (collection === 'certificates' && method === 'GET' && id === undefined) {
      const types = list('filter[certificateType]');
      const rows = team.certificates.filter((c) => !c.revoked && (!types || types.includes(c.type)));
      return this.#page(
        rows.map((c) => ({
          type: 'certificates', id: c.id, links: self('certificates', c.id),
          attributes: { certificateType: c.type, displayName: 'Signet Test Inc', name: 'iOS Distribution: Signet Test Inc', platform: 'IOS', serialNumber: c.serialHex, expirationDate: c.expires, certificateContent: c.der.toString('base64') },
        })),
        q,
        '/v1/certificates',
      );
    }

    if (collection === 'profiles') {
      if (method === 'POST') return this.#createProfile(team, body);
      if (method === 'DELETE') {
        const index = team.profiles.findIndex((p) => p.id === id);
        if (index < 0) return this.#notFound('profiles', id!);
        team.profiles.splice(index, 1);
        return { status: 204 };
      }
    }
    // A valid request the fake cannot answer: loud, so a test never passes on a silent 404.
    this.violations.push(`the fake does not implement ${method} ${url.pathname}`);
    return error(404, 'NOT_FOUND', 'The specified resource does not exist', `The fake does not implement ${method} ${url.pathname}.`);
  }

  #capabilityResource(c: CapabilityRecord) {
    return { type: 'bundleIdCapabilities', id: c.id, links: { self: `${this.url}/v1/bundleIdCapabilities/${c.id}` }, attributes: { capabilityType: c.type, settings: c.settings } };
  }

  #createProfile(team: FakeTeam, body: any): Reply {
    const { name, profileType } = body.data.attributes as { name: string; profileType: string };
    const rel = body.data.relationships;
    const conflict = (code: string, detail: string) => error(409, code, 'There is a problem with the request entity', detail);
    if (team.profiles.some((p) => p.name === name)) return conflict('ENTITY_ERROR.ATTRIBUTE.INVALID', `A profile with the name '${name}' already exists on this team.`);
    const bundle = this.bundleIds.find((b) => b.team === team && b.id === rel.bundleId.data.id);
    if (!bundle) return conflict('ENTITY_ERROR.RELATIONSHIP.INVALID', `There is no App ID with ID '${rel.bundleId.data.id}' on this team.`);
    const certificateIds: string[] = rel.certificates.data.map((c: { id: string }) => c.id);
    const certificates = certificateIds.map((cid) => team.certificates.find((c) => c.id === cid && !c.revoked));
    if (certificates.length === 0 || certificates.some((c) => !c)) return conflict('ENTITY_ERROR.RELATIONSHIP.INVALID', 'There are no current certificates on this team matching the provided certificate IDs.');
    const deviceIds: string[] = rel.devices?.data?.map((d: { id: string }) => d.id) ?? [];
    if (profileType === 'IOS_APP_ADHOC' && deviceIds.length === 0) return conflict('ENTITY_ERROR.RELATIONSHIP.REQUIRED', "The relationship 'devices' is required but was not provided.");
    const devices = deviceIds.map((did) => team.devices.find((d) => d.id === did && d.status === 'ENABLED'));
    if (devices.some((d) => !d)) return conflict('ENTITY_ERROR.RELATIONSHIP.INVALID', 'There are no current ios devices on this team matching the provided device IDs.');
    const uuid = randomUUID().toUpperCase();
    const created = new Date();
    const expires = new Date(created.getTime() + 365 * 86_400_000);
    // The profile grants what the App ID's capabilities grant, as Apple's profiles do.
    const granted = Object.assign({}, ...bundle.capabilities.map((c) => capabilityEntitlements(c, team.teamId)));
    const content = testPki().mobileprovision({
      bundleId: bundle.identifier,
      devices: devices.map((d) => d!.udid),
      certificate: certificates[0]!.der,
      teamId: team.teamId,
      name,
      uuid,
      createdAt: created,
      expiresAt: expires,
      ...team.profileOptions,
      entitlements: { ...granted, ...team.profileOptions.entitlements },
    });
    const record: ProfileRecord = { id: newId('PRF'), name, uuid, bundleIdId: bundle.id, deviceIds, certificateIds, content, created: appleDate(created, true), expires: appleDate(expires, false) };
    team.profiles.push(record);
    return {
      status: 201,
      body: {
        data: {
          type: 'profiles', id: record.id, links: { self: `${this.url}/v1/profiles/${record.id}` },
          attributes: { name, platform: 'IOS', profileType, profileState: 'ACTIVE', profileContent: content.toString('base64'), uuid, createdDate: record.created, expirationDate: record.expires },
        },
        links: { self: `${this.url}/v1/profiles` },
      },
    };
  }

  #notFound(type: string, id: string): Reply {
    return error(404, 'NOT_FOUND', 'The specified resource does not exist', `There is no resource of type '${type}' with id '${id}'`);
  }

  /** A collection page; `cursor` is an offset, opaque to clients. */
  #page(rows: unknown[], q: URLSearchParams, pathname: string): Reply {
    const limit = Math.min(Number(q.get('limit') ?? 20), 200);
    const offset = Number(q.get('cursor') ?? 0);
    const data = rows.slice(offset, offset + limit);
    const links: Record<string, string> = { self: `${this.url}${pathname}` };
    if (offset + limit < rows.length) {
      const next = new URLSearchParams(q);
      next.set('cursor', String(offset + limit));
      links.next = `${this.url}${pathname}?${next}`;
    }
    return { status: 200, body: { data, links, meta: { paging: { total: rows.length, limit } } } };
  }
}

/** Starts a fake with one team holding the test PKI's RSA distribution certificate. */
export async function startFakeAsc(): Promise<{ asc: FakeAppStoreConnect; team: FakeTeam }> {
  const asc = new FakeAppStoreConnect();
  const team = asc.addTeam();
  team.addCertificate(testPki().leaf.certificate);
  await asc.start();
  return { asc, team };
}
