// Outbound requests to URLs users supply (task callback_url): refused, by default, when the
// destination is this machine or a network behind it — loopback, private (RFC 1918, unique-local
// RFC 4193), link-local, CGNAT (RFC 6598), multicast, reserved and documentation ranges, and the
// cloud metadata endpoints — in any spelling: WHATWG URL parsing turns 0x7f000001 and 2130706433
// into 127.0.0.1, and IPv4 embedded in IPv6 (::ffff:…, 64:ff9b::/96 NAT64, 2002::/16 6to4) is
// checked as IPv4. Names are checked at connect time, on every attempt, through the socket's own
// `lookup`: the address that is checked is the address that is dialled, so DNS rebinding between
// a check and the connection cannot slip through. SIGNET_OUTBOUND_ALLOW admits on-premises
// receivers by CIDR, address or host name (`hooks.corp.example`, `*.corp.example`).
import dns from 'node:dns';
import https from 'node:https';
import net from 'node:net';
import { AppError } from '../errors.ts';

// node:http through getBuiltinModule, not an ESM import: an ESM import of node:http reads every export,
// including the lazy WebSocket/CloseEvent/MessageEvent getters, which load undici (~0.75 MB of source,
// ~3-4 MB of heap) at server start though nothing here uses it.
const http = process.getBuiltinModule('node:http');

export type ResolvedAddress = { address: string; family: 4 | 6 };
/** Resolves a host name to every address (a stub in tests; dns.lookup by default). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

const defaultResolver: Resolver = async (hostname) => (await dns.promises.lookup(hostname, { all: true, verbatim: true })) as ResolvedAddress[];

/** Refused ranges and why (IANA IPv4/IPv6 Special-Purpose Address Registries, RFC 6890). */
const REFUSED: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'a "this network" address'],
  ['10.0.0.0', 8, 'ipv4', 'a private address'],
  ['100.64.0.0', 10, 'ipv4', 'a carrier-grade NAT address'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local (cloud metadata) address'],
  ['172.16.0.0', 12, 'ipv4', 'a private address'],
  ['192.0.0.0', 24, 'ipv4', 'an IETF protocol (cloud metadata) address'],
  ['192.0.2.0', 24, 'ipv4', 'a documentation address'],
  ['192.88.99.0', 24, 'ipv4', 'a 6to4 relay address'],
  ['192.168.0.0', 16, 'ipv4', 'a private address'],
  ['198.18.0.0', 15, 'ipv4', 'a benchmarking address'],
  ['198.51.100.0', 24, 'ipv4', 'a documentation address'],
  ['203.0.113.0', 24, 'ipv4', 'a documentation address'],
  ['224.0.0.0', 4, 'ipv4', 'a multicast address'],
  ['240.0.0.0', 4, 'ipv4', 'a reserved address'],
  // Azure's WireServer / instance metadata relay: a public-looking address that is the host's.
  ['168.63.129.16', 32, 'ipv4', 'a cloud metadata address'],
  ['::', 128, 'ipv6', 'the unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  ['64:ff9b:1::', 48, 'ipv6', 'a local NAT64 address'],
  ['100::', 64, 'ipv6', 'a discard address'],
  ['2001::', 32, 'ipv6', 'a Teredo address'],
  ['2001:db8::', 32, 'ipv6', 'a documentation address'],
  ['fc00::', 7, 'ipv6', 'a unique-local (cloud metadata) address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
  ['fec0::', 10, 'ipv6', 'a site-local address'],
  ['ff00::', 8, 'ipv6', 'a multicast address'],
];

const refusedLists = REFUSED.map(([network, prefix, type, reason]) => {
  const list = new net.BlockList();
  list.addSubnet(network, prefix, type);
  return { list, type, reason };
});

/** The IPv4 address an IPv6 address carries (mapped, NAT64 well-known prefix, 6to4), if any. */
function embeddedIpv4(address: string): string | null {
  const words = expandIpv6(address);
  if (words === null) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!); // ::ffff:a.b.c.d (RFC 4291 §2.5.5.2)
  if (zeros(0, 6) && (words[6] !== 0 || words[7]! > 1)) return v4(words[6]!, words[7]!); // deprecated ::a.b.c.d
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6]!, words[7]!); // RFC 6052
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!); // 6to4, RFC 3056
  return null;
}

function expandIpv6(address: string): number[] | null {
  let text = address.replace(/^\[|\]$/g, '').split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    text = `${text.slice(0, dotted.index)}${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const a = head ? head.split(':') : [];
  const b = tail === undefined ? [] : tail ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - a.length - b.length;
  const words = [...a, ...Array<string>(Math.max(0, fill)).fill('0'), ...b].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null;
}

/** Why `address` may not be dialled, or null when it is a public address. */
export function refusalReason(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = net.isIP(bare);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4 !== null) return refusalReason(v4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return refusedLists.find((r) => r.type === type && r.list.check(bare, type))?.reason ?? null;
}

/** SIGNET_OUTBOUND_ALLOW: comma-separated CIDRs, addresses and host names (`*.suffix` allowed). */
export class OutboundAllowList {
  private readonly networks = new net.BlockList();
  private readonly hosts: string[] = [];
  private readonly suffixes: string[] = [];
  readonly empty: boolean;

  constructor(spec: string) {
    const entries = spec.split(',').map((e) => e.trim().toLowerCase()).filter(Boolean);
    for (const entry of entries) {
      const [network, prefix] = entry.split('/');
      const family = net.isIP((network ?? '').replace(/^\[|\]$/g, ''));
      if (family !== 0) {
        const type = family === 4 ? 'ipv4' : 'ipv6';
        const bits = prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix);
        if (!Number.isInteger(bits) || bits < 0 || bits > (family === 4 ? 32 : 128)) throw new Error(`SIGNET_OUTBOUND_ALLOW: bad prefix length in "${entry}"`);
        this.networks.addSubnet(network!.replace(/^\[|\]$/g, ''), bits, type);
      } else if (/^\*\.[a-z0-9.-]+$/.test(entry)) {
        this.suffixes.push(entry.slice(1));
      } else if (/^[a-z0-9.-]+$/.test(entry)) {
        this.hosts.push(entry.replace(/\.$/, ''));
      } else {
        throw new Error(`SIGNET_OUTBOUND_ALLOW: "${entry}" is neither a CIDR, an address nor a host name`);
      }
    }
    this.empty = entries.length === 0;
  }

  allowsHost(hostname: string): boolean {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    return this.hosts.includes(host) || this.suffixes.some((s) => host.endsWith(s));
  }

  allowsAddress(address: string): boolean {
    const bare = address.replace(/^\[|\]$/g, '');
    const family = net.isIP(bare);
    return family !== 0 && this.networks.check(bare, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/** A destination the policy refuses; nothing was sent to it. */
export class OutboundRefused extends Error {
  readonly code = 'ERR_OUTBOUND_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

export interface OutboundOptions {
  allow: OutboundAllowList;
  resolve?: Resolver;
}

/** Throws OutboundRefused unless `address` (of `hostname`) may be dialled. */
function assertAllowed(hostname: string, address: string, options: OutboundOptions): void {
  if (options.allow.allowsHost(hostname) || options.allow.allowsAddress(address)) return;
  const reason = refusalReason(address);
  if (reason !== null) {
    const shown = hostname === address ? address : `${hostname} (${address})`;
    throw new OutboundRefused(`${shown} is ${reason}; Signet does not send requests there unless SIGNET_OUTBOUND_ALLOW admits it`);
  }
}

/**
 * Checks a user-supplied URL when it is given (task creation): an absolute http(s) URL with a host,
 * and not an IP literal the policy refuses. Names are checked again at every connection.
 */
export function validateOutboundUrl(value: string, field: string, options: OutboundOptions): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AppError('invalid_request', `${field} is not a valid absolute URL`, { details: { field } });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new AppError('invalid_request', `${field} must be an http:// or https:// URL with a host`, { details: { field } });
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) !== 0) {
    try {
      assertAllowed(host, host, options);
    } catch (error) {
      throw new AppError('invalid_request', `${field}: ${(error as Error).message}`, { details: { field } });
    }
  }
  return url;
}

/** A socket `lookup` that resolves, refuses any answer the policy refuses, and dials the checked address. */
function guardedLookup(options: OutboundOptions): net.LookupFunction {
  const resolve = options.resolve ?? defaultResolver;
  return ((hostname: string, lookupOptions: dns.LookupOptions, callback: (error: Error | null, address: string | dns.LookupAddress[], family?: number) => void) => {
    resolve(hostname)
      .then((addresses) => {
        const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? addresses.filter((a) => a.family === lookupOptions.family) : addresses;
        if (wanted.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
        // Every answer must pass: a name that also resolves inside would be a rebinding lever.
        for (const { address } of wanted) assertAllowed(hostname, address, options);
        return wanted;
      })
      .then(
        (wanted) => (lookupOptions.all ? callback(null, wanted) : callback(null, wanted[0]!.address, wanted[0]!.family)),
        (error: unknown) => callback(error as Error, ''),
      );
  }) as net.LookupFunction;
}

export interface OutboundResponse {
  status: number;
}

/**
 * POSTs `body` to `url` under the policy: no redirects followed, the response body discarded.
 * Rejects with OutboundRefused (nothing sent), or the network error.
 */
export async function postOutbound(
  url: string,
  request: { headers: Record<string, string>; body: string; signal: AbortSignal },
  options: OutboundOptions,
): Promise<OutboundResponse> {
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  // Literal addresses never reach `lookup`: check them here.
  if (net.isIP(host) !== 0) assertAllowed(host, host, options);
  const transport = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : null;
  if (transport === null) throw new OutboundRefused(`${target.protocol} URLs are not supported`);
  const payload = Buffer.from(request.body, 'utf8');
  return new Promise<OutboundResponse>((resolve, reject) => {
    const outgoing = transport.request(target, {
      method: 'POST',
      headers: { ...request.headers, 'content-length': String(payload.length) },
      lookup: guardedLookup(options),
      agent: false,
      signal: request.signal,
    });
    outgoing.once('response', (response) => {
      response.resume();
      response.once('end', () => resolve({ status: response.statusCode ?? 0 }));
      response.once('error', reject);
    });
    outgoing.once('error', (error: Error) => reject(unwrap(error)));
    outgoing.end(payload);
  });
}

/** Node reports a lookup failure as the socket's error, possibly wrapped; keep the refusal visible. */
function unwrap(error: Error): Error {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e instanceof OutboundRefused) return e;
  return error;
}

export interface OutboundExchange {
  status: number;
  contentType: string | null;
  body: Buffer;
}

/**
 * One request under the same policy as postOutbound (no redirects, checked addresses), keeping
 * the response body up to `maxBytes` (a larger body rejects): OCSP answers and CA certificates,
 * which are small. Rejects with OutboundRefused (nothing sent), or the network error.
 */
export async function exchangeOutbound(
  url: string,
  request: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: Buffer; signal: AbortSignal; maxBytes: number },
  options: OutboundOptions,
): Promise<OutboundExchange> {
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) !== 0) assertAllowed(host, host, options);
  const transport = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : null;
  if (transport === null) throw new OutboundRefused(`${target.protocol} URLs are not supported`);
  const headers = request.body === undefined ? request.headers : { ...request.headers, 'content-length': String(request.body.length) };
  return new Promise<OutboundExchange>((resolve, reject) => {
    const outgoing = transport.request(target, { method: request.method, headers, lookup: guardedLookup(options), agent: false, signal: request.signal });
    outgoing.once('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > request.maxBytes) {
          response.destroy(new Error(`the response from ${target.origin} is larger than ${request.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.once('end', () => resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'] ?? null, body: Buffer.concat(chunks) }));
      response.once('error', reject);
    });
    outgoing.once('error', (error: Error) => reject(unwrap(error)));
    outgoing.end(request.body);
  });
}
